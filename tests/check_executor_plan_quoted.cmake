# docs/ir.md quotes the plan examples/train_lstm_executor --graphs prints
# (an LSTM cell's autodiff region with its f and df graphs); this runs the
# example (EXE) and fails when the document (DOC) no longer holds it
# verbatim, so the section cannot drift from what the executor builds.
execute_process(COMMAND ${EXE} --graphs OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} --graphs failed (${rc}):\n${out}")
endif()
set(begin "---- plan ----\n")
string(FIND "${out}" "${begin}" b)
string(FIND "${out}" "final loss:" e)
if(b LESS 0 OR e LESS 0)
  message(FATAL_ERROR "unexpected output of ${EXE}:\n${out}")
endif()
string(LENGTH "${begin}" n)
math(EXPR b "${b} + ${n}")
math(EXPR n "${e} - ${b}")
string(SUBSTRING "${out}" ${b} ${n} plan)
file(READ ${DOC} doc)
string(FIND "${doc}" "${plan}" at)
if(at LESS 0)
  message(FATAL_ERROR "${DOC} does not quote the plan that ${EXE} --graphs prints now; "
                      "update the section with:\n${plan}")
endif()

# gen.adding_an_op_changes_only_its_section: runs gen on the golden spec
# and on a copy with one more op (and its derivative) at the top of the
# section 'pointwise', and checks which files differ.  Only that section's
# files may change, and the op tables every op is listed in (registry.c,
# generated_int.h, boxed/boxed.h, boxed/table.c, ...).  Generated code
# names entries by schema, not by YAML line, so nothing is masked.  Then a
# copy with a comment line added at the top of both YAML files: only
# registry.c, whose .location fields hold the lines, may change.
#
# Inputs: GEN (yagrad-gen), SRC (the source tree), WORK (a scratch dir).
cmake_minimum_required(VERSION 3.20)
set(golden ${SRC}/tests/gen/golden)
set(new_op "- func: square(Tensor self) -> Tensor\n  pointwise: \"self * self\"\n\n")
set(new_deriv "\n- name: square(Tensor self) -> Tensor\n  self: mul_scalar(mul(grad, self), 2)\n")

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/specs_plus)
file(READ ${golden}/specs/native_functions.yaml native)
string(FIND "${native}" "- section: pointwise\n\n" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the golden spec has no '- section: pointwise' item followed by a blank line")
endif()
string(REPLACE "- section: pointwise\n\n" "- section: pointwise\n\n${new_op}" native "${native}")
file(WRITE ${WORK}/specs_plus/native_functions.yaml "${native}")
file(READ ${golden}/specs/derivatives.yaml derivs)
file(WRITE ${WORK}/specs_plus/derivatives.yaml "${derivs}${new_deriv}")
file(READ ${golden}/specs/native_functions.yaml native)
file(WRITE ${WORK}/specs_shifted/native_functions.yaml "# one more line\n${native}")
file(WRITE ${WORK}/specs_shifted/derivatives.yaml "# one more line\n${derivs}")

foreach(run base plus shifted)
  if(run STREQUAL base)
    set(specs ${golden}/specs)
  else()
    set(specs ${WORK}/specs_${run})
  endif()
  execute_process(
    COMMAND ${GEN} ${specs} ${WORK}/${run}
    WORKING_DIRECTORY ${SRC}
    RESULT_VARIABLE rc
    ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "yagrad-gen failed on the ${run} spec:\n${err}")
  endif()
  file(GLOB_RECURSE files_${run} RELATIVE ${WORK}/${run} ${WORK}/${run}/*.c ${WORK}/${run}/*.h)
endforeach()

set(section_files api/pointwise.c nodes/pointwise.h nodes/pointwise.c boxed/pointwise.c
    kernels/pointwise.h kernels/pointwise.c loops/pointwise.c include/yagrad/ops_pointwise.h
    graph_grad/pointwise.c)
# The tables every op is listed in.  The shared headers (generated_int.h,
# boxed/boxed.h, graph_grad/graph_grad.h, onnx/onnx_gen.h) must not change:
# everything that includes them would recompile.
set(tables registry.c op_ids.h boxed/table.c graph_grad/table.c fuser/table.c onnx/table.c)
set(changed "")
set(failures "")
list(APPEND files_base ${files_plus})
list(REMOVE_DUPLICATES files_base)
list(SORT files_base)
foreach(f ${files_base})
  if(NOT EXISTS ${WORK}/base/${f} OR NOT EXISTS ${WORK}/plus/${f})
    string(APPEND failures "${f} exists in only one of the two outputs\n")
    continue()
  endif()
  file(READ ${WORK}/base/${f} a)
  file(READ ${WORK}/plus/${f} b)
  if(NOT a STREQUAL b)
    list(APPEND changed ${f})
    if(NOT f IN_LIST section_files AND NOT f IN_LIST tables)
      string(APPEND failures "${f} changed, but it belongs to another section\n")
    endif()
  endif()
endforeach()
foreach(f ${section_files})
  if(NOT f IN_LIST changed)
    string(APPEND failures "${f} did not change, but the new op belongs to its section\n")
  endif()
endforeach()
if(NOT failures STREQUAL "")
  message(FATAL_ERROR "adding one op to section 'pointwise':\n${failures}")
endif()
message(STATUS "adding one op to section 'pointwise' changed: ${changed}")

# A line added above everything: only the table of locations changes.
set(failures "")
foreach(f ${files_base})
  if(EXISTS ${WORK}/base/${f} AND EXISTS ${WORK}/shifted/${f} AND NOT f STREQUAL registry.c)
    file(READ ${WORK}/base/${f} a)
    file(READ ${WORK}/shifted/${f} b)
    if(NOT a STREQUAL b)
      string(APPEND failures "${f}\n")
    endif()
  endif()
endforeach()
if(NOT failures STREQUAL "")
  message(FATAL_ERROR "a comment line added at the top of the YAML files changed (only registry.c "
                      "may):\n${failures}")
endif()
message(STATUS "a comment line at the top of the YAML files changed registry.c only")

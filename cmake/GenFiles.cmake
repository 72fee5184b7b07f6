# yg_gen_files(<native_functions.yaml> <out-var>): the files yagrad-gen
# writes for that spec, relative to its output directory, known at
# configure time so the build can list them as sources.
#
# gen splits its output by the `- section: <name>` items of the YAML
# (gen/gen.h, docs/spec-reference.md "Output"): per section api/, nodes/,
# boxed/, graph_grad/, onnx/, decls/, include/yagrad/ops_<section>.h and, when the section has an op with
# a `pointwise:` key, kernels/, loops/ (compiled once per CPU capability) and
# cuda/ (built by nvcc with the CUDA backend).  This reads the same facts from the lines
# that start a section item or a pointwise key (the block layout the specs
# use), and makes the YAML a configure dependency so that adding a section
# reconfigures.  Should the two ever disagree, the build fails (a listed
# file gen did not write, or a written one nobody compiles, leaves symbols
# undefined), gen.checked_in_output_is_fresh compares the file lists, and
# gen.output_list_matches_cmake compares this list with gen's own
# (`yagrad-gen --list-outputs specs`, the table of gen/main.c).
function(yg_gen_files yaml out_var)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${yaml})
  file(STRINGS ${yaml} lines REGEX "^- section:|^  pointwise:")
  set(files include/yagrad/ops.h include/yagrad/enums.h generated_int.h registry.c op_ids.h
      boxed/boxed.h boxed/table.c
      graph_grad/graph_grad.h graph_grad/table.c fuser/table.c onnx/onnx_gen.h onnx/table.c)
  set(section "")
  set(with_kernels "")
  foreach(line ${lines})
    if(line MATCHES "^- section:[ ]*([a-z0-9_]+)")
      set(section ${CMAKE_MATCH_1})
      list(APPEND files include/yagrad/ops_${section}.h api/${section}.c nodes/${section}.h
           nodes/${section}.c boxed/${section}.c graph_grad/${section}.c onnx/${section}.c
           decls/${section}.h)
    elseif(NOT section STREQUAL "")
      list(APPEND with_kernels ${section})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES with_kernels)
  foreach(section ${with_kernels})
    list(APPEND files kernels/${section}.h kernels/${section}.c loops/${section}.c
         cuda/${section}.cu)
  endforeach()
  set(${out_var} ${files} PARENT_SCOPE)
endfunction()

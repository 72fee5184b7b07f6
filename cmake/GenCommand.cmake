# yg_gen_command(): the build edges that run yagrad-gen, arranged so that a
# spec error shows as gen's located message and little else.
#
#   yg_gen_command(STAMP <out>/gen.stamp OUTPUTS <files...>
#                  COMMAND <gen> <args...> DEPENDS <files...>
#                  WORKING_DIRECTORY <dir> COMMENT <text>)
#
# Ninja prints "FAILED: <every output of the edge>" and the command line
# before the command's own output.  With gen's ~200 files as byproducts
# of the edge that runs gen, a typo in a formula printed a 20 KB FAILED
# line before `specs/derivatives.yaml:73:30: error: ...`.  So two edges:
#
#   1. gen.stamp: runs gen (which writes only files whose text changed)
#      and touches the stamp.  Its only output is the stamp, so a failure
#      prints one short FAILED line, the command, and gen's errors.
#   2. <stamp>.outputs: depends on gen.stamp and claims the generated
#      files as byproducts, so Ninja knows who makes them, checks their
#      timestamps after it (restat: an unchanged file recompiles nothing)
#      and reruns it when one is missing.  Its command
#      (cmake/GenOutputs.cmake) touches its stamp; when a listed file is
#      missing (deleted by hand) it runs gen again first, so a build
#      restores it as before.  With Make, which knows no byproducts, this
#      check runs on every build.
#
# tests/gen/CMakeLists.txt (gen.spec_error_build_output_is_short) builds
# a scratch project with this function and a broken spec and checks the
# output.
set(YG_GEN_OUTPUTS_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/GenOutputs.cmake)

function(yg_gen_command)
  cmake_parse_arguments(PARSE_ARGV 0 G "" "STAMP;WORKING_DIRECTORY;COMMENT"
                        "OUTPUTS;COMMAND;DEPENDS")
  get_filename_component(out_dir ${G_STAMP} DIRECTORY)
  get_filename_component(key ${out_dir} NAME)
  # The list and the second stamp live outside gen's output folder, which
  # must hold gen's files only (the checked-in copy is made from it).
  set(aux ${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/yg_gen_${key})
  file(MAKE_DIRECTORY ${aux})
  string(REPLACE ";" "\n" listing "${G_OUTPUTS}")
  file(CONFIGURE OUTPUT ${aux}/outputs.txt CONTENT "${listing}\n")
  list(POP_FRONT G_COMMAND gen)
  add_custom_command(
    OUTPUT ${G_STAMP}
    COMMAND ${gen} ${G_COMMAND}
    COMMAND ${CMAKE_COMMAND} -E touch ${G_STAMP}
    DEPENDS ${gen} ${G_DEPENDS}
    WORKING_DIRECTORY ${G_WORKING_DIRECTORY}
    COMMENT "${G_COMMENT}"
    VERBATIM)
  string(REPLACE ";" " " args "${G_COMMAND}")
  if(TARGET ${gen})
    set(gen_file $<TARGET_FILE:${gen}>)
  else()
    set(gen_file ${gen})
  endif()
  # Ninja reruns this edge when a byproduct is missing.  Make does not
  # know byproducts: there the edge also claims a file it never writes
  # (symbolic), so every build runs its cheap check of the listed files,
  # and a generated file deleted by hand is written again.
  set(always "")
  if(NOT CMAKE_GENERATOR MATCHES "Ninja")
    set(always ${aux}/outputs.check)
    set_source_files_properties(${always} PROPERTIES SYMBOLIC TRUE)
  endif()
  add_custom_command(
    OUTPUT ${aux}/outputs.stamp ${always}
    BYPRODUCTS ${G_OUTPUTS}
    COMMAND ${CMAKE_COMMAND} -DLIST=${aux}/outputs.txt -DSTAMP=${aux}/outputs.stamp
            -DGEN=${gen_file} "-DARGS=${args}" -DDIR=${G_WORKING_DIRECTORY}
            -P ${YG_GEN_OUTPUTS_SCRIPT}
    DEPENDS ${G_STAMP} ${aux}/outputs.txt ${YG_GEN_OUTPUTS_SCRIPT}
    COMMENT "yagrad-gen: ${key}/ is complete"
    VERBATIM)
  set(YG_GEN_COMMAND_STAMP ${aux}/outputs.stamp PARENT_SCOPE)
endfunction()

# The ONNX export tests (included from tests/CMakeLists.txt).
#
# test_onnx (tests/test_onnx.c, registered above as onnx.<test>) writes
# each model and its case file into tests/onnx_out.  For each model here:
#   onnx.checker.<model>  onnx.checker.check_model(full_check=True)
#                         (Debian python3-onnx, on /usr/bin/python3)
#   onnx.ort.<model>      runs it in onnxruntime (npm onnxruntime-node)
#                         against yagrad's eager outputs within 1e-5
# Fixtures order them after the export; onnx.ort_setup installs
# onnxruntime-node into the build tree with npm (ONNXRUNTIME_NODE_INSTALL=
# skip: the CPU binaries ship in the package) and skips, with the reason,
# when npm or the registry is unreachable; the onnx.ort.* tests then skip
# (exit 77) while the checker tests still run.
if(NOT YG_HAVE_ONNX)
  # Built without ONNX (-DYG_WITH_ONNX=OFF): the suites compile to a main
  # that says so and exits 77, which CTest reports as skipped.
  foreach(exe test_onnx test_onnx_passes)
    target_compile_definitions(${exe} PRIVATE YG_WITHOUT_ONNX)
  endforeach()
  get_property(all_tests DIRECTORY PROPERTY TESTS)
  foreach(t ${all_tests})
    if(t MATCHES "^onnx(_passes)?\\.")
      set_tests_properties(${t} PROPERTIES SKIP_RETURN_CODE 77)
    endif()
  endforeach()
  return()
endif()
set(YG_ONNX_OUT ${CMAKE_CURRENT_BINARY_DIR}/onnx_out)
# test_onnx unpacks exported buffers with the protobuf-c bindings (built
# into libyagrad) to check what the options put into the model.
target_include_directories(test_onnx PRIVATE ${YG_ONNX_PB_DIR} ${PROTOBUF_C_INCLUDE_DIR})
target_link_libraries(test_onnx PRIVATE ${PROTOBUF_C_LIBRARY})
target_compile_definitions(test_onnx PRIVATE YG_HAVE_ONNX)
set(YG_ORT_DIR ${CMAKE_CURRENT_BINARY_DIR}/onnxruntime-node)
find_program(YG_NODE node)

add_test(NAME onnx.ort_setup
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/onnx/setup_ort.sh ${YG_ORT_DIR})
set_tests_properties(onnx.ort_setup PROPERTIES FIXTURES_SETUP onnx_ort SKIP_RETURN_CODE 77
                     TIMEOUT 300)

set(YG_ONNX_MODELS
    mlp:test_export_mlp
    lstm_cell:test_export_lstm_cell
    lstm_cell_parts:test_export_lstm_cell_traced_through_composites
    gru_cell:test_export_gru_cell
    reshape:test_export_view_and_expand_follow_a_dynamic_batch
    transformer_block:test_export_transformer_block
    gpt:test_export_gpt_with_dynamic_batch_and_sequence
    gpt_ambiguous:test_export_gpt_traced_at_ambiguous_sizes
    encdec:test_export_encoder_decoder_cnn
    lstm_lm:test_export_lstm_language_model_step
    gru_lm:test_export_gru_language_model_step
    cnn:test_export_cnn
    symbolics:test_every_exportable_op_has_a_case_that_exports
    symbolics_opset13:test_every_exportable_op_has_a_case_that_exports)
foreach(entry ${YG_ONNX_MODELS})
  string(REPLACE ":" ";" parts ${entry})
  list(GET parts 0 model)
  list(GET parts 1 export_test)
  set(names ${model})
  if(model STREQUAL "symbolics")
    set(names @manifest)
  elseif(model STREQUAL "symbolics_opset13")
    set(names @manifest_opset13)
  endif()
  set_property(TEST onnx.${export_test} APPEND PROPERTY FIXTURES_SETUP onnx_${model})
  add_test(NAME onnx.checker.${model}
           COMMAND ${YG_SYSTEM_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/check_models.py
                   ${YG_ONNX_OUT} ${names})
  set_tests_properties(onnx.checker.${model} PROPERTIES FIXTURES_REQUIRED onnx_${model})
  if(YG_NODE)
    add_test(NAME onnx.ort.${model}
             COMMAND ${YG_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/run_ort.js ${YG_ORT_DIR}
                     ${YG_ONNX_OUT} ${names})
    set_tests_properties(onnx.ort.${model} PROPERTIES
                         FIXTURES_REQUIRED "onnx_${model};onnx_ort" SKIP_RETURN_CODE 77)
  endif()
endforeach()

# examples/export_onnx writes its three models; the checker must accept them.
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/export_onnx_out)
add_test(NAME example.export_onnx_writes_models
         COMMAND export_onnx ${CMAKE_CURRENT_BINARY_DIR}/export_onnx_out)
set_tests_properties(example.export_onnx_writes_models PROPERTIES
  FIXTURES_SETUP onnx_example PASS_REGULAR_EXPRESSION "lstm_cell.onnx .*opset 17")
add_test(NAME onnx.checker.example_models
         COMMAND ${YG_SYSTEM_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/check_models.py
                 ${CMAKE_CURRENT_BINARY_DIR}/export_onnx_out mlp cnn lstm_cell)
set_tests_properties(onnx.checker.example_models PROPERTIES FIXTURES_REQUIRED onnx_example)

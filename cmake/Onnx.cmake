# ONNX export (runtime/onnx/): C bindings of the system's onnx.proto,
# generated at build time by protoc-c (Debian protobuf-c-compiler) and
# linked with libprotobuf-c (libprotobuf-c-dev); onnx.proto comes from
# Debian libonnx-dev (/usr/include/onnx/onnx.proto).  Nothing here
# encodes protobuf by hand.
#
# YG_WITH_ONNX=ON (the default) requires them and fails with an install
# hint; -DYG_WITH_ONNX=OFF leaves the exporter out, and runtime/onnx/onnx.c
# (built either way) says "built without ONNX".
option(YG_WITH_ONNX "Build the ONNX exporter (needs protobuf-c and libonnx-dev)" ON)
set(YG_HAVE_ONNX OFF)
if(YG_WITH_ONNX)
  find_program(PROTOC_C_EXECUTABLE protoc-c)
  find_path(PROTOBUF_C_INCLUDE_DIR protobuf-c/protobuf-c.h)
  find_library(PROTOBUF_C_LIBRARY protobuf-c)
  find_file(YG_ONNX_PROTO onnx.proto PATHS /usr/include/onnx NO_DEFAULT_PATH)
  if(NOT PROTOC_C_EXECUTABLE OR NOT PROTOBUF_C_INCLUDE_DIR OR NOT PROTOBUF_C_LIBRARY)
    message(FATAL_ERROR "protobuf-c not found (protoc-c: ${PROTOC_C_EXECUTABLE}, "
            "protobuf-c.h: ${PROTOBUF_C_INCLUDE_DIR}, libprotobuf-c: ${PROTOBUF_C_LIBRARY}): "
            "install protobuf-c-compiler and libprotobuf-c-dev (${YG_INSTALL_HINT}), "
            "or configure with -DYG_WITH_ONNX=OFF")
  endif()
  if(NOT YG_ONNX_PROTO)
    message(FATAL_ERROR "onnx.proto not found in /usr/include/onnx: install libonnx-dev "
            "(${YG_INSTALL_HINT}), or configure with -DYG_WITH_ONNX=OFF")
  endif()
  set(YG_HAVE_ONNX ON)
  # protoc-c names its outputs after the proto's path relative to
  # --proto_path: onnx/onnx.pb-c.{c,h}, included as "onnx/onnx.pb-c.h".
  get_filename_component(YG_ONNX_PROTO_DIR ${YG_ONNX_PROTO} DIRECTORY)
  get_filename_component(YG_ONNX_PROTO_ROOT ${YG_ONNX_PROTO_DIR} DIRECTORY)
  set(YG_ONNX_PB_DIR ${PROJECT_BINARY_DIR}/onnx_proto)
  add_custom_command(
    OUTPUT ${YG_ONNX_PB_DIR}/onnx/onnx.pb-c.c ${YG_ONNX_PB_DIR}/onnx/onnx.pb-c.h
    COMMAND ${CMAKE_COMMAND} -E make_directory ${YG_ONNX_PB_DIR}
    COMMAND ${PROTOC_C_EXECUTABLE} --proto_path=${YG_ONNX_PROTO_ROOT}
            --c_out=${YG_ONNX_PB_DIR} ${YG_ONNX_PROTO}
    DEPENDS ${YG_ONNX_PROTO}
    COMMENT "protoc-c: ${YG_ONNX_PROTO} -> ${YG_ONNX_PB_DIR}"
    VERBATIM)
  # The generated bindings are built without the project's warning flags
  # (they are protoc-c's code, not ours) as one object library.
  add_library(yagrad_onnx_proto OBJECT ${YG_ONNX_PB_DIR}/onnx/onnx.pb-c.c)
  set_target_properties(yagrad_onnx_proto PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(yagrad_onnx_proto PUBLIC ${YG_ONNX_PB_DIR} ${PROTOBUF_C_INCLUDE_DIR})
  message(STATUS "ONNX export: ${YG_ONNX_PROTO} with ${PROTOC_C_EXECUTABLE}")
else()
  message(STATUS "ONNX export: off (YG_WITH_ONNX=OFF); yg_onnx_export reports it")
endif()

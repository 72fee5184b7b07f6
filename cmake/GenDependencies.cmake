# Finds what yagrad-gen links, libyaml and libclang 14, as the targets
# yg::yaml and yg::clang.  Included by cmake/Dependencies.cmake (the
# library's build: bench_gen and the fuzz targets compile gen's sources)
# and by gen/CMakeLists.txt, the generator's own project, which the
# library's configure step builds first (cmake/GenHost.cmake).
if(NOT DEFINED YG_INSTALL_HINT)
  set(YG_INSTALL_HINT "run scripts/install-deps.sh (Debian 12)")
endif()

# libyaml
find_path(YAML_INCLUDE_DIR yaml.h)
find_library(YAML_LIBRARY yaml)
if(NOT YAML_INCLUDE_DIR OR NOT YAML_LIBRARY)
  message(FATAL_ERROR "libyaml not found: install libyaml-dev (${YG_INSTALL_HINT})")
endif()
add_library(yg::yaml INTERFACE IMPORTED)
target_include_directories(yg::yaml INTERFACE ${YAML_INCLUDE_DIR})
target_link_libraries(yg::yaml INTERFACE ${YAML_LIBRARY})

# libclang 14
find_path(CLANG_INCLUDE_DIR clang-c/Index.h PATHS /usr/lib/llvm-14/include NO_DEFAULT_PATH)
find_library(CLANG_LIBRARY NAMES clang-14 clang PATHS /usr/lib/llvm-14/lib NO_DEFAULT_PATH)
if(NOT CLANG_INCLUDE_DIR OR NOT CLANG_LIBRARY)
  message(FATAL_ERROR "libclang 14 not found: install libclang-14-dev (${YG_INSTALL_HINT})")
endif()
add_library(yg::clang INTERFACE IMPORTED)
target_include_directories(yg::clang INTERFACE ${CLANG_INCLUDE_DIR})
target_link_libraries(yg::clang INTERFACE ${CLANG_LIBRARY})

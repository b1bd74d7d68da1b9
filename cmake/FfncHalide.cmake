# The Halide back end (--backend=halide): ffnc-halide-gen, a separate CMake
# project (halide/) that links Halide 14 and its LLVM 14, built here with
# ExternalProject_Add. Halide's config is never loaded into this configure:
# it loads LLVM 14's, which would rewrite this project's LLVM_DIR (LLVM 22)
# in the cache. A throw-away probe only checks that it loads.
#
# FFNC_HALIDE: AUTO (build it if Halide 14 loads), ON (required:
# scripts/build.sh, so CI cannot silently lose it) or OFF. Sets
# FFNC_HAVE_HALIDE and, when TRUE, the target ffnc_halide, which writes
# ${CMAKE_BINARY_DIR}/bin/ffnc-halide-gen (beside ffnc, where ffnc and lit
# look) and ${CMAKE_BINARY_DIR}/lib/ffnc-halide/halide_runtime.o.
set(FFNC_HALIDE AUTO CACHE STRING
    "Build the Halide back end (ffnc-halide-gen): AUTO, ON or OFF")
set_property(CACHE FFNC_HALIDE PROPERTY STRINGS AUTO ON OFF)
set(FFNC_HAVE_HALIDE FALSE)

string(TOUPPER "${FFNC_HALIDE}" _ffnc_halide)
if(NOT _ffnc_halide MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR
          "ffnc: FFNC_HALIDE must be AUTO, ON or OFF, got '${FFNC_HALIDE}'")
endif()
if(_ffnc_halide STREQUAL "OFF")
  message(STATUS "Halide back end: off (FFNC_HALIDE=OFF)")
  return()
endif()

include(FfncOptionalPackage)
ffnc_find_optional_package(Halide PROBE_ONLY VERSION 14)
if(NOT Halide_FOUND)
  set(_why "Halide 14 cannot be loaded (${Halide_NOT_LOADED_REASON})")
  if(_ffnc_halide STREQUAL "ON")
    message(FATAL_ERROR "ffnc: FFNC_HALIDE=ON but ${_why}; scripts/setup.sh "
                        "installs libhalide14-0-dev")
  endif()
  message(WARNING "ffnc: ${_why}: --backend=halide is not built "
                  "(scripts/setup.sh installs libhalide14-0-dev)")
  return()
endif()

include(ExternalProject)
ExternalProject_Add(ffnc_halide
  SOURCE_DIR ${PROJECT_SOURCE_DIR}/halide
  BINARY_DIR ${CMAKE_BINARY_DIR}/halide
  CMAKE_GENERATOR ${CMAKE_GENERATOR}
  # A tool, built optimized and never instrumented (no FFNC_SANITIZE).
  CMAKE_ARGS -DCMAKE_BUILD_TYPE=Release
             -DCMAKE_C_COMPILER=${CMAKE_C_COMPILER}
             -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
             -DFFNC_SOURCE_DIR=${PROJECT_SOURCE_DIR}
             -DFFNC_OUTPUT_DIR=${CMAKE_BINARY_DIR}
  INSTALL_COMMAND ""
  # Its own ninja decides what is stale (sources outside its directory,
  # such as the protocol, included).
  BUILD_ALWAYS ON
  BUILD_BYPRODUCTS ${CMAKE_BINARY_DIR}/bin/ffnc-halide-gen
                   ${CMAKE_BINARY_DIR}/lib/ffnc-halide/halide_runtime.o
  USES_TERMINAL_BUILD ON)
set(FFNC_HAVE_HALIDE TRUE)
message(STATUS "Halide back end: ffnc-halide-gen (Halide 14)")

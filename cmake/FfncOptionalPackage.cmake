# ffnc_find_optional_package(<name> [PROBE_ONLY] [VERSION <version>])
#
# Loads an optional peer package (oneDNN for ffn-bench, ...) only if its CMake
# config can be loaded without error. A package config may itself require
# other packages (Debian's dnnl-config.cmake requires OpenCL), and a failed
# find_package(... REQUIRED) inside it stops the whole configure even when we
# asked QUIET. So the package is first loaded in a throw-away configure of a
# tiny probe project; only if that succeeds is it loaded here. On failure
# <name>_FOUND is FALSE and the reason (the probe's first error line) is in
# <name>_NOT_LOADED_REASON.
#
# VERSION asks the probe for at least that version (find_package's rules).
# PROBE_ONLY never loads the config into this project: success sets
# <name>_FOUND and nothing else. For packages whose config would change this
# project's own state (Halide's loads LLVM 14's, which rewrites the cache's
# LLVM_DIR in a project that uses LLVM 22); such a package is then used only
# by a separate project (ExternalProject_Add).
function(ffnc_find_optional_package name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "PROBE_ONLY" "VERSION" "")
  set(probe_dir "${CMAKE_BINARY_DIR}/package-probes/${name}")
  file(REMOVE_RECURSE "${probe_dir}")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -G "${CMAKE_GENERATOR}"
            -S "${PROJECT_SOURCE_DIR}/cmake/probe-package" -B "${probe_dir}"
            "-DFFNC_PROBE_PACKAGE=${name}"
            "-DFFNC_PROBE_VERSION=${ARG_VERSION}"
            "-DCMAKE_PREFIX_PATH=${CMAKE_PREFIX_PATH}"
            "-DCMAKE_C_COMPILER=${CMAKE_C_COMPILER}"
            "-DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}"
    RESULT_VARIABLE status
    OUTPUT_VARIABLE out
    ERROR_VARIABLE err)
  if(status EQUAL 0 AND ARG_PROBE_ONLY)
    set(${name}_FOUND TRUE PARENT_SCOPE)
    return()
  endif()
  if(status EQUAL 0)
    find_package(${name} ${ARG_VERSION} CONFIG QUIET)
  endif()
  if(status EQUAL 0 AND ${name}_FOUND)
    set(${name}_FOUND TRUE PARENT_SCOPE)
    return()
  endif()
  set(reason "no CMake config for ${name}")
  string(REGEX MATCH "Could NOT find[^\n]*" first "${err}")
  if(NOT first)
    string(REGEX MATCH "CMake Error[^\n]*\n[^\n]*" first "${err}")
  endif()
  if(first)
    string(REGEX REPLACE "[ \n]+" " " reason "${first}")
  endif()
  set(${name}_FOUND FALSE PARENT_SCOPE)
  set(${name}_NOT_LOADED_REASON "${reason}" PARENT_SCOPE)
endfunction()

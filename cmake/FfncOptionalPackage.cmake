# ffnc_find_optional_package(<name> [components...])
#
# Loads an optional peer package (oneDNN for ffn-bench, ...) only if its CMake
# config can be loaded without error. A package config may itself require
# other packages (Debian's dnnl-config.cmake requires OpenCL), and a failed
# find_package(... REQUIRED) inside it stops the whole configure even when we
# asked QUIET. So the package is first loaded in a throw-away configure of a
# tiny probe project; only if that succeeds is it loaded here. On failure
# <name>_FOUND is FALSE and the reason (the probe's first error line) is in
# <name>_NOT_LOADED_REASON.
function(ffnc_find_optional_package name)
  set(probe_dir "${CMAKE_BINARY_DIR}/package-probes/${name}")
  file(REMOVE_RECURSE "${probe_dir}")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -G "${CMAKE_GENERATOR}"
            -S "${PROJECT_SOURCE_DIR}/cmake/probe-package" -B "${probe_dir}"
            "-DFFNC_PROBE_PACKAGE=${name}"
            "-DCMAKE_PREFIX_PATH=${CMAKE_PREFIX_PATH}"
            "-DCMAKE_C_COMPILER=${CMAKE_C_COMPILER}"
            "-DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}"
    RESULT_VARIABLE status
    OUTPUT_VARIABLE out
    ERROR_VARIABLE err)
  if(status EQUAL 0)
    find_package(${name} CONFIG QUIET)
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

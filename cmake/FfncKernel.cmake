# FfncKernel.cmake - compile .ffn specs ahead of time into a CMake project.
#
#   set(FFNC_BUILD_DIR /path/to/ffnc/build)      # where bin/ffnc and lib/ live
#   include(/path/to/ffnc/cmake/FfncKernel.cmake)
#   ffnc_add_kernel(my_kernels SPEC model.ffn [ISA x86-64-avx2] [FFN name]
#                   [THREADS n] [BACKEND ffnc|halide])
#   target_link_libraries(app PRIVATE my_kernels ffnc::runtime)
#
# ffnc_add_kernel runs `ffnc --emit=obj --header` at build time (again
# whenever the spec or ffnc changes) and makes <name> a static library whose
# users see the generated header as <name>.h, next to <ffn/kernel_abi.h>.
# THREADS: the thread count the app runs the kernels with (ffnc's
# --kernel-threads; default: the build machine's cores).
# BACKEND: who generates the code (ffnc's --backend; default ffnc). A Halide
# object carries its own, local, Halide runtime and needs nothing beyond libm
# and glibc (2.34 or later, where pthread and dl are part of libc).
# ffnc::runtime is the runtime library (ffn/runtime.h).

if(NOT FFNC_BUILD_DIR)
  set(FFNC_BUILD_DIR "${CMAKE_CURRENT_LIST_DIR}/../build")
endif()
get_filename_component(FFNC_BUILD_DIR "${FFNC_BUILD_DIR}" ABSOLUTE)
set(FFNC_EXECUTABLE "${FFNC_BUILD_DIR}/bin/ffnc" CACHE FILEPATH "ffnc compiler")
set(FFNC_RUNTIME_INCLUDE_DIR "${CMAKE_CURRENT_LIST_DIR}/../runtime/include")
get_filename_component(FFNC_RUNTIME_INCLUDE_DIR "${FFNC_RUNTIME_INCLUDE_DIR}" ABSOLUTE)

if(NOT EXISTS "${FFNC_EXECUTABLE}")
  message(FATAL_ERROR "ffnc not found at ${FFNC_EXECUTABLE}; build ffnc "
                      "(scripts/build.sh) or set FFNC_BUILD_DIR")
endif()

if(NOT TARGET ffnc::runtime)
  add_library(ffnc::runtime SHARED IMPORTED)
  set_target_properties(ffnc::runtime PROPERTIES
    IMPORTED_LOCATION "${FFNC_BUILD_DIR}/lib/libffn_runtime.so"
    INTERFACE_INCLUDE_DIRECTORIES "${FFNC_RUNTIME_INCLUDE_DIR}")
endif()

function(ffnc_add_kernel name)
  cmake_parse_arguments(ARG "" "SPEC;ISA;FFN;THREADS;BACKEND" "" ${ARGN})
  if(NOT ARG_SPEC)
    message(FATAL_ERROR "ffnc_add_kernel(${name}): SPEC <file.ffn> is required")
  endif()
  if(NOT ARG_ISA)
    set(ARG_ISA host)
  endif()
  get_filename_component(spec "${ARG_SPEC}" ABSOLUTE)
  set(outdir "${CMAKE_CURRENT_BINARY_DIR}/${name}.ffnc")
  set(object "${outdir}/${name}.o")
  set(header "${outdir}/${name}.h")
  set(select "")
  if(ARG_FFN)
    set(select "--ffn=${ARG_FFN}")
  endif()
  if(ARG_THREADS)
    list(APPEND select "--kernel-threads=${ARG_THREADS}")
  endif()
  if(ARG_BACKEND)
    list(APPEND select "--backend=${ARG_BACKEND}")
  endif()
  add_custom_command(
    OUTPUT "${object}" "${header}"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${outdir}"
    COMMAND "${FFNC_EXECUTABLE}" "${spec}" --emit=obj "--target=${ARG_ISA}"
            ${select} -o "${object}" --header "${header}"
    DEPENDS "${spec}" "${FFNC_EXECUTABLE}"
    COMMENT "ffnc: compiling ${ARG_SPEC} for ${ARG_ISA}"
    VERBATIM)
  set_source_files_properties("${object}" PROPERTIES
    EXTERNAL_OBJECT TRUE GENERATED TRUE)
  add_library(${name} STATIC "${object}" "${header}")
  set_target_properties(${name} PROPERTIES LINKER_LANGUAGE C)
  target_include_directories(${name} INTERFACE "${outdir}"
                             "${FFNC_RUNTIME_INCLUDE_DIR}")
  # Generated code allocates its scratch buffers with malloc.
  target_link_libraries(${name} INTERFACE m)
endfunction()

# The optional CUDA pieces (docs/CUDA.md). With the CUDA toolkit found
# (find_package(CUDAToolkit): CUDAToolkit_ROOT, nvcc on PATH or
# /usr/local/cuda), the suite compiles generated kernels with nvcc for
# TOFU_CUDA_ARCHS (lit feature `nvcc`); without it those tests are
# UNSUPPORTED and the reason is printed here. NCCL and cuDNN are located
# explicitly (headers and libraries under the toolkit or /usr) for the
# device executor: TofuRuntimeCUDA links NCCL, and cuDNN when found.

option(TOFU_ENABLE_CUDA "Use the CUDA toolkit when it is found" ON)
set(TOFU_CUDA_ARCHS "80;90" CACHE STRING
    "GPU architectures the tests compile generated kernels for (sm_XX)")
set(TOFU_NVCC "")
set(TOFU_CUDA_REASON "")

if(NOT TOFU_ENABLE_CUDA)
  set(TOFU_CUDA_REASON "TOFU_ENABLE_CUDA is OFF")
else()
  find_package(CUDAToolkit QUIET)
  if(NOT CUDAToolkit_FOUND)
    set(TOFU_CUDA_REASON "no CUDA toolkit found (set CUDAToolkit_ROOT)")
  elseif(NOT CUDAToolkit_NVCC_EXECUTABLE OR NOT EXISTS "${CUDAToolkit_NVCC_EXECUTABLE}")
    set(TOFU_CUDA_REASON "the CUDA toolkit at ${CUDAToolkit_BIN_DIR} has no nvcc")
  else()
    set(TOFU_NVCC "${CUDAToolkit_NVCC_EXECUTABLE}")
  endif()
endif()

if(TOFU_NVCC)
  foreach(lib nccl cudnn)
    string(TOUPPER ${lib} LIB)
    find_path(TOFU_${LIB}_INCLUDE_DIR ${lib}.h
              HINTS ${CUDAToolkit_INCLUDE_DIRS} PATHS /usr/include)
    find_library(TOFU_${LIB}_LIBRARY ${lib}
                 HINTS ${CUDAToolkit_LIBRARY_DIR} PATHS /usr/lib/x86_64-linux-gnu)
    if(TOFU_${LIB}_INCLUDE_DIR AND TOFU_${LIB}_LIBRARY)
      set(TOFU_HAVE_${LIB} ON)
      set(found "${TOFU_${LIB}_LIBRARY}")
    else()
      set(TOFU_HAVE_${LIB} OFF)
      set(found "not found")
    endif()
    message(STATUS "Tofu CUDA: ${lib}: ${found}")
  endforeach()
  list(TRANSFORM TOFU_CUDA_ARCHS PREPEND "sm_" OUTPUT_VARIABLE archs)
  list(JOIN archs ", " archs)
  message(STATUS "Tofu CUDA: toolkit ${CUDAToolkit_VERSION}, nvcc ${TOFU_NVCC}, "
                 "tests compile kernels for ${archs}")
else()
  message(STATUS "Tofu CUDA: disabled: ${TOFU_CUDA_REASON}; the nvcc tests are skipped")
endif()

# The nvcc flags of a generated unit (docs/CUDA.md): the architectures, the
# runtime headers, constexpr std:: functions (std::max, numeric_limits) in
# device code, and no warning for the prelude's unused constants.
set(TOFU_NVCC_FLAGS "-x cu -std=c++17 --expt-relaxed-constexpr -diag-suppress 177")
foreach(arch ${TOFU_CUDA_ARCHS})
  string(APPEND TOFU_NVCC_FLAGS " -gencode arch=compute_${arch},code=sm_${arch}")
endforeach()
string(APPEND TOFU_NVCC_FLAGS " -I${PROJECT_SOURCE_DIR}/runtime/include")

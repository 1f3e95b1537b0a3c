# Finds Tofu's third-party dependencies, all from Debian packages (see
# DEVELOPERS.md), and exposes them as targets:
#   LLVMSupport     LLVM ADT/Support, linked statically
#   antlr4_static   the ANTLR 4 C++ runtime, linked statically
#   GTest::gtest_main
#   MPI::MPI_C      when TOFU_HAVE_MPI (optional)
#   DNNL::dnnl, OpenMP::OpenMP_CXX   when TOFU_HAVE_DNNL (optional)
#   fmt::fmt-header-only   the runtime's message formatting
# and ANTLR4_TOOL, the grammar compiler.

find_package(LLVM 14 REQUIRED CONFIG)
message(STATUS "Using LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")
list(APPEND CMAKE_MODULE_PATH ${LLVM_CMAKE_DIR})
include_directories(SYSTEM ${LLVM_INCLUDE_DIRS})
separate_arguments(TOFU_LLVM_DEFINITIONS NATIVE_COMMAND ${LLVM_DEFINITIONS})
add_definitions(${TOFU_LLVM_DEFINITIONS})
# The static component libraries, not the shared libLLVM, so that tools run
# on machines without LLVM installed.
llvm_map_components_to_libnames(TOFU_LLVM_LIBS support)

find_package(Threads REQUIRED)

# fmt (libfmt-dev) formats the runtime's messages and reports. Header-only,
# so that no binary needs libfmt.so where it runs (the GPU machines, a
# training program's users).
find_package(fmt REQUIRED CONFIG)

find_program(ANTLR4_TOOL antlr4 REQUIRED)
find_path(ANTLR4_INCLUDE_DIR antlr4-runtime.h PATH_SUFFIXES antlr4-runtime
          REQUIRED)
find_library(ANTLR4_STATIC_LIBRARY libantlr4-runtime.a REQUIRED)
add_library(antlr4_static STATIC IMPORTED)
set_target_properties(antlr4_static PROPERTIES
  IMPORTED_LOCATION ${ANTLR4_STATIC_LIBRARY}
  INTERFACE_LINK_LIBRARIES Threads::Threads)
# SYSTEM: the runtime's headers warn under -Wall.
target_include_directories(antlr4_static SYSTEM INTERFACE ${ANTLR4_INCLUDE_DIR})

find_package(GTest REQUIRED)

# MPI (Debian's libopenmpi-dev), optional: the runtime's MPI transport
# (TofuRuntimeMPI, docs/Runtime.md) and `tofu-run --transport mpi` are built
# when CMake finds it; the lit tests that need it run when mpiexec is found.
option(TOFU_ENABLE_MPI "Build the MPI transport when MPI is found" ON)
set(TOFU_HAVE_MPI OFF)
if(TOFU_ENABLE_MPI)
  find_package(MPI COMPONENTS C)
  if(MPI_C_FOUND)
    set(TOFU_HAVE_MPI ON)
  endif()
endif()
message(STATUS "MPI transport: ${TOFU_HAVE_MPI}")

# oneDNN (Debian's libdnnl-dev), optional: the CPU runtime's convolutions,
# batch norms and poolings (TofuRuntimeDNNL, docs/Runtime.md "Kernels");
# without it every op runs its generated kernel. Its CPU runtime is OpenMP,
# whose omp_set_num_threads sets the threads of each worker's calls.
option(TOFU_ENABLE_DNNL "Run convolutions, batch norms and pooling on oneDNN when found" ON)
set(TOFU_HAVE_DNNL OFF)
if(TOFU_ENABLE_DNNL)
  # Debian's dnnl-config.cmake requires OpenCL (ocl-icd-opencl-dev, only
  # recommended by libdnnl-dev) and stops the configuration without it:
  # look for it first, so that a machine without it builds without oneDNN.
  find_package(OpenCL QUIET)
  if(OpenCL_FOUND)
    find_package(dnnl 2.3 CONFIG QUIET)
  endif()
  find_package(OpenMP COMPONENTS CXX QUIET)
  if(dnnl_FOUND AND OpenMP_CXX_FOUND)
    set(TOFU_HAVE_DNNL ON)
  endif()
endif()
message(STATUS "oneDNN kernels: ${TOFU_HAVE_DNNL} ${dnnl_VERSION}")

set(TOFU_LLVM_TOOLS_DIR ${LLVM_TOOLS_BINARY_DIR})
set(LLVM_EXTERNAL_LIT ${LLVM_TOOLS_BINARY_DIR}/../build/utils/lit/lit.py
    CACHE FILEPATH "lit driver")

# Debian's interpreter, which has python3-torch, rather than whatever
# python3 comes first on PATH.
if(EXISTS /usr/bin/python3 AND NOT Python3_EXECUTABLE)
  set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "Python 3")
endif()
find_package(Python3 REQUIRED COMPONENTS Interpreter)

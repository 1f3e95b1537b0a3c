# tofu_add_plan: compile a partition plan of a training graph into a target.
#
#   tofu_add_plan(<target> GRAPH <graph.json> WORKERS <K>
#                 [NAMESPACE <ns>] [SPECS <file.tdl>...]
#                 [PLAN_OPTIONS <tofu-plan option>...])
#
# At build time runs `tofu-plan <graph> --workers K --emit=cpp
# --cpp-namespace <ns>` (default namespace tofu_plan; give each plan of one
# target its own), re-running it when the graph, a spec file or tofu-plan
# changes; adds the generated source (the lowered plan and the graph's op
# kernels) to <target>, and links <target> with Tofu::Runtime and OpenBLAS,
# which the kernels call. The program declares the plan with
# TOFU_DECLARE_PLAN(<ns>) from tofu/Runtime/GeneratedPlan.h and runs it with
# tofu::runtime::LinkedPlan (docs/Linking.md).
#
# Works in Tofu's own build (the tofu-plan target) and from the installed
# package (find_package(Tofu), which sets TOFU_PLAN_EXECUTABLE).

include_guard(GLOBAL)

# Sets, in the caller, `graph` (ARG_GRAPH made absolute), `specArgs` (--spec
# FILE for each of ARG_SPECS), `specFiles` and `stem` (ARG_NAMESPACE with
# "::" as "_"): what tofu_add_plan and tofu_add_cuda_kernels both take.
macro(_tofu_plan_inputs)
  get_filename_component(graph ${ARG_GRAPH} ABSOLUTE
                         BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  set(specArgs)
  set(specFiles)
  foreach(spec ${ARG_SPECS})
    get_filename_component(spec ${spec} ABSOLUTE
                           BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND specArgs --spec ${spec})
    list(APPEND specFiles ${spec})
  endforeach()
  string(REPLACE "::" "_" stem ${ARG_NAMESPACE})
endmacro()

function(tofu_add_plan target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "GRAPH;WORKERS;NAMESPACE"
                        "SPECS;PLAN_OPTIONS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tofu_add_plan: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "tofu_add_plan: '${target}' is not a target")
  endif()
  if(NOT ARG_GRAPH)
    message(FATAL_ERROR "tofu_add_plan: GRAPH <graph.json> is required")
  endif()
  if(NOT ARG_WORKERS MATCHES "^[1-9][0-9]*$")
    message(FATAL_ERROR "tofu_add_plan: WORKERS expects a positive integer, got '${ARG_WORKERS}'")
  endif()
  if(NOT ARG_NAMESPACE)
    set(ARG_NAMESPACE tofu_plan)
  endif()

  if(TARGET tofu-plan)
    set(planner tofu-plan)
    set(plannerDepends tofu-plan)
  elseif(TOFU_PLAN_EXECUTABLE)
    set(planner ${TOFU_PLAN_EXECUTABLE})
    set(plannerDepends ${TOFU_PLAN_EXECUTABLE})
  else()
    message(FATAL_ERROR "tofu_add_plan: no tofu-plan (use find_package(Tofu))")
  endif()
  if(NOT TOFU_OPENBLAS_LIBRARY)
    find_library(TOFU_OPENBLAS_LIBRARY NAMES openblas REQUIRED)
  endif()

  _tofu_plan_inputs()
  set(out ${CMAKE_CURRENT_BINARY_DIR}/tofu-plans/${target}-${stem}.cpp)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/tofu-plans
    COMMAND ${planner} ${graph} --workers ${ARG_WORKERS} --emit=cpp
            --cpp-namespace ${ARG_NAMESPACE} --quiet ${specArgs}
            ${ARG_PLAN_OPTIONS} -o ${out}
    DEPENDS ${graph} ${specFiles} ${plannerDepends}
    COMMENT "Planning ${ARG_GRAPH} for ${ARG_WORKERS} workers (${ARG_NAMESPACE})"
    VERBATIM)
  target_sources(${target} PRIVATE ${out})
  # The kernels are the training program's hot loops: optimise them in
  # every build type (generated code: no warnings about unused names).
  set_source_files_properties(${out} PROPERTIES
                              COMPILE_OPTIONS "-O2;-Wno-unused-variable")
  target_link_libraries(${target} PRIVATE Tofu::Runtime ${TOFU_OPENBLAS_LIBRARY})
endfunction()

# tofu_add_cuda_kernels: compile a graph's CUDA kernels into a target, for
# LinkedPlan on GPUs (docs/Linking.md, "On GPUs").
#
#   tofu_add_cuda_kernels(<target> GRAPH <graph.json> NAMESPACE <ns>
#                         [SPECS <file.tdl>...])
#
# At build time runs `tofu-graph <graph> --emit=cuda-linked --cpp-namespace
# <ns>` and compiles the source with nvcc (TOFU_NVCC_FLAGS: the
# architectures of TOFU_CUDA_ARCHS) into an object of <target>, which links
# TofuRuntimeCUDA. The program declares the kernels with
# TOFU_DECLARE_CUDA_KERNELS(<ns>) from tofu/Runtime/GeneratedCudaKernels.h;
# they serve every plan of that graph (any worker count). Only in Tofu's own
# build, and only where TofuRuntimeCUDA exists (the CUDA toolkit and NCCL).
function(tofu_add_cuda_kernels target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "GRAPH;NAMESPACE" "SPECS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tofu_add_cuda_kernels: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET TofuRuntimeCUDA OR NOT TARGET tofu-graph)
    message(FATAL_ERROR "tofu_add_cuda_kernels: needs Tofu's own build with "
                        "TofuRuntimeCUDA (the CUDA toolkit and NCCL)")
  endif()
  if(NOT ARG_GRAPH OR NOT ARG_NAMESPACE)
    message(FATAL_ERROR "tofu_add_cuda_kernels: GRAPH and NAMESPACE are required")
  endif()
  _tofu_plan_inputs()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/tofu-plans)
  set(source ${dir}/${target}-${stem}.cu)
  set(object ${dir}/${target}-${stem}.cu.o)
  add_custom_command(
    OUTPUT ${source}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND tofu-graph ${graph} --emit=cuda-linked --cpp-namespace
            ${ARG_NAMESPACE} ${specArgs} -o ${source}
    DEPENDS ${graph} ${specFiles} tofu-graph
    COMMENT "Generating the CUDA kernels of ${ARG_GRAPH} (${ARG_NAMESPACE})"
    VERBATIM)
  separate_arguments(nvccFlags UNIX_COMMAND "${TOFU_NVCC_FLAGS}")
  add_custom_command(
    OUTPUT ${object}
    COMMAND ${TOFU_NVCC} ${nvccFlags} -O3 -Xcompiler -fPIC
            -I${TOFU_NCCL_INCLUDE_DIR} -c ${source} -o ${object}
    DEPENDS ${source}
    COMMENT "nvcc the CUDA kernels of ${ARG_GRAPH} (${ARG_NAMESPACE})"
    VERBATIM)
  target_sources(${target} PRIVATE ${object})
  target_link_libraries(${target} PRIVATE TofuRuntimeCUDA)
endfunction()

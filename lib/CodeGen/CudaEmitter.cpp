//===- CudaEmitter.cpp - Assemble a CUDA kernel ---------------------------===//
//
// This file implements the CUDA target of KernelBuilder (docs/CUDA.md). It
// reuses the expression lowering of the C++ target unchanged (values are
// doubles, index arithmetic and bounds settled at generation time) and
// replaces the loop nest over the output variables by one thread per
// output element: thread `block.x * blockSize.x + thread.x` of a 1-D grid
// takes the element of that row-major rank in the call's box of the output
// variables, and computes it with every reduction as a sequential loop in
// that thread (a reduction the C++ target hoists to an outer loop level is
// computed by each thread that needs it). Per kernel `NAME` it emits
//
//   TOFU_HD void NAME_body(const DeviceCall<I, V> &call, Dim3 block,
//                          Dim3 blockSize, Dim3 thread);
//   #ifdef __CUDACC__
//   __global__ void NAME_global(const DeviceCall<I, V> call);
//   cudaError_t NAME_launch(const KernelCall &call, cudaStream_t stream);
//   #endif
//   void NAME(const KernelCall &call);   // the body over the emulated grid
//
// so that the body compiles with the host C++ compiler as well as with
// nvcc, and `NAME` is a KernelCall-ABI function kernel-check can run.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

using namespace tofu;
using namespace tofu::codegen;

/// The block size of the emulated grid: smaller than the device's so that
/// the host harness crosses block boundaries on small boxes.
static constexpr unsigned EmulatedBlockSize = 32;

std::string KernelBuilder::buildCuda(StringRef name) {
  std::string value;
  cudaTarget = true;
  if (!lowerBody(value))
    return "";
  unsigned rank = op.getOutputRank();
  unsigned numInputs = inst.inputShapes.size();
  for (const Shape &shape : inst.inputShapes)
    if (shape.size() > 8)
      fail("a tensor of rank " + Twine(shape.size()) +
           " exceeds the CUDA kernels' DeviceMaxRank (8)");
  if (rank > 8)
    fail("the output's rank exceeds the CUDA kernels' DeviceMaxRank (8)");
  if (failed())
    return "";
  std::string callType = "tofu::runtime::DeviceCall<" +
                         std::to_string(numInputs) + ", " +
                         std::to_string(varExtents.size()) + ">";
  std::string n = name.str();

  std::vector<std::string> lines;
  lines.push_back("// " + describe());
  if (gemm)
    lines.push_back("// A contraction: the device executor runs it with cuBLAS; "
                    "this kernel is the fallback.");
  else if (deviceGemm)
    lines.push_back("// A contraction inside a larger body: the device "
                    "executor runs this kernel.");
  else if (conv)
    lines.push_back("// A convolution: the device executor runs it with "
                    "cuDNN where the box is one cuDNN call; this kernel is "
                    "the fallback.");
  lines.push_back("TOFU_HD inline void " + n + "_body(const " + callType +
                  " &call, tofu::runtime::Dim3 block, tofu::runtime::Dim3 "
                  "blockSize, tofu::runtime::Dim3 thread) {");
  declareBoxes(lines);
  // The thread's output element: its rank in the row-major box of the
  // output variables, innermost variable fastest.
  lines.push_back("std::int64_t t = std::int64_t(block.x) * blockSize.x + thread.x;");
  lines.push_back("if (t >= tofu::runtime::deviceThreadCount(lo, hi, " +
                  std::to_string(rank) + ")) return;");
  for (unsigned d = rank; d-- > 0;) {
    std::string v = varName(d), ds = std::to_string(d);
    if (d == 0) {
      lines.push_back("const std::int64_t " + v + " = lo[0] + t;");
      continue;
    }
    lines.push_back("const std::int64_t " + v + " = lo[" + ds + "] + t % (hi[" +
                    ds + "] - lo[" + ds + "]);");
    lines.push_back("t /= hi[" + ds + "] - lo[" + ds + "];");
  }
  if (rank == 0)
    lines.push_back("(void)t;");
  for (unsigned d = 0; d <= rank; ++d)
    for (std::string &line : scopes[d].lines)
      lines.push_back(std::move(line));
  lines.push_back(storeStatement(value));
  lines.push_back("}");

  // The device entry points; nvcc only.
  lines.push_back("#ifdef __CUDACC__");
  lines.push_back("__global__ void " + n + "_global(const " + callType +
                  " call) {");
  lines.push_back(n + "_body(call, {blockIdx.x, blockIdx.y, blockIdx.z}, "
                      "{blockDim.x, blockDim.y, blockDim.z}, "
                      "{threadIdx.x, threadIdx.y, threadIdx.z});");
  lines.push_back("}");
  lines.push_back("cudaError_t " + n +
                  "_launch(const tofu::runtime::KernelCall &call, "
                  "cudaStream_t stream) {");
  lines.push_back(callType + " dc;");
  lines.push_back("if (!tofu::runtime::toDeviceCall(call, dc)) return "
                  "cudaErrorInvalidValue;");
  lines.push_back("std::int64_t n = tofu::runtime::deviceThreadCount(dc.varLo, "
                  "dc.varHi, " + std::to_string(rank) + ");");
  lines.push_back("if (n == 0) return cudaSuccess;");
  lines.push_back("unsigned bs = tofu::runtime::DeviceBlockSize;");
  lines.push_back("if ((n + bs - 1) / bs > 2147483647) return "
                  "cudaErrorInvalidConfiguration;");
  lines.push_back(n + "_global<<<unsigned((n + bs - 1) / bs), bs, 0, "
                      "stream>>>(dc);");
  lines.push_back("return cudaGetLastError();");
  lines.push_back("}");
  lines.push_back("#endif");

  // The body over every block and thread of the grid a launch would use.
  lines.push_back("void " + n + "(const tofu::runtime::KernelCall &call) {");
  lines.push_back(callType + " dc;");
  lines.push_back("if (!tofu::runtime::toDeviceCall(call, dc)) return;");
  lines.push_back("std::int64_t n = tofu::runtime::deviceThreadCount(dc.varLo, "
                  "dc.varHi, " + std::to_string(rank) + ");");
  lines.push_back("const unsigned bs = " + std::to_string(EmulatedBlockSize) +
                  ";");
  lines.push_back("for (unsigned b = 0; b < unsigned((n + bs - 1) / bs); ++b) {");
  lines.push_back("for (unsigned x = 0; x < bs; ++x) {");
  lines.push_back(n + "_body(dc, {b, 0, 0}, {bs, 1, 1}, {x, 0, 0});");
  lines.push_back("}");
  lines.push_back("}");
  lines.push_back("}");
  return indentLines(lines);
}

std::string codegen::getCudaKernelPrelude() {
  return "// A CUDA translation unit (docs/CUDA.md): nvcc -x cu compiles the "
         "device\n// entry points; a host C++ compiler compiles the bodies "
         "and the host\n// functions that run them over an emulated grid.\n"
         "#include \"tofu/Runtime/DeviceKernel.h\"\n"
         "// exp and erf as the device computes them (MathHelpers.h).\n"
         "#define TOFU_KG_CUDA_UNIT 1\n" +
         getKernelPrelude();
}

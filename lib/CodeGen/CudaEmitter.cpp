//===- CudaEmitter.cpp - Assemble a CUDA kernel ---------------------------===//
//
// This file implements the CUDA target of KernelBuilder (docs/CUDA.md). It
// reuses the expression lowering of the C++ target unchanged (values are
// doubles, index arithmetic and bounds settled at generation time) and
// replaces the loop nest over the output variables by one thread per
// output element: thread `block.x * blockSize.x + thread.x` of a 1-D grid
// takes the element of that row-major rank in the call's box of the output
// variables, and computes it with its reductions as sequential loops in
// that thread. A reduction shared by several elements (free in some output
// variables only: a softmax's row sum, a normalization's mean) is a phase
// (CudaPhase): an earlier kernel, one thread per value of its variables,
// runs the same sequential loop into a table of doubles in scratch memory,
// which the later kernels read. A long sum with few values is split: one
// phase of SplitParts threads per value, each adding a strided share of its
// points, then one adding each value's partial sums in order (no barrier:
// each thread runs alone, as on the host). Per kernel `NAME` with phases
// 0..P-1 it emits
//
//   TOFU_HD std::int64_t NAME_scratch(lo, hi);   // the tables' doubles
//   TOFU_HD void NAME_pK_body(const DeviceCall<I, V> &call, double *scratch,
//                             Dim3 block, Dim3 blockSize, Dim3 thread);
//   TOFU_HD void NAME_body(const DeviceCall<I, V> &call, double *scratch,
//                          Dim3 block, Dim3 blockSize, Dim3 thread);
//   #ifdef __CUDACC__
//   __global__ void NAME_pK_global(const DeviceCall<I, V> call, double *scratch);
//   __global__ void NAME_global(const DeviceCall<I, V> call, double *scratch);
//   cudaError_t NAME_launch(const KernelCall &call, cudaStream_t stream);
//   #endif
//   void NAME(const KernelCall &call);   // the same kernels over the emulated grid
//
// (without phases, no NAME_scratch, NAME_pK_* nor `scratch` parameters).
// NAME_launch allocates the scratch with cudaMallocAsync on the stream,
// launches the phases in order, then the element kernel, and frees it with
// cudaFreeAsync; NAME runs the same kernels in the same order on the host.
//
// so that the body compiles with the host C++ compiler as well as with
// nvcc, and `NAME` is a KernelCall-ABI function kernel-check can run.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "tofu/TDL/ExprWalk.h"

using namespace tofu;
using namespace tofu::codegen;
using namespace tofu::tdl;

/// The block size of the emulated grid: smaller than the device's so that
/// the host harness crosses block boundaries on small boxes.
static constexpr unsigned EmulatedBlockSize = 32;

/// The block size of a phase's kernel on the device: its threads each run
/// a whole reduction, and there are few of them (one per channel, per row),
/// so small blocks spread them over more multiprocessors.
static constexpr unsigned PhaseBlockSize = 32;

/// A phase's sum is split (CudaPhase::parts) where it has at most this many
/// values, each over at least MinSplitPoints points: its partial sums take
/// MaxSplitValues * SplitParts doubles (8 MiB) of scratch at most.
static constexpr int64_t MaxSplitValues = 4096;
static constexpr int64_t MinSplitPoints = 16 * CudaPhase::SplitParts;

/// The number of points of the box of output variables `vars` in the box
/// [lo, hi) (C++ arrays named `lo`, `hi`): "1" for none.
static std::string boxSize(ArrayRef<unsigned> vars, StringRef lo, StringRef hi) {
  std::string size;
  for (unsigned v : vars) {
    std::string d = std::to_string(v);
    size += (size.empty() ? "" : " * ") + ("(" + hi + "[" + d + "] - " + lo +
                                           "[" + d + "])").str();
  }
  return size.empty() ? "1" : size;
}

llvm::Optional<std::string> KernelBuilder::hoistToPhase(const ReduceExpr &e,
                                                       unsigned target) {
  unsigned rank = op.getOutputRank();
  if (target > rank)
    return llvm::None;
  for (const Scope &s : scopes)
    if (s.barrier)
      return llvm::None;
  // Hoisted out of enclosing reductions, it is computed only where their
  // ranges are not empty, as lowerReduce's inline loop is.
  std::string guard;
  for (unsigned s = target + 1; s < scopes.size(); ++s)
    for (unsigned var : scopes[s].vars)
      if (var >= rank) {
        std::string v = varName(var);
        guard += (guard.empty() ? "" : " && ") + v + "lo < " + v + "hi";
      }
  SmallVector<unsigned, 4> free = collectFreeIndexVars(e);
  for (unsigned v : free)
    if (!llvm::is_contained(threadVars, v))
      return llvm::None;
  // A long sum with few values is split: SplitParts threads per value each
  // add a strided share of its points, a second phase adds their partial
  // sums in order of part. It is a phase even where it is free in every
  // variable the thread binds (a batch norm's statistics).
  int64_t values = 1, points = 1;
  for (unsigned v : free)
    values *= varExtents[v];
  for (const auto &var : e.getVars())
    points *= varExtents[var->getId()];
  bool split = &e != cudaSplit && e.getReducer() == Reducer::Sum &&
               values <= MaxSplitValues && points >= MinSplitPoints;
  if (!split && free.size() >= threadVars.size())
    return llvm::None;
  // Lowered before under the same guard: its table is filled.
  auto known = cudaTables.find(&e);
  if (known != cudaTables.end() && cudaPhases[known->second].guard == guard)
    return cudaPhases[known->second].entry;

  // Lower it as the top of a thread that binds its free variables only,
  // each at its own output level (its own reductions hoist as usual).
  std::vector<Scope> saved = std::move(scopes);
  SmallVector<unsigned, 4> savedVars = std::move(threadVars);
  scopes.assign(rank + 1, Scope());
  for (unsigned v : free)
    scopes[v + 1].vars.push_back(v);
  threadVars.assign(free.begin(), free.end());
  CudaPhase phase;
  const ReduceExpr *savedSplit = cudaSplit;
  if (split)
    cudaSplit = &e;
  phase.value = lowerReduce(e);
  cudaSplit = savedSplit;
  for (Scope &s : scopes)
    for (std::string &line : s.lines)
      phase.lines.push_back(std::move(line));
  scopes = std::move(saved);
  threadVars = std::move(savedVars);
  phase.vars = free;
  phase.guard = guard;
  phase.table = fresh("tab");
  // The entry's rank in the row-major box of the variables.
  std::string offset;
  for (unsigned v : free) {
    std::string d = std::to_string(v);
    std::string at = "(" + varName(v) + " - lo[" + d + "])";
    offset = offset.empty() ? at
                            : "(" + offset + ") * (hi[" + d + "] - lo[" + d +
                                  "]) + " + at;
  }
  phase.entry = phase.table + "[" + (offset.empty() ? "0" : offset) + "]";
  if (split) {
    CudaPhase total;
    total.vars = free;
    total.guard = guard;
    total.table = fresh("tab");
    total.entry = total.table + phase.entry.substr(phase.table.size());
    std::string acc = fresh("r"), part = fresh("p"),
                parts = std::to_string(CudaPhase::SplitParts);
    total.lines.push_back("double " + acc + " = 0.0;");
    total.lines.push_back("for (std::int64_t " + part + " = 0; " + part + " < " +
                          parts + "; ++" + part + ") " + acc + " += " +
                          phase.table + "[t0 * " + parts + " + " + part + "];");
    total.value = acc;
    phase.parts = CudaPhase::SplitParts;
    cudaPhases.push_back(std::move(phase));
    phase = std::move(total);
  }
  cudaTables[&e] = cudaPhases.size();
  cudaPhases.push_back(std::move(phase));
  return cudaPhases.back().entry;
}

/// The number of threads of phase `p` (and doubles of its table) in the
/// box [lo, hi).
static std::string phaseThreads(const CudaPhase &p, StringRef lo, StringRef hi) {
  std::string size = boxSize(p.vars, lo, hi);
  return p.parts == 1 ? size : "(" + size + ") * " + std::to_string(p.parts);
}

/// The declarations of those of `b`'s phase tables (one after another in
/// `scratch`) that the statements `body` use.
static void declarePhaseTables(const KernelBuilder &b,
                               ArrayRef<std::string> body,
                               std::vector<std::string> &lines) {
  std::string at = "scratch";
  for (const CudaPhase &p : b.cudaPhases) {
    if (llvm::any_of(body, [&](const std::string &line) {
          return line.find(p.table + "[") != std::string::npos;
        }))
      lines.push_back("double *" + p.table + " = " + at + ";");
    at += " + " + phaseThreads(p, "lo", "hi");
  }
}

/// The statements binding output variables `vars` (increasing) from the
/// thread's row-major rank `t` in their box of `count` points, returning
/// past its end; with `keepRank`, the rank is kept in `t0` (a phase's
/// table entry). With `parts` above 1, the thread's `part` is the rank's
/// innermost digit, below the variables.
static void bindThreadVars(const KernelBuilder &b, ArrayRef<unsigned> vars,
                           const std::string &count, bool keepRank,
                           unsigned parts, std::vector<std::string> &lines) {
  lines.push_back("std::int64_t t = std::int64_t(block.x) * blockSize.x + thread.x;");
  lines.push_back("if (t >= " + count + ") return;");
  if (keepRank)
    lines.push_back("const std::int64_t t0 = t;");
  if (parts != 1) {
    lines.push_back("const std::int64_t part = t % " + std::to_string(parts) + ";");
    lines.push_back("t /= " + std::to_string(parts) + ";");
  }
  for (unsigned i = vars.size(); i-- > 0;) {
    std::string v = b.varName(vars[i]), d = std::to_string(vars[i]);
    if (i == 0) {
      lines.push_back("const std::int64_t " + v + " = lo[" + d + "] + t;");
      continue;
    }
    lines.push_back("const std::int64_t " + v + " = lo[" + d + "] + t % (hi[" +
                    d + "] - lo[" + d + "]);");
    lines.push_back("t /= hi[" + d + "] - lo[" + d + "];");
  }
  if (vars.empty())
    lines.push_back("(void)t;");
}

std::string KernelBuilder::buildCuda(StringRef name) {
  std::string value;
  cudaTarget = true;
  for (unsigned d = 0; d != op.getOutputRank(); ++d)
    threadVars.push_back(d);
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
  bool phased = !cudaPhases.empty();
  // The parameters after the call, and their arguments.
  std::string scratchParam = phased ? ", double *scratch" : "";
  std::string scratchArg = phased ? ", scratch" : "";
  std::string bodyParams = " &call" + scratchParam +
                           ", tofu::runtime::Dim3 block, tofu::runtime::Dim3 "
                           "blockSize, tofu::runtime::Dim3 thread) {";
  if (phased) {
    lines.push_back("TOFU_HD inline std::int64_t " + n +
                    "_scratch(const std::int64_t *lo, const std::int64_t *hi) {");
    std::string total;
    for (const CudaPhase &p : cudaPhases)
      total += (total.empty() ? "" : " + ") + phaseThreads(p, "lo", "hi");
    lines.push_back("return " + total + ";");
    lines.push_back("}");
  }
  for (unsigned k = 0; k != cudaPhases.size(); ++k) {
    CudaPhase &p = cudaPhases[k];
    lines.push_back("TOFU_HD inline void " + n + "_p" + std::to_string(k) +
                    "_body(const " + callType + bodyParams);
    declareBoxes(lines);
    std::string store = p.table + "[t0] = " + p.value + ";";
    if (!p.guard.empty())
      store = "if (" + p.guard + ") " + store;
    p.lines.push_back(store);
    declarePhaseTables(*this, p.lines, lines);
    bindThreadVars(*this, p.vars, phaseThreads(p, "lo", "hi"),
                   /*keepRank=*/true, p.parts, lines);
    for (std::string &line : p.lines)
      lines.push_back(std::move(line));
    lines.push_back("}");
  }
  lines.push_back("TOFU_HD inline void " + n + "_body(const " + callType +
                  bodyParams);
  declareBoxes(lines);
  std::vector<std::string> body;
  for (unsigned d = 0; d <= rank; ++d)
    for (std::string &line : scopes[d].lines)
      body.push_back(std::move(line));
  body.push_back(storeStatement(value));
  declarePhaseTables(*this, body, lines);
  // The thread's output element: its rank in the row-major box of the
  // output variables, innermost variable fastest.
  bindThreadVars(*this, threadVars,
                 "tofu::runtime::deviceThreadCount(lo, hi, " +
                     std::to_string(rank) + ")",
                 /*keepRank=*/false, 1, lines);
  for (std::string &line : body)
    lines.push_back(std::move(line));
  lines.push_back("}");

  // The device entry points; nvcc only.
  lines.push_back("#ifdef __CUDACC__");
  auto global = [&](const std::string &body) {
    lines.push_back("__global__ void " + body + "_global(const " + callType +
                    " call" + scratchParam + ") {");
    lines.push_back(body + "_body(call" + scratchArg +
                    ", {blockIdx.x, blockIdx.y, blockIdx.z}, "
                    "{blockDim.x, blockDim.y, blockDim.z}, "
                    "{threadIdx.x, threadIdx.y, threadIdx.z});");
    lines.push_back("}");
  };
  for (unsigned k = 0; k != cudaPhases.size(); ++k)
    global(n + "_p" + std::to_string(k));
  global(n);
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
  if (phased) {
    // A phase has at most n threads, in blocks of PhaseBlockSize; a split
    // one's partial sums SplitParts per value, in blocks of bs.
    lines.push_back("if ((n + " + std::to_string(PhaseBlockSize - 1) + ") / " +
                    std::to_string(PhaseBlockSize) +
                    " > 2147483647) return cudaErrorInvalidConfiguration;");
    for (unsigned k = 0; k != cudaPhases.size(); ++k) {
      const CudaPhase &p = cudaPhases[k];
      std::string pn = "p" + std::to_string(k) + "n";
      lines.push_back("const std::int64_t " + pn + " = " +
                      phaseThreads(p, "dc.varLo", "dc.varHi") + ";");
      if (p.parts != 1)
        lines.push_back("if ((" + pn + " + bs - 1) / bs > 2147483647) return "
                        "cudaErrorInvalidConfiguration;");
    }
    lines.push_back("double *scratch = nullptr;");
    lines.push_back("cudaError_t err = cudaMallocAsync(reinterpret_cast<void "
                    "**>(&scratch), std::size_t(" + n +
                    "_scratch(dc.varLo, dc.varHi)) * sizeof(double), stream);");
    lines.push_back("if (err != cudaSuccess) return err;");
    lines.push_back("const unsigned ps = " + std::to_string(PhaseBlockSize) + ";");
    for (unsigned k = 0; k != cudaPhases.size(); ++k) {
      std::string pn = "p" + std::to_string(k) + "n";
      std::string size = cudaPhases[k].parts == 1 ? "ps" : "bs";
      lines.push_back(n + "_p" + std::to_string(k) + "_global<<<unsigned((" +
                      pn + " + " + size + " - 1) / " + size + "), " + size +
                      ", 0, stream>>>(dc, scratch);");
    }
    lines.push_back(n + "_global<<<unsigned((n + bs - 1) / bs), bs, 0, "
                        "stream>>>(dc, scratch);");
    lines.push_back("err = cudaGetLastError();");
    lines.push_back("cudaError_t freed = cudaFreeAsync(scratch, stream);");
    lines.push_back("return err != cudaSuccess ? err : freed;");
  } else {
    lines.push_back(n + "_global<<<unsigned((n + bs - 1) / bs), bs, 0, "
                        "stream>>>(dc);");
    lines.push_back("return cudaGetLastError();");
  }
  lines.push_back("}");
  lines.push_back("#endif");

  // The bodies over every block and thread of the grids a launch would
  // use, in its order.
  lines.push_back("void " + n + "(const tofu::runtime::KernelCall &call) {");
  lines.push_back(callType + " dc;");
  lines.push_back("if (!tofu::runtime::toDeviceCall(call, dc)) return;");
  lines.push_back("std::int64_t n = tofu::runtime::deviceThreadCount(dc.varLo, "
                  "dc.varHi, " + std::to_string(rank) + ");");
  lines.push_back("const unsigned bs = " + std::to_string(EmulatedBlockSize) +
                  ";");
  auto emulate = [&](const std::string &body, const std::string &count) {
    lines.push_back("for (unsigned b = 0; b < unsigned((" + count +
                    " + bs - 1) / bs); ++b) {");
    lines.push_back("for (unsigned x = 0; x < bs; ++x) {");
    lines.push_back(body + "_body(dc" + scratchArg +
                    ", {b, 0, 0}, {bs, 1, 1}, {x, 0, 0});");
    lines.push_back("}");
    lines.push_back("}");
  };
  if (phased) {
    lines.push_back("if (n == 0) return;");
    lines.push_back("std::vector<double> tables(std::size_t(" + n +
                    "_scratch(dc.varLo, dc.varHi)));");
    lines.push_back("double *scratch = tables.data();");
    for (unsigned k = 0; k != cudaPhases.size(); ++k)
      emulate(n + "_p" + std::to_string(k),
              "(" + phaseThreads(cudaPhases[k], "dc.varLo", "dc.varHi") + ")");
  }
  emulate(n, "n");
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

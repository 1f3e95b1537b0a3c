//===- GraphKernels.cpp - One translation unit of kernels per graph -------===//
//
// This file implements emitGraphKernels: each op's instance is generated
// under a placeholder name, ops whose kernels have the same text share the
// first one, and the table of KernelInfo in graph order closes the unit.
//
//===----------------------------------------------------------------------===//

#include "tofu/CodeGen/GraphKernels.h"

#include "tofu/Graph/Graph.h"
#include "tofu/Graph/SpecLibrary.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <optional>

using namespace tofu;
using namespace tofu::codegen;

llvm::Expected<KernelInstance>
codegen::makeKernelInstance(const graph::Graph &g, unsigned opIndex,
                            graph::SpecLibrary &specs) {
  const graph::Op &op = g.getOp(opIndex);
  auto err = [&](const Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "op '" + op.name + "' (operator '" +
                                       op.type + "'): " + msg);
  };
  if (op.getOutput() < 0)
    return err("it has no output tensor");
  KernelInstance inst;
  for (const graph::TensorRef &ref : op.inputs) {
    if (ref.index < 0)
      return err("unknown input tensor '" + ref.name + "'");
    inst.inputShapes.push_back(g.getTensor(ref.index).shape);
    inst.inputTypes.push_back(g.getTensor(ref.index).dtype);
  }
  const graph::Tensor &out = g.getTensor(op.getOutput());
  inst.outputShape = out.shape;
  inst.outputType = out.dtype;
  SmallVector<tdl::NamedParamValue, 4> params(op.params.begin(),
                                              op.params.end());
  auto instance = specs.instantiate(op.type, inst.inputShapes, params,
                                    out.shape.size());
  if (!instance)
    return err(llvm::toString(instance.takeError()));
  inst.op = (*instance)->op;
  for (const tdl::ParamValue &v : (*instance)->params)
    inst.params.push_back(v.asReal());
  return inst;
}

namespace {
constexpr const char *Placeholder = "TOFU_KERNEL_NAME";

std::string quote(StringRef s) {
  std::string q = "\"";
  for (char c : s)
    q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return q + "\"";
}
/// The CUDA unit's table of launch functions, one per op in graph order
/// (null without a kernel), compiled by nvcc only.
std::string emitLaunchTable(const graph::Graph &g, const GraphKernels &result) {
  std::string src = "\n#ifdef __CUDACC__\n// One launch function per op, in "
                    "graph order.\nusing tofu_launch_fn = cudaError_t (*)(const "
                    "tofu::runtime::KernelCall &, cudaStream_t);\nextern \"C\" "
                    "const tofu_launch_fn *" +
                    std::string(GraphCudaLaunchesSymbol) +
                    "(unsigned *count) {\n  static const tofu_launch_fn table[] = {\n";
  for (unsigned i = 0, n = g.getNumOps(); i != n; ++i) {
    int k = result.opKernel[i];
    src += "      " +
           (k < 0 ? std::string("nullptr") : result.kernels[k].name + "_launch") +
           ", // " + quote(g.getOp(i).name) + "\n";
  }
  return src + "  };\n  *count = " + std::to_string(g.getNumOps()) +
         ";\n  return table;\n}\n#endif\n";
}

/// The fused kernels (emitFusedKernel) of chains of up to
/// runtime::MaxChainLength consecutive ops the runtime's fusion rule may
/// pick by their kernels alone (runtime::fusableKernels) where each
/// intermediate has no other reader: from each op, the pair and the
/// longest such chain; from a GEMM, its value's reader, that one's, and so
/// on, wherever they are in the graph, every affine prefix
/// (emitEpilogueKernel); sets `result.fused`. The plan and the workers
/// decide which chains run (runtime::findFusableLinks).
std::string emitFusedChains(const graph::Graph &g, graph::SpecLibrary &specs,
                            GraphKernels &result) {
  std::string body;
  unsigned n = g.getNumOps();
  result.fused.assign(getFusedTableSize(n), "");
  auto isGemm = [&](unsigned i) {
    return result.opKernel[i] >= 0 &&
           result.kernels[result.opKernel[i]].kind == KernelKind::Gemm;
  };
  // Per op i: the op reading i's output alone, where i may run inside it
  // (a link), and the input positions it reads it at; else empty. An
  // element-wise op links to i + 1 only; a GEMM's chain (its epilogue,
  // which the executor may run at the GEMM, docs/CodeGen.md "Fusion")
  // follows each value's one reader wherever it is.
  std::vector<std::vector<unsigned>> link(n);
  std::vector<unsigned> next(n, 0);
  // The link from op i into `to` and `slots`; false where there is none.
  auto findLink = [&](unsigned i, bool adjacent, unsigned &to,
                      std::vector<unsigned> &slots) {
    unsigned t = g.getOp(i).getOutput();
    ArrayRef<unsigned> users = g.getUsers(t);
    if (users.empty() || llvm::any_of(users, [&](unsigned u) {
          return u != users.front();
        }))
      return false;
    unsigned u = users.front();
    int ka = result.opKernel[i], kb = result.opKernel[u];
    if (ka < 0 || kb < 0 || u <= i || (adjacent && u != i + 1))
      return false;
    const graph::Op &b = g.getOp(u);
    slots.clear();
    for (unsigned p = 0; p != b.inputs.size(); ++p)
      if (b.inputs[p].index == int(t))
        slots.push_back(p);
    // A GEMM starts a chain only where its epilogue is affine in it
    // (emitEpilogueKernel), which `emit` finds out.
    to = u;
    return runtime::fusableKernels(
        result.kernels[ka].kind == KernelKind::Elementwise || isGemm(i),
        result.kernels[kb].kind == KernelKind::Elementwise, slots,
        result.kernels[kb].pointwiseInputs);
  };
  for (unsigned i = 0; i + 1 < n; ++i)
    if (!findLink(i, /*adjacent=*/true, next[i], link[i]))
      link[i].clear();
  std::vector<std::optional<KernelInstance>> instances(n);
  auto instance = [&](unsigned i) -> const KernelInstance * {
    if (!instances[i]) {
      llvm::Expected<KernelInstance> inst = makeKernelInstance(g, i, specs);
      if (!inst) {
        llvm::consumeError(inst.takeError());
        return nullptr;
      }
      instances[i] = std::move(*inst);
    }
    return &*instances[i];
  };
  llvm::StringMap<std::string> byText;
  std::vector<KernelInstance> chain;
  std::vector<unsigned> members;
  std::vector<std::vector<unsigned>> slots;
  // The kernel of the first `length` ops of `chain` (from op i), if they
  // are a dense-run chain.
  auto emit = [&](unsigned i, unsigned length) {
    ArrayRef<KernelInstance> ops =
        ArrayRef<KernelInstance>(chain).take_front(length);
    ArrayRef<std::vector<unsigned>> reads =
        ArrayRef<std::vector<unsigned>>(slots).take_front(length);
    llvm::Expected<std::string> source =
        result.kernels[result.opKernel[i]].kind == KernelKind::Gemm
            ? emitEpilogueKernel(ops, reads, Placeholder)
            : emitFusedKernel(ops, reads, Placeholder);
    if (!source) {
      llvm::consumeError(source.takeError());
      return false;
    }
    auto [it, added] = byText.try_emplace(*source, "");
    if (added) {
      it->second = "tofu_fused" + std::to_string(byText.size() - 1);
      for (unsigned k = 0; k != length; ++k)
        it->second += "_" + sanitizeIdentifier(g.getOp(members[k]).type);
      std::string text = *source;
      for (size_t at = text.find(Placeholder); at != std::string::npos;
           at = text.find(Placeholder, at + it->second.size()))
        text.replace(at, strlen(Placeholder), it->second);
      body += text + "\n";
    }
    result.fused[getFusedTableIndex(i, length)] = it->second;
    return true;
  };
  for (unsigned i = 0; i + 1 < n; ++i) {
    // A GEMM's chain follows its value's readers wherever they are; the
    // element-wise ops' own links are to i + 1 only.
    bool gemm = isGemm(i);
    chain.clear();
    members.clear();
    slots.assign(1, {});
    std::vector<unsigned> reads;
    for (unsigned j = i, to = 0; j < n; j = to) {
      const KernelInstance *inst = instance(j);
      if (!inst)
        break;
      chain.push_back(*inst);
      if (j > i)
        slots.push_back(reads);
      members.push_back(j);
      if (chain.size() == runtime::MaxChainLength)
        break;
      if (gemm ? !findLink(j, /*adjacent=*/false, to, reads)
               : link[j].empty())
        break;
      if (!gemm) {
        to = next[j];
        reads = link[j];
      }
    }
    // From op i: the pair, and the longest chain that is a dense run (a
    // worker's chain from i runs to there unless the pool or its boxes end
    // it earlier: such a chain runs in blocks), not every length, which
    // costs compile time for chains that rarely run (docs/CodeGen.md
    // "Fusion"). A pair that is not a dense run is in every longer chain.
    if (chain.size() < 2 || !emit(i, 2))
      continue;
    // A GEMM's epilogue: every affine prefix (the runtime's chain from a
    // GEMM must have a kernel, GraphKernels.h).
    if (gemm) {
      for (unsigned length = 3; length <= chain.size() && emit(i, length);
           ++length)
        ;
      continue;
    }
    for (unsigned length = chain.size(); length > 2 && !emit(i, length);
         --length)
      ;
  }
  return body;
}

/// The table of fused kernels, by getFusedTableIndex (null: none).
std::string emitFusedTable(const GraphKernels &result) {
  std::string src =
      "\n// Per op i and chain length n = 2.." +
      std::to_string(runtime::MaxChainLength) +
      ": at i * " + std::to_string(runtime::MaxChainLength - 1) +
      " + n - 2 the fused kernel of ops i..i + n - 1, or null.\n"
      "using tofu_fused_fn = bool (*)(const tofu::runtime::KernelCall &);\n"
      "extern \"C\" const tofu_fused_fn *" +
      std::string(GraphFusedSymbol) +
      "(unsigned *count) {\n  static const tofu_fused_fn table[] = {\n";
  for (const std::string &name : result.fused)
    src += "      " + (name.empty() ? "nullptr" : name) + ",\n";
  return src + "  };\n  *count = " + std::to_string(result.fused.size()) +
         ";\n  return table;\n}\n";
}
} // namespace

llvm::Expected<GraphKernels>
codegen::emitGraphKernels(const graph::Graph &g, graph::SpecLibrary &specs,
                          const KernelOptions &options) {
  GraphKernels result;
  llvm::StringMap<unsigned> byText;
  std::string body;
  for (unsigned i = 0, n = g.getNumOps(); i != n; ++i) {
    const graph::Op &op = g.getOp(i);
    if (op.getOutput() < 0)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "op '" + op.name + "' has no output");
    llvm::Expected<KernelInstance> inst = makeKernelInstance(g, i, specs);
    llvm::Expected<GeneratedKernel> kernel =
        inst ? emitKernel(*inst, Placeholder, options)
             : llvm::Expected<GeneratedKernel>(inst.takeError());
    if (!kernel) {
      result.opKernel.push_back(-1);
      result.notes.push_back(llvm::toString(kernel.takeError()));
      continue;
    }
    auto [it, added] = byText.try_emplace(kernel->source, result.kernels.size());
    if (added) {
      kernel->name = "tofu_k" + std::to_string(result.kernels.size()) + "_" +
                     sanitizeIdentifier(op.type);
      for (size_t at = kernel->source.find(Placeholder);
           at != std::string::npos;
           at = kernel->source.find(Placeholder, at + kernel->name.size()))
        kernel->source.replace(at, strlen(Placeholder), kernel->name);
      body += kernel->source + "\n";
      result.kernels.push_back(std::move(*kernel));
    }
    result.opKernel.push_back(it->second);
    result.notes.emplace_back();
  }

  std::string &src = result.source;
  bool cuda = options.target == KernelTarget::Cuda;
  if (!cuda)
    body += emitFusedChains(g, specs, result);
  src = (cuda ? getCudaKernelPrelude() : getKernelPrelude()) + body;
  for (unsigned k = 0; k != result.kernels.size(); ++k) {
    const GeneratedKernel &kernel = result.kernels[k];
    if (kernel.varNames.empty())
      continue;
    src += "static const char *const " + kernel.name + "_vars[] = {";
    for (unsigned v = 0; v != kernel.varNames.size(); ++v)
      src += (v ? ", " : "") + quote(kernel.varNames[v]);
    src += "};\n";
  }
  src += "\n// One entry per op, in graph order.\nextern \"C\" const "
         "tofu::runtime::KernelInfo *" +
         std::string(GraphKernelsSymbol) + "(unsigned *count) {\n";
  if (g.getNumOps() == 0) {
    src += "  *count = 0;\n  return nullptr;\n}\n";
    return result;
  }
  src += "  static const tofu::runtime::KernelInfo table[] = {\n";
  for (unsigned i = 0, n = g.getNumOps(); i != n; ++i) {
    int k = result.opKernel[i];
    if (k < 0) {
      std::string why = result.notes[i];
      std::replace(why.begin(), why.end(), '\n', ' ');
      src += "      {" + quote(g.getOp(i).name) +
             ", nullptr, nullptr, 0}, // no kernel: " + why + "\n";
      continue;
    }
    const GeneratedKernel &kernel = result.kernels[k];
    src += "      {" + quote(kernel.name) + ", " + kernel.name + ", " +
           (kernel.varNames.empty() ? "nullptr" : kernel.name + "_vars") +
           ", " + std::to_string(kernel.varNames.size()) + "}, // " +
           quote(g.getOp(i).name) + "\n";
  }
  src += "  };\n  *count = " + std::to_string(g.getNumOps()) +
         ";\n  return table;\n}\n";
  if (!cuda)
    src += emitFusedTable(result);
  if (cuda)
    src += emitLaunchTable(g, result);
  return result;
}

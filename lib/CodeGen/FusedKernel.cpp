//===- FusedKernel.cpp - A fused element-wise chain as one kernel ---------===//
//
// This file implements emitFusedKernel: the kernel of the last op of a
// chain a1 -> ... -> an with the value of each op before it, which the next
// reads at its own element's index, computed in the same iteration
// (docs/CodeGen.md "Fusion"). Every op must be of the dense-run form
// (DenseRun.cpp: every read at the element's own index), of rank 1 or more.
// Each op keeps its own lowering: its declarations and constants, then a
// lambda computing its element at the variables (from the previous op's
// value, its reads of that output replaced: KernelBuilder::inlinedInputs)
// and converting it to its output's element type exactly as its store
// does; the last op's lambda ends in its own store. The call's dense run
// goes in blocks of 512 elements, each op's loop over the block writing its
// values into a block on the stack that the next op's loop reads, so each
// element of an's output is bit for bit what the n kernels, storing and
// reading back each intermediate, compute.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "MathHelpers.h"

#include "llvm/ADT/STLExtras.h"

using namespace tofu;
using namespace tofu::codegen;

namespace {
/// Elements of a block of the run, per op (each intermediate's block on
/// the stack: at most 7 x 4 KiB of f64).
constexpr unsigned FusedBlockElements = 512;
} // namespace

void codegen::emitElementLambda(KernelBuilder &k, const std::string &lambda,
                                const std::string &callName,
                                const std::string &extraParam,
                                const std::string &last,
                                std::vector<std::string> &lines) {
  unsigned rank = k.op.getOutputRank();
  lines.push_back("auto " + lambda + " = [&] {");
  lines.push_back("const tofu::runtime::KernelCall &call = " + callName + ";");
  std::vector<std::string> declared;
  k.declareBoxes(declared);
  for (std::string &line : declared)
    if (!StringRef(line).startswith("if (lo["))
      lines.push_back(std::move(line));
  for (std::string &line : k.scopes[0].lines)
    lines.push_back(std::move(line));
  std::string params;
  for (unsigned d = 0; d != rank; ++d)
    params += (d ? ", const std::int64_t " : "const std::int64_t ") +
              k.varName(d);
  if (!extraParam.empty())
    params += ", " + extraParam;
  lines.push_back("return [=](" + params + ") {");
  for (unsigned d = 1; d <= rank; ++d)
    for (std::string &line : k.scopes[d].lines)
      lines.push_back(std::move(line));
  lines.push_back(last);
  lines.push_back("};");
  lines.push_back("}();");
}

llvm::Error codegen::refuseChain(ArrayRef<KernelInstance> chain,
                                StringRef what, const Twine &why) {
  std::string names;
  for (const KernelInstance &inst : chain)
    names += (names.empty() ? "'" : " -> '") + inst.op->getName().str() + "'";
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      ("cannot fuse " + what + names + ": " + why).str());
}

std::size_t codegen::emitFusedSignature(StringRef name, unsigned rank,
                                        std::vector<std::string> &lines) {
  std::size_t signature = lines.size();
  lines.push_back("bool " + name.str() +
                  "(const tofu::runtime::KernelCall &fused) {");
  lines.push_back("const std::int64_t *lo = fused.varLo, *hi = fused.varHi;");
  for (unsigned d = 0; d != rank; ++d)
    lines.push_back("if (lo[" + std::to_string(d) + "] >= hi[" +
                    std::to_string(d) + "]) return true;");
  return signature;
}

std::string codegen::finishFusedKernel(std::vector<std::string> &lines,
                                      std::size_t signature) {
  lines.push_back("return true;");
  lines.push_back("}");
  if (llvm::any_of(lines, callsVectorForms))
    lines[signature].insert(0, "TOFU_KG_WIDE ");
  return indentLines(lines);
}

void codegen::emitChainCalls(ArrayRef<KernelInstance> chain, unsigned from,
                             std::vector<std::string> &lines) {
  unsigned first = 0;
  for (unsigned k = 0; k != chain.size(); ++k) {
    unsigned numInputs = chain[k].inputShapes.size();
    if (k >= from)
      lines.push_back("const tofu::runtime::KernelCall call" +
                      std::to_string(k) + "{fused.inputs + " +
                      std::to_string(first) + ", " + std::to_string(numInputs) +
                      ", fused.output, lo, hi};");
    first += numInputs;
  }
}

llvm::Expected<std::string>
codegen::emitFusedKernel(ArrayRef<KernelInstance> chain,
                         ArrayRef<std::vector<unsigned>> slotsOfPrevious,
                         StringRef name) {
  unsigned n = chain.size();
  auto refuse = [&](const Twine &why) { return refuseChain(chain, "", why); };
  if (n < 2 || slotsOfPrevious.size() != n)
    return refuse("not a chain of two ops or more");
  KernelOptions options;
  options.useBlas = false;
  std::vector<std::unique_ptr<KernelBuilder>> builders;
  std::vector<std::string> values(n);
  const Shape &shape = chain.back().outputShape;
  unsigned rank = shape.size();
  std::vector<llvm::Optional<std::vector<unsigned>>> dense;
  for (unsigned k = 0; k != n; ++k) {
    const KernelInstance &inst = chain[k];
    builders.push_back(std::make_unique<KernelBuilder>(inst, options));
    KernelBuilder &kb = *builders.back();
    if (inst.outputShape != shape || !getElementTypeName(inst.outputType))
      return refuse("the outputs' shapes or an element type differ");
    if (k > 0) {
      const KernelInstance &previous = chain[k - 1];
      if (slotsOfPrevious[k].empty())
        return refuse("op " + Twine(k) + " reads nothing of the op before");
      kb.inlinedInputs.assign(inst.inputShapes.size(), "");
      for (unsigned p : slotsOfPrevious[k]) {
        if (p >= inst.inputShapes.size() ||
            inst.inputShapes[p] != previous.outputShape ||
            inst.inputTypes[p] != previous.outputType)
          return refuse("input " + Twine(p) + " of op " + Twine(k) +
                        " is not the op before's output");
        kb.inlinedInputs[p] = "tofu_t";
      }
    }
    if (!kb.lowerBody(values[k]))
      return kb.takeError();
    // Rank 1 too: a rank-1 box is always one run. Scalar inputs (Adam's
    // bias corrections) read the same element wherever the run goes.
    dense.push_back(kb.getDenseRunInputs(1, /*scalars=*/true));
    if (!dense.back() || kb.getVarExtents().size() != rank)
      return refuse("not all element-wise kernels with a dense-run branch");
    for (unsigned p : slotsOfPrevious[k])
      if (!llvm::is_contained(*dense.back(), p))
        return refuse("op " + Twine(k) +
                      " reads the op before's output not at its own index");
  }

  std::string r = std::to_string(rank);
  std::vector<std::string> lines;
  std::string described;
  for (const std::unique_ptr<KernelBuilder> &kb : builders)
    described += (described.empty() ? "" : " -> ") + kb->describe();
  lines.push_back("// fused: " + described);
  std::size_t signature = emitFusedSignature(name, rank, lines);
  emitChainCalls(chain, 0, lines);
  std::string cond =
      "tofu_kg::isDenseRun(fused.output.lo, fused.output.extent, lo, hi, " +
      r + ")";
  for (unsigned k = 0; k != n; ++k) {
    std::string call = "call" + std::to_string(k);
    for (unsigned p : *dense[k]) {
      if (llvm::is_contained(slotsOfPrevious[k], p))
        continue;
      std::string view = call + ".inputs[" + std::to_string(p) + "]";
      cond += " && tofu_kg::isDenseRun(" + view + ".lo, " + view +
              ".extent, lo, hi, " + r + ")";
    }
  }
  lines.push_back("if (!(" + cond + ")) return false;");
  for (unsigned k = 0; k != n; ++k) {
    KernelBuilder &kb = *builders[k];
    std::string param =
        k ? "const " + std::string(getElementTypeName(chain[k - 1].outputType)) +
                " tofu_t"
          : "";
    std::string last = k + 1 == n ? kb.storeStatement(values[k])
                                  : "return " + kb.storedValue(values[k]) + ";";
    emitElementLambda(kb, "element" + std::to_string(k),
                      "call" + std::to_string(k), param, last, lines);
  }
  std::string volume, fixed;
  for (unsigned d = 0; d != rank; ++d) {
    std::string ds = std::to_string(d);
    volume += (d ? " * " : "") + ("(hi[" + ds + "] - lo[" + ds + "])");
    fixed += "lo[" + ds + "], ";
  }
  // The variables before the last stay at the box's first index; the last
  // runs on over the whole run (DenseRun.cpp).
  fixed.resize(fixed.size() - ("lo[" + std::to_string(rank - 1) + "], ").size());
  std::string ls = std::to_string(rank - 1);
  lines.push_back("const std::int64_t runEnd = lo[" + ls + "] + " + volume +
                  ";");
  // The run in blocks, each op's loop over a block on its own, writing its
  // values to a block on the stack that the next op's loop reads: each loop
  // vectorizes or not by itself (one op's branch, such as sqrt's errno,
  // does not keep the others scalar), and the blocks stay in the
  // first-level cache.
  std::string block = std::to_string(FusedBlockElements);
  for (unsigned k = 0; k + 1 < n; ++k)
    lines.push_back(std::string(getElementTypeName(chain[k].outputType)) +
                    " tofu_v" + std::to_string(k) + "[" + block + "];");
  lines.push_back("for (std::int64_t b = lo[" + ls + "]; b < runEnd; b += " +
                  block + ") {");
  lines.push_back("const std::int64_t bEnd = runEnd - b < " + block +
                  " ? runEnd : b + " + block + ";");
  for (unsigned k = 0; k != n; ++k) {
    std::string ks = std::to_string(k);
    std::string args = fixed + "e" +
                       (k ? ", tofu_v" + std::to_string(k - 1) + "[e - b]" : "");
    lines.push_back("for (std::int64_t e = b; e < bEnd; ++e)");
    lines.push_back(k + 1 == n ? "element" + ks + "(" + args + ");"
                               : "tofu_v" + ks + "[e - b] = element" + ks +
                                     "(" + args + ");");
  }
  lines.push_back("}");
  return finishFusedKernel(lines, signature);
}

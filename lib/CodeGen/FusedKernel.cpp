//===- FusedKernel.cpp - A fused element-wise pair as one kernel ----------===//
//
// This file implements emitFusedKernel: the kernel of op b with the value of
// op a, which b reads at its own element's index (t = a's output), computed
// in the same iteration (docs/CodeGen.md "Fusion"). Both ops must be of the
// dense-run form (DenseRun.cpp: every read at the element's own index), of
// rank 1 or more.
// Each op keeps its own lowering: a's declarations and constants, then a
// lambda computing a's element at the variables and converting it to t's
// element type exactly as a's store does; b's the same, with b's reads of t
// replaced by that value (KernelBuilder::inlinedInputs) and b's own store.
// One loop over the call's dense run calls both lambdas per element, so
// each element of b's output is bit for bit what a's kernel, storing t, and
// b's kernel, reading it back, compute.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "MathHelpers.h"

#include "llvm/ADT/STLExtras.h"

using namespace tofu;
using namespace tofu::codegen;

namespace {
/// The lambda factory of one side: `call` bound to `callName`, the side's
/// box declarations (without the early returns, which the fused kernel
/// makes itself) and constants, returning a lambda over the output
/// variables (and `extraParam`, if any) whose body is the side's per
/// element statements followed by `last`.
void emitSide(KernelBuilder &k, const std::string &lambda,
              const std::string &callName, const std::string &extraParam,
              const std::string &last, std::vector<std::string> &lines) {
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
} // namespace

llvm::Expected<std::string>
codegen::emitFusedKernel(const KernelInstance &a, const KernelInstance &b,
                         ArrayRef<unsigned> slotsOfT, StringRef name) {
  auto refuse = [&](const Twine &why) {
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        ("cannot fuse '" + a.op->getName() + "' into '" + b.op->getName() +
         "': " + why)
            .str());
  };
  KernelOptions options;
  options.useBlas = false;
  KernelBuilder ka(a, options), kb(b, options);
  const char *tType = getElementTypeName(a.outputType);
  if (!tType || a.outputShape != b.outputShape)
    return refuse("the outputs' shapes or a's element type differ");
  if (slotsOfT.empty())
    return refuse("b reads nothing of a's output");
  kb.inlinedInputs.assign(b.inputShapes.size(), "");
  for (unsigned p : slotsOfT) {
    if (p >= b.inputShapes.size() || b.inputShapes[p] != a.outputShape ||
        b.inputTypes[p] != a.outputType)
      return refuse("input " + Twine(p) + " of b is not a's output");
    kb.inlinedInputs[p] = "tofu_t";
  }
  std::string valueA, valueB;
  if (!ka.lowerBody(valueA))
    return ka.takeError();
  if (!kb.lowerBody(valueB))
    return kb.takeError();
  unsigned rank = a.outputShape.size();
  // Rank 1 too: a rank-1 box is always one run.
  auto denseA = ka.getDenseRunInputs(1), denseB = kb.getDenseRunInputs(1);
  if (!denseA || !denseB || ka.getVarExtents().size() != rank ||
      kb.getVarExtents().size() != rank)
    return refuse("not both element-wise kernels with a dense-run branch");
  for (unsigned p : slotsOfT)
    if (!llvm::is_contained(*denseB, p))
      return refuse("b reads a's output not at its own index");

  std::string r = std::to_string(rank);
  std::string numA = std::to_string(a.inputShapes.size()),
              numB = std::to_string(b.inputShapes.size());
  std::vector<std::string> lines;
  lines.push_back("// fused: " + ka.describe() + " -> " + kb.describe());
  std::size_t signature = lines.size();
  lines.push_back("bool " + name.str() +
                  "(const tofu::runtime::KernelCall &fused) {");
  lines.push_back("const std::int64_t *lo = fused.varLo, *hi = fused.varHi;");
  for (unsigned d = 0; d != rank; ++d)
    lines.push_back("if (lo[" + std::to_string(d) + "] >= hi[" +
                    std::to_string(d) + "]) return true;");
  lines.push_back("const tofu::runtime::KernelCall callA{fused.inputs, " +
                  numA + ", fused.output, lo, hi};");
  lines.push_back("const tofu::runtime::KernelCall callB{fused.inputs + " +
                  numA + ", " + numB + ", fused.output, lo, hi};");
  std::string cond =
      "tofu_kg::isDenseRun(fused.output.lo, fused.output.extent, lo, hi, " +
      r + ")";
  auto denseView = [&](const std::string &call, unsigned p) {
    std::string view = call + ".inputs[" + std::to_string(p) + "]";
    cond += " && tofu_kg::isDenseRun(" + view + ".lo, " + view +
            ".extent, lo, hi, " + r + ")";
  };
  for (unsigned p : *denseA)
    denseView("callA", p);
  for (unsigned p : *denseB)
    if (!llvm::is_contained(slotsOfT, p))
      denseView("callB", p);
  lines.push_back("if (!(" + cond + ")) return false;");
  emitSide(ka, "elementA", "callA", "",
           "return " + ka.storedValue(valueA) + ";", lines);
  emitSide(kb, "elementB", "callB",
           "const " + std::string(tType) + " tofu_t", kb.storeStatement(valueB),
           lines);
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
  lines.push_back("for (std::int64_t e = lo[" + ls + "]; e < runEnd; ++e)");
  lines.push_back("elementB(" + fixed + "e, elementA(" + fixed + "e));");
  lines.push_back("return true;");
  lines.push_back("}");
  if (llvm::any_of(lines, callsVectorForms))
    lines[signature].insert(0, "TOFU_KG_WIDE ");
  return indentLines(lines);
}

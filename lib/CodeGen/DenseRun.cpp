//===- DenseRun.cpp - Element-wise kernels as one loop over a dense run ---===//
//
// This file implements the dense-run branch of KernelBuilder's C++ target.
// An element-wise body that reads every input at the output element's own
// index (`p[i, j, k, l] - 0.1 * g[i, j, k, l]`) computes each element from
// the elements at the same offset in each box. Where the call's iteration
// box is one contiguous run of every box it touches (the dimensions after
// some d whole in each box, those before d a single index), the offsets
// walk all boxes in step, so one loop over the call's elements computes
// exactly what the loop nest computes, element by element, with unit
// strides the compiler vectorizes. The loop nest's innermost loop would
// run over the last dimension only: 3 elements for a 3x3 convolution's
// weight, 2 for ResNet-18's last activations, too short for vectors or to
// amortize the loop. The branch keeps the loop nest's variable names: the
// variables before the last are fixed at the box's first index and the
// last one runs on over the whole run, so the lowered value and the store
// are the loop nest's own strings.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "tofu/TDL/ExprWalk.h"

using namespace tofu;
using namespace tofu::codegen;
using namespace tofu::tdl;

llvm::Optional<std::vector<unsigned>>
KernelBuilder::getDenseRunInputs(unsigned minRank, bool scalars) const {
  unsigned rank = op.getOutputRank();
  if (rank < minRank || contraction)
    return llvm::None;
  bool dense = true;
  unsigned varUses = 0, readIndexUses = 0;
  std::vector<bool> read(inst.inputShapes.size(), false);
  walkExpr(op.getBody(), [&](const Expr &e) {
    if (isa<ReduceExpr>(e)) {
      dense = false;
      return;
    }
    if (const auto *name = dyn_cast<NameExpr>(&e)) {
      varUses += name->getIndexVar() != nullptr || name->isEllipsis();
      return;
    }
    const auto *r = dyn_cast<TensorReadExpr>(&e);
    if (!r)
      return;
    const TensorDecl *tensor = r->getTensor();
    if (scalars && tensor && tensor->getPosition() < read.size() &&
        r->getNumIndices() == 0 &&
        inst.inputShapes[tensor->getPosition()].empty())
      return;
    if (!tensor || tensor->getPosition() >= read.size() ||
        r->getNumIndices() != rank ||
        inst.inputShapes[tensor->getPosition()] != inst.outputShape) {
      dense = false;
      return;
    }
    for (unsigned d = 0; d != rank; ++d) {
      const auto *name = dyn_cast<NameExpr>(&r->getIndex(d));
      if (!name || name->isEllipsis() || !name->getIndexVar() ||
          name->getIndexVar()->getId() != d ||
          !name->getIndexVar()->isOutput()) {
        dense = false;
        return;
      }
    }
    readIndexUses += rank;
    read[tensor->getPosition()] = true;
  });
  // Every use of an index variable is an index of such a read: the value
  // depends on the element's position only through the reads.
  if (!dense || varUses != readIndexUses)
    return llvm::None;
  std::vector<unsigned> inputs;
  for (unsigned p = 0; p != read.size(); ++p)
    if (read[p])
      inputs.push_back(p);
  return inputs;
}

void KernelBuilder::emitDenseRun(const std::string &value,
                                 ArrayRef<unsigned> inputs,
                                 std::vector<std::string> &lines) {
  unsigned rank = op.getOutputRank();
  std::string r = std::to_string(rank);
  std::string cond =
      "tofu_kg::isDenseRun(call.output.lo, call.output.extent, lo, hi, " + r +
      ")";
  for (unsigned p : inputs) {
    std::string view = "call.inputs[" + std::to_string(p) + "]";
    cond += " && tofu_kg::isDenseRun(" + view + ".lo, " + view +
            ".extent, lo, hi, " + r + ")";
  }
  lines.push_back("if (" + cond + ") {");
  std::string volume;
  for (unsigned d = 0; d != rank; ++d) {
    std::string ds = std::to_string(d);
    volume += (d ? " * " : "") + ("(hi[" + ds + "] - lo[" + ds + "])");
    if (d + 1 != rank)
      lines.push_back("const std::int64_t " + varName(d) + " = lo[" + ds +
                      "];");
  }
  std::string last = varName(rank - 1), ls = std::to_string(rank - 1);
  lines.push_back("const std::int64_t runEnd = lo[" + ls + "] + " + volume +
                  ";");
  lines.push_back("for (std::int64_t " + last + " = lo[" + ls + "]; " + last +
                  " < runEnd; ++" + last + ") {");
  for (unsigned d = 1; d <= rank; ++d)
    for (const std::string &line : scopes[d].lines)
      lines.push_back(line);
  lines.push_back(storeStatement(value));
  lines.push_back("}");
  lines.push_back("return;");
  lines.push_back("}");
}

//===- Transpose.cpp - Matrix transposes through OpenBLAS -----------------===//
//
// This file implements the transpose routing of KernelBuilder: a body
// `X[j, i]` over the output (i, j), X of the output's floating-point type,
// is one out-of-place transposed copy of the box (OpenBLAS's
// cblas_somatcopy / cblas_domatcopy). A loop nest, even tiled, is several
// times slower on large matrices: its strided reads defeat the prefetchers
// and, at power-of-two row lengths, alias in the caches.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

using namespace tofu;
using namespace tofu::codegen;
using namespace tofu::tdl;

llvm::Optional<Contraction> KernelBuilder::matchTranspose() {
  DType type = inst.outputType;
  if (op.getOutputRank() != 2 || (type != DType::F32 && type != DType::F64))
    return llvm::None;
  const auto *read = dyn_cast<TensorReadExpr>(&op.getBody());
  if (!read || !read->getTensor() || read->getNumIndices() != 2)
    return llvm::None;
  unsigned t = read->getTensor()->getPosition();
  if (inst.inputTypes[t] != type)
    return llvm::None;
  for (unsigned d = 0; d != 2; ++d) {
    const auto *name = dyn_cast<NameExpr>(&read->getIndex(d));
    if (!name || !name->getIndexVar() || name->getIndexVar()->getId() != 1 - d ||
        varExtents[1 - d] > inst.inputShapes[t][d])
      return llvm::None;
  }
  Contraction c;
  c.a = read;
  c.wholeBody = true;
  c.transposeCopy = true;
  return c;
}

void KernelBuilder::emitTranspose(const Contraction &c,
                                  std::vector<std::string> &out) {
  unsigned t = c.a->getTensor()->getPosition();
  std::string in = "in" + std::to_string(t);
  bool single = inst.outputType == DType::F32;
  out.push_back(std::string("// the transposed copy of the box (") +
                (single ? "cblas_somatcopy" : "cblas_domatcopy") + ")");
  // The input box's [j x i] block, transposed into the output's [i x j].
  out.push_back(std::string("tofu_kg::") +
                (single ? "cblas_somatcopy" : "cblas_domatcopy") +
                "(tofu_kg::RowMajor, tofu_kg::Trans, int(hi[1] - lo[1]), "
                "int(hi[0] - lo[0]), 1, " +
                in + " + " + inputOffset(t, {"lo[1]", "lo[0]"}) + ", int(" + in +
                "s0), out + " + outputOffset({"lo[0]", "lo[1]"}) +
                ", int(outs0));");
}

//===- Evaluator.cpp - One-shot evaluation of a TDL operator --------------===//
//
// This file implements evaluate(), the convenience entry point that
// compiles an operator for the given tensors and runs it once.
//
//===----------------------------------------------------------------------===//

#include "tofu/Eval/Evaluator.h"

using namespace tofu;
using namespace tofu::eval;

llvm::Expected<Tensor> eval::evaluate(const tdl::OpDecl &op,
                                      ArrayRef<const Tensor *> inputs,
                                      ArrayRef<double> params,
                                      ArrayRef<int64_t> outputShape,
                                      DType outputType) {
  SmallVector<Shape, 4> shapes;
  for (const Tensor *t : inputs)
    shapes.emplace_back(t->getShape().begin(), t->getShape().end());
  llvm::Expected<CompiledOp> compiled =
      CompiledOp::compile(op, shapes, params, outputShape);
  if (!compiled)
    return compiled.takeError();
  Tensor output(outputType, outputShape);
  compiled->run(inputs, output);
  return output;
}

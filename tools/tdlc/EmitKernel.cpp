//===- EmitKernel.cpp - tdlc's --emit=cpp-kernel --------------------------===//
//
// This file implements tdlc's kernel output (--emit=cpp-kernel, and
// --emit=cuda for the CUDA target): it instantiates the selected
// operator at --shape/--out-shape/--param (the output shape inferred when
// not given), takes the element types from --dtype and --out-dtype, and
// prints codegen::emitKernel's function, by default after the prelude so
// that the output compiles as it is.
//
//===----------------------------------------------------------------------===//

#include "EmitKernel.h"
#include "EmitStrategies.h"

#include "tofu/Analysis/ShapeInference.h"
#include "tofu/CodeGen/KernelEmitter.h"

#include "llvm/Support/WithColor.h"

using namespace tofu;
using namespace tofu::tdl;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory kernelCategory("tdlc kernel options (--emit=cpp-kernel)");

cl::list<std::string> dtypes(
    "dtype", cl::desc("Element type of an input tensor (default f32)"),
    cl::value_desc("TENSOR=f32|f64|i64|i32|i8|bool"), cl::cat(kernelCategory));

cl::opt<std::string> outDType(
    "out-dtype",
    cl::desc("Element type of the output (default: f32 for a real body, "
             "else i64)"),
    cl::value_desc("DTYPE"), cl::cat(kernelCategory));

cl::opt<std::string> kernelName("kernel-name",
                                cl::desc("Name of the kernel function "
                                         "(default: tofu_k_<operator>)"),
                                cl::value_desc("NAME"), cl::cat(kernelCategory));

cl::opt<bool> noBlas("no-blas",
                     cl::desc("Keep contractions on the loop nest instead of "
                              "calling BLAS"),
                     cl::cat(kernelCategory));

cl::opt<bool> noPrelude("no-prelude",
                        cl::desc("Print the kernel function only, without "
                                 "the includes and helpers"),
                        cl::cat(kernelCategory));

llvm::raw_ostream &error() { return llvm::WithColor::error(llvm::errs(), "tdlc"); }

} // namespace

cl::OptionCategory &tofu::getKernelCategory() { return kernelCategory; }

int tofu::emitCppKernel(llvm::raw_ostream &os, Instantiator &instantiator,
                        ArrayRef<const OpDecl *> ops,
                        codegen::KernelTarget target) {
  if (ops.empty())
    return 1;
  InstanceShapes shapes;
  int status;
  const Instance *instance =
      instantiateSelected(instantiator, ops, status, &shapes);
  if (!instance)
    return status;
  const OpDecl &op = *instance->op;
  codegen::KernelInstance inst;
  inst.op = &op;
  inst.inputShapes = shapes.inputs;
  for (const ParamValue &v : instance->params)
    inst.params.push_back(v.asReal());
  if (shapes.hasOutput) {
    inst.outputShape = shapes.output;
  } else {
    llvm::Expected<Shape> inferred =
        analysis::inferOutputShape(op, inst.inputShapes, instance->intParams);
    if (!inferred) {
      error() << llvm::toString(inferred.takeError()) << '\n';
      return 1;
    }
    inst.outputShape = *inferred;
  }
  inst.inputTypes.assign(inst.inputShapes.size(), DType::F32);
  for (StringRef arg : dtypes) {
    auto [name, value] = arg.split('=');
    const TensorDecl *tensor = op.lookupTensor(name);
    llvm::Optional<DType> type = lookupDType(value);
    if (!tensor || !type) {
      error() << "--dtype: expected TENSOR=DTYPE with a tensor of '"
              << op.getName() << "' and a dtype, got '" << arg << "'\n";
      return 2;
    }
    inst.inputTypes[tensor->getPosition()] = *type;
  }
  inst.outputType =
      op.getBody().getType() == ValueType::Real ? DType::F32 : DType::I64;
  if (!outDType.empty()) {
    llvm::Optional<DType> type = lookupDType(outDType);
    if (!type) {
      error() << "--out-dtype: unknown dtype '" << outDType << "'\n";
      return 2;
    }
    inst.outputType = *type;
  }
  codegen::KernelOptions options;
  options.useBlas = !noBlas;
  options.target = target;
  std::string name = kernelName.empty()
                         ? "tofu_k_" + codegen::sanitizeIdentifier(op.getName())
                         : kernelName.getValue();
  llvm::Expected<codegen::GeneratedKernel> kernel =
      codegen::emitKernel(inst, name, options);
  if (!kernel) {
    error() << llvm::toString(kernel.takeError()) << '\n';
    return 1;
  }
  if (!noPrelude)
    os << (target == codegen::KernelTarget::Cuda ? codegen::getCudaKernelPrelude()
                                                 : codegen::getKernelPrelude());
  os << "// Variables (KernelCall order):";
  for (unsigned v = 0; v != kernel->varNames.size(); ++v)
    os << ' ' << kernel->varNames[v] << "<" << kernel->varExtents[v];
  os << (kernel->usesBlas     ? "; contraction routed to BLAS\n"
         : kernel->deviceGemm ? "; contraction: cuBLAS on the device\n"
         : kernel->conv && target == codegen::KernelTarget::Cuda
             ? "; convolution: cuDNN on the device\n"
             : "\n")
     << kernel->source;
  return 0;
}

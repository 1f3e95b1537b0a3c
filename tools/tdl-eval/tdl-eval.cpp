//===- tdl-eval.cpp - Evaluate a TDL operator on .npy tensors -------------===//
//
// tdl-eval reads operator definitions (one or more .tdl files, checked as
// one library), binds one operator's tensors to .npy files and its params
// to values, instantiates it at those shapes and params (overload
// resolution, ellipsis expansion; see Instantiate.h), computes the output
// with the TDL evaluator and writes it as a .npy file. The output shape is
// given with --out-shape or inferred from the input shapes. Exit status: 0
// success, 1 bad input (TDL errors, unreadable .npy files, shapes or params
// that fit no overload, an opaque operator), 2 bad usage.
//
//===----------------------------------------------------------------------===//

#include "tofu/Analysis/ShapeInference.h"
#include "tofu/Eval/Evaluator.h"
#include "tofu/Eval/Npy.h"
#include "tofu/Support/Diagnostics.h"
#include "tofu/Support/CommandLine.h"
#include "tofu/TDL/Instantiate.h"
#include "tofu/TDL/Parser.h"
#include "tofu/TDL/Sema.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"

#include <chrono>

using namespace tofu;
using namespace tofu::tdl;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory evalCategory("tdl-eval options");

cl::list<std::string> inputFiles(cl::Positional, cl::OneOrMore,
                                 cl::desc("<input .tdl files>"),
                                 cl::cat(evalCategory));

cl::opt<std::string> opName("op", cl::Required,
                            cl::desc("The operator to evaluate"),
                            cl::value_desc("NAME"), cl::cat(evalCategory));

cl::list<std::string> tensorFiles(
    "input",
    cl::desc("Bind tensor TENSOR (named as in the first overload) to a .npy "
             "file; bare FILEs are the inputs in order, their number picking "
             "among overloads"),
    cl::value_desc("TENSOR=FILE or FILE"), cl::cat(evalCategory));

cl::list<std::string> paramValues(
    "param", cl::desc("Value of a param (an integer, or a real number for a "
                      "real param)"),
    cl::value_desc("NAME=VALUE"), cl::cat(evalCategory));

cl::opt<std::string> outShape(
    "out-shape",
    cl::desc("Shape of the output (default: inferred from the input shapes)"),
    cl::value_desc("D0xD1x..."), cl::cat(evalCategory));

cl::opt<std::string> outType(
    "out-dtype",
    cl::desc("dtype of the output: f32, f64, i64, i32, i8, bool, or f16 and "
             "bf16 (written as f32) (default: "
             "i64 for an integer body, else f32 if an input is f32, else "
             "f64)"),
    cl::value_desc("DTYPE"), cl::cat(evalCategory));

cl::opt<std::string> outputFile("o", cl::desc("Write the output .npy to FILE"),
                                cl::value_desc("FILE"), cl::Required,
                                cl::cat(evalCategory));

cl::opt<bool> printTime("time",
                        cl::desc("Print compile and run times to stderr"),
                        cl::cat(evalCategory));

enum ExitStatus { Success = 0, BadInput = 1, BadUsage = 2 };

/// Reports a usage error (exit status 2) or a bad-input error (status 1).
llvm::raw_ostream &error() {
  return llvm::WithColor::error(llvm::errs(), "tdl-eval");
}

/// `NAME=VALUE` split at the first '='; None (with an error) if malformed.
llvm::Optional<std::pair<StringRef, StringRef>>
parseAssignment(StringRef flag, StringRef arg) {
  auto parts = arg.split('=');
  if (parts.first.empty() || !arg.contains('=')) {
    error() << "--" << flag << " expects NAME=VALUE, got '" << arg << "'\n";
    return llvm::None;
  }
  return parts;
}

/// The operator's inputs read from the --input files, by tensor position.
struct Inputs {
  std::vector<eval::Tensor> tensors;
  SmallVector<Shape, 4> shapes;
};

/// Reads the .npy file `path` as input `pos`.
ExitStatus readInput(StringRef path, unsigned pos, Inputs &in) {
  llvm::Expected<eval::Tensor> t = eval::readNpy(path);
  if (!t) {
    error() << llvm::toString(t.takeError()) << '\n';
    return BadInput;
  }
  in.shapes[pos].assign(t->getShape().begin(), t->getShape().end());
  in.tensors[pos] = std::move(*t);
  return Success;
}

/// Bare --input FILEs, one per input in order: their number picks among
/// overloads with different tensor counts.
ExitStatus readPositionalInputs(Inputs &in) {
  in.tensors.resize(tensorFiles.size());
  in.shapes.resize(tensorFiles.size());
  for (unsigned pos = 0; pos != tensorFiles.size(); ++pos) {
    if (StringRef(tensorFiles[pos]).contains('=')) {
      error() << "--input: use either TENSOR=FILE or FILE for every input\n";
      return BadUsage;
    }
    if (ExitStatus s = readInput(tensorFiles[pos], pos, in))
      return s;
  }
  return Success;
}

/// --input TENSOR=FILE, named as in the operator's first overload `op`.
ExitStatus readInputs(const OpDecl &op, Inputs &in) {
  if (llvm::none_of(tensorFiles,
                    [](StringRef arg) { return arg.contains('='); }))
    return readPositionalInputs(in);
  in.tensors.resize(op.getTensors().size());
  in.shapes.resize(op.getTensors().size());
  SmallVector<bool, 4> seen(op.getTensors().size(), false);
  for (StringRef arg : tensorFiles) {
    auto assignment = parseAssignment("input", arg);
    if (!assignment)
      return BadUsage;
    const TensorDecl *tensor = op.lookupTensor(assignment->first);
    if (!tensor) {
      error() << "--input: operator '" << op.getName() << "' has no tensor '"
              << assignment->first << "'\n";
      return BadUsage;
    }
    if (ExitStatus s = readInput(assignment->second, tensor->getPosition(), in))
      return s;
    seen[tensor->getPosition()] = true;
  }
  for (const auto &t : op.getTensors())
    if (!seen[t->getPosition()]) {
      error() << "no --input for tensor '" << t->getName()
              << "' of operator '" << op.getName() << "'\n";
      return BadUsage;
    }
  return Success;
}

/// The --param values by name: integers as ints, anything else as reals
/// (the Instantiator converts them to each param's declared type).
ExitStatus parseParams(SmallVectorImpl<NamedParamValue> &params) {
  for (StringRef arg : paramValues) {
    auto assignment = parseAssignment("param", arg);
    if (!assignment)
      return BadUsage;
    llvm::Optional<ParamValue> value = ParamValue::parse(assignment->second);
    if (!value) {
      error() << "--param: '" << assignment->second << "' is not a number\n";
      return BadUsage;
    }
    params.push_back({assignment->first.str(), *value});
  }
  return Success;
}

/// The --out-shape, if given.
ExitStatus parseOutputShape(llvm::Optional<Shape> &shape) {
  if (outShape.empty())
    return Success;
  shape.emplace();
  if (parseShape(outShape, *shape))
    return Success;
  error() << "--out-shape: malformed shape '" << outShape
          << "' (expected D0xD1x..., e.g. 4x6x20)\n";
  return BadUsage;
}

/// Refuses outputs too large to hold (a typo in --out-shape must not
/// exhaust memory).
ExitStatus checkOutputSize(ArrayRef<int64_t> shape) {
  constexpr uint64_t maxElements = uint64_t(1) << 31;
  uint64_t count = 1;
  for (int64_t extent : shape) {
    if (extent != 0 && count > maxElements / uint64_t(extent)) {
      error() << "the output " << formatShape(shape)
              << " has more than 2^31 elements\n";
      return BadInput;
    }
    count *= uint64_t(extent);
  }
  return Success;
}

/// The output shape inferred from the input shapes (analysis).
ExitStatus inferShape(const Instance &inst, const Inputs &in, Shape &shape) {
  llvm::Expected<Shape> inferred =
      analysis::inferOutputShape(*inst.op, in.shapes, inst.intParams);
  if (!inferred) {
    error() << llvm::toString(inferred.takeError()) << '\n';
    return BadInput;
  }
  shape = std::move(*inferred);
  return Success;
}

/// The --out-dtype, or the default for the body's type and the inputs.
ExitStatus resolveOutputType(const Inputs &in, bool realBody,
                             DType &dtype) {
  if (!outType.empty()) {
    llvm::Optional<DType> parsed = lookupDType(outType);
    if (!parsed) {
      error() << "--out-dtype: unknown dtype '" << outType << "'\n";
      return BadUsage;
    }
    dtype = *parsed;
    return Success;
  }
  dtype = realBody ? DType::F64 : DType::I64;
  for (const eval::Tensor &t : in.tensors)
    if (realBody && t.getDType() == DType::F32)
      dtype = DType::F32;
  return Success;
}

double millisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// Instantiates operator `name` of `library`, evaluates it and writes the
/// output file. `first` is its first overload, which names its tensors.
ExitStatus evaluateOp(const Module &library, const OpDecl &first) {
  SmallVector<NamedParamValue, 4> params;
  Inputs in;
  llvm::Optional<Shape> givenShape;
  if (ExitStatus s = parseParams(params))
    return s;
  if (ExitStatus s = readInputs(first, in))
    return s;
  if (ExitStatus s = parseOutputShape(givenShape))
    return s;
  auto start = std::chrono::steady_clock::now();
  Instantiator instantiator(library);
  llvm::Optional<unsigned> outRank;
  if (givenShape)
    outRank = givenShape->size();
  auto inst = instantiator.instantiate(first.getName(), in.shapes, params,
                                       outRank);
  if (!inst) {
    error() << llvm::toString(inst.takeError()) << '\n';
    return BadInput;
  }
  Shape shape;
  if (givenShape)
    shape = *givenShape;
  else if (ExitStatus s = inferShape(**inst, in, shape))
    return s;
  if (ExitStatus s = checkOutputSize(shape))
    return s;
  SmallVector<double, 4> values;
  for (const ParamValue &v : (*inst)->params)
    values.push_back(v.asReal());
  llvm::Expected<eval::CompiledOp> compiled =
      eval::CompiledOp::compile(*(*inst)->op, in.shapes, values, shape);
  if (!compiled) {
    error() << llvm::toString(compiled.takeError()) << '\n';
    return BadInput;
  }
  double compileMillis = millisSince(start);
  DType dtype;
  if (ExitStatus s = resolveOutputType(in, compiled->hasRealBody(), dtype))
    return s;
  eval::Tensor output(dtype, shape);
  SmallVector<const eval::Tensor *, 4> inputs;
  for (const eval::Tensor &t : in.tensors)
    inputs.push_back(&t);
  start = std::chrono::steady_clock::now();
  compiled->run(inputs, output);
  if (printTime)
    llvm::errs() << "tdl-eval: " << first.getName() << " -> "
                 << formatShape(shape) << ": instantiated and compiled in "
                 << llvm::format("%.3f", compileMillis) << " ms, ran in "
                 << llvm::format("%.3f", millisSince(start)) << " ms\n";
  if (llvm::Error e = eval::writeNpy(outputFile, output)) {
    error() << llvm::toString(std::move(e)) << '\n';
    return BadInput;
  }
  return Success;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  if (!cli::parseToolCommandLine(
          argc, argv, {&evalCategory},
          "tdl-eval: evaluate one TDL operator on tensors read from .npy "
          "files and write its output as a .npy file\n\n"
          "Exit status: 0 success, 1 bad input, 2 bad usage.\n"))
    return BadUsage;

  llvm::SourceMgr srcMgr;
  DiagnosticEngine diags(srcMgr);
  Module module;
  for (const std::string &file : inputFiles)
    parseFile(file, diags, module);
  checkModule(module, diags);
  if (diags.hasErrors())
    return BadInput;
  const OpDecl *op = module.lookupOp(opName);
  if (!op) {
    error() << "no operator named '" << opName << "' in the input\n";
    return BadInput;
  }
  return evaluateOp(module, *op);
}

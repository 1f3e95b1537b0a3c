//===- EmitStrategies.cpp - tdlc's --emit=strategies ----------------------===//
//
// This file implements tdlc's strategy output: it parses --shape,
// --out-shape and --param for the selected operator, binds the operator
// analysis to them (inferring the output shape when it is not given), and
// prints the regions through StrategyPrinter. A given output shape must
// fit the operator by the graph verifier's rule (ShapeAgreement.h). A
// generic or overloaded operator is first instantiated at the shapes and
// params (Instantiate.h).
// Malformed or unknown flag values are usage errors (exit 2); shapes that
// do not fit the operator are input errors (exit 1).
//
//===----------------------------------------------------------------------===//

#include "EmitStrategies.h"

#include "tofu/Analysis/ShapeAgreement.h"
#include "tofu/Analysis/ShapeInference.h"
#include "tofu/Analysis/StrategyPrinter.h"
#include "tofu/TDL/Instantiate.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/WithColor.h"

using namespace tofu;
using namespace tofu::tdl;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory strategiesCategory(
    "tdlc instance options (shapes and params: --emit=strategies, or one "
    "operator's instance with the other --emit kinds)");

cl::list<std::string> shapes(
    "shape", cl::desc("Shape of an input tensor"),
    cl::value_desc("TENSOR=D0xD1x..."), cl::cat(strategiesCategory));

cl::opt<std::string> outShape(
    "out-shape",
    cl::desc("Shape of the output (default: inferred from the input shapes)"),
    cl::value_desc("D0xD1x..."), cl::cat(strategiesCategory));

cl::list<std::string> paramValues(
    "param", cl::desc("Value of a param (an integer, or a real for a real param)"),
    cl::value_desc("NAME=VALUE"), cl::cat(strategiesCategory));

cl::opt<unsigned> numWorkers(
    "workers", cl::desc("Split each strategy evenly among N workers (default 2)"),
    cl::value_desc("N"), cl::init(2), cl::cat(strategiesCategory));

llvm::raw_ostream &usageError() {
  return llvm::WithColor::error(llvm::errs(), "tdlc");
}

/// Shapes and params of --shape/--out-shape/--param, by position.
struct ConcreteArgs {
  SmallVector<Shape, 4> inputs;
  Shape output;
  bool hasOutput = false;
  SmallVector<int64_t, 4> params;
  /// The params by name, for the Instantiator.
  SmallVector<tdl::NamedParamValue, 4> named;
};

/// Splits `NAME=VALUE`; false (with an error) if malformed.
bool splitAssignment(StringRef flag, StringRef arg, StringRef &name,
                     StringRef &value) {
  std::tie(name, value) = arg.split('=');
  if (!name.empty() && arg.contains('='))
    return true;
  usageError() << "--" << flag << " expects NAME=VALUE, got '" << arg << "'\n";
  return false;
}

bool parseShapes(const OpDecl &op, ConcreteArgs &args) {
  SmallVector<bool, 4> seen(op.getTensors().size(), false);
  args.inputs.resize(op.getTensors().size());
  for (StringRef arg : shapes) {
    StringRef name, value;
    if (!splitAssignment("shape", arg, name, value))
      return false;
    const TensorDecl *tensor = op.lookupTensor(name);
    if (!tensor) {
      usageError() << "--shape: operator '" << op.getName()
                   << "' has no tensor '" << name << "'\n";
      return false;
    }
    if (!parseShape(value, args.inputs[tensor->getPosition()])) {
      usageError() << "--shape: malformed shape '" << value
                   << "' (expected D0xD1x..., e.g. 4x6x20)\n";
      return false;
    }
    seen[tensor->getPosition()] = true;
  }
  for (const auto &t : op.getTensors())
    if (!seen[t->getPosition()]) {
      usageError() << "no --shape for tensor '" << t->getName()
                   << "' of operator '" << op.getName() << "'\n";
      return false;
    }
  args.hasOutput = !outShape.empty();
  if (args.hasOutput && !parseShape(outShape, args.output)) {
    usageError() << "--out-shape: malformed shape '" << outShape << "'\n";
    return false;
  }
  return true;
}

bool parseParams(const OpDecl &op, ConcreteArgs &args) {
  SmallVector<bool, 4> seen(op.getParams().size(), false);
  args.params.resize(op.getParams().size());
  for (StringRef arg : paramValues) {
    StringRef name, value;
    if (!splitAssignment("param", arg, name, value))
      return false;
    const ParamDecl *param = op.lookupParam(name);
    if (!param) {
      usageError() << "--param: operator '" << op.getName()
                   << "' has no param '" << name << "'\n";
      return false;
    }
    int64_t &slot = args.params[param->getPosition()];
    double real;
    if (param->isReal() && !value.getAsDouble(real)) {
      args.named.push_back({name.str(), ParamValue::ofReal(real)});
    } else if (value.getAsInteger(10, slot)) {
      usageError() << "--param: '" << value << "' is not "
                   << (param->isReal() ? "a number" : "an integer") << '\n';
      return false;
    } else {
      args.named.push_back({name.str(), ParamValue::ofInt(slot)});
    }
    seen[param->getPosition()] = true;
  }
  for (const auto &p : op.getParams())
    if (!seen[p->getPosition()]) {
      usageError() << "no --param for param '" << p->getName()
                   << "' of operator '" << op.getName() << "'\n";
      return false;
    }
  return true;
}

/// --param values by name, for the Instantiator, which checks the names
/// against each overload: an integer, or else a real.
bool parseNamedParams(ConcreteArgs &args) {
  for (StringRef arg : paramValues) {
    StringRef name, value;
    if (!splitAssignment("param", arg, name, value))
      return false;
    llvm::Optional<ParamValue> parsed = ParamValue::parse(value);
    if (!parsed) {
      usageError() << "--param: '" << value << "' is not a number\n";
      return false;
    }
    args.named.push_back({name.str(), *parsed});
  }
  return true;
}

bool isConcrete() {
  return !shapes.empty() || !outShape.empty() || !paramValues.empty();
}

/// Checks --out-shape against the operator by the graph verifier's shape
/// rule (analysis::judgeOutputShape): an output shape the reads do not
/// allow is an input error, as it is in a graph.
llvm::Error checkOutShape(const analysis::OperatorAnalysis &a,
                          const ConcreteArgs &args) {
  if (!args.hasOutput)
    return llvm::Error::success();
  analysis::ShapeVerdict verdict = analysis::judgeOutputShape(
      a, args.inputs, args.params, args.output, a.getOp().isOpaque());
  if (verdict.agrees())
    return llvm::Error::success();
  if (verdict.kind == analysis::ShapeVerdict::Kind::Invalid)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   verdict.detail);
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "--out-shape " + formatShape(args.output) + " does not fit operator '" +
          a.getOp().getName().str() + "': " + verdict.detail);
}

/// Binds the analysis to the flags' shapes, inferring the output shape if
/// not given.
llvm::Expected<analysis::Binding> bindArgs(const analysis::OperatorAnalysis &a,
                                           const ConcreteArgs &args) {
  if (args.hasOutput) {
    // A shape that does not bind at all gets the Binding's own message.
    auto binding =
        analysis::Binding::create(a, args.inputs, args.output, args.params);
    if (!binding)
      return binding.takeError();
    if (llvm::Error err = checkOutShape(a, args))
      return err;
    return binding;
  }
  llvm::Expected<Shape> inferred =
      analysis::inferOutputShape(a, args.inputs, args.params);
  if (!inferred)
    return inferred.takeError();
  return analysis::Binding::create(a, args.inputs, *inferred, args.params);
}

/// Instantiates the operator whose first overload is `first` at the
/// flags' shapes and params (`--shape` names the tensors of `first`; the
/// params are matched against each overload by name). Null, with `status`
/// set and the error printed, on failure.
const Instance *instantiateArgs(Instantiator &instantiator,
                                const OpDecl &first, ConcreteArgs &args,
                                int &status) {
  status = 2;
  if (!parseShapes(first, args) || !parseNamedParams(args))
    return nullptr;
  auto instance =
      args.hasOutput
          ? instantiator.instantiateForOutput(first.getName(), args.inputs,
                                              args.named, args.output)
          : instantiator.instantiate(first.getName(), args.inputs, args.named);
  status = instance ? 0 : 1;
  if (instance)
    return *instance;
  llvm::WithColor::error(llvm::errs(), "tdlc")
      << toString(instance.takeError()) << '\n';
  return nullptr;
}

/// --emit=strategies with shapes for a generic or overloaded operator:
/// instantiate, then print as for a plain one.
int emitInstanceStrategies(llvm::raw_ostream &os, const Module &module,
                           const OpDecl &first, bool json) {
  ConcreteArgs args;
  Instantiator instantiator(module);
  int status;
  const Instance *instance = instantiateArgs(instantiator, first, args, status);
  if (!instance)
    return status;
  auto a = analysis::OperatorAnalysis::analyze(*instance->op);
  if (!a) {
    llvm::WithColor::error(llvm::errs(), "tdlc") << toString(a.takeError()) << '\n';
    return 1;
  }
  args.params.assign(instance->intParams.begin(), instance->intParams.end());
  auto binding = bindArgs(*a, args);
  if (!binding) {
    llvm::WithColor::error(llvm::errs(), "tdlc")
        << toString(binding.takeError()) << '\n';
    return 1;
  }
  auto source = outShape.empty() ? analysis::OutputShapeSource::Inferred
                                 : analysis::OutputShapeSource::Given;
  if (!json) {
    printConcreteStrategies(os, *binding, source, numWorkers);
    return 0;
  }
  llvm::json::OStream out(os, /*IndentSize=*/2);
  out.object([&] {
    out.attributeArray("operators", [&] {
      writeConcreteStrategiesJSON(out, *binding, source, numWorkers);
    });
  });
  os << '\n';
  return 0;
}

} // namespace

bool tofu::hasConcreteArgs() { return isConcrete(); }

const Instance *tofu::instantiateSelected(Instantiator &instantiator,
                                          ArrayRef<const OpDecl *> ops,
                                          int &status, InstanceShapes *shapes) {
  bool overloads = llvm::all_of(ops, [&](const OpDecl *op) {
    return op->getName() == ops[0]->getName();
  });
  if (!overloads) {
    usageError() << "--shape, --out-shape and --param need --op when the file "
                    "has more than one operator\n";
    status = 2;
    return nullptr;
  }
  ConcreteArgs args;
  const Instance *instance = instantiateArgs(instantiator, *ops[0], args, status);
  if (instance && shapes) {
    shapes->inputs.assign(args.inputs.begin(), args.inputs.end());
    shapes->hasOutput = args.hasOutput;
    shapes->output = args.output;
  }
  if (!instance || !args.hasOutput)
    return instance;
  // The instance shows the operator at --out-shape: it must fit (an
  // operator outside what the analysis represents is shown as it is).
  auto a = analysis::OperatorAnalysis::analyze(*instance->op);
  if (!a) {
    llvm::consumeError(a.takeError());
    return instance;
  }
  args.params.assign(instance->intParams.begin(), instance->intParams.end());
  if (llvm::Error err = checkOutShape(*a, args)) {
    llvm::WithColor::error(llvm::errs(), "tdlc") << toString(std::move(err)) << '\n';
    status = 1;
    return nullptr;
  }
  return instance;
}

int tofu::emitStrategies(llvm::raw_ostream &os, const Module &module,
                         ArrayRef<const OpDecl *> ops, bool json) {
  bool concrete = isConcrete();
  bool overloads = llvm::all_of(ops, [&](const OpDecl *op) {
    return op->getName() == ops[0]->getName();
  });
  if (concrete && !overloads) {
    usageError() << "--shape, --out-shape and --param need --op when the file "
                    "has more than one operator\n";
    return 2;
  }
  for (const OpDecl *op : ops)
    if (op->isGeneric() && !concrete) {
      llvm::WithColor::error(llvm::errs(), "tdlc")
          << "operator '" << op->getName()
          << "' is generic (an ellipsis, a guard, or dim/rank): its "
             "strategies depend on the shapes; instantiate with --shape\n";
      return 1;
    }
  if (concrete && (ops.size() > 1 || ops[0]->isGeneric()))
    return emitInstanceStrategies(os, module, *ops[0], json);
  if (numWorkers < 1 || numWorkers > 65536) {
    usageError() << "--workers must be between 1 and 65536\n";
    return 2;
  }
  std::vector<analysis::OperatorAnalysis> analyses;
  for (const OpDecl *op : ops) {
    auto a = analysis::OperatorAnalysis::analyze(*op);
    if (!a) {
      llvm::WithColor::error(llvm::errs(), "tdlc") << toString(a.takeError()) << '\n';
      return 1;
    }
    analyses.push_back(std::move(*a));
  }
  llvm::Optional<analysis::Binding> binding;
  auto source = outShape.empty() ? analysis::OutputShapeSource::Inferred
                                 : analysis::OutputShapeSource::Given;
  if (concrete) {
    ConcreteArgs args;
    if (!parseShapes(*ops[0], args) || !parseParams(*ops[0], args))
      return 2;
    auto bound = bindArgs(analyses[0], args);
    if (!bound) {
      llvm::WithColor::error(llvm::errs(), "tdlc") << toString(bound.takeError()) << '\n';
      return 1;
    }
    binding.emplace(std::move(*bound));
  }
  if (json) {
    llvm::json::OStream out(os, /*IndentSize=*/2);
    out.object([&] {
      out.attributeArray("operators", [&] {
        for (const auto &a : analyses)
          if (binding)
            writeConcreteStrategiesJSON(out, *binding, source, numWorkers);
          else
            writeSymbolicStrategiesJSON(out, a, numWorkers);
      });
    });
    os << '\n';
    return 0;
  }
  for (size_t i = 0; i != analyses.size(); ++i) {
    if (i)
      os << '\n';
    if (binding)
      printConcreteStrategies(os, *binding, source, numWorkers);
    else
      printSymbolicStrategies(os, analyses[i], numWorkers);
  }
  return 0;
}

cl::OptionCategory &tofu::getStrategiesCategory() { return strategiesCategory; }

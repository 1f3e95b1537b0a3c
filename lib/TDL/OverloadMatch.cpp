//===- OverloadMatch.cpp - Does an overload fit a use? --------------------===//
//
// This file implements matchOverload: the checks of overload resolution,
// in order, each giving the reason an overload is rejected: param names
// (as a set) and int-ness of their values, tensor count, fixed tensor
// ranks, output rank, and finally the guard.
//
//===----------------------------------------------------------------------===//

#include "InstantiateImpl.h"


using namespace tofu;
using namespace tofu::tdl;
using namespace tofu::tdl::detail;

namespace {

std::string paramNames(const OpDecl &op) {
  std::string names;
  for (const auto &p : op.getParams())
    names += (names.empty() ? "" : ", ") + p->getName().str();
  return "<" + names + ">";
}

std::string givenNames(ArrayRef<NamedParamValue> params) {
  std::string names;
  for (const auto &param : params)
    names += (names.empty() ? "" : ", ") + param.first;
  return "<" + names + ">";
}

/// Orders the given values by `op`'s params; a reason on mismatch.
std::string matchParams(const OpDecl &op, ArrayRef<NamedParamValue> given,
                        SmallVectorImpl<ParamValue> &values) {
  auto mismatch = [&] {
    return "takes params " + paramNames(op) + " but " + givenNames(given) +
           " were given";
  };
  if (given.size() != op.getParams().size())
    return mismatch();
  values.assign(op.getParams().size(), ParamValue());
  SmallVector<bool, 4> seen(op.getParams().size(), false);
  for (const auto &[name, value] : given) {
    const ParamDecl *param = op.lookupParam(name);
    if (!param || seen[param->getPosition()])
      return mismatch();
    seen[param->getPosition()] = true;
    ParamValue &slot = values[param->getPosition()];
    if (param->isReal()) {
      slot = ParamValue::ofReal(value.asReal());
      continue;
    }
    llvm::Optional<int64_t> integer = value.getAsInteger();
    if (!integer)
      return "int param '" + name + "' was given the non-integral value " +
             std::to_string(value.realValue);
    slot = ParamValue::ofInt(*integer);
  }
  return "";
}

std::string matchRanks(const OpDecl &op, ArrayRef<Shape> shapes) {
  for (const auto &t : op.getTensors()) {
    const Shape &shape = shapes[t->getPosition()];
    unsigned rank = shape.size();
    std::string has = "its shape " + formatShape(shape) + " has rank " +
                      std::to_string(rank);
    if (t->isRankPolymorphic() && rank < t->getNumNamedDims())
      return "tensor '" + t->getName().str() + "' needs rank >= " +
             std::to_string(t->getNumNamedDims()) + " but " + has;
    if (!t->isRankPolymorphic() && t->getRank() >= 0 &&
        unsigned(t->getRank()) != rank)
      return "tensor '" + t->getName().str() + "' has rank " +
             std::to_string(t->getRank()) + " but " + has;
  }
  return "";
}

std::string matchOutputRank(const OpDecl &op, unsigned outputRank) {
  unsigned named = op.getOutputRank() - (op.getEllipsisVar() ? 1 : 0);
  if (op.getEllipsisVar() ? outputRank >= named : outputRank == named)
    return "";
  return "the output has rank " + std::to_string(outputRank) +
         " but the operator's is " + (op.getEllipsisVar() ? "at least " : "") +
         std::to_string(named);
}

} // namespace

std::string detail::matchOverload(const OpDecl &op, const Use &use,
                                  SmallVectorImpl<ParamValue> &values) {
  std::string why = matchParams(op, use.params, values);
  if (!why.empty())
    return why;
  if (op.getTensors().size() != use.inputShapes.size())
    return "takes " + std::to_string(op.getTensors().size()) +
           " tensors but " + std::to_string(use.inputShapes.size()) +
           " were given";
  why = matchRanks(op, use.inputShapes);
  if (why.empty() && use.outputRank)
    why = matchOutputRank(op, *use.outputRank);
  if (!why.empty() || !op.getGuard())
    return why;
  llvm::Optional<int64_t> holds =
      evaluateShapeExpr(*op.getGuard(), op, values, use.inputShapes, why);
  if (!holds)
    return "the guard cannot be evaluated: " + why;
  return *holds ? "" : "the guard is false";
}

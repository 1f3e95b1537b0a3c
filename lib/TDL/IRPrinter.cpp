//===- IRPrinter.cpp - Text and JSON forms of checked TDL operators -------===//
//
// This file implements printIR and writeIRJSON, which show what semantic
// analysis resolved: tensor ranks, index variables with their roles and
// extents, and the kind of every tensor index. Both walk the same facts in
// the same order.
//
//===----------------------------------------------------------------------===//

#include "tofu/TDL/ExprWalk.h"
#include "tofu/TDL/Printers.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace tofu;
using namespace tofu::tdl;

namespace {

/// "dim 0", "filters.dim0", "2", or "?" for an unresolved extent.
std::string describeExtent(const IndexVarDecl &var) {
  const Extent &extent = var.getExtent();
  switch (extent.kind) {
  case Extent::Kind::OutputDim:
    return ("output.dim" + Twine(extent.dim)).str();
  case Extent::Kind::TensorDim:
    return (extent.tensor->getName() + ".dim" + Twine(extent.dim)).str();
  case Extent::Kind::Explicit:
    return exprToString(*var.getExtentExpr());
  case Extent::Kind::Unknown:
    return "?";
  }
  return "?";
}

StringRef extentKindName(Extent::Kind kind) {
  switch (kind) {
  case Extent::Kind::OutputDim: return "output_dim";
  case Extent::Kind::TensorDim: return "tensor_dim";
  case Extent::Kind::Explicit: return "explicit";
  case Extent::Kind::Unknown: return "unknown";
  }
  return "unknown";
}

StringRef roleName(const IndexVarDecl &var) {
  return var.isOutput() ? "output" : "reduction";
}

/// "rank 2", or "rank ...+1" for a tensor read as `x[...i, j]`.
std::string describeRank(const TensorDecl &t) {
  if (t.isRankPolymorphic())
    return ("rank ...+" + Twine(t.getNumNamedDims())).str();
  return ("rank " + Twine(t.getRank())).str();
}

/// The generic form: what the operator says before instantiation.
void printGenericIR(llvm::raw_ostream &os, const OpDecl &op) {
  os << "generic op ";
  printSignature(os, op);
  os << '\n';
  for (const auto &t : op.getTensors())
    os << "  tensor " << t->getName() << ": " << describeRank(*t) << '\n';
  os << "  lambda ";
  printLambdaVars(os, op.getOutputVars());
  os << '\n';
  os << "  body (" << getValueTypeName(op.getBody().getType()) << "): ";
  printExpr(os, op.getBody());
  os << '\n';
}

} // namespace

void tdl::printIR(llvm::raw_ostream &os, const OpDecl &op) {
  if (op.isGeneric())
    return printGenericIR(os, op);
  os << "op " << op.getName();
  printParamList(os, op);
  os << '(';
  llvm::interleaveComma(op.getTensors(), os, [&](const auto &t) {
    os << t->getName() << ": rank " << t->getRank();
  });
  os << ") -> rank " << op.getOutputRank() << '\n';

  for (const IndexVarDecl *var : op.getIndexVars()) {
    os << "  var " << var->getName() << " #" << var->getId() << ": ";
    if (var->isOutput())
      os << "output";
    else
      os << getReducerName(var->getReduction()->getReducer());
    os << ", extent " << describeExtent(*var) << '\n';
  }
  for (const TensorReadExpr *read : collectTensorReads(op)) {
    os << "  read ";
    printExpr(os, *read);
    os << ": ";
    for (unsigned i = 0, n = read->getNumIndices(); i != n; ++i)
      os << (i ? ", " : "") << getIndexKindName(read->getIndexKind(i));
    os << '\n';
  }
  os << "  body (" << getValueTypeName(op.getBody().getType()) << "): ";
  printExpr(os, op.getBody());
  os << '\n';
}

void tdl::writeIRJSON(llvm::json::OStream &json, const OpDecl &op) {
  json.object([&] {
    json.attribute("name", op.getName());
    json.attributeArray("params", [&] {
      for (const auto &p : op.getParams())
        json.value(p->getName());
    });
    json.attributeArray("param_types", [&] {
      for (const auto &p : op.getParams())
        json.value(p->isReal() ? "real" : "int");
    });
    if (op.isGeneric()) {
      json.attribute("generic", true);
      if (const Expr *guard = op.getGuard())
        json.attribute("guard", exprToString(*guard));
      if (const IndexVarDecl *ellipsis = op.getEllipsisVar())
        json.attribute("ellipsis", ellipsis->getName());
    }
    json.attributeArray("tensors", [&] {
      for (const auto &t : op.getTensors())
        json.object([&] {
          json.attribute("name", t->getName());
          json.attribute("rank", t->getRank());
          if (t->isRankPolymorphic())
            json.attribute("named_dims", t->getNumNamedDims());
        });
    });
    json.attribute("output_rank", op.getOutputRank());
    json.attributeArray("vars", [&] {
      for (const IndexVarDecl *var : op.getIndexVars())
        json.object([&] {
          json.attribute("name", var->getName());
          json.attribute("id", var->getId());
          json.attribute("role", roleName(*var));
          if (var->isReduction())
            json.attribute("reducer",
                           getReducerName(var->getReduction()->getReducer()));
          const Extent &extent = var->getExtent();
          json.attributeObject("extent", [&] {
            json.attribute("kind", extentKindName(extent.kind));
            if (extent.kind == Extent::Kind::TensorDim)
              json.attribute("tensor", extent.tensor->getName());
            if (extent.kind == Extent::Kind::TensorDim ||
                extent.kind == Extent::Kind::OutputDim)
              json.attribute("dim", extent.dim);
            if (extent.kind == Extent::Kind::Explicit)
              json.attribute("expr", exprToString(*var->getExtentExpr()));
          });
        });
    });
    json.attributeArray("reads", [&] {
      for (const TensorReadExpr *read : collectTensorReads(op))
        json.object([&] {
          json.attribute("tensor", read->getTensorName());
          json.attributeArray("indices", [&] {
            for (unsigned i = 0, n = read->getNumIndices(); i != n; ++i)
              json.object([&] {
                json.attribute("expr", exprToString(read->getIndex(i)));
                json.attribute("kind", getIndexKindName(read->getIndexKind(i)));
              });
          });
        });
    });
    json.attribute("type", getValueTypeName(op.getBody().getType()));
    json.attribute("body", exprToString(op.getBody()));
  });
}

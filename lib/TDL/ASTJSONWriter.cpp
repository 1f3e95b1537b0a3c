//===- ASTJSONWriter.cpp - JSON form of the TDL syntax tree ---------------===//
//
// This file implements writeASTJSON: every node an object with a "kind"
// field, children nested, mirroring dumpAST.
//
//===----------------------------------------------------------------------===//

#include "tofu/TDL/Printers.h"

#include "llvm/Support/JSON.h"

using namespace tofu;
using namespace tofu::tdl;

namespace {

void writeExpr(llvm::json::OStream &json, const Expr &e);

void writeExprList(llvm::json::OStream &json, StringRef key,
                   ArrayRef<ExprPtr> exprs) {
  json.attributeArray(key, [&] {
    for (const ExprPtr &e : exprs)
      writeExpr(json, *e);
  });
}

void writeVar(llvm::json::OStream &json, const IndexVarDecl &var) {
  json.object([&] {
    json.attribute("name", var.getName());
    if (var.isEllipsis())
      json.attribute("ellipsis", true);
    if (const Expr *extent = var.getExtentExpr()) {
      json.attributeBegin("extent");
      writeExpr(json, *extent);
      json.attributeEnd();
    }
  });
}

void writeExpr(llvm::json::OStream &json, const Expr &e) {
  json.object([&] {
    switch (e.getKind()) {
    case Expr::Kind::IntLiteral:
      json.attribute("kind", "IntLiteral");
      json.attribute("value", cast<IntLiteralExpr>(e).getValue());
      return;
    case Expr::Kind::FloatLiteral:
      json.attribute("kind", "FloatLiteral");
      json.attribute("value", cast<FloatLiteralExpr>(e).getValue());
      return;
    case Expr::Kind::Name:
      json.attribute("kind", "Name");
      json.attribute("name", cast<NameExpr>(e).getName());
      if (cast<NameExpr>(e).isEllipsis())
        json.attribute("ellipsis", true);
      return;
    case Expr::Kind::TensorRead:
      json.attribute("kind", "TensorRead");
      json.attribute("tensor", cast<TensorReadExpr>(e).getTensorName());
      writeExprList(json, "indices", cast<TensorReadExpr>(e).getIndices());
      return;
    case Expr::Kind::Call:
      json.attribute("kind", "Call");
      json.attribute("callee", cast<CallExpr>(e).getCallee());
      writeExprList(json, "args", cast<CallExpr>(e).getArgs());
      return;
    case Expr::Kind::Reduce: {
      const auto &red = cast<ReduceExpr>(e);
      json.attribute("kind", "Reduce");
      json.attribute("reducer", getReducerName(red.getReducer()));
      json.attributeArray("vars", [&] {
        for (const auto &var : red.getVars())
          writeVar(json, *var);
      });
      json.attributeBegin("body");
      writeExpr(json, red.getBody());
      json.attributeEnd();
      return;
    }
    case Expr::Kind::Unary:
      json.attribute("kind", "Unary");
      json.attribute("op", getUnaryOpSpelling(cast<UnaryExpr>(e).getOp()));
      json.attributeBegin("operand");
      writeExpr(json, cast<UnaryExpr>(e).getOperand());
      json.attributeEnd();
      return;
    case Expr::Kind::Binary: {
      const auto &bin = cast<BinaryExpr>(e);
      json.attribute("kind", "Binary");
      json.attribute("op", getBinaryOpSpelling(bin.getOp()));
      json.attributeBegin("lhs");
      writeExpr(json, bin.getLHS());
      json.attributeEnd();
      json.attributeBegin("rhs");
      writeExpr(json, bin.getRHS());
      json.attributeEnd();
      return;
    }
    }
  });
}

} // namespace

void tdl::writeASTJSON(llvm::json::OStream &json, const OpDecl &op) {
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
    json.attributeArray("tensors", [&] {
      for (const auto &t : op.getTensors())
        json.value(t->getName());
    });
    if (const Expr *guard = op.getGuard()) {
      json.attributeBegin("guard");
      writeExpr(json, *guard);
      json.attributeEnd();
    }
    json.attributeArray("vars", [&] {
      for (const auto &v : op.getOutputVars())
        writeVar(json, *v);
    });
    json.attributeBegin("body");
    writeExpr(json, op.getBody());
    json.attributeEnd();
  });
}

//===- Printers.h - Text and JSON renderings of TDL operators ---*- C++ -*-===//
//
// This file declares the renderings that tdlc emits and tests check: an
// infix expression printer, a tree dump of the AST, the checked IR, and
// JSON forms of both (the one-line summary, which needs the operator
// analysis, is tofu/Analysis/OperatorSummary.h). All output is stable (no addresses, sorted
// only by source order) so that FileCheck tests can rely on it.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TDL_PRINTERS_H
#define TOFU_TDL_PRINTERS_H

#include "tofu/TDL/AST.h"

namespace llvm {
class raw_ostream;
class SourceMgr;
namespace json {
class OStream;
} // namespace json
} // namespace llvm

namespace tofu {
namespace tdl {

/// Prints `e` in TDL's infix syntax with the fewest parentheses that keep
/// its meaning.
void printExpr(llvm::raw_ostream &os, const Expr &e);
/// Returns printExpr's output as a string.
std::string exprToString(const Expr &e);
/// Prints a lambda's variables as written: `...i, j < 2`.
void printLambdaVars(llvm::raw_ostream &os,
                     ArrayRef<std::unique_ptr<IndexVarDecl>> vars);
/// Prints `<PARAMS>` with `: real` on real params; nothing if there are none.
void printParamList(llvm::raw_ostream &os, const OpDecl &op);
/// Prints `NAME<PARAMS>(TENSORS) where GUARD` with `: real` on real params.
void printSignature(llvm::raw_ostream &os, const OpDecl &op);

/// Dumps the syntax tree of `op`, one node per line, with `LINE:COL` of the
/// declarations.
void dumpAST(llvm::raw_ostream &os, const OpDecl &op,
             const llvm::SourceMgr &srcMgr);
/// Prints the checked IR of `op`: tensor ranks, index variables with their
/// extents, every tensor read with the kind of each index, and the body. A
/// generic operator prints its generic form instead: signature with param
/// types and guard, output lambda with the ellipsis, and body.
void printIR(llvm::raw_ostream &os, const OpDecl &op);

/// Writes the syntax tree of `op` as a JSON object.
void writeASTJSON(llvm::json::OStream &json, const OpDecl &op);
/// Writes the checked IR of `op` as a JSON object.
void writeIRJSON(llvm::json::OStream &json, const OpDecl &op);

} // namespace tdl
} // namespace tofu

#endif // TOFU_TDL_PRINTERS_H

//===- Sema.h - Semantic checks of TDL operators ----------------*- C++ -*-===//
//
// This file declares the semantic analysis that turns a parsed Module into
// checked IR: names resolved to declarations, tensor ranks fixed by their
// reads, index variable extents resolved (explicit, inferred from a tensor
// dimension, or an error), value types assigned, and every tensor index
// classified (see IndexKind). Operators may share a name when they differ in
// their param names or are guarded (overloads, see Instantiate.h).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TDL_SEMA_H
#define TOFU_TDL_SEMA_H

#include "tofu/TDL/AST.h"

namespace tofu {
class DiagnosticEngine;

namespace tdl {

/// Checks and annotates every operator of `module`, reporting problems
/// through `diags`. Returns false if any error was reported; the annotations
/// of an operator with errors are incomplete and it must not be used.
bool checkModule(Module &module, DiagnosticEngine &diags);

/// True if the resolved expression `e` has no index variable and no tensor
/// read: a constant or an expression over params (or `dim`/`rank`, which
/// instantiation folds).
bool isConstantExpr(const Expr &e);

/// Checks and annotates one operator, as checkModule does for each (the
/// Instantiator uses it on concrete instances). Returns false on error.
bool checkOp(OpDecl &op, DiagnosticEngine &diags);

} // namespace tdl
} // namespace tofu

#endif // TOFU_TDL_SEMA_H

//===- Parser.h - Parse TDL source into the AST -----------------*- C++ -*-===//
//
// This file declares the TDL parser entry point. The ANTLR-generated parser
// is an implementation detail of lib/TDL/Parser.cpp; nothing ANTLR leaks
// through this header.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TDL_PARSER_H
#define TOFU_TDL_PARSER_H

#include "tofu/TDL/AST.h"

namespace tofu {
class DiagnosticEngine;

namespace tdl {

/// Parses buffer `bufferId` of `diags.getSourceMgr()` and appends its
/// operators to `module`. Syntax errors are reported through `diags`; an
/// operator that contains one is dropped, the others are kept. Returns
/// false if any error was reported.
bool parseBuffer(unsigned bufferId, DiagnosticEngine &diags, Module &module);

/// Reads the file at `path` ("-" for standard input) into the SourceMgr and
/// parses it as parseBuffer does. A file that cannot be read is an error.
bool parseFile(StringRef path, DiagnosticEngine &diags, Module &module);

} // namespace tdl
} // namespace tofu

#endif // TOFU_TDL_PARSER_H

//===- SpecLibrary.h - The TDL operators a graph is checked against -*- C++ -*-===//
//
// This file declares SpecLibrary: the TDL operator specs (the standard
// library in specs/ and any file given with --spec) parsed and checked as
// one module, the operator a graph op's type names, and a cache of
// OperatorAnalysis per operator so that checking thousands of ops analyses
// each operator once.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_GRAPH_SPECLIBRARY_H
#define TOFU_GRAPH_SPECLIBRARY_H

#include "tofu/Analysis/OperatorAnalysis.h"
#include "tofu/TDL/AST.h"

#include "llvm/ADT/DenseMap.h"

#include <memory>
#include <string>
#include <vector>

namespace tofu {
class DiagnosticEngine;

namespace graph {

class SpecLibrary {
public:
  SpecLibrary();
  ~SpecLibrary();

  /// Parses a .tdl file into the library. Errors go to `diags`.
  bool addFile(StringRef path, DiagnosticEngine &diags);
  /// Parses every `*.tdl` file of `dir` in name order. A missing directory
  /// adds nothing and is not an error.
  bool addDirectory(StringRef dir, DiagnosticEngine &diags);
  /// Checks the parsed operators (Sema) as one module. Call once, after
  /// adding files and before lookups.
  bool check(DiagnosticEngine &diags);

  /// The files loaded, in order.
  ArrayRef<std::string> getFiles() const { return files; }
  bool empty() const { return module->getOps().empty(); }
  const tdl::Module &getModule() const { return *module; }

  /// The operator named `type`, or null.
  const tdl::OpDecl *lookup(StringRef type) const;
  /// The analysis of `op` (made on first use), or the reason it failed.
  llvm::Expected<const analysis::OperatorAnalysis *>
  getAnalysis(const tdl::OpDecl &op);

private:
  std::unique_ptr<tdl::Module> module;
  std::vector<std::string> files;
  llvm::DenseMap<const tdl::OpDecl *,
                 std::unique_ptr<analysis::OperatorAnalysis>>
      analyses;
};

} // namespace graph
} // namespace tofu

#endif // TOFU_GRAPH_SPECLIBRARY_H

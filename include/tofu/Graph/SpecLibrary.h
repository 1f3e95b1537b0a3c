//===- SpecLibrary.h - The TDL operators a graph is checked against -*- C++ -*-===//
//
// This file declares SpecLibrary: the TDL operator specs (the standard
// library in specs/ and any file given with --spec) parsed and checked as
// one module, the overloads a graph op's type names, the concrete operator
// for one use (tdl::Instantiator: overload resolution, ellipsis expansion,
// memoized per use), and a cache of OperatorAnalysis per concrete operator
// so that checking thousands of ops analyses each instance once.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_GRAPH_SPECLIBRARY_H
#define TOFU_GRAPH_SPECLIBRARY_H

#include "tofu/Analysis/OperatorAnalysis.h"
#include "tofu/TDL/AST.h"
#include "tofu/TDL/Instantiate.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

#include <memory>
#include <string>
#include <vector>

namespace tofu {
class DiagnosticEngine;

namespace graph {
class Graph;
class Op;

class SpecLibrary {
public:
  SpecLibrary();
  ~SpecLibrary();

  /// Parses a .tdl file into the library. Errors go to `diags`.
  bool addFile(StringRef path, DiagnosticEngine &diags);
  /// Parses TDL source held in memory (tests, generated specs), named
  /// `name` in diagnostics.
  bool addSource(StringRef source, StringRef name, DiagnosticEngine &diags);
  /// Parses every `*.tdl` file of `dir` in name order. A missing directory
  /// adds nothing and is not an error. With `only`, just the definitions of
  /// the operators it names are parsed (tdl::keepOperators), and files that
  /// define none of them are skipped.
  bool addDirectory(StringRef dir, DiagnosticEngine &diags,
                    const llvm::StringSet<> *only = nullptr);
  /// Parses the standard library in `standardDir` (skipped when empty; with
  /// `only`, just the operators it names, as in addDirectory) and `files`
  /// (whole), then checks them: what every tool that reads graphs loads.
  bool load(StringRef standardDir, ArrayRef<std::string> files,
            DiagnosticEngine &diags, const llvm::StringSet<> *only = nullptr);
  /// As load, with only the standard library's operators that `g`'s ops
  /// use (a few dozen of its thousands of overloads: most of a tool's
  /// start-up was parsing the rest); `files` are parsed whole.
  bool loadFor(const Graph &g, StringRef standardDir,
               ArrayRef<std::string> files, DiagnosticEngine &diags);
  /// Checks the parsed operators (Sema) as one module. Call once, after
  /// adding files and before lookups.
  bool check(DiagnosticEngine &diags);

  /// The files loaded, in order.
  ArrayRef<std::string> getFiles() const { return files; }
  bool empty() const { return module->getOps().empty(); }
  const tdl::Module &getModule() const { return *module; }

  /// The overloads of operator `type` (none if unknown).
  ArrayRef<const tdl::OpDecl *> lookup(StringRef type) const;
  /// The concrete operator for one use (see tdl::Instantiator).
  llvm::Expected<const tdl::Instance *>
  instantiate(StringRef type, ArrayRef<Shape> inputShapes,
              ArrayRef<tdl::NamedParamValue> params, unsigned outputRank);
  /// The concrete operator of graph op `op` of `g`: its type for its input
  /// shapes, params and output rank (its references resolved).
  llvm::Expected<const tdl::Instance *> instantiate(const Graph &g,
                                                    const Op &op);
  /// Number of instances made (memoized) so far.
  unsigned getNumInstances() const {
    return instantiator ? instantiator->getNumInstances() : 0;
  }
  /// Forgets every instance and analysis (they are memoized per use, so a
  /// long-running client such as the fuzzer bounds its memory with this).
  void clearInstances();
  /// The analysis of `op` (made on first use), or the reason it failed.
  llvm::Expected<const analysis::OperatorAnalysis *>
  getAnalysis(const tdl::OpDecl &op);

private:
  std::unique_ptr<tdl::Module> module;
  std::vector<std::string> files;
  std::unique_ptr<tdl::Instantiator> instantiator;
  llvm::DenseMap<const tdl::OpDecl *,
                 std::unique_ptr<analysis::OperatorAnalysis>>
      analyses;
};

} // namespace graph
} // namespace tofu

#endif // TOFU_GRAPH_SPECLIBRARY_H

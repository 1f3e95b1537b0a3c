//===- SpecLibrary.cpp - The TDL operators a graph is checked against -----===//
//
// This file implements loading TDL spec files and caching operator
// analyses for the graph verifier.
//
//===----------------------------------------------------------------------===//

#include "tofu/Graph/SpecLibrary.h"
#include "tofu/Graph/Graph.h"
#include "tofu/Support/Diagnostics.h"
#include "tofu/TDL/OperatorFilter.h"
#include "tofu/TDL/Parser.h"
#include "tofu/TDL/Sema.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>

using namespace tofu;
using namespace tofu::graph;

SpecLibrary::SpecLibrary() : module(std::make_unique<tdl::Module>()) {}
SpecLibrary::~SpecLibrary() = default;

bool SpecLibrary::addFile(StringRef path, DiagnosticEngine &diags) {
  files.push_back(path.str());
  return tdl::parseFile(path, diags, *module);
}

bool SpecLibrary::addSource(StringRef source, StringRef name,
                            DiagnosticEngine &diags) {
  files.push_back(name.str());
  unsigned id = diags.getSourceMgr().AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, name), SMLoc());
  return tdl::parseBuffer(id, diags, *module);
}

/// Parses the definitions of the operators `only` names in `path`; a file
/// that defines none of them adds nothing.
static bool addFileOperators(StringRef path, const llvm::StringSet<> &only,
                             DiagnosticEngine &diags, tdl::Module &module,
                             std::vector<std::string> &files) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (std::error_code ec = buffer.getError()) {
    diags.error(SMLoc(), "cannot read '" + path + "': " + ec.message());
    return false;
  }
  bool keptAny = false;
  std::string kept = tdl::keepOperators(
      (*buffer)->getBuffer(), [&](StringRef name) { return only.count(name); },
      keptAny);
  if (!keptAny)
    return true;
  files.push_back(path.str());
  unsigned id = diags.getSourceMgr().AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(kept, path), SMLoc());
  return tdl::parseBuffer(id, diags, module);
}

bool SpecLibrary::addDirectory(StringRef dir, DiagnosticEngine &diags,
                               const llvm::StringSet<> *only) {
  std::error_code ec;
  std::vector<std::string> paths;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::path::extension(it->path()) == ".tdl")
      paths.push_back(it->path());
  std::sort(paths.begin(), paths.end());
  bool ok = true;
  for (const std::string &path : paths)
    ok &= only ? addFileOperators(path, *only, diags, *module, files)
               : addFile(path, diags);
  return ok;
}

bool SpecLibrary::load(StringRef standardDir, ArrayRef<std::string> files,
                       DiagnosticEngine &diags, const llvm::StringSet<> *only) {
  if (!standardDir.empty())
    addDirectory(standardDir, diags, only);
  for (const std::string &file : files)
    addFile(file, diags);
  return !diags.hasErrors() && check(diags);
}

bool SpecLibrary::loadFor(const Graph &g, StringRef standardDir,
                          ArrayRef<std::string> files,
                          DiagnosticEngine &diags) {
  llvm::StringSet<> used;
  for (const Op &op : g.getOps())
    used.insert(op.type);
  return load(standardDir, files, diags, &used);
}

bool SpecLibrary::check(DiagnosticEngine &diags) {
  if (!tdl::checkModule(*module, diags))
    return false;
  instantiator = std::make_unique<tdl::Instantiator>(*module);
  return true;
}

ArrayRef<const tdl::OpDecl *> SpecLibrary::lookup(StringRef type) const {
  return module->lookupOverloads(type);
}

llvm::Expected<const tdl::Instance *>
SpecLibrary::instantiate(StringRef type, ArrayRef<Shape> inputShapes,
                         ArrayRef<tdl::NamedParamValue> params,
                         unsigned outputRank) {
  assert(instantiator && "SpecLibrary::check must come first");
  return instantiator->instantiate(type, inputShapes, params, outputRank);
}

llvm::Expected<const tdl::Instance *>
SpecLibrary::instantiate(const Graph &g, const Op &op) {
  SmallVector<tdl::NamedParamValue, 4> params(op.params.begin(),
                                              op.params.end());
  return instantiate(op.type, g.getInputShapes(op), params,
                     g.getTensor(op.getOutput()).shape.size());
}

void SpecLibrary::clearInstances() {
  analyses.clear();
  if (instantiator)
    instantiator = std::make_unique<tdl::Instantiator>(*module);
}

llvm::Expected<const analysis::OperatorAnalysis *>
SpecLibrary::getAnalysis(const tdl::OpDecl &op) {
  auto &slot = analyses[&op];
  if (!slot) {
    auto result = analysis::OperatorAnalysis::analyze(op);
    if (!result)
      return result.takeError();
    slot = std::make_unique<analysis::OperatorAnalysis>(std::move(*result));
  }
  return slot.get();
}

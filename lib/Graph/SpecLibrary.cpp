//===- SpecLibrary.cpp - The TDL operators a graph is checked against -----===//
//
// This file implements loading TDL spec files and caching operator
// analyses for the graph verifier.
//
//===----------------------------------------------------------------------===//

#include "tofu/Graph/SpecLibrary.h"
#include "tofu/Support/Diagnostics.h"
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

bool SpecLibrary::addDirectory(StringRef dir, DiagnosticEngine &diags) {
  std::error_code ec;
  std::vector<std::string> paths;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::path::extension(it->path()) == ".tdl")
      paths.push_back(it->path());
  std::sort(paths.begin(), paths.end());
  bool ok = true;
  for (const std::string &path : paths)
    ok &= addFile(path, diags);
  return ok;
}

bool SpecLibrary::load(StringRef standardDir, ArrayRef<std::string> files,
                       DiagnosticEngine &diags) {
  if (!standardDir.empty())
    addDirectory(standardDir, diags);
  for (const std::string &file : files)
    addFile(file, diags);
  return !diags.hasErrors() && check(diags);
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

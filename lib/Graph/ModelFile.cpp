//===- ModelFile.cpp - Read a graph from JSON or ONNX ---------------------===//
//
// This file implements readModelFile. It is its own library
// (TofuGraphInput) so that the graph library does not depend on the ONNX
// importer, which depends on it.
//
//===----------------------------------------------------------------------===//

#include "tofu/Graph/ModelFile.h"
#include "tofu/Graph/GraphReader.h"
#include "tofu/Graph/GraphWriter.h"
#include "tofu/Support/Diagnostics.h"
#ifdef TOFU_HAVE_ONNX
#include "tofu/Graph/ONNXImporter.h"
#endif

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace tofu;
using namespace tofu::graph;

bool graph::canReadONNX() {
#ifdef TOFU_HAVE_ONNX
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Graph> graph::readModelFile(StringRef path,
                                            DiagnosticEngine &diags) {
  if (!path.endswith(".onnx"))
    return readGraphFile(path, diags);
#ifdef TOFU_HAVE_ONNX
  std::unique_ptr<Graph> imported = importONNXFile(path, diags);
  if (!imported)
    return nullptr;
  std::string text;
  llvm::raw_string_ostream os(text);
  writeGraph(os, *imported);
  unsigned id = diags.getSourceMgr().AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(os.str(), path.str() + ".json"),
      SMLoc());
  return readGraph(id, diags);
#else
  diags.error(SMLoc(), "'" + path +
                           "': built without the ONNX importer (install "
                           "libonnx-dev and libprotobuf-dev and reconfigure)");
  return nullptr;
#endif
}

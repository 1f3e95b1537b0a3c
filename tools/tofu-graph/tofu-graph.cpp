//===- tofu-graph.cpp - Validate and summarize tofu-graphs ----------------===//
//
// tofu-graph reads a training graph (tofu-graph JSON, or an ONNX model when
// the ONNX importer is built), checks its structure and every op against
// the TDL operator specs (the standard library in specs/ plus --spec
// files), and prints a summary, writes the graph back as JSON, or writes
// the C++ kernels of its ops (lib/CodeGen). Exit
// status: 0 valid, 1 bad input (with diagnostics on stderr), 2 bad usage.
//
//===----------------------------------------------------------------------===//

#include "tofu/CodeGen/GraphKernels.h"
#include "tofu/CodeGen/LinkedKernels.h"
#include "tofu/Graph/GraphSummary.h"
#include "tofu/Graph/ModelFile.h"
#include "tofu/Graph/GraphWriter.h"
#include "tofu/Graph/SpecLibrary.h"
#include "tofu/Graph/Verifier.h"
#include "tofu/PlanEmit/PlanEmitters.h"
#include "tofu/Support/Diagnostics.h"
#include "tofu/Support/CommandLine.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace tofu;
using namespace tofu::graph;
namespace cl = llvm::cl;

#ifndef TOFU_SPECS_DIR
#define TOFU_SPECS_DIR ""
#endif

namespace {

enum class EmitKind { Summary, JSON, Kernels, CudaKernels, CudaLinked };
enum ExitStatus { Success = 0, BadInput = 1, BadUsage = 2 };

cl::OptionCategory category("tofu-graph options");

cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                               cl::desc("<GRAPH.json | MODEL.onnx | ->"),
                               cl::cat(category));

cl::list<std::string> specFiles(
    "spec", cl::desc("Also check ops against the operators of FILE.tdl "
                     "(repeatable)"),
    cl::value_desc("FILE.tdl"), cl::cat(category));

cl::opt<bool> noDefaultSpecs(
    "no-default-specs",
    cl::desc("Do not load the standard operator library (" TOFU_SPECS_DIR
             "/*.tdl)"),
    cl::cat(category));

cl::opt<EmitKind> emitKind(
    "emit", cl::desc("What to print once the graph is valid"),
    cl::init(EmitKind::Summary),
    cl::values(clEnumValN(EmitKind::Summary, "summary",
                          "op and tensor counts, sizes by role, op type "
                          "histogram (default)"),
               clEnumValN(EmitKind::JSON, "json",
                          "the graph as tofu-graph JSON"),
               clEnumValN(EmitKind::Kernels, "kernels",
                          "one C++ translation unit with a kernel per "
                          "distinct op instance and the table "
                          "tofu_graph_kernels() (docs/CodeGen.md)"),
               clEnumValN(EmitKind::CudaKernels, "cuda-kernels",
                          "one CUDA translation unit: a kernel per distinct "
                          "op instance, its launch function, the tables "
                          "(docs/CUDA.md)"),
               clEnumValN(EmitKind::CudaLinked, "cuda-linked",
                          "the CUDA unit for a training program: "
                          "getGeneratedCudaKernels() in --cpp-namespace, "
                          "for any plan of this graph (docs/Linking.md, "
                          "\"On GPUs\"; tofu_add_cuda_kernels)")),
    cl::cat(category));

cl::opt<std::string> cppNamespace(
    "cpp-namespace",
    cl::desc("With --emit=cuda-linked: the namespace of "
             "getGeneratedCudaKernels() (identifiers joined by '::')"),
    cl::value_desc("NS"), cl::init("tofu_cuda_kernels"), cl::cat(category));

cl::opt<std::string> outputFile("o", cl::desc("Write output to FILE"),
                                cl::value_desc("FILE"), cl::init("-"),
                                cl::cat(category));

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  std::string overview =
      std::string("tofu-graph: validate a training graph (tofu-graph JSON") +
      (canReadONNX() ? ", or an ONNX model, imported first" : "") +
      ") against the TDL operator specs and print a summary, the graph as "
      "JSON or its C++ kernels.\nExit status: 0 valid, 1 bad input (diagnostics on stderr), 2 "
      "bad usage.\n";
  if (!cli::parseToolCommandLine(argc, argv, {&category}, overview))
    return BadUsage;
  if (!plan::isCppNamespaceName(cppNamespace)) {
    llvm::WithColor::error(llvm::errs(), "tofu-graph")
        << "--cpp-namespace expects identifiers joined by '::', got '"
        << cppNamespace << "'\n";
    return BadUsage;
  }

  llvm::SourceMgr srcMgr;
  DiagnosticEngine diags(srcMgr);
  std::unique_ptr<Graph> g = readModelFile(inputFile, diags);
  if (!g)
    return BadInput;
  SpecLibrary specs;
  if (!specs.loadFor(*g, noDefaultSpecs ? "" : TOFU_SPECS_DIR, specFiles,
                     diags))
    return BadInput;
  if (!verifyStructure(*g, diags))
    return BadInput;
  if (specs.empty())
    llvm::WithColor::warning(llvm::errs(), "tofu-graph")
        << "no operator specs loaded; the ops were not checked against "
           "specs (give --spec FILE.tdl)\n";
  else if (!verifySpecs(*g, specs, diags))
    return BadInput;

  std::error_code ec;
  llvm::ToolOutputFile out(outputFile, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    llvm::WithColor::error(llvm::errs(), "tofu-graph")
        << "cannot write '" << outputFile << "': " << ec.message() << '\n';
    return BadInput;
  }
  if (emitKind == EmitKind::Kernels || emitKind == EmitKind::CudaKernels ||
      emitKind == EmitKind::CudaLinked) {
    codegen::KernelOptions options;
    if (emitKind != EmitKind::Kernels)
      options.target = codegen::KernelTarget::Cuda;
    llvm::Expected<codegen::GraphKernels> kernels =
        codegen::emitGraphKernels(*g, specs, options);
    llvm::Error err = kernels.takeError();
    if (!err && emitKind == EmitKind::CudaLinked)
      err = codegen::writeLinkedCudaKernels(out.os(), *kernels, inputFile,
                                            cppNamespace);
    else if (!err)
      out.os() << kernels->source;
    if (err) {
      llvm::WithColor::error(llvm::errs(), "tofu-graph")
          << llvm::toString(std::move(err)) << '\n';
      return BadInput;
    }
  } else if (emitKind == EmitKind::JSON)
    writeGraph(out.os(), *g);
  else
    printSummary(out.os(), *g);
  out.keep();
  return Success;
}

//===- tdlc.cpp - The TDL compiler driver ---------------------------------===//
//
// tdlc reads operator definitions in TDL (one or more files, checked as one
// library), and prints what the toolchain derives from them: the syntax tree
// (--emit=ast), the checked IR (--emit=ir), a one-line summary per operator
// (--emit=summary), or the partition strategies found by the operator
// analysis (--emit=strategies, symbolic or at the shapes given by --shape),
// as text or JSON, or the generated C++ kernel of one instance
// (--emit=cpp-kernel, EmitKernel.cpp). With --shape/--param, a generic or overloaded operator
// is instantiated first, and --emit=ir|ast|summary show the instance. With
// --coverage GRAPH.json, whether the operators cover every op of tofu graphs
// (Coverage.cpp). Exit status: 0 success, 1 bad input (with a diagnostic on
// stderr), 2 bad usage.
//
//===----------------------------------------------------------------------===//

#include "tofu/Analysis/OperatorSummary.h"
#include "tofu/Support/Diagnostics.h"
#include "tofu/Support/CommandLine.h"
#include "tofu/TDL/Parser.h"
#include "tofu/TDL/Printers.h"
#include "tofu/TDL/Sema.h"

#include "Coverage.h"
#include "EmitKernel.h"
#include "EmitStrategies.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/WithColor.h"

#include <chrono>

using namespace tofu;
using namespace tofu::tdl;
namespace cl = llvm::cl;

namespace {

enum class EmitKind { AST, IR, Summary, Strategies, CppKernel, Cuda };
enum class OutputFormat { Text, JSON };

cl::OptionCategory tdlcCategory("tdlc options");

cl::list<std::string> inputFiles(cl::Positional, cl::OneOrMore,
                                 cl::desc("<input .tdl files, or - for stdin>"),
                                 cl::cat(tdlcCategory));

cl::opt<std::string> opName("op",
                            cl::desc("Only this operator (default: all)"),
                            cl::value_desc("NAME"), cl::cat(tdlcCategory));

cl::opt<EmitKind> emitKind(
    "emit", cl::desc("What to print"), cl::init(EmitKind::IR),
    cl::values(clEnumValN(EmitKind::AST, "ast", "the syntax tree"),
               clEnumValN(EmitKind::IR, "ir",
                          "the checked IR: ranks, extents, index kinds "
                          "(default)"),
               clEnumValN(EmitKind::Summary, "summary",
                          "one line per operator, then totals"),
               clEnumValN(EmitKind::Strategies, "strategies",
                          "the partition strategies and each worker's "
                          "regions"),
               clEnumValN(EmitKind::CppKernel, "cpp-kernel",
                          "the C++ kernel of one instance (needs --shape)"),
               clEnumValN(EmitKind::Cuda, "cuda",
                          "the CUDA kernel of one instance (needs --shape; "
                          "docs/CUDA.md)")),
    cl::cat(tdlcCategory));

cl::opt<OutputFormat> format(
    "format", cl::desc("Output format"), cl::init(OutputFormat::Text),
    cl::values(clEnumValN(OutputFormat::Text, "text", "readable text (default)"),
               clEnumValN(OutputFormat::JSON, "json", "one JSON document")),
    cl::cat(tdlcCategory));

cl::opt<std::string> outputFile("o", cl::desc("Write output to FILE"),
                                cl::value_desc("FILE"), cl::init("-"),
                                cl::cat(tdlcCategory));

/// Exit statuses of the interface contract.
enum ExitStatus { Success = 0, BadInput = 1, BadUsage = 2 };

void emitText(llvm::raw_ostream &os, ArrayRef<const OpDecl *> ops,
              const llvm::SourceMgr &srcMgr, double checkMillis) {
  if (emitKind == EmitKind::Summary) {
    for (const OpDecl *op : ops)
      analysis::printOperatorSummary(os, *op);
    os << ops.size() << " operators from " << inputFiles.size()
       << " files parsed and checked in "
       << llvm::format("%.1f", checkMillis) << " ms\n";
    return;
  }
  for (size_t i = 0; i != ops.size(); ++i) {
    if (i)
      os << '\n';
    if (emitKind == EmitKind::AST)
      dumpAST(os, *ops[i], srcMgr);
    else
      printIR(os, *ops[i]);
  }
}

void emitJSON(llvm::raw_ostream &os, ArrayRef<const OpDecl *> ops) {
  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    json.attributeArray("operators", [&] {
      for (const OpDecl *op : ops) {
        if (emitKind == EmitKind::AST)
          writeASTJSON(json, *op);
        else
          writeIRJSON(json, *op);
      }
    });
  });
  os << '\n';
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  if (!cli::parseToolCommandLine(
          argc, argv,
          {&tdlcCategory, &getStrategiesCategory(), &getKernelCategory(),
           &getCoverageCategory()},
          "tdlc: check TDL operator definitions and print their AST, IR, a "
          "summary, their partition strategies or the C++ kernel of an "
          "instance\n"))
    return BadUsage;

  llvm::SourceMgr srcMgr;
  DiagnosticEngine diags(srcMgr);
  Module module;
  auto start = std::chrono::steady_clock::now();
  for (const std::string &file : inputFiles)
    parseFile(file, diags, module);
  checkModule(module, diags);
  double checkMillis = std::chrono::duration<double, std::milli>(
                           std::chrono::steady_clock::now() - start)
                           .count();
  if (diags.hasErrors())
    return BadInput;

  std::vector<const OpDecl *> selected;
  for (const auto &op : module.getOps())
    if (opName.empty() || op->getName() == opName)
      selected.push_back(op.get());
  if (!opName.empty() && selected.empty()) {
    llvm::WithColor::error(llvm::errs(), "tdlc")
        << "no operator named '" << opName << "' in the input\n";
    return BadInput;
  }

  std::error_code ec;
  llvm::ToolOutputFile out(outputFile, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    llvm::WithColor::error(llvm::errs(), "tdlc")
        << "cannot write '" << outputFile << "': " << ec.message() << '\n';
    return BadInput;
  }
  if (coverageRequested()) {
    int status = runCoverage(out.os(), module, srcMgr);
    out.keep();
    return status;
  }
  Instantiator instantiator(module);
  if (emitKind == EmitKind::CppKernel || emitKind == EmitKind::Cuda) {
    bool cuda = emitKind == EmitKind::Cuda;
    if (!hasConcreteArgs() || selected.empty()) {
      llvm::WithColor::error(llvm::errs(), "tdlc")
          << "--emit=" << (cuda ? "cuda" : "cpp-kernel")
          << " needs --op and --shape for every tensor\n";
      return BadUsage;
    }
    int status = emitCppKernel(out.os(), instantiator, selected,
                               cuda ? codegen::KernelTarget::Cuda
                                    : codegen::KernelTarget::Cpp);
    if (status == Success)
      out.keep();
    return status;
  }
  // With shapes, the other outputs show the operator's instance.
  if (emitKind != EmitKind::Strategies && hasConcreteArgs() &&
      !selected.empty()) {
    int status;
    const Instance *instance =
        instantiateSelected(instantiator, selected, status);
    if (!instance)
      return status;
    selected.assign(1, instance->op);
  }
  if (emitKind == EmitKind::Strategies) {
    int status =
        emitStrategies(out.os(), module, selected, format == OutputFormat::JSON);
    if (status == Success)
      out.keep();
    return status;
  }
  if (format == OutputFormat::JSON)
    emitJSON(out.os(), selected);
  else
    emitText(out.os(), selected, srcMgr, checkMillis);
  out.keep();
  return Success;
}

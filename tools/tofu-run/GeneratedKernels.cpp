//===- GeneratedKernels.cpp - tofu-run's compiled kernels -----------------===//
//
// This file implements GeneratedKernels: emit the graph's translation unit,
// compile it with progress on stderr, and route each call to the loaded
// kernel or, for an op without one, to the evaluator.
//
//===----------------------------------------------------------------------===//

#include "GeneratedKernels.h"

#include "tofu/CodeGen/GraphKernels.h"
#include "tofu/Runtime/Error.h"

#include <fmt/format.h>

#include <chrono>

using namespace tofu;

llvm::Expected<std::unique_ptr<GeneratedKernels>>
GeneratedKernels::create(const graph::Graph &g, graph::SpecLibrary &specs,
                         StringRef cacheDir,
                         ArrayRef<std::string> evaluatorOps,
                         llvm::raw_ostream &log) {
  std::vector<bool> forced(g.getNumOps());
  for (const std::string &name : evaluatorOps) {
    auto it = llvm::find_if(
        g.getOps(), [&](const graph::Op &op) { return op.name == name; });
    if (it == g.getOps().end())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--evaluator-op " + name +
                                         ": the graph has no such op");
    forced[it - g.getOps().begin()] = true;
  }
  auto emitted = codegen::emitGraphKernels(g, specs);
  if (!emitted)
    return emitted.takeError();
  std::unique_ptr<GeneratedKernels> kernels(new GeneratedKernels);

  codegen::KernelCompiler::Options options;
  options.cacheDir = cacheDir.str();
  codegen::KernelCompiler compiler(options);
  std::string flags;
  for (const std::string &flag : compiler.getOptions().flags)
    if (StringRef(flag).startswith("-O"))
      flags += " " + flag;
  log << "tofu-run: compiling " << emitted->kernels.size() << " kernels ("
      << compiler.getOptions().compiler << flags << ")...";
  log.flush();
  auto start = std::chrono::steady_clock::now();
  auto library = compiler.compile(emitted->source);
  if (!library) {
    log << "\n";
    return library.takeError();
  }
  std::chrono::duration<double> seconds =
      std::chrono::steady_clock::now() - start;
  if (compiler.lastWasCached())
    log << " (cached)\n";
  else
    log << fmt::format(" done in {:.1f} s\n", seconds.count());
  kernels->library = std::move(*library);

  ArrayRef<runtime::KernelInfo> table = kernels->library->getKernels();
  if (table.size() != g.getNumOps())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        fmt::format("'{}' has {} kernels for {} ops",
                    kernels->library->getPath(), table.size(), g.getNumOps()));
  std::string firstNote;
  unsigned numMissing = 0;
  for (unsigned i = 0, e = table.size(); i != e; ++i) {
    kernels->fns.push_back(forced[i] ? nullptr : table[i].fn);
    if (!table[i].fn && numMissing++ == 0)
      firstNote = "'" + g.getOp(i).name + "': " + emitted->notes[i];
    kernels->numFallbacks += !kernels->fns.back();
  }
  if (!kernels->numFallbacks)
    return kernels;
  log << "tofu-run: " << kernels->numFallbacks << " of " << table.size()
      << " ops run the evaluator's kernel (slow): " << numMissing
      << " without a generated kernel";
  if (numMissing)
    log << " (the first, " << firstNote << ")";
  log << ", " << kernels->numFallbacks - numMissing << " by --evaluator-op\n";
  auto fallback = ReferenceKernels::create(
      g, specs, [&](unsigned op) { return !kernels->fns[op]; });
  if (!fallback)
    return fallback.takeError();
  kernels->fallback = std::move(*fallback);
  return kernels;
}

void GeneratedKernels::run(unsigned kernel, const runtime::KernelCall &call) {
  if (kernel >= fns.size())
    throw runtime::RuntimeError(fmt::format("no kernel {}", kernel));
  if (fns[kernel])
    fns[kernel](call);
  else
    fallback->run(kernel, call);
}

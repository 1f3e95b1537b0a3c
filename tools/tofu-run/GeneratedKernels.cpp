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
#include <dlfcn.h>

using namespace tofu;

namespace {
/// Sets OpenBLAS's threads (the kernel library loaded it) to
/// `libraries.threadsPerWorker`, if given.
void setBlasThreads(const LibraryOptions &libraries, llvm::raw_ostream &log) {
  if (!libraries.threadsPerWorker)
    return;
  void *blas = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
  auto set = blas ? reinterpret_cast<void (*)(int)>(
                        dlsym(blas, "openblas_set_num_threads"))
                  : nullptr;
  if (set)
    set(int(libraries.threadsPerWorker));
  else
    log << "tofu-run: note: --threads-per-worker: no OpenBLAS loaded; the "
           "GEMMs keep their BLAS's threads\n";
  if (blas)
    dlclose(blas);
}
} // namespace

void GeneratedKernels::setLibraryThreads(
    const codegen::GraphKernels &unit, const LibraryOptions &libraries,
    const std::vector<bool> &forced, GeneratedKernels &kernels,
    llvm::raw_ostream &log) {
  setBlasThreads(libraries, log);
#ifdef TOFU_HAVE_DNNL
  if (!libraries.oneDnn)
    return;
  // The descriptions of the cuDNN path (KernelEmitter.h): one rule for
  // "this box is one library call" on both.
  runtime::LibraryProblems problems;
  unsigned n = unit.opKernel.size();
  problems.convs.resize(n);
  problems.batchNorms.resize(n);
  problems.poolings.resize(n);
  for (unsigned op = 0; op != n; ++op) {
    int k = unit.opKernel[op];
    if (k < 0 || forced[op])
      continue;
    if (unit.kernels[k].conv)
      problems.convs[op] = *unit.kernels[k].conv;
    if (unit.kernels[k].batchNorm)
      problems.batchNorms[op] = *unit.kernels[k].batchNorm;
    if (unit.kernels[k].pooling)
      problems.poolings[op] = *unit.kernels[k].pooling;
  }
  kernels.oneDnn = std::make_shared<runtime::OneDnnKernels>(
      std::move(problems), libraries.threadsPerWorker);
  log << "tofu-run: " << kernels.oneDnn->getNumDescribed()
      << " ops on " << runtime::OneDnnKernels::getVersion()
      << " where the box is one library problem\n";
#else
  (void)unit, (void)forced, (void)kernels;
#endif
}

std::optional<runtime::OneDnnCounts> GeneratedKernels::getOneDnnCounts() const {
#ifdef TOFU_HAVE_DNNL
  if (oneDnn)
    return oneDnn->getCounts();
#endif
  return std::nullopt;
}

llvm::Expected<std::unique_ptr<GeneratedKernels>>
GeneratedKernels::create(const graph::Graph &g, graph::SpecLibrary &specs,
                         StringRef cacheDir,
                         ArrayRef<std::string> evaluatorOps,
                         llvm::raw_ostream &log,
                         const LibraryOptions &libraries) {
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
  setLibraryThreads(*emitted, libraries, forced, *kernels, log);
  std::string firstNote;
  unsigned numMissing = 0;
  for (unsigned i = 0, e = table.size(); i != e; ++i) {
    kernels->fns.push_back(forced[i] ? nullptr : table[i].fn);
    if (!table[i].fn && numMissing++ == 0)
      firstNote = "'" + g.getOp(i).name + "': " + emitted->notes[i];
    kernels->numFallbacks += !kernels->fns.back();
    int k = emitted->opKernel[i];
    bool generated = kernels->fns.back() && k >= 0;
    kernels->hints.elementwise.push_back(
        generated &&
        emitted->kernels[k].kind == codegen::KernelKind::Elementwise);
    kernels->hints.pointwise.push_back(
        generated ? emitted->kernels[k].pointwiseInputs : std::vector<bool>());
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
#ifdef TOFU_HAVE_DNNL
  if (fns[kernel] && oneDnn && oneDnn->run(kernel, call))
    return;
#endif
  if (fns[kernel])
    fns[kernel](call);
  else
    fallback->run(kernel, call);
}

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

#include "llvm/Support/WithColor.h"

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

/// The runtime's max pooling loop for op `op` (runtime/IndexedPooling.h):
/// max_pool2d_with_indices__1 or max_pool2d_with_indices_backward on rank 4
/// with every param an integer, and a kernel whose variables after the four
/// output ones are window variables (their names end in y: rows, x:
/// columns, as specs/pool.tdl names them); none otherwise.
std::optional<runtime::IndexedPooling>
describeIndexedPooling(const graph::Graph &g, unsigned op,
                       const runtime::KernelInfo &kernel) {
  const graph::Op &o = g.getOp(op);
  runtime::IndexedPooling p;
  if (o.type == "max_pool2d_with_indices__1")
    p.kind = runtime::IndexedPoolingKind::Indices;
  else if (o.type == "max_pool2d_with_indices_backward")
    p.kind = runtime::IndexedPoolingKind::Backward;
  else
    return std::nullopt;
  auto inputs = g.getInputShapes(o);
  if (o.getOutput() < 0 || inputs.empty())
    return std::nullopt;
  const Shape &self = p.kind == runtime::IndexedPoolingKind::Indices
                          ? inputs[0]
                          : g.getTensor(o.getOutput()).shape;
  const Shape &pooled = p.kind == runtime::IndexedPoolingKind::Indices
                            ? g.getTensor(o.getOutput()).shape
                            : inputs[0];
  if (self.size() != 4 || pooled.size() != 4 || kernel.numVars < 4)
    return std::nullopt;
  for (unsigned d = 0; d != 4; ++d)
    p.inputShape[d] = self[d], p.pooledShape[d] = pooled[d];
  struct {
    const char *name;
    std::int64_t *to;
  } params[] = {{"kernel_size_0", &p.window[0]}, {"kernel_size_1", &p.window[1]},
                {"stride_0", &p.stride[0]},      {"stride_1", &p.stride[1]},
                {"padding_0", &p.padding[0]},    {"padding_1", &p.padding[1]},
                {"dilation_0", &p.dilation[0]},  {"dilation_1", &p.dilation[1]}};
  for (auto &param : params) {
    const graph::ParamValue *v = o.lookupParam(param.name);
    auto i = v ? v->getAsInteger() : llvm::None;
    if (!i || *i < 0)
      return std::nullopt;
    *param.to = *i;
  }
  if (p.stride[0] < 1 || p.stride[1] < 1)
    return std::nullopt;
  for (unsigned v = 4; v != kernel.numVars; ++v) {
    StringRef name = kernel.varNames[v];
    if (name.endswith("y"))
      p.windowAxes.push_back(0);
    else if (name.endswith("x"))
      p.windowAxes.push_back(1);
    else
      return std::nullopt;
  }
  return p;
}

bool reductionExtents(const runtime::KernelInfo &kernel, unsigned first,
                      const std::int64_t shape[4],
                      std::vector<std::int64_t> &extents);

/// The runtime's one-pass loop for op `op` (runtime/BatchNormStats.h): a
/// training batch norm's inverse deviation (native_batch_norm__2 or
/// native_batch_norm_noweight_nobias__2, training = 1) of a rank-4 input,
/// with a kernel whose variables after the channel are reduction variables
/// named after the dimension they range over (n, y, x, as specs/norm.tdl
/// names them); none otherwise.
std::optional<runtime::BatchNormInvStd>
describeBatchNormInvStd(const graph::Graph &g, unsigned op,
                        const runtime::KernelInfo &kernel,
                        const char *output = "__2") {
  const graph::Op &o = g.getOp(op);
  if (o.type != std::string("native_batch_norm") + output &&
      o.type != std::string("native_batch_norm_noweight_nobias") + output)
    return std::nullopt;
  auto inputs = g.getInputShapes(o);
  const graph::ParamValue *training = o.lookupParam("training"),
                          *eps = o.lookupParam("eps");
  if (inputs.size() != 1 || inputs[0].size() != 4 || !training || !eps ||
      training->getAsInteger() != int64_t(1) || kernel.numVars < 1)
    return std::nullopt;
  runtime::BatchNormInvStd b;
  for (unsigned d = 0; d != 4; ++d)
    b.shape[d] = inputs[0][d];
  b.epsilon = eps->asReal();
  if (!reductionExtents(kernel, 1, b.shape, b.varExtents))
    return std::nullopt;
  return b;
}

/// The extents of `kernel`'s variables from `first` on, reduction variables
/// named after the dimension of an [N, C, H, W] `shape` they range over (n,
/// y, x, as specs/norm.tdl names them); false for another name.
bool reductionExtents(const runtime::KernelInfo &kernel, unsigned first,
                      const std::int64_t shape[4],
                      std::vector<std::int64_t> &extents) {
  for (unsigned v = first; v < kernel.numVars; ++v)
    switch (kernel.varNames[v][0]) {
    case 'n':
      extents.push_back(shape[0]);
      break;
    case 'y':
      extents.push_back(shape[2]);
      break;
    case 'x':
      extents.push_back(shape[3]);
      break;
    default:
      return false;
    }
  return true;
}

/// The one-pass loop for op `op`'s input gradient of a training batch norm
/// (native_batch_norm_backward__0, train = 1, rank 4); none otherwise.
std::optional<runtime::BatchNormBackwardInput>
describeBatchNormBackward(const graph::Graph &g, unsigned op,
                          const runtime::KernelInfo &kernel) {
  const graph::Op &o = g.getOp(op);
  if (o.type != "native_batch_norm_backward__0")
    return std::nullopt;
  auto inputs = g.getInputShapes(o);
  const graph::ParamValue *train = o.lookupParam("train");
  if (inputs.size() != 5 || inputs[1].size() != 4 || !train ||
      train->getAsInteger() != int64_t(1) || kernel.numVars < 4)
    return std::nullopt;
  runtime::BatchNormBackwardInput b;
  for (unsigned d = 0; d != 4; ++d)
    b.shape[d] = inputs[1][d];
  if (!reductionExtents(kernel, 4, b.shape, b.varExtents))
    return std::nullopt;
  return b;
}

/// Op `op`'s weight or bias gradient of a training batch norm
/// (native_batch_norm_backward__1 or __2, train = 1, rank 4) computed from
/// the sums of the input gradient op `source` (BatchNormSums), where `op`
/// reads the tensors `source` sums over; none otherwise.
std::optional<runtime::BatchNormParamGrad>
describeBatchNormParamGrad(const graph::Graph &g, unsigned op, unsigned source,
                           const runtime::KernelInfo &kernel) {
  const graph::Op &o = g.getOp(op), &s = g.getOp(source);
  runtime::BatchNormParamGrad p;
  p.weight = o.type == "native_batch_norm_backward__1";
  if ((!p.weight && o.type != "native_batch_norm_backward__2") ||
      s.inputs.size() != 5 || o.inputs.size() != (p.weight ? 4u : 1u) ||
      kernel.numVars < 1)
    return std::nullopt;
  // grad_out, input, save_mean, save_invstd: the source's inputs 0, 1, 3, 4.
  const unsigned sourceSlot[4] = {0, 1, 3, 4};
  for (unsigned i = 0; i != o.inputs.size(); ++i)
    if (o.inputs[i].index < 0 ||
        o.inputs[i].index != s.inputs[sourceSlot[i]].index)
      return std::nullopt;
  auto inputs = g.getInputShapes(s);
  const graph::ParamValue *train = o.lookupParam("train");
  if (inputs[1].size() != 4 || !train || train->getAsInteger() != int64_t(1))
    return std::nullopt;
  std::int64_t shape[4];
  for (unsigned d = 0; d != 4; ++d)
    shape[d] = inputs[1][d];
  if (!reductionExtents(kernel, 1, shape, p.varExtents))
    return std::nullopt;
  return p;
}

/// The sums of the last input gradient call on this thread, if no other
/// call ran since (GeneratedKernels::run).
struct LastSums {
  /// The GeneratedKernels instance (its serial number) and the op.
  std::uint64_t owner = 0;
  unsigned op = 0;
  bool valid = false;
  runtime::BatchNormSums sums;
  runtime::BatchNormMoments moments;
  /// Offers the sums just taken by op `kernel` of instance `serial`.
  void offer(std::uint64_t serial, unsigned kernel) {
    owner = serial;
    op = kernel;
    valid = true;
  }
};
thread_local LastSums lastSums;
std::atomic<std::uint64_t> nextSerial{1};
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

std::optional<IndexedPoolingCounts>
GeneratedKernels::getIndexedPoolingCounts() const {
  if (!indexedPoolingOn)
    return std::nullopt;
  return IndexedPoolingCounts{indexedCounts[0], indexedCounts[1],
                              indexedCounts[2]};
}

std::optional<BatchNormStatsCounts>
GeneratedKernels::getBatchNormStatsCounts() const {
  if (!batchNormStatsOn)
    return std::nullopt;
  return BatchNormStatsCounts{batchNormCounts[0], batchNormCounts[1],
                              batchNormCounts[2], batchNormCounts[3],
                              batchNormCounts[4], batchNormCounts[5],
                              batchNormCounts[6]};
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
  // A damaged cache entry's warning on its own line, then the rebuild.
  options.warn = [&](StringRef msg) {
    log << "\n";
    llvm::WithColor::warning(log, "tofu-run") << msg << "\n";
    log << "tofu-run: rebuilding...";
    log.flush();
  };
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
  using FusedTableFn = const FusedFn *(*)(unsigned *);
  auto fusedTable =
      libraries.fusedKernels
          ? reinterpret_cast<FusedTableFn>(
                kernels->library->getSymbol(codegen::GraphFusedSymbol))
          : nullptr;
  if (fusedTable) {
    unsigned count = 0;
    const FusedFn *fused = fusedTable(&count);
    if (count == codegen::getFusedTableSize(g.getNumOps()))
      kernels->fusedFns.assign(fused, fused + count);
  }
  setLibraryThreads(*emitted, libraries, forced, *kernels, log);
  kernels->indexedPoolingOn = libraries.indexedPooling;
  kernels->indexedPooling.resize(g.getNumOps());
  for (unsigned i = 0, e = table.size(); i != e; ++i)
    if (libraries.indexedPooling && !forced[i] && table[i].fn)
      kernels->indexedPooling[i] = describeIndexedPooling(g, i, table[i]);
  kernels->batchNormStatsOn = libraries.batchNormStats;
  kernels->batchNormInvStd.resize(g.getNumOps());
  kernels->batchNormBackward.resize(g.getNumOps());
  for (unsigned i = 0, e = table.size(); i != e; ++i)
    if (libraries.batchNormStats && !forced[i] && table[i].fn) {
      kernels->batchNormInvStd[i] = describeBatchNormInvStd(g, i, table[i]);
      kernels->batchNormBackward[i] =
          describeBatchNormBackward(g, i, table[i]);
    }
  // Each weight and bias gradient takes the sums of the input gradient op
  // reading the same tensors, the nearest one before it; each inverse
  // deviation those of the mean op reading the same input.
  kernels->batchNormParamGrad.resize(g.getNumOps());
  kernels->batchNormMean.resize(g.getNumOps());
  kernels->sumsSource.assign(g.getNumOps(), -1);
  for (unsigned i = 0, e = table.size(); i != e; ++i) {
    if (!libraries.batchNormStats || !libraries.batchNormSums || forced[i] ||
        !table[i].fn)
      continue;
    kernels->batchNormMean[i] =
        describeBatchNormInvStd(g, i, table[i], "__1");
    if (kernels->batchNormInvStd[i]) {
      const graph::Op &o = g.getOp(i);
      for (unsigned j = i; j-- > 0;) {
        const graph::Op &m = g.getOp(j);
        if (kernels->batchNormMean[j] && m.inputs.size() == 1 &&
            o.inputs.size() == 1 && m.inputs[0].index >= 0 &&
            m.inputs[0].index == o.inputs[0].index) {
          kernels->sumsSource[i] = int(j);
          break;
        }
      }
      continue;
    }
    // Only a weight or bias gradient looks back (a scan per op would be
    // quadratic in the graph's ops).
    const auto &type = g.getOp(i).type;
    if (type != "native_batch_norm_backward__1" &&
        type != "native_batch_norm_backward__2")
      continue;
    for (unsigned j = i; j-- > 0;) {
      if (!kernels->batchNormBackward[j])
        continue;
      kernels->batchNormParamGrad[i] =
          describeBatchNormParamGrad(g, i, j, table[i]);
      if (kernels->batchNormParamGrad[i]) {
        kernels->sumsSource[i] = int(j);
        break;
      }
    }
  }
  kernels->serial = nextSerial++;
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
    // A GEMM's epilogue kernels run chains of every length up to the last
    // (GraphKernels.h).
    unsigned length = 1;
    if (generated && emitted->kernels[k].kind == codegen::KernelKind::Gemm)
      while (length < runtime::MaxChainLength && i + length < e) {
        unsigned at = codegen::getFusedTableIndex(i, length + 1);
        if (at >= kernels->fusedFns.size() || !kernels->fusedFns[at])
          break;
        ++length;
      }
    kernels->hints.epilogueLength.push_back(length);
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

bool GeneratedKernels::runFused(const std::vector<runtime::ChainOp> &chain,
                                const runtime::KernelCall &call) {
  // Kernel indices are op indices; the table has consecutive ops' chains,
  // and from a GEMM its epilogue's: the one reader of each value in turn
  // (GraphKernels.h), which is how the executor finds them too.
  unsigned first = chain.front().kernel, length = chain.size();
  if (length < 2 || length > runtime::MaxChainLength ||
      first >= hints.epilogueLength.size())
    return false;
  bool epilogue = hints.epilogueLength[first] >= length;
  for (unsigned k = 0; k != length; ++k) {
    unsigned kernel = chain[k].kernel;
    if ((!epilogue && kernel != first + k) || kernel >= fns.size() ||
        !fns[kernel])
      return false;
  }
  unsigned at = codegen::getFusedTableIndex(first, length);
  if (at >= fusedFns.size() || !fusedFns[at] || !fusedFns[at](call))
    return false;
  // Calls of element-wise kernels: none takes or leaves sums.
  lastSums.valid = false;
  ++fusedCalls;
  epilogueCalls += epilogue;
  return true;
}

void GeneratedKernels::run(unsigned kernel, const runtime::KernelCall &call) {
  if (kernel >= fns.size())
    throw runtime::RuntimeError(fmt::format("no kernel {}", kernel));
  // The sums of the last call serve only the call right after it (the
  // same batch norm's weight and bias gradients run next, reading the
  // boxes the sums were taken over: runBatchNormParamGradFromSums checks).
  //
  // Why this hand-off is safe with today's executor (runtime/lib/
  // Executor.cpp), although the rule lives here and not there:
  // - A worker's kernel calls all run on one thread, in plan order
  //   (WorkerStep::run calls runOp(0..n-1); one call per op with a
  //   non-empty share). Fusion only defers an elementwise op to run in
  //   blocks with the next op (runFusedBlocks), and no source or consumer
  //   of sums is elementwise (they are reductions); other threads (other
  //   workers) have their own lastSums.
  // - The consumer takes sums only from the call just before it on its
  //   thread, made by its own source op (sumsSource, an earlier op of the
  //   graph reading the same tensors) of this instance, over the same
  //   data, boxes and channels; any call in between drops them. Tensors do
  //   not change within a step (a batch norm's inputs are not updated in
  //   place), so the same boxes at the same addresses hold the same values.
  // - A source's sums never reach a consumer in a later step: the shares
  //   are the same every step, so if consumer i is called in a step, the
  //   step's last call is op i or a later one, never source j < i, and a
  //   call of j in the next step precedes i's there.
  // An executor that ran a worker's ops on several threads would only lose
  // the saving. One that ran a weight or bias gradient before its input
  // gradient (the data flow allows it: the gradient does not read the
  // input gradient's output), with that input gradient the last call of a
  // step on its thread, would hand it the previous step's sums: such a
  // reordering must tie the hand-off to the op order (drop the sums at
  // each step's start, or have the executor pass them), in the executor.
  LastSums &last = lastSums;
  bool takesSums = last.valid && last.owner == serial &&
                   kernel < sumsSource.size() &&
                   sumsSource[kernel] == int(last.op);
  if (!takesSums)
    last.valid = false;
#ifdef TOFU_HAVE_DNNL
  if (fns[kernel] && oneDnn && oneDnn->run(kernel, call))
    return;
#endif
  if (kernel < indexedPooling.size() && indexedPooling[kernel]) {
    const runtime::IndexedPooling &p = *indexedPooling[kernel];
    if (runtime::runIndexedPooling(p, call)) {
      ++indexedCounts[p.kind == runtime::IndexedPoolingKind::Indices ? 0 : 1];
      return;
    }
    ++indexedCounts[2];
  }
  if (kernel < batchNormMean.size() && batchNormMean[kernel]) {
    if (runtime::runBatchNormMean(*batchNormMean[kernel], call,
                                  last.moments)) {
      last.offer(serial, kernel);
      ++batchNormCounts[5];
      return;
    }
    ++batchNormCounts[2];
  }
  if (kernel < batchNormInvStd.size() && batchNormInvStd[kernel]) {
    const runtime::BatchNormInvStd &b = *batchNormInvStd[kernel];
    if (takesSums &&
        runtime::runBatchNormInvStdFromMoments(b, last.moments, call)) {
      ++batchNormCounts[6];
      return;
    }
    if (runtime::runBatchNormInvStd(b, call)) {
      ++batchNormCounts[0];
      return;
    }
    ++batchNormCounts[2];
  }
  if (kernel < batchNormBackward.size() && batchNormBackward[kernel]) {
    if (runtime::runBatchNormBackwardInput(*batchNormBackward[kernel], call,
                                           last.sums)) {
      last.offer(serial, kernel);
      ++batchNormCounts[1];
      return;
    }
    ++batchNormCounts[2];
  }
  if (kernel < batchNormParamGrad.size() && batchNormParamGrad[kernel]) {
    if (takesSums && runtime::runBatchNormParamGradFromSums(
                         *batchNormParamGrad[kernel], last.sums, call)) {
      ++batchNormCounts[3];
      return;
    }
    ++batchNormCounts[4];
  }
  if (fns[kernel])
    fns[kernel](call);
  else
    fallback->run(kernel, call);
}

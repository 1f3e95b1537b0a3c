//===- kernel-check.cpp - Check generated kernels against the evaluator ---===//
//
// kernel-check generates the kernels of a graph (one translation unit,
// lib/CodeGen), compiles and loads them (KernelCompiler), and checks every
// distinct kernel against the TDL evaluator on random inputs: over the
// whole box, over each partition strategy of the op's analysis cut into two
// uneven shares (a split's shares assembled, a reduce's partial outputs
// combined with its reducer) with the input boxes the analysis computes,
// and over a random sub-box of the output variables written into a larger
// output box (nothing outside the box may change). With --target=cuda-host
// it checks the CUDA kernels instead: their bodies run on the host over
// every block and thread of the grid a launch would use. Exit status: 0 all
// kernels match, 1 a mismatch or a failure, 2 bad usage.
//
//===----------------------------------------------------------------------===//

#include "tofu/Analysis/Regions.h"
#include "tofu/CodeGen/GraphKernels.h"
#include "tofu/CodeGen/KernelCompiler.h"
#include "tofu/Eval/Evaluator.h"
#include "tofu/Graph/Graph.h"
#include "tofu/Graph/ModelFile.h"
#include "tofu/Graph/SpecLibrary.h"
#include "tofu/Runtime/Half.h"
#include "tofu/Support/Diagnostics.h"
#include "tofu/TDL/AST.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

using namespace tofu;
using namespace tofu::codegen;
using analysis::Range;
using runtime::BoxView;
using runtime::ElementType;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("kernel-check options");
cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                               cl::desc("<GRAPH.json>"), cl::cat(category));
cl::list<std::string> specFiles("spec", cl::desc("Also load FILE.tdl"),
                                cl::value_desc("FILE.tdl"), cl::cat(category));
cl::opt<std::string> cacheDir("cache", cl::desc("Kernel cache directory"),
                              cl::value_desc("DIR"), cl::cat(category));
cl::opt<unsigned> seed("seed", cl::desc("Random seed (default 1)"), cl::init(1),
                       cl::cat(category));
cl::opt<bool> noBlas("no-blas", cl::desc("Generate without BLAS routing"),
                     cl::cat(category));
cl::opt<bool> exact16(
    "exact-16bit",
    cl::desc("A kernel with an f16/bf16 output must match the evaluator bit "
             "for bit (except a reduce share's combined partial values)"),
    cl::cat(category));
cl::opt<bool> exactAll(
    "exact",
    cl::desc("Every kernel must match the evaluator bit for bit (the random "
             "ops' draws, docs/TDL.md \"Random builtins\"; except a reduce "
             "share's combined partial values)"),
    cl::cat(category));
cl::opt<double> maxWork(
    "max-work",
    cl::desc("Skip kernels whose evaluation takes more than N steps (output "
             "elements times the expression nodes of the body, a reduction's "
             "body counted once per point of its range; default 3e7: the "
             "evaluator takes a few ns a step)"),
    cl::value_desc("N"), cl::init(3e7), cl::cat(category));
cl::opt<KernelTarget> target(
    "target", cl::desc("The kernels to check"), cl::init(KernelTarget::Cpp),
    cl::values(clEnumValN(KernelTarget::Cpp, "cpp",
                          "the C++ kernels (default)"),
               clEnumValN(KernelTarget::Cuda, "cuda-host",
                          "the CUDA kernels' bodies, compiled by the host "
                          "compiler and run over every block and thread of "
                          "their grid (docs/CUDA.md)")),
    cl::cat(category));
cl::opt<bool> verbose("v", cl::desc("One line per kernel"), cl::cat(category));

using analysis::Region;

/// A dense box of elements of a tensor, in its element type.
struct Box {
  Region region;
  std::vector<int64_t> lo, extent;
  std::vector<char> bytes;
};

ElementType elementType(DType t) {
  switch (t) {
  case DType::F64: return ElementType::F64;
  case DType::I64: return ElementType::I64;
  case DType::I32: return ElementType::I32;
  case DType::I8: return ElementType::I8;
  case DType::Bool: return ElementType::Bool;
  case DType::F16: return ElementType::F16;
  case DType::BF16: return ElementType::BF16;
  default: return ElementType::F32;
  }
}

double load(DType t, const char *p) {
  switch (t) {
  case DType::F64: return *reinterpret_cast<const double *>(p);
  case DType::I64: return double(*reinterpret_cast<const int64_t *>(p));
  case DType::I32: return *reinterpret_cast<const int32_t *>(p);
  case DType::I8: return *reinterpret_cast<const int8_t *>(p);
  case DType::Bool: return *reinterpret_cast<const uint8_t *>(p);
  case DType::F16: return *reinterpret_cast<const tofu::runtime::F16 *>(p);
  case DType::BF16: return *reinterpret_cast<const tofu::runtime::BF16 *>(p);
  default: return *reinterpret_cast<const float *>(p);
  }
}

void store(DType t, char *p, double v) {
  switch (t) {
  case DType::F64: *reinterpret_cast<double *>(p) = v; break;
  case DType::I64: *reinterpret_cast<int64_t *>(p) = int64_t(v); break;
  case DType::I32: *reinterpret_cast<int32_t *>(p) = int32_t(v); break;
  case DType::I8: *reinterpret_cast<int8_t *>(p) = int8_t(v); break;
  case DType::Bool: *reinterpret_cast<uint8_t *>(p) = v != 0; break;
  case DType::F16: *reinterpret_cast<tofu::runtime::F16 *>(p) = v; break;
  case DType::BF16: *reinterpret_cast<tofu::runtime::BF16 *>(p) = v; break;
  default: *reinterpret_cast<float *>(p) = float(v); break;
  }
}

double storedValue(DType type, double v) {
  char buf[8];
  store(type, buf, v);
  return load(type, buf);
}

/// Calls `fn(flat index in the full tensor, flat index in the box)` for
/// every element of `region` of a tensor of `shape`.
template <typename Fn>
void forEachElement(ArrayRef<int64_t> shape, const Region &region, Fn fn) {
  unsigned rank = shape.size();
  for (const Range &r : region)
    if (r.empty())
      return;
  SmallVector<int64_t, 6> idx(rank);
  for (unsigned d = 0; d != rank; ++d)
    idx[d] = region[d].lo;
  for (int64_t boxFlat = 0;; ++boxFlat) {
    int64_t flat = 0;
    for (unsigned d = 0; d != rank; ++d)
      flat = flat * shape[d] + idx[d];
    fn(flat, boxFlat);
    unsigned d = rank;
    while (d-- > 0) {
      if (++idx[d] < region[d].hi)
        break;
      idx[d] = region[d].lo;
    }
    if (d == unsigned(-1))
      return;
  }
}

Box makeBox(const eval::Tensor &full, DType type, const Region &region,
            bool copy) {
  Box box;
  box.region = region;
  int64_t n = 1;
  for (const Range &r : region) {
    box.lo.push_back(r.lo);
    box.extent.push_back(r.size());
    n *= r.size();
  }
  unsigned size = getDTypeSize(type);
  box.bytes.assign(std::max<int64_t>(n, 1) * size, 0);
  if (copy)
    forEachElement(full.getShape(), region, [&](int64_t flat, int64_t at) {
      store(type, box.bytes.data() + at * size, full.getData()[flat]);
    });
  return box;
}

BoxView viewOf(Box &box, DType type) {
  return {elementType(type), unsigned(box.lo.size()), box.bytes.data(),
          box.lo.data(), box.extent.data()};
}

Region fullRegion(ArrayRef<int64_t> shape) {
  Region r;
  for (int64_t e : shape)
    r.push_back({0, e});
  return r;
}

struct Checker {
  const KernelInstance &inst;
  runtime::KernelFn fn;
  const GeneratedKernel &kernel;
  std::mt19937_64 &rng;
  std::vector<eval::Tensor> inputs;
  eval::Tensor expected;
  double atol, rtol;
  std::string failure;
  unsigned runs = 0;

  bool close(double got, double want) const {
    if (std::isnan(want) || std::isnan(got))
      return std::isnan(want) && std::isnan(got);
    if (std::isinf(want) || std::isinf(got))
      return got == want;
    if (!isFloatingPoint(inst.outputType))
      return got == want;
    return std::fabs(got - want) <= atol + rtol * std::fabs(want);
  }

  /// Runs the kernel over `vars` with input boxes `regions` into an output
  /// box `outRegion`; returns the output box.
  Box run(ArrayRef<Range> vars, ArrayRef<Region> regions, const Region &outRegion,
          double fill) {
    std::vector<Box> boxes;
    boxes.reserve(inputs.size());
    for (unsigned t = 0; t != inputs.size(); ++t)
      boxes.push_back(makeBox(inputs[t], inst.inputTypes[t], regions[t], true));
    std::vector<BoxView> views;
    for (unsigned t = 0; t != inputs.size(); ++t)
      views.push_back(viewOf(boxes[t], inst.inputTypes[t]));
    Box out = makeBox(expected, inst.outputType, outRegion, false);
    unsigned size = getDTypeSize(inst.outputType);
    for (size_t i = 0; i * size < out.bytes.size(); ++i)
      store(inst.outputType, out.bytes.data() + i * size, fill);
    std::vector<int64_t> lo, hi;
    for (const Range &r : vars) {
      lo.push_back(r.lo);
      hi.push_back(r.hi);
    }
    runtime::KernelCall call{views.data(), unsigned(views.size()),
                             viewOf(out, inst.outputType), lo.data(), hi.data()};
    fn(call);
    ++runs;
    return out;
  }

  double at(const Box &box, int64_t i) const {
    return load(inst.outputType, box.bytes.data() + i * getDTypeSize(inst.outputType));
  }

  /// Compares the elements of `box` inside `within` with the reference,
  /// and those outside it with `fill`.
  bool compare(const Box &box, const Region &within, StringRef what,
               double fill) {
    bool ok = true;
    forEachElement(expected.getShape(), box.region, [&](int64_t flat, int64_t i) {
      if (!ok)
        return;
      SmallVector<int64_t, 6> idx(box.region.size());
      int64_t rest = flat;
      bool inside = true;
      for (unsigned d = idx.size(); d-- > 0;) {
        idx[d] = rest % expected.getShape()[d];
        rest /= expected.getShape()[d];
        inside &= idx[d] >= within[d].lo && idx[d] < within[d].hi;
      }
      double got = at(box, i);
      double ref = inside ? expected.getData()[flat]
                          : storedValue(inst.outputType, fill);
      bool good = inside ? close(got, ref) : (got == ref || (std::isnan(got) && std::isnan(ref)));
      if (!good) {
        llvm::raw_string_ostream os(failure);
        os << what << ": element " << flat << (inside ? "" : " (outside the box)")
           << " is " << got << ", expected " << ref;
        ok = false;
      }
    });
    return ok;
  }
};

void randomize(eval::Tensor &t, DType type, std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(-1, 5);
  for (double &v : t.getData()) {
    if (isFloatingPoint(type))
      v = storedValue(type, real(rng));
    else if (type == DType::Bool)
      v = small(rng) > 2;
    else
      v = small(rng);
  }
}

double combine(tdl::Reducer r, double a, double b) {
  switch (r) {
  case tdl::Reducer::Sum: return a + b;
  case tdl::Reducer::Prod: return a * b;
  case tdl::Reducer::Max: return std::isnan(a) ? a : std::max(a, b);
  case tdl::Reducer::Min: return std::isnan(a) ? a : std::min(a, b);
  }
  return a;
}

/// An upper bound on the evaluator's steps per output element of `e`: a
/// reduction costs the product of its extents times its body.
double costOf(const tdl::Expr &e, ArrayRef<int64_t> extents) {
  if (const auto *reduce = dyn_cast<tdl::ReduceExpr>(&e)) {
    double n = 1;
    for (const auto &var : reduce->getVars())
      n *= std::max<int64_t>(extents[var->getId()], 1);
    return n * costOf(reduce->getBody(), extents);
  }
  double cost = 1;
  if (const auto *un = dyn_cast<tdl::UnaryExpr>(&e))
    cost += costOf(un->getOperand(), extents);
  else if (const auto *bin = dyn_cast<tdl::BinaryExpr>(&e))
    cost += costOf(bin->getLHS(), extents) + costOf(bin->getRHS(), extents);
  else if (const auto *call = dyn_cast<tdl::CallExpr>(&e))
    for (const tdl::ExprPtr &arg : call->getArgs())
      cost += costOf(*arg, extents);
  else if (const auto *read = dyn_cast<tdl::TensorReadExpr>(&e))
    for (const tdl::ExprPtr &index : read->getIndices())
      cost += costOf(*index, extents) - 1;
  return cost;
}

/// Checks one kernel; returns false with `c.failure` set on a mismatch.
bool checkKernel(Checker &c, graph::SpecLibrary &specs) {
  const KernelInstance &inst = c.inst;
  for (unsigned t = 0; t != inst.inputShapes.size(); ++t) {
    c.inputs.emplace_back(inst.inputTypes[t], inst.inputShapes[t]);
    randomize(c.inputs.back(), inst.inputTypes[t], c.rng);
  }
  auto compiled = eval::CompiledOp::compile(*inst.op, inst.inputShapes,
                                            inst.params, inst.outputShape);
  if (!compiled) {
    c.failure = "evaluator: " + llvm::toString(compiled.takeError());
    return false;
  }
  c.expected = eval::Tensor(inst.outputType, inst.outputShape);
  SmallVector<const eval::Tensor *, 4> ptrs;
  for (const eval::Tensor &t : c.inputs)
    ptrs.push_back(&t);
  compiled->run(ptrs, c.expected);
  for (double &v : c.expected.getData())
    v = storedValue(inst.outputType, v);

  std::vector<Region> wholeInputs;
  for (const Shape &s : inst.inputShapes)
    wholeInputs.push_back(fullRegion(s));
  Region wholeOut = fullRegion(inst.outputShape);
  SmallVector<Range, 8> full;
  for (int64_t e : c.kernel.varExtents)
    full.push_back({0, e});
  const double fill = -7.25;
  if (!c.compare(c.run(full, wholeInputs, wholeOut, fill), wholeOut, "whole box", fill))
    return false;

  auto a = specs.getAnalysis(*inst.op);
  if (!a) {
    llvm::consumeError(a.takeError());
    return true; // no regions to check shares against
  }
  SmallVector<int64_t, 4> intParams;
  for (double p : inst.params)
    intParams.push_back(int64_t(p));
  auto binding = analysis::Binding::create(**a, inst.inputShapes,
                                           inst.outputShape, intParams);
  if (!binding) {
    llvm::consumeError(binding.takeError());
    return true;
  }
  analysis::WorkerRegions regions;
  std::vector<Region> inputRegions;
  auto shareRun = [&](ArrayRef<Range> box) {
    analysis::computeWorkerRegions(*binding, box, regions);
    inputRegions.assign(regions.inputs.begin(), regions.inputs.end());
    return c.run(box, inputRegions, regions.output, fill);
  };
  for (const analysis::Strategy &s : (*a)->getStrategies()) {
    int64_t extent = full[s.var].hi;
    if (extent < 2)
      continue;
    int64_t cut = std::uniform_int_distribution<int64_t>(1, extent - 1)(c.rng);
    std::string what = (getStrategyKindName(s.kind) + " of '" +
                        inst.op->getIndexVars()[s.var]->getName() + "' at " +
                        std::to_string(cut))
                           .str();
    std::vector<double> combined, magnitude;
    // The empty share writes nothing (split) or the reducer's identity.
    for (Range part : {Range{0, cut}, Range{cut, extent}, Range{cut, cut}}) {
      SmallVector<Range, 8> box(full);
      box[s.var] = part;
      Box out = shareRun(box);
      if (s.kind == analysis::Strategy::Kind::Split) {
        if (!c.compare(out, regions.output, what, fill))
          return false;
        continue;
      }
      // A reduce share covers the whole output with partial values (an
      // empty share may have an empty output region: nothing to combine).
      if (llvm::any_of(out.region, [](const Range &r) { return r.empty(); }))
        continue;
      std::vector<double> partial(c.expected.getNumElements());
      forEachElement(inst.outputShape, out.region,
                     [&](int64_t flat, int64_t i) { partial[flat] = c.at(out, i); });
      magnitude.resize(partial.size());
      for (size_t i = 0; i != partial.size(); ++i)
        magnitude[i] += std::fabs(partial[i]);
      if (combined.empty())
        combined = std::move(partial);
      else
        for (size_t i = 0; i != combined.size(); ++i)
          combined[i] = combine(s.reducer, combined[i], partial[i]);
    }
    if (s.kind == analysis::Strategy::Kind::Reduce) {
      std::vector<double> got = std::move(combined);
      // Partial values stored in 16 bits are each rounded, and so are
      // their sum and the expected value: the combined value may be off by
      // two units in the last place of the partials' magnitude (bf16's
      // unit 2^-7, f16's 2^-10 of a value in [1, 2); docs/Runtime.md
      // "16-bit tensors").
      double unit = inst.outputType == DType::BF16 ? std::ldexp(1.0, -6)
                    : inst.outputType == DType::F16 ? std::ldexp(1.0, -9)
                                                    : 0.0;
      for (size_t i = 0; i != got.size(); ++i)
        if (!c.close(storedValue(inst.outputType, got[i]), c.expected.getData()[i]) &&
            !(std::fabs(got[i] - c.expected.getData()[i]) <= unit * magnitude[i])) {
          llvm::raw_string_ostream os(c.failure);
          os << what << ": combined element " << i << " is " << got[i]
             << ", expected " << c.expected.getData()[i];
          return false;
        }
    }
  }
  // A random sub-box of the output variables, written into the whole
  // output: elements outside the box keep their fill.
  SmallVector<Range, 8> box(full);
  Region within;
  for (unsigned d = 0; d != inst.outputShape.size(); ++d) {
    int64_t e = full[d].hi;
    if (e > 0) {
      int64_t lo = std::uniform_int_distribution<int64_t>(0, e - 1)(c.rng);
      int64_t hi = std::uniform_int_distribution<int64_t>(lo + 1, e)(c.rng);
      box[d] = {lo, hi};
    }
    within.push_back(box[d]);
  }
  analysis::computeWorkerRegions(*binding, box, regions);
  inputRegions.assign(regions.inputs.begin(), regions.inputs.end());
  return c.compare(c.run(box, inputRegions, wholeOut, fill), within,
                   "sub-box in a larger output box", fill);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(category);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "kernel-check: generate, compile and check a graph's kernels "
          "against the TDL evaluator\n",
          &llvm::errs()))
    return 2;
  llvm::SourceMgr srcMgr;
  DiagnosticEngine diags(srcMgr);
  std::unique_ptr<graph::Graph> g = graph::readModelFile(inputFile, diags);
  if (!g)
    return 1;
  graph::SpecLibrary specs;
  if (!specs.loadFor(*g, TOFU_SPECS_DIR, specFiles, diags))
    return 1;
  auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
        .count();
  };
  KernelOptions options;
  options.useBlas = !noBlas;
  options.target = target;
  llvm::Expected<GraphKernels> kernels = emitGraphKernels(*g, specs, options);
  if (!kernels) {
    llvm::WithColor::error(llvm::errs(), "kernel-check")
        << llvm::toString(kernels.takeError()) << '\n';
    return 1;
  }
  double generated = seconds();
  KernelCompiler::Options copts;
  copts.cacheDir = cacheDir;
  KernelCompiler compiler(copts);
  auto library = compiler.compile(kernels->source);
  if (!library) {
    llvm::WithColor::error(llvm::errs(), "kernel-check")
        << llvm::toString(library.takeError()) << '\n';
    return 1;
  }
  double compiled = seconds();
  if ((*library)->getKernels().size() != g->getNumOps()) {
    llvm::WithColor::error(llvm::errs(), "kernel-check")
        << "the table has " << (*library)->getKernels().size()
        << " entries for " << g->getNumOps() << " ops\n";
    return 1;
  }
  std::mt19937_64 rng(seed);
  std::vector<bool> done(kernels->kernels.size(), false);
  unsigned checked = 0, failed = 0, blas = 0, without = 0, runs = 0,
           skipped = 0;
  for (unsigned i = 0, n = g->getNumOps(); i != n; ++i) {
    int k = kernels->opKernel[i];
    if (k < 0) {
      ++without;
      if (verbose)
        llvm::outs() << "op '" << g->getOp(i).name << "': no kernel: "
                     << kernels->notes[i] << '\n';
      continue;
    }
    if (done[k])
      continue;
    done[k] = true;
    llvm::Expected<KernelInstance> inst = makeKernelInstance(*g, i, specs);
    if (!inst) {
      llvm::outs() << "FAIL " << llvm::toString(inst.takeError()) << '\n';
      ++failed;
      continue;
    }
    const GeneratedKernel &kernel = kernels->kernels[k];
    double work = double(std::max<int64_t>(getNumElements(inst->outputShape), 1)) *
                  costOf(inst->op->getBody(), kernel.varExtents);
    if (work > maxWork) {
      ++skipped;
      if (verbose)
        llvm::outs() << "skipped " << kernel.name << " (op '" << g->getOp(i).name
                     << "'): " << work << " steps\n";
      continue;
    }
    Checker c{*inst, (*library)->getKernel(i), kernel, rng, {}, {}, 1e-5, 1e-5, {}, 0};
    if (kernel.usesBlas)
      c.atol = c.rtol = 1e-4 * std::sqrt(double(kernel.varExtents.back() + 1));
    if (exactAll || (exact16 && (inst->outputType == DType::F16 ||
                                 inst->outputType == DType::BF16)))
      c.atol = c.rtol = 0;
    bool ok = checkKernel(c, specs);
    ++checked;
    runs += c.runs;
    if (!ok) {
      ++failed;
      llvm::outs() << "FAIL " << kernel.name << " (op '" << g->getOp(i).name
                   << "'): " << c.failure << '\n';
    } else if (verbose) {
      llvm::outs() << "ok " << kernel.name << " (op '" << g->getOp(i).name
                   << "', " << c.runs << " calls)\n";
    }
  }
  unsigned dnn = 0;
  for (const GeneratedKernel &kernel : kernels->kernels) {
    blas += kernel.usesBlas || kernel.deviceGemm;
    dnn += kernel.conv.hasValue();
  }
  llvm::outs() << g->getNumOps() << " ops, " << kernels->kernels.size()
               << " kernels (" << blas;
  if (target == KernelTarget::Cuda)
    llvm::outs() << " cuBLAS, " << dnn << " cuDNN on the device), ";
  else
    llvm::outs() << " BLAS), ";
  llvm::outs() << without << " ops without a kernel; " << checked
               << " kernels checked in " << runs << " calls, " << skipped
               << " skipped (over --max-work), " << failed << " failed\n";
  llvm::errs() << llvm::format("generate %.2f s, compile %.2f s%s, check %.2f s\n",
                               generated, compiled - generated,
                               compiler.lastWasCached() ? " (cached)" : "",
                               seconds() - compiled);
  return failed ? 1 : 0;
}

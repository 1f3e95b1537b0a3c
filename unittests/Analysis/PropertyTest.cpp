//===- PropertyTest.cpp - Analysed regions against brute force ------------===//
//
// The property that makes the analysis trustworthy: for every operator of
// every .tdl test input that checks cleanly (the contract's examples among
// them) and of every .tdl file in specs/ (a generic operator through an
// instance at random shapes), at random small shapes and params, for every
// strategy split evenly among 2 and 3 workers and unevenly (empty parts included), each
// worker's analysed input regions contain every in-bounds element it reads,
// found by enumerating every coordinate it owns and evaluating the index
// expressions directly; and where a tensor is read only through indices
// with coefficients -1, 0 or 1 and no variable shared between dimensions,
// the region equals the brute-force bounding box. The evaluator below is
// independent of the analysis: it walks the AST.
//
//===----------------------------------------------------------------------===//

#include "TDL/TDLTestUtils.h"

#include "tofu/Analysis/Regions.h"
#include "tofu/Analysis/ShapeInference.h"
#include "tofu/TDL/Instantiate.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <functional>
#include <random>

using namespace tofu;
using namespace tofu::analysis;
using namespace tofu::tdl;

namespace {

/// Operators that exercise the corners of the analysis beyond the
/// contract's examples.
const char *const extraOps = R"(
op affine_mix(A, B) = lambda i, j: A[i + j, 2 * j - i + 3] + B[j - i, i];
op flip(A) = lambda i: A[5 - i];
op strided<s, o>(A) = lambda i: Sum(lambda k < s + 1: A[s * i + k - o]);
op nested(A, B) = lambda i: Sum(lambda k: A[i, k] * Sum(lambda m: B[k, m]));
op bias_mm(A, B, c) = lambda i, j: c[j] + Sum(lambda k: A[i, k] * B[k, j]);
op divmod(A) = lambda i, j: A[(i * 3 + j) / 4, (i + 2 * j) % 3];
op maxpool(X) = lambda c, y: Max(lambda ky < 3: X[c, y + ky - 1]);
op rowmax(X) = lambda i: Max(lambda k: X[i, k]) - 1;
op gather(W, idx) = lambda i, d: W[idx[i, 0], d + 1];
op square(A) = lambda i: A[i * i];
op sel(A, B) = lambda i: select(i < 3, A[i], B[i + 1]);
op mulparam<a, b>(A) = lambda i, j: A[(a + 1) * i - b * j];
op divparam<d>(A) = lambda i: A[i / d, i % d];
op twice(A) = lambda i: A[i + i - i, i - 1];
op stride_pad<s, p>(X) = lambda y: Sum(lambda ky < 3: X[s * y + ky - p]);
op mulk(A) = lambda i, j: A[i * 2, 3 * j + 1];
op negstride(A) = lambda i, j: Sum(lambda k < 2: A[7 - 3 * i + k, j]);
op divk(A) = lambda i, j: Sum(lambda k < 2: A[(i + k) / 3, j % 4]);
op remk(A, B) = lambda i, j: A[(2 - i) % 5] + B[(j + 3) / 2 - 1];
)";

//===----------------------------------------------------------------------===//
// The reference: direct evaluation of index expressions
//===----------------------------------------------------------------------===//

/// Evaluates an integer index expression; None if it divides by zero,
/// reads a tensor (data dependent) or uses a free index of `opaque(...)`.
llvm::Optional<int64_t> evalIndex(const Expr &e, ArrayRef<int64_t> vars,
                                  ArrayRef<int64_t> params) {
  if (auto *lit = dyn_cast<IntLiteralExpr>(&e))
    return lit->getValue();
  if (auto *name = dyn_cast<NameExpr>(&e)) {
    if (const IndexVarDecl *v = name->getIndexVar())
      return vars[v->getId()];
    // A free index of `opaque(...)` may be anything, like a data-dependent
    // one.
    if (!name->getParam())
      return llvm::None;
    return params[name->getParam()->getPosition()];
  }
  if (auto *un = dyn_cast<UnaryExpr>(&e)) {
    auto v = evalIndex(un->getOperand(), vars, params);
    if (!v)
      return llvm::None;
    return un->getOp() == UnaryOp::Neg ? -*v : int64_t(!*v);
  }
  if (auto *call = dyn_cast<CallExpr>(&e)) {
    SmallVector<int64_t, 3> args;
    for (const ExprPtr &arg : call->getArgs()) {
      auto v = evalIndex(*arg, vars, params);
      if (!v)
        return llvm::None;
      args.push_back(*v);
    }
    switch (*call->getBuiltin()) {
    case Builtin::Abs: return std::abs(args[0]);
    case Builtin::Max: return std::max(args[0], args[1]);
    case Builtin::Min: return std::min(args[0], args[1]);
    case Builtin::Select: return args[0] ? args[1] : args[2];
    default: return llvm::None;
    }
  }
  auto *bin = dyn_cast<BinaryExpr>(&e);
  if (!bin)
    return llvm::None;
  auto a = evalIndex(bin->getLHS(), vars, params);
  auto b = evalIndex(bin->getRHS(), vars, params);
  if (!a || !b)
    return llvm::None;
  int64_t x = *a, y = *b;
  switch (bin->getOp()) {
  case BinaryOp::Add: return x + y;
  case BinaryOp::Sub: return x - y;
  case BinaryOp::Mul: return x * y;
  case BinaryOp::Div:
  case BinaryOp::Rem: {
    if (y == 0)
      return llvm::None;
    int64_t q = x / y;
    if (x % y != 0 && ((x < 0) != (y < 0)))
      --q;
    return bin->getOp() == BinaryOp::Div ? q : x - q * y;
  }
  case BinaryOp::Eq: return x == y;
  case BinaryOp::Ne: return x != y;
  case BinaryOp::Lt: return x < y;
  case BinaryOp::Le: return x <= y;
  case BinaryOp::Gt: return x > y;
  case BinaryOp::Ge: return x >= y;
  case BinaryOp::And: return x && y;
  case BinaryOp::Or: return x || y;
  }
  return llvm::None;
}

/// A tensor read with the mask of the index variables bound around it.
struct ScopedRead {
  const TensorReadExpr *read;
  uint64_t scope;
};

void collectScopedReads(const Expr &e, uint64_t scope,
                        std::vector<ScopedRead> &out) {
  if (auto *red = dyn_cast<ReduceExpr>(&e)) {
    for (const auto &v : red->getVars())
      scope |= uint64_t(1) << v->getId();
    return collectScopedReads(red->getBody(), scope, out);
  }
  if (auto *read = dyn_cast<TensorReadExpr>(&e)) {
    out.push_back({read, scope});
    for (const ExprPtr &i : read->getIndices())
      collectScopedReads(*i, scope, out);
    return;
  }
  if (auto *un = dyn_cast<UnaryExpr>(&e))
    return collectScopedReads(un->getOperand(), scope, out);
  if (auto *bin = dyn_cast<BinaryExpr>(&e)) {
    collectScopedReads(bin->getLHS(), scope, out);
    return collectScopedReads(bin->getRHS(), scope, out);
  }
  if (auto *call = dyn_cast<CallExpr>(&e))
    for (const ExprPtr &a : call->getArgs())
      collectScopedReads(*a, scope, out);
}

/// Calls `fn` on every point of `box` restricted to the variables of
/// `mask` (the others stay at their range's start).
void forEachPoint(ArrayRef<Range> box, uint64_t mask,
                  llvm::function_ref<void(ArrayRef<int64_t>)> fn) {
  SmallVector<int64_t, 8> point;
  for (unsigned v = 0; v != box.size(); ++v) {
    if ((mask >> v & 1) && box[v].empty())
      return;
    point.push_back(box[v].lo);
  }
  while (true) {
    fn(point);
    unsigned v = 0;
    for (; v != box.size(); ++v) {
      if (!(mask >> v & 1))
        continue;
      if (++point[v] < box[v].hi)
        break;
      point[v] = box[v].lo;
    }
    if (v == box.size())
      return;
  }
}

/// Fills `coefs` (by variable id) and `constant` if `e` is affine in the
/// index variables at these params; false otherwise. Independent of the
/// analysis: it walks the AST.
bool getAffine(const Expr &e, ArrayRef<int64_t> params,
               llvm::MutableArrayRef<int64_t> coefs, int64_t &constant) {
  std::fill(coefs.begin(), coefs.end(), 0);
  constant = 0;
  if (auto *lit = dyn_cast<IntLiteralExpr>(&e)) {
    constant = lit->getValue();
    return true;
  }
  if (auto *name = dyn_cast<NameExpr>(&e)) {
    if (const IndexVarDecl *v = name->getIndexVar()) {
      coefs[v->getId()] = 1;
      return true;
    }
    if (!name->getParam())
      return false;
    constant = params[name->getParam()->getPosition()];
    return true;
  }
  if (auto *un = dyn_cast<UnaryExpr>(&e)) {
    if (un->getOp() != UnaryOp::Neg ||
        !getAffine(un->getOperand(), params, coefs, constant))
      return false;
    for (int64_t &c : coefs)
      c = -c;
    constant = -constant;
    return true;
  }
  auto *bin = dyn_cast<BinaryExpr>(&e);
  if (!bin)
    return false;
  SmallVector<int64_t, 8> rhs(coefs.size());
  int64_t rhsConstant;
  if (!getAffine(bin->getLHS(), params, coefs, constant) ||
      !getAffine(bin->getRHS(), params, rhs, rhsConstant))
    return false;
  auto isConstant = [](ArrayRef<int64_t> cs) {
    return llvm::all_of(cs, [](int64_t c) { return c == 0; });
  };
  switch (bin->getOp()) {
  case BinaryOp::Add:
  case BinaryOp::Sub: {
    int64_t sign = bin->getOp() == BinaryOp::Add ? 1 : -1;
    for (unsigned v = 0; v != coefs.size(); ++v)
      coefs[v] += sign * rhs[v];
    constant += sign * rhsConstant;
    return true;
  }
  case BinaryOp::Mul:
    if (isConstant(rhs)) {
      for (int64_t &c : coefs)
        c *= rhsConstant;
      constant *= rhsConstant;
      return true;
    }
    if (!isConstant(coefs))
      return false;
    for (unsigned v = 0; v != coefs.size(); ++v)
      coefs[v] = rhs[v] * constant;
    constant *= rhsConstant;
    return true;
  default:
    return false;
  }
}

/// The index variables with a non-zero coefficient.
uint64_t getVarMask(ArrayRef<int64_t> coefs) {
  uint64_t mask = 0;
  for (unsigned v = 0; v != coefs.size(); ++v)
    if (coefs[v] != 0)
      mask |= uint64_t(1) << v;
  return mask;
}

/// True if the analysis must give exactly the bounding box of index `e`'s
/// in-bounds values: `e` is affine with at most one coefficient beyond
/// ±1 (a strided read, clipped or not), or an affine index with
/// coefficients -1, 0 and 1 divided by, or modulo, a positive constant.
/// `vars` gets the variables it uses.
bool isExactIndex(const Expr &e, unsigned numVars, ArrayRef<int64_t> params,
                  uint64_t &vars) {
  SmallVector<int64_t, 8> coefs(numVars);
  int64_t constant;
  auto countStrided = [&] {
    return llvm::count_if(coefs, [](int64_t c) { return c < -1 || c > 1; });
  };
  if (getAffine(e, params, coefs, constant)) {
    vars = getVarMask(coefs);
    return countStrided() <= 1;
  }
  auto *bin = dyn_cast<BinaryExpr>(&e);
  if (!bin || (bin->getOp() != BinaryOp::Div && bin->getOp() != BinaryOp::Rem))
    return false;
  SmallVector<int64_t, 8> divisor(numVars);
  int64_t k;
  if (!getAffine(bin->getRHS(), params, divisor, k) || getVarMask(divisor) ||
      k <= 0 || !getAffine(bin->getLHS(), params, coefs, constant))
    return false;
  vars = getVarMask(coefs);
  return countStrided() == 0;
}

/// True if every index of `read` is exact (isExactIndex) and no variable
/// occurs in two of them: then the analysed region must be exactly the
/// bounding box.
bool isExactRead(const TensorReadExpr &read, unsigned numVars,
                 ArrayRef<int64_t> params) {
  uint64_t used = 0;
  for (unsigned d = 0; d != read.getNumIndices(); ++d) {
    uint64_t vars = 0;
    if (!isExactIndex(read.getIndex(d), numVars, params, vars) || (used & vars))
      return false;
    used |= vars;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// The property
//===----------------------------------------------------------------------===//

struct BruteForceBox {
  Region box;
  bool any = false;
  void add(ArrayRef<Range> point) {
    if (!any) {
      box.assign(point.begin(), point.end());
      any = true;
      return;
    }
    for (unsigned d = 0; d != box.size(); ++d) {
      box[d].lo = std::min(box[d].lo, point[d].lo);
      box[d].hi = std::max(box[d].hi, point[d].hi);
    }
  }
};

/// Changes a worker's analysed regions before they are checked: a
/// deliberately wrong analysis, to show that the checker catches it.
using Mutant = std::function<void(const Binding &, ArrayRef<Range> box,
                                  WorkerRegions &)>;

/// Checks the analysed regions of one operator against brute force at
/// random shapes, recording each discrepancy in `failures`.
class PropertyChecker {
public:
  PropertyChecker(const OpDecl &op, const OperatorAnalysis &analysis,
                  std::mt19937 &rng, Mutant mutant = nullptr)
      : op(op), analysis(analysis), rng(rng), mutant(std::move(mutant)) {
    collectScopedReads(op.getBody(), (uint64_t(1) << op.getOutputRank()) - 1,
                       reads);
  }

  /// Runs one random trial; false if the random shapes did not fit the
  /// operator (the trial is skipped).
  bool runTrial();
  unsigned numChecks = 0;
  /// Every discrepancy found, with its context.
  std::vector<std::string> failures;

private:
  int64_t rand(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  bool chooseShapes(llvm::SmallVectorImpl<Shape> &inputs, Shape &output);
  void checkStrategy(const Binding &binding, const Strategy &s,
                     ArrayRef<Range> parts);
  void checkWorker(const Binding &binding, ArrayRef<Range> box,
                   const WorkerRegions &worker, const std::string &where);

  void fail(const std::string &where, const std::string &what) {
    failures.push_back(context + ", " + where + ": " + what);
  }

  const OpDecl &op;
  const OperatorAnalysis &analysis;
  std::mt19937 &rng;
  Mutant mutant;
  std::vector<ScopedRead> reads;
  SmallVector<int64_t, 4> params;
  std::string context;
};

bool PropertyChecker::chooseShapes(llvm::SmallVectorImpl<Shape> &inputs,
                                   Shape &output) {
  SmallVector<int64_t, 8> extents;
  for (unsigned v = 0; v != op.getIndexVars().size(); ++v)
    extents.push_back(rand(1, 4));
  inputs.clear();
  for (const auto &t : op.getTensors()) {
    Shape shape;
    for (int d = 0; d < std::max(t->getRank(), 0); ++d)
      shape.push_back(rand(1, 6));
    inputs.push_back(shape);
  }
  // A reduction variable's extent is the tensor dimension it ranges over;
  // every dimension it indexes alone must agree.
  for (const ScopedRead &sr : reads)
    for (unsigned d = 0; d != sr.read->getNumIndices(); ++d)
      if (auto *name = dyn_cast<NameExpr>(&sr.read->getIndex(d)))
        if (const IndexVarDecl *v = name->getIndexVar())
          if (v->isReduction() &&
              v->getExtent().kind == Extent::Kind::TensorDim)
            inputs[sr.read->getTensor()->getPosition()][d] =
                extents[v->getId()];
  output.assign(extents.begin(), extents.begin() + op.getOutputRank());
  if (rand(0, 1)) {
    llvm::Expected<Shape> inferred = inferOutputShape(analysis, inputs, params);
    if (inferred)
      output = *inferred;
    else
      llvm::consumeError(inferred.takeError());
  }
  return getNumElements(output) <= 4096;
}

bool PropertyChecker::runTrial() {
  params.clear();
  for (unsigned p = 0; p != op.getParams().size(); ++p)
    params.push_back(rand(0, 3));
  SmallVector<Shape, 4> inputs;
  Shape output;
  if (!chooseShapes(inputs, output))
    return false;
  llvm::Expected<Binding> binding =
      Binding::create(analysis, inputs, output, params);
  if (!binding) {
    llvm::consumeError(binding.takeError());
    return false;
  }
  int64_t domain = 1;
  for (int64_t e : binding->getVarExtents())
    domain *= std::max<int64_t>(e, 1);
  if (domain > 20000)
    return false;
  context = (op.getName() + " output " + formatShape(output)).str();
  for (const Shape &s : inputs)
    context += " input " + formatShape(s);
  for (int64_t p : params)
    context += " param " + std::to_string(p);
  SmallVector<Range, 4> parts;
  for (const Strategy &s : analysis.getStrategies()) {
    int64_t extent = binding->getVarExtent(s.var);
    for (unsigned n : {2u, 3u}) {
      splitEvenly(extent, n, parts);
      checkStrategy(*binding, s, parts);
    }
    // An uneven split into up to four parts, some possibly empty.
    SmallVector<int64_t, 4> sizes;
    int64_t left = extent;
    for (unsigned w = 0, n = rand(1, 4); w != n; ++w) {
      int64_t size = w + 1 == n ? left : rand(0, left);
      sizes.push_back(size);
      left -= size;
    }
    splitBySizes(sizes, parts);
    checkStrategy(*binding, s, parts);
  }
  return true;
}

void PropertyChecker::checkStrategy(const Binding &binding, const Strategy &s,
                                    ArrayRef<Range> parts) {
  SmallVector<WorkerRegions, 4> workers;
  instantiateStrategy(binding, s, parts, workers);
  ASSERT_EQ(workers.size(), parts.size());
  SmallVector<Range, 8> box;
  getFullBox(binding, box);
  for (unsigned w = 0; w != parts.size(); ++w) {
    box[s.var] = parts[w];
    if (mutant)
      mutant(binding, box, workers[w]);
    std::string where = getStrategyKindName(s.kind).str() + " " +
                        op.getIndexVars()[s.var]->getName().str() +
                        ", worker " + std::to_string(w) + " of " +
                        std::to_string(parts.size());
    if (workers[w].partial != (s.kind == Strategy::Kind::Reduce))
      fail(where, "wrong partial flag");
    for (unsigned v = 0; v != op.getOutputRank(); ++v)
      if (workers[w].output[v] != box[v])
        fail(where, "output dimension " + std::to_string(v) +
                        " is not the worker's range");
    checkWorker(binding, box, workers[w], where);
  }
}

static std::string formatRange(const Range &r) {
  return "[" + std::to_string(r.lo) + ", " + std::to_string(r.hi) + ")";
}

void PropertyChecker::checkWorker(const Binding &binding, ArrayRef<Range> box,
                                  const WorkerRegions &worker,
                                  const std::string &where) {
  unsigned numTensors = op.getTensors().size();
  std::vector<BruteForceBox> truth(numTensors);
  std::vector<bool> exact(numTensors, true);
  for (const ScopedRead &sr : reads) {
    unsigned t = sr.read->getTensor()->getPosition();
    ArrayRef<int64_t> shape = binding.getInputShape(t);
    exact[t] = exact[t] && isExactRead(*sr.read, box.size(), params);
    forEachPoint(box, sr.scope, [&](ArrayRef<int64_t> point) {
      SmallVector<Range, 4> element;
      for (unsigned d = 0; d != shape.size(); ++d) {
        auto index = evalIndex(sr.read->getIndex(d), point, params);
        if (!index) // Data dependent or undefined: any element of the dim.
          element.push_back(Range{0, shape[d]});
        else if (*index < 0 || *index >= shape[d])
          return; // Zero padding: nothing is read.
        else
          element.push_back(Range{*index, *index + 1});
      }
      truth[t].add(element);
    });
  }
  for (unsigned t = 0; t != numTensors; ++t) {
    const Region &region = worker.inputs[t];
    std::string name = op.getTensors()[t]->getName().str();
    ++numChecks;
    if (!truth[t].any) {
      if (exact[t] && llvm::any_of(region, [](Range r) { return !r.empty(); }))
        fail(where, name + " is not read but has a region");
      continue;
    }
    if (region.size() != truth[t].box.size()) {
      fail(where, name + " has a region of the wrong rank");
      continue;
    }
    for (unsigned d = 0; d != region.size(); ++d) {
      const Range &got = region[d], &want = truth[t].box[d];
      std::string dim = name + " dim " + std::to_string(d) + ": analysed " +
                        formatRange(got);
      if (!(got.lo <= want.lo && want.hi <= got.hi))
        fail(where, dim + " misses reads in " + formatRange(want));
      else if (exact[t] && got != want)
        fail(where, dim + " is not the bounding box " + formatRange(want));
    }
  }
}

/// A source file of operators and whether it must check without errors.
struct Source {
  std::string name;
  std::string text;
  bool mustCheck;
};

void addFiles(StringRef dir, bool recursive, bool mustCheck,
              std::vector<Source> &sources) {
  std::vector<std::string> paths;
  std::error_code ec;
  if (recursive) {
    for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end;
         it != end && !ec; it.increment(ec))
      if (llvm::sys::path::extension(it->path()) == ".tdl")
        paths.push_back(it->path());
  } else {
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
         it.increment(ec))
      if (llvm::sys::path::extension(it->path()) == ".tdl")
        paths.push_back(it->path());
  }
  std::sort(paths.begin(), paths.end());
  for (const std::string &path : paths) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    EXPECT_TRUE(bool(buffer)) << "cannot read " << path;
    if (buffer)
      sources.push_back({path, (*buffer)->getBuffer().str(), mustCheck});
  }
}

/// The sources the property runs over: the extra operators above, every
/// .tdl file of the tests that checks without errors (the others are error
/// tests), and every .tdl file in specs/, which must check.
std::vector<Source> getSources() {
  std::vector<Source> sources;
  sources.push_back({"extra operators", extraOps, true});
  addFiles(TOFU_SOURCE_DIR "/test", /*recursive=*/true, /*mustCheck=*/false,
           sources);
  addFiles(TOFU_SOURCE_DIR "/specs", /*recursive=*/false, /*mustCheck=*/true,
           sources);
  return sources;
}

/// The operators the mutants below are tried on: `%`, `/` and strided
/// reads that are clipped at random shapes.
const char *const mutationOps = R"(
op remk(A, B) = lambda i, j: A[(2 - i) % 5] + B[(j + 3) / 2 - 1];
op stride_pad<s, p>(X) = lambda y: Sum(lambda ky < 3: X[s * y + ky - p]);
op strided_pair(A) = lambda i, j: A[3 * i - 2, j % 3];
op halves(A) = lambda i, j: Sum(lambda k < 2: A[(i + k) / 2, j]);
)";

/// Calls `fn` on every dimension of every read of `binding`'s operator
/// whose region in `worker` is not empty.
void forEachReadDim(const Binding &binding, WorkerRegions &worker,
                    llvm::function_ref<void(const ReadAnalysis &, unsigned,
                                            Range &)>
                        fn) {
  for (const ReadAnalysis &read : binding.getAnalysis().getReads()) {
    Region &region = worker.inputs[read.tensor];
    if (llvm::any_of(region, [](Range r) { return r.empty(); }))
      continue;
    for (unsigned d = 0; d != read.dims.size(); ++d)
      fn(read, d, region[d]);
  }
}

/// Wrong analyses the property must catch.
struct NamedMutant {
  const char *name;
  Mutant mutant;
};

const NamedMutant mutants[] = {
    {"reads the whole dimension for %",
     [](const Binding &binding, ArrayRef<Range>, WorkerRegions &worker) {
       forEachReadDim(binding, worker,
                      [&](const ReadAnalysis &read, unsigned d, Range &r) {
                        auto *bin = dyn_cast<BinaryExpr>(&read.expr->getIndex(d));
                        if (bin && bin->getOp() == BinaryOp::Rem)
                          r = Range{0, binding.getInputShape(read.tensor)[d]};
                      });
     }},
    {"divides the upper bound without flooring (+1)",
     [](const Binding &binding, ArrayRef<Range>, WorkerRegions &worker) {
       forEachReadDim(binding, worker,
                      [&](const ReadAnalysis &read, unsigned d, Range &r) {
                        auto *bin = dyn_cast<BinaryExpr>(&read.expr->getIndex(d));
                        if (bin && bin->getOp() == BinaryOp::Div &&
                            r.hi < binding.getInputShape(read.tensor)[d])
                          ++r.hi;
                      });
     }},
    {"clips strided reads without finding the last element read",
     [](const Binding &binding, ArrayRef<Range> box, WorkerRegions &worker) {
       forEachReadDim(binding, worker,
                      [&](const ReadAnalysis &read, unsigned d, Range &r) {
                        int64_t extent = binding.getInputShape(read.tensor)[d];
                        int64_t lo, hi;
                        if (read.dims[d].kind != IndexProgram::Kind::Affine ||
                            !evaluateIndexInterval(binding, read.dims[d], box,
                                                   extent, lo, hi))
                          return;
                        lo = std::max<int64_t>(lo, 0);
                        hi = std::min(hi + 1, extent);
                        if (lo < hi)
                          r = Range{std::min(r.lo, lo), std::max(r.hi, hi)};
                      });
     }},
    {"misses the last element",
     [](const Binding &binding, ArrayRef<Range>, WorkerRegions &worker) {
       forEachReadDim(binding, worker,
                      [](const ReadAnalysis &, unsigned, Range &r) { --r.hi; });
     }},
};

TEST(AnalysisProperty, TheCheckerCatchesWrongAnalyses) {
  ParsedSource parsed(mutationOps);
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  for (const NamedMutant &m : mutants) {
    SCOPED_TRACE(m.name);
    unsigned caught = 0;
    for (const auto &op : parsed.module.getOps()) {
      llvm::Expected<OperatorAnalysis> analysis = OperatorAnalysis::analyze(*op);
      ASSERT_TRUE(bool(analysis)) << toString(analysis.takeError());
      // The same random trials pass with the real analysis.
      std::mt19937 rng(7), mutantRng(7);
      PropertyChecker real(*op, *analysis, rng);
      PropertyChecker mutated(*op, *analysis, mutantRng, m.mutant);
      for (unsigned trial = 0; trial != 40; ++trial) {
        real.runTrial();
        mutated.runTrial();
      }
      EXPECT_TRUE(real.failures.empty()) << real.failures.front();
      caught += !mutated.failures.empty();
    }
    EXPECT_GT(caught, 0u) << "no operator's check caught the mutant";
  }
}

/// An instance of generic operator `op` (or of an overload of its name) at
/// random ranks, extents and params; null if twenty random uses fit no
/// overload.
const OpDecl *instantiateRandomly(tdl::Instantiator &instantiator,
                                  const OpDecl &op, std::mt19937 &rng) {
  auto rand = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  for (unsigned attempt = 0; attempt != 20; ++attempt) {
    SmallVector<Shape, 4> shapes;
    for (const auto &t : op.getTensors()) {
      int rank = t->isRankPolymorphic() ? t->getNumNamedDims() + rand(0, 2)
                                        : std::max(t->getRank(), 0);
      shapes.emplace_back();
      for (int d = 0; d != rank; ++d)
        shapes.back().push_back(rand(1, 4));
    }
    SmallVector<tdl::NamedParamValue, 4> params;
    for (const auto &p : op.getParams())
      params.push_back({p->getName().str(),
                        p->isReal() ? tdl::ParamValue::ofReal(0.5)
                                    : tdl::ParamValue::ofInt(rand(-1, 3))});
    llvm::Optional<unsigned> outputRank;
    if (!op.getTensors().size())
      outputRank = rand(0, 3);
    auto instance =
        instantiator.instantiate(op.getName(), shapes, params, outputRank);
    if (instance)
      return (*instance)->op;
    llvm::consumeError(instance.takeError());
  }
  return nullptr;
}

TEST(AnalysisProperty, RegionsContainEveryReadAndAreExactWhereAffine) {
  std::mt19937 rng(20190325);
  unsigned numOps = 0, numChecks = 0, numInstances = 0;
  unsigned numFiles = 0;
  for (const Source &source : getSources()) {
    SCOPED_TRACE(source.name);
    ParsedSource parsed(source.text);
    if (!source.mustCheck && !parsed.errors.empty())
      continue;
    ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
    ++numFiles;
    tdl::Instantiator instantiator(parsed.module);
    for (const auto &decl : parsed.module.getOps()) {
      // A generic operator is checked through an instance at random shapes.
      const OpDecl *op = decl.get();
      if (op->isGeneric() && !(op = instantiateRandomly(instantiator, *op, rng)))
        continue;
      numInstances += op != decl.get();
      llvm::Expected<OperatorAnalysis> analysis = OperatorAnalysis::analyze(*op);
      ASSERT_TRUE(bool(analysis)) << toString(analysis.takeError());
      PropertyChecker checker(*op, *analysis, rng);
      unsigned ran = 0;
      for (unsigned trial = 0; trial != 240 && ran != 12; ++trial)
        ran += checker.runTrial();
      EXPECT_GT(ran, 0u) << "no random shapes fit operator " << op->getName().str();
      EXPECT_TRUE(checker.failures.empty())
          << checker.failures.size() << " failures, the first: "
          << checker.failures.front();
      ++numOps;
      numChecks += checker.numChecks;
    }
  }
  std::printf("checked %u files, %u operators (%u instances of generic "
              "ones), %u tensor regions\n",
              numFiles, numOps, numInstances, numChecks);
  // The extra operators and the contract's examples at least, and the
  // generic operators of test/TDL/generic-ops.tdl.
  EXPECT_GE(numOps, 22u);
  EXPECT_GE(numInstances, 5u);
  EXPECT_GT(numChecks, 1000u);
}

} // namespace

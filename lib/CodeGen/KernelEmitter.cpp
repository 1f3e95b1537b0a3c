//===- KernelEmitter.cpp - Assemble a kernel function ---------------------===//
//
// This file implements emitKernel: it checks the instance, declares the
// kernel's view of its boxes (element pointers, box origins, strides from
// the box extents), clamps each reduction variable's range to the call's
// box, emits the BLAS call of a contraction, then the loop nest over the
// output variables with each scope's statements at its level and the store
// of the body's value converted to the output's element type.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "MathHelpers.h"

#include "tofu/Analysis/PointwiseInputs.h"
#include "tofu/TDL/ExprWalk.h"

#include "llvm/ADT/StringExtras.h"

using namespace tofu;
using namespace tofu::codegen;
using namespace tofu::tdl;

const char *codegen::getElementTypeName(DType type) {
  switch (type) {
  case DType::F32: return "float";
  case DType::F64: return "double";
  case DType::I64: return "std::int64_t";
  case DType::I32: return "std::int32_t";
  case DType::I8: return "std::int8_t";
  case DType::Bool: return "std::uint8_t";
  case DType::F16: return "std::uint16_t"; // bit patterns (Half.h)
  case DType::BF16: return "std::uint16_t";
  default: return nullptr;
  }
}

std::string codegen::sanitizeIdentifier(StringRef text) {
  std::string s;
  for (char c : text)
    s += llvm::isAlnum(c) || c == '_' ? c : '_';
  if (s.empty() || llvm::isDigit(s[0]))
    s = "_" + s;
  return s;
}

KernelBuilder::KernelBuilder(const KernelInstance &inst,
                             const KernelOptions &options)
    : inst(inst), op(*inst.op), options(options),
      varExtents(inst.op->getIndexVars().size(), 0) {
  for (double p : inst.params)
    intParams.push_back(int64_t(p));
}

/// Re-indents `lines` by their braces, two spaces a level.
std::string codegen::indentLines(ArrayRef<std::string> lines) {
  std::string out;
  int depth = 0;
  for (const std::string &line : lines) {
    int closes = 0, opens = 0;
    for (char c : line)
      c == '{' ? ++opens : c == '}' ? ++closes : 0;
    int at = depth - (!line.empty() && line[0] == '}' ? 1 : 0);
    out += std::string(2 * std::max(at, 0), ' ') + line + "\n";
    depth += opens - closes;
  }
  return out;
}

namespace {

/// The side of the tiles of a transposing loop nest.
constexpr int TileSize = 32;

/// True if a read of `body` indexes a dimension other than its last with
/// output variable `inner` (outside reductions, which have their own loops).
bool readsAcrossInnermost(const Expr &body, unsigned inner) {
  bool found = false;
  walkExpr(body, [&](const Expr &sub) {
    const auto *read = dyn_cast<TensorReadExpr>(&sub);
    if (!read)
      return;
    for (unsigned d = 0; d + 1 < read->getNumIndices(); ++d)
      walkExpr(read->getIndex(d), [&](const Expr &index) {
        if (const auto *name = dyn_cast<NameExpr>(&index))
          if (const IndexVarDecl *var = name->getIndexVar())
            found |= var->getId() == inner;
      });
  });
  return found;
}

} // namespace

bool KernelBuilder::lowerBody(std::string &value) {
  if (op.isOpaque()) {
    fail("it is opaque: its value cannot be computed by TDL");
    return false;
  }
  if (inst.inputShapes.size() != op.getTensors().size() ||
      inst.inputTypes.size() != inst.inputShapes.size()) {
    fail("expects " + Twine(op.getTensors().size()) + " input tensors, got " +
         Twine(inst.inputShapes.size()));
    return false;
  }
  if (inst.params.size() != op.getParams().size()) {
    fail("expects " + Twine(op.getParams().size()) + " param values, got " +
         Twine(inst.params.size()));
    return false;
  }
  unsigned rank = op.getOutputRank();
  if (inst.outputShape.size() != rank) {
    fail("the output has rank " + Twine(rank) + " but the output shape is " +
         formatShape(inst.outputShape));
    return false;
  }
  for (DType t : inst.inputTypes)
    if (!getElementTypeName(t))
      fail(getDTypeName(t) + " tensors are not executed");
  if (!getElementTypeName(inst.outputType))
    fail(getDTypeName(inst.outputType) + " tensors are not executed");
  if (failed())
    return false;
  for (unsigned d = 0; d != rank; ++d)
    varExtents[d] = inst.outputShape[d];
  walkExpr(op.getBody(), [&](const Expr &e) {
    if (const auto *reduce = dyn_cast<ReduceExpr>(&e))
      resolveExtents(*reduce);
  });

  if (options.target == KernelTarget::Cuda) {
    // The generated CUDA kernel is the loop-nest fallback; the device
    // executor hands a matching contraction to cuBLAS, with the fill of
    // a prefilled one's bias (DeviceGemm::bias).
    llvm::Optional<Contraction> found = matchContraction();
    if (found) {
      matchPrefill(*found);
      gemm = describeGemm(*found);
    }
    deviceGemm = found.hasValue();
    if (!found)
      if (llvm::Optional<Contraction> c = matchConvolution())
        conv = describeConvolution(*c);
  } else if (options.useBlas) {
    contraction = matchContraction(/*widen16=*/true);
    if (contraction) {
      matchPrefill(*contraction);
      gemm = describeGemm(*contraction);
    }
    if (!contraction) {
      contraction = matchConvolution();
      if (contraction)
        conv = describeConvolution(*contraction);
    }
    if (!contraction)
      contraction = matchTranspose();
  }
  // Both targets describe a batch normalization or a pooling for cuDNN.
  batchNorm = matchBatchNorm();
  pooling = matchPooling();
  scopes.assign(rank + 1, Scope());
  for (unsigned d = 0; d != rank; ++d)
    scopes[d + 1].vars.push_back(d);
  // A prefilled contraction's loop nest stores X only (Contraction.cpp).
  if (contraction && contraction->prefill)
    value = lowerValue(*contraction->prefill);
  else if (!contraction || !contraction->wholeBody)
    value = lowerValue(op.getBody());
  return !failed();
}

KernelKind KernelBuilder::getKind() const {
  if (contraction)
    return contraction->transposeCopy ? KernelKind::Transpose
           : contraction->im2col || contraction->weightGradient
               ? KernelKind::Convolution
               : KernelKind::Gemm;
  bool reduces = false;
  walkExpr(inst.op->getBody(), [&](const Expr &e) {
    reduces |= isa<ReduceExpr>(e);
  });
  return reduces ? KernelKind::Reduction : KernelKind::Elementwise;
}

const char *codegen::getKernelKindName(KernelKind kind) {
  switch (kind) {
  case KernelKind::Gemm:
    return "gemm";
  case KernelKind::Convolution:
    return "convolution";
  case KernelKind::Transpose:
    return "transpose";
  case KernelKind::Elementwise:
    return "elementwise";
  case KernelKind::Reduction:
    return "reduction";
  }
  llvm_unreachable("unknown kernel kind");
}

void KernelBuilder::declareBoxes(std::vector<std::string> &lines) {
  unsigned rank = op.getOutputRank();
  lines.push_back("const std::int64_t *lo = call.varLo, *hi = call.varHi;");
  auto declareBox = [&](StringRef view, StringRef ptr, const char *type,
                        bool isConst, unsigned boxRank) {
    lines.push_back((Twine(isConst ? "const " : "") + type + " *" + ptr +
                     " = static_cast<" + (isConst ? "const " : "") + type +
                     " *>(" + view + ".data);")
                        .str());
    for (unsigned d = 0; d != boxRank; ++d)
      lines.push_back(("const std::int64_t " + ptr + "lo" + Twine(d) + " = " +
                       view + ".lo[" + Twine(d) + "];")
                          .str());
    for (int d = int(boxRank) - 2; d >= 0; --d) {
      std::string stride = (view + ".extent[" + Twine(d + 1) + "]").str();
      if (d + 2 != boxRank)
        stride = (ptr + "s" + Twine(d + 1) + " * " + stride).str();
      lines.push_back(
          ("const std::int64_t " + ptr + "s" + Twine(d) + " = " + stride + ";").str());
    }
  };
  for (unsigned t = 0; t != inst.inputShapes.size(); ++t)
    declareBox(("call.inputs[" + Twine(t) + "]").str(), "in" + std::to_string(t),
               getElementTypeName(inst.inputTypes[t]), true,
               inst.inputShapes[t].size());
  declareBox("call.output", "out", getElementTypeName(inst.outputType), false,
             rank);
  for (unsigned id = rank; id != varExtents.size(); ++id) {
    std::string v = varName(id), ids = std::to_string(id);
    lines.push_back("const std::int64_t " + v + "lo = std::max<std::int64_t>(lo[" +
                    ids + "], 0), " + v + "hi = std::min<std::int64_t>(hi[" +
                    ids + "], " + std::to_string(varExtents[id]) + ");");
  }
  // An empty box writes nothing and reads nothing (a hoisted reduction
  // would read outside the input boxes the analysis gives it).
  for (unsigned d = 0; d != rank; ++d)
    lines.push_back("if (lo[" + std::to_string(d) + "] >= hi[" +
                    std::to_string(d) + "]) return;");
}

std::string KernelBuilder::storeStatement(const std::string &value) const {
  SmallVector<std::string, 4> index;
  for (unsigned d = 0, rank = op.getOutputRank(); d != rank; ++d)
    index.push_back(varName(d));
  return "out[" + outputOffset(index) + "] = " + storedValue(value) + ";";
}

std::string KernelBuilder::storedValue(const std::string &value) const {
  std::string stored;
  switch (inst.outputType) {
  case DType::F32: stored = "float(" + value + ")"; break;
  case DType::F64: stored = value; break;
  case DType::Bool: stored = "std::uint8_t(" + value + " != 0.0)"; break;
  case DType::F16: stored = "tofu_kg::toF16(" + value + ")"; break;
  case DType::BF16: stored = "tofu_kg::toBF16(" + value + ")"; break;
  default:
    stored = "tofu_kg::toInt<" + std::string(getElementTypeName(inst.outputType)) +
             ">(" + value + ")";
    break;
  }
  return stored;
}

std::string KernelBuilder::describe() const {
  std::string s = inst.op->getName().str() + ":";
  for (const auto &t : inst.op->getTensors()) {
    unsigned pos = t->getPosition();
    s += " " + t->getName().str() + " " +
         getDTypeName(inst.inputTypes[pos]).str() + "[" +
         formatShape(inst.inputShapes[pos]) + "],";
  }
  return s + " output " + getDTypeName(inst.outputType).str() + "[" +
         formatShape(inst.outputShape) + "]";
}

std::string KernelBuilder::build(StringRef name) {
  std::string value;
  if (!lowerBody(value))
    return "";
  std::vector<std::string> lines;
  lines.push_back("// " + describe());
  // The signature's line, which the AVX2 marking below prefixes.
  std::size_t signature = lines.size();
  lines.push_back("void " + name.str() +
                  "(const tofu::runtime::KernelCall &call) {");
  declareBoxes(lines);
  // A prefilled contraction's loop nest (X) runs before its GEMM, any other
  // after it.
  bool prefill = contraction && contraction->prefill;
  if (prefill)
    emitLoopNest(value, *contraction->prefill, lines);
  if (contraction && contraction->im2col)
    emitConvolution(*contraction, lines);
  else if (contraction && contraction->transposeCopy)
    emitTranspose(*contraction, lines);
  else if (contraction)
    emitContraction(*contraction, lines);
  if (!prefill && (!contraction || !contraction->wholeBody)) {
    // Scope 0 (the constants) comes before both the dense-run branch and
    // the loop nest (DenseRun.cpp).
    if (llvm::Optional<std::vector<unsigned>> inputs = getDenseRunInputs()) {
      for (std::string &line : scopes[0].lines)
        lines.push_back(std::move(line));
      scopes[0].lines.clear();
      emitDenseRun(value, *inputs, lines);
    }
    emitLoopNest(value, op.getBody(), lines);
  }
  lines.push_back("}");
  // A kernel calling exp or erf also gets an AVX2 copy (MathHelpers.h).
  if (llvm::any_of(lines, callsVectorForms))
    lines[signature].insert(0, "TOFU_KG_WIDE ");
  return indentLines(lines);
}

void KernelBuilder::emitLoopNest(const std::string &value, const Expr &body,
                                 std::vector<std::string> &lines) {
  unsigned rank = op.getOutputRank();
  // A read that walks a non-innermost dimension with the innermost output
  // variable (a transpose) strides through memory: the last two output
  // loops then run over tiles, so both sides stay in cache.
  bool tile = rank >= 2 && scopes[rank - 1].lines.empty() &&
              readsAcrossInnermost(body, rank - 1);
  for (unsigned d = 0; d != rank; ++d) {
    for (std::string &line : scopes[d].lines)
      lines.push_back(std::move(line));
    std::string v = varName(d), ds = std::to_string(d);
    if (tile && d == rank - 2) {
      lines.push_back("for (std::int64_t t_" + ds + " = lo[" + ds + "]; t_" +
                      ds + " < hi[" + ds + "]; t_" + ds + " += " +
                      std::to_string(TileSize) + ") {");
      std::string inner = std::to_string(rank - 1);
      lines.push_back("for (std::int64_t t_" + inner + " = lo[" + inner +
                      "]; t_" + inner + " < hi[" + inner + "]; t_" + inner +
                      " += " + std::to_string(TileSize) + ") {");
    }
    if (tile && d >= rank - 2)
      lines.push_back("for (std::int64_t " + v + " = t_" + ds + "; " + v +
                      " < std::min<std::int64_t>(t_" + ds + " + " +
                      std::to_string(TileSize) + ", hi[" + ds + "]); ++" +
                      v + ") {");
    else
      lines.push_back("for (std::int64_t " + v + " = lo[" + ds + "]; " + v +
                      " < hi[" + ds + "]; ++" + v + ") {");
  }
  for (std::string &line : scopes[rank].lines)
    lines.push_back(std::move(line));
  lines.push_back(storeStatement(value));
  for (unsigned d = 0; d != rank + (tile ? 2 : 0); ++d)
    lines.push_back("}");
}

/// GeneratedKernel::pointwiseInputs of `instance`.
static std::vector<bool> getPointwiseInputs(const KernelInstance &instance) {
  return analysis::getPointwiseInputs(*instance.op, instance.inputShapes,
                                      instance.outputShape);
}

llvm::Expected<GeneratedKernel>
codegen::emitKernel(const KernelInstance &instance, StringRef name,
                    const KernelOptions &options) {
  KernelBuilder builder(instance, options);
  GeneratedKernel kernel;
  kernel.name = name.str();
  kernel.source = options.target == KernelTarget::Cuda ? builder.buildCuda(name)
                                                      : builder.build(name);
  if (builder.failed())
    return builder.takeError();
  for (const IndexVarDecl *var : instance.op->getIndexVars())
    kernel.varNames.push_back(var->getName().str());
  kernel.varExtents.assign(builder.getVarExtents().begin(),
                           builder.getVarExtents().end());
  kernel.usesBlas = builder.usesBlas();
  kernel.kind = builder.getKind();
  kernel.pointwiseInputs = getPointwiseInputs(instance);
  kernel.deviceGemm = builder.deviceGemm;
  kernel.gemm = builder.gemm;
  kernel.conv = builder.conv;
  kernel.batchNorm = builder.batchNorm;
  kernel.pooling = builder.pooling;
  return kernel;
}

std::string codegen::getKernelPrelude() {
  return std::string(R"(// Generated by the Tofu kernel generator (lib/CodeGen); see docs/CodeGen.md.
#include "tofu/Runtime/Kernel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

// TOFU_HD marks the helpers __host__ __device__ in a CUDA unit
// (tofu/Runtime/DeviceKernel.h); it is empty in a C++ one.
#ifndef TOFU_HD
#define TOFU_HD
#endif
#include "tofu/Runtime/Half.h"

namespace tofu_kg {
// The TDL evaluator's semantics (docs/Evaluator.md).
constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();
// Integer division floors and % takes the divisor's sign; by zero both give 0.
TOFU_HD inline std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
  if (b == 0)
    return 0;
  std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
TOFU_HD inline std::int64_t floorMod(std::int64_t a, std::int64_t b) {
  if (b == 0)
    return 0;
  std::int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
TOFU_HD inline std::int64_t floorDivPos(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  return (a % b < 0) ? q - 1 : q;
}
TOFU_HD inline std::int64_t floorModPos(std::int64_t a, std::int64_t b) {
  std::int64_t r = a % b;
  return r < 0 ? r + b : r;
}
TOFU_HD inline bool isInt64(double v) { return v > -9.0e18 && v < 9.0e18; }
TOFU_HD inline double idiv(double a, double b) {
  if (b == 0)
    return 0;
  if (!isInt64(a) || !isInt64(b))
    return std::floor(a / b);
  return double(floorDiv(std::int64_t(a), std::int64_t(b)));
}
TOFU_HD inline double irem(double a, double b) {
  if (b == 0)
    return 0;
  if (!isInt64(a) || !isInt64(b))
    return a - b * std::floor(a / b);
  return double(floorMod(std::int64_t(a), std::int64_t(b)));
}
TOFU_HD inline double rrem(double a, double b) { return a - b * std::floor(a / b); }
// max/min propagate NaN, as PyTorch's maximum/minimum do; written as
// selects, not branches, so that they compile to max and blend instructions.
TOFU_HD inline double maxOf(double a, double b) {
  double m = a > b ? a : b;
  return a != a ? a : m;
}
TOFU_HD inline double minOf(double a, double b) {
  double m = a < b ? a : b;
  return a != a ? a : m;
}
TOFU_HD inline double sign(double a) { return a > 0 ? 1.0 : a < 0 ? -1.0 : a; }
// Whether the iteration box [lo, hi) of rank `rank` is one contiguous run,
// in order, of the row-major box (boxLo, boxExtent): the dimensions after
// some d whole in the box, those before d a single index.
TOFU_HD inline bool isDenseRun(const std::int64_t *boxLo,
                               const std::int64_t *boxExtent,
                               const std::int64_t *lo, const std::int64_t *hi,
                               unsigned rank) {
  unsigned d = rank;
  while (d > 1 && lo[d - 1] == boxLo[d - 1] && hi[d - 1] - lo[d - 1] == boxExtent[d - 1])
    --d;
  for (unsigned e = 0; e + 1 < d; ++e)
    if (hi[e] - lo[e] != 1)
      return false;
  return true;
}
// f16 and bf16 elements are bit patterns, read as float and rounded to
// nearest even when stored (tofu/Runtime/Half.h).
TOFU_HD inline double fromF16(std::uint16_t h) { return tofu::runtime::half::f16ToFloat(h); }
TOFU_HD inline double fromBF16(std::uint16_t h) { return tofu::runtime::half::bf16ToFloat(h); }
TOFU_HD inline std::uint16_t toF16(double v) { return tofu::runtime::half::floatToF16(float(v)); }
TOFU_HD inline std::uint16_t toBF16(double v) { return tofu::runtime::half::floatToBF16(float(v)); }
)") + getMathHelpers() + R"(
// A data-dependent index truncates toward zero; NaN and huge values read 0.
TOFU_HD inline std::int64_t toIndex(double v) { return isInt64(v) ? std::int64_t(v) : -1; }
// Integer outputs truncate toward zero, saturating; NaN gives 0.
template <typename T> TOFU_HD inline T toInt(double v) {
  if (std::isnan(v))
    return 0;
  if (v <= double(std::numeric_limits<T>::min()))
    return std::numeric_limits<T>::min();
  if (v >= double(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return T(v);
}
// CBLAS (OpenBLAS), declared here so that no BLAS header is needed.
enum { RowMajor = 101, NoTrans = 111, Trans = 112 };
extern "C" void cblas_sgemm(int, int, int, int, int, int, float, const float *,
                            int, const float *, int, float, float *, int);
extern "C" void cblas_dgemm(int, int, int, int, int, int, double,
                            const double *, int, const double *, int, double,
                            double *, int);
// OpenBLAS's out-of-place scaled transposes.
extern "C" void cblas_somatcopy(int, int, int, int, float, const float *, int,
                                float *, int);
extern "C" void cblas_domatcopy(int, int, int, int, double, const double *,
                                int, double *, int);
} // namespace tofu_kg

)";
}

//===- ExprLowering.cpp - TDL expressions as C++ expressions --------------===//
//
// This file implements the expression half of KernelBuilder: every value is
// a C++ double (the evaluator's semantics), integer arithmetic on index
// variables, params and literals is an std::int64_t expression with the
// evaluator's floor division, a tensor read is an offset into its input box
// with a bounds check only on the dimensions whose index can leave the
// tensor, and a reduction becomes a loop placed in the outermost scope
// where its free variables are bound.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "MathHelpers.h"

#include "tofu/Analysis/IndexProgram.h"
#include "tofu/TDL/ExprWalk.h"

#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cmath>

using namespace tofu;
using namespace tofu::codegen;
using namespace tofu::tdl;

void KernelBuilder::fail(const Twine &msg) {
  if (errorMessage.empty())
    errorMessage = ("operator '" + op.getName() + "': " + msg).str();
}

std::string KernelBuilder::fresh(StringRef prefix) {
  return (prefix + Twine(counter++)).str();
}

std::string KernelBuilder::varName(unsigned id) const {
  return sanitizeIdentifier(op.getIndexVars()[id]->getName()) + "_" +
         std::to_string(id);
}

std::string KernelBuilder::constant(double v) const {
  if (std::isnan(v))
    return "tofu_kg::nan";
  if (std::isinf(v))
    return v > 0 ? "tofu_kg::inf" : "(-tofu_kg::inf)";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.17g", v);
  os.flush();
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return v < 0 ? "(" + s + ")" : s;
}

llvm::Optional<int64_t> KernelBuilder::foldInt(const Expr &e) const {
  if (e.getType() != ValueType::Int || !analysis::isConstantExpr(e))
    return llvm::None;
  return analysis::evaluateConstant(e, intParams);
}

bool KernelBuilder::isPureInt(const Expr &e) const {
  if (e.getType() != ValueType::Int)
    return false;
  if (foldInt(e))
    return true;
  switch (e.getKind()) {
  case Expr::Kind::IntLiteral:
    return true;
  case Expr::Kind::Name:
    return cast<NameExpr>(e).getIndexVar() || cast<NameExpr>(e).getParam();
  case Expr::Kind::Unary: {
    const auto &un = cast<UnaryExpr>(e);
    return un.getOp() == UnaryOp::Neg && isPureInt(un.getOperand());
  }
  case Expr::Kind::Binary: {
    const auto &bin = cast<BinaryExpr>(e);
    switch (bin.getOp()) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Rem:
      return isPureInt(bin.getLHS()) && isPureInt(bin.getRHS());
    default:
      return false;
    }
  }
  default:
    return false;
  }
}

std::string KernelBuilder::lowerInt(const Expr &e) {
  if (llvm::Optional<int64_t> v = foldInt(e))
    return *v < 0 ? "(" + std::to_string(*v) + ")" : std::to_string(*v);
  switch (e.getKind()) {
  case Expr::Kind::IntLiteral:
    return std::to_string(cast<IntLiteralExpr>(e).getValue());
  case Expr::Kind::Name: {
    const auto &name = cast<NameExpr>(e);
    if (const IndexVarDecl *var = name.getIndexVar())
      return varName(var->getId());
    return "std::int64_t(" +
           std::to_string(intParams[name.getParam()->getPosition()]) + ")";
  }
  case Expr::Kind::Unary:
    return "(-" + lowerInt(cast<UnaryExpr>(e).getOperand()) + ")";
  case Expr::Kind::Binary: {
    const auto &bin = cast<BinaryExpr>(e);
    std::string a = lowerInt(bin.getLHS());
    llvm::Optional<int64_t> divisor = foldInt(bin.getRHS());
    std::string b = lowerInt(bin.getRHS());
    switch (bin.getOp()) {
    case BinaryOp::Add: return "(" + a + " + " + b + ")";
    case BinaryOp::Sub: return "(" + a + " - " + b + ")";
    case BinaryOp::Mul: return "(" + a + " * " + b + ")";
    case BinaryOp::Div:
      if (divisor && *divisor == 1)
        return a;
      return (divisor && *divisor > 0 ? "tofu_kg::floorDivPos(" : "tofu_kg::floorDiv(") +
             a + ", " + b + ")";
    case BinaryOp::Rem:
      return (divisor && *divisor > 0 ? "tofu_kg::floorModPos(" : "tofu_kg::floorMod(") +
             a + ", " + b + ")";
    default:
      break;
    }
    break;
  }
  default:
    break;
  }
  fail("internal: not an integer expression");
  return "0";
}

namespace {
bool checkedAdd(int64_t a, int64_t b, int64_t &r) {
  return !__builtin_add_overflow(a, b, &r);
}
bool checkedMul(int64_t a, int64_t b, int64_t &r) {
  return !__builtin_mul_overflow(a, b, &r);
}
} // namespace

llvm::Optional<Interval> KernelBuilder::intervalOf(const Expr &e) const {
  if (llvm::Optional<int64_t> v = foldInt(e))
    return Interval{*v, *v};
  switch (e.getKind()) {
  case Expr::Kind::IntLiteral: {
    int64_t v = cast<IntLiteralExpr>(e).getValue();
    return Interval{v, v};
  }
  case Expr::Kind::Name: {
    const auto &name = cast<NameExpr>(e);
    if (const IndexVarDecl *var = name.getIndexVar()) {
      int64_t n = varExtents[var->getId()];
      if (n <= 0)
        return llvm::None;
      return Interval{0, n - 1};
    }
    return llvm::None;
  }
  case Expr::Kind::Unary: {
    llvm::Optional<Interval> a = intervalOf(cast<UnaryExpr>(e).getOperand());
    if (!a || a->lo == INT64_MIN)
      return llvm::None;
    return Interval{-a->hi, -a->lo};
  }
  case Expr::Kind::Binary: {
    const auto &bin = cast<BinaryExpr>(e);
    llvm::Optional<Interval> a = intervalOf(bin.getLHS());
    if (!a)
      return llvm::None;
    llvm::Optional<int64_t> c = foldInt(bin.getRHS());
    if (bin.getOp() == BinaryOp::Div || bin.getOp() == BinaryOp::Rem) {
      if (!c || *c <= 0)
        return llvm::None;
      int64_t qlo = floorDiv(a->lo, *c), qhi = floorDiv(a->hi, *c);
      if (bin.getOp() == BinaryOp::Div)
        return Interval{qlo, qhi};
      if (qlo == qhi)
        return Interval{floorMod(a->lo, *c), floorMod(a->hi, *c)};
      return Interval{0, *c - 1};
    }
    llvm::Optional<Interval> b = intervalOf(bin.getRHS());
    if (!b)
      return llvm::None;
    Interval r;
    switch (bin.getOp()) {
    case BinaryOp::Add:
      if (!checkedAdd(a->lo, b->lo, r.lo) || !checkedAdd(a->hi, b->hi, r.hi))
        return llvm::None;
      return r;
    case BinaryOp::Sub:
      if (b->lo == INT64_MIN || !checkedAdd(a->lo, -b->hi, r.lo) ||
          !checkedAdd(a->hi, -b->lo, r.hi))
        return llvm::None;
      return r;
    case BinaryOp::Mul: {
      int64_t p[4];
      if (!checkedMul(a->lo, b->lo, p[0]) || !checkedMul(a->lo, b->hi, p[1]) ||
          !checkedMul(a->hi, b->lo, p[2]) || !checkedMul(a->hi, b->hi, p[3]))
        return llvm::None;
      return Interval{*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
    }
    default:
      return llvm::None;
    }
  }
  default:
    return llvm::None;
  }
}

void KernelBuilder::resolveExtents(const ReduceExpr &e) {
  for (const auto &var : e.getVars()) {
    const Extent &extent = var->getExtent();
    int64_t n = 0;
    if (extent.kind == Extent::Kind::Explicit && var->getExtentExpr()) {
      llvm::Optional<int64_t> v =
          analysis::evaluateConstant(*var->getExtentExpr(), intParams);
      if (!v)
        fail("cannot evaluate the extent of '" + var->getName() + "'");
      n = v.getValueOr(0);
    } else if (extent.kind == Extent::Kind::TensorDim && extent.tensor) {
      const Shape &shape = inst.inputShapes[extent.tensor->getPosition()];
      n = extent.dim < shape.size() ? shape[extent.dim] : 0;
    } else {
      fail("reduction variable '" + var->getName() + "' has no extent");
    }
    varExtents[var->getId()] = std::max<int64_t>(n, 0);
  }
}

std::string KernelBuilder::lowerValue(const Expr &e) {
  if (llvm::Optional<int64_t> v = foldInt(e))
    return constant(double(*v));
  switch (e.getKind()) {
  case Expr::Kind::IntLiteral:
    return constant(double(cast<IntLiteralExpr>(e).getValue()));
  case Expr::Kind::FloatLiteral:
    return constant(cast<FloatLiteralExpr>(e).getValue());
  case Expr::Kind::Name: {
    const auto &name = cast<NameExpr>(e);
    if (const IndexVarDecl *var = name.getIndexVar())
      return "double(" + varName(var->getId()) + ")";
    if (const ParamDecl *param = name.getParam()) {
      double v = inst.params[param->getPosition()];
      return constant(e.getType() == ValueType::Real ? v : std::trunc(v));
    }
    fail("unresolved name '" + name.getName() + "'");
    return "0.0";
  }
  case Expr::Kind::TensorRead:
    return lowerRead(cast<TensorReadExpr>(e));
  case Expr::Kind::Call: {
    const auto &call = cast<CallExpr>(e);
    if (call.getBuiltin() && *call.getBuiltin() == Builtin::Select)
      return lowerSelect(call);
    return lowerCall(call);
  }
  case Expr::Kind::Reduce:
    return lowerReduce(cast<ReduceExpr>(e));
  case Expr::Kind::Unary: {
    const auto &un = cast<UnaryExpr>(e);
    if (un.getOp() == UnaryOp::Neg)
      return "(-" + lowerValue(un.getOperand()) + ")";
    return "(" + lowerCond(un.getOperand()) + " ? 0.0 : 1.0)";
  }
  case Expr::Kind::Binary:
    if (isPureInt(e))
      return "double(" + lowerInt(e) + ")";
    return lowerBinary(cast<BinaryExpr>(e));
  }
  return "0.0";
}

std::string KernelBuilder::lowerBinary(const BinaryExpr &e) {
  bool integer = e.getType() == ValueType::Int;
  switch (e.getOp()) {
  case BinaryOp::Add:
  case BinaryOp::Sub:
  case BinaryOp::Mul: {
    const char *sym = e.getOp() == BinaryOp::Add   ? " + "
                      : e.getOp() == BinaryOp::Sub ? " - "
                                                   : " * ";
    std::string a = lowerValue(e.getLHS());
    return "(" + a + sym + lowerValue(e.getRHS()) + ")";
  }
  case BinaryOp::Div: {
    std::string a = lowerValue(e.getLHS());
    std::string b = lowerValue(e.getRHS());
    return integer ? "tofu_kg::idiv(" + a + ", " + b + ")"
                   : "(" + a + " / " + b + ")";
  }
  case BinaryOp::Rem: {
    std::string a = lowerValue(e.getLHS());
    std::string b = lowerValue(e.getRHS());
    return (integer ? "tofu_kg::irem(" : "tofu_kg::rrem(") + a + ", " + b + ")";
  }
  default:
    return "(" + lowerCond(e) + " ? 1.0 : 0.0)";
  }
}

std::string KernelBuilder::lowerCond(const Expr &e) {
  if (const auto *bin = dyn_cast<BinaryExpr>(&e)) {
    const char *sym = nullptr;
    switch (bin->getOp()) {
    case BinaryOp::Eq: sym = " == "; break;
    case BinaryOp::Ne: sym = " != "; break;
    case BinaryOp::Lt: sym = " < "; break;
    case BinaryOp::Le: sym = " <= "; break;
    case BinaryOp::Gt: sym = " > "; break;
    case BinaryOp::Ge: sym = " >= "; break;
    case BinaryOp::And:
    case BinaryOp::Or: {
      std::string a = lowerCond(bin->getLHS());
      std::string b = lowerCond(bin->getRHS());
      return "(" + a + (bin->getOp() == BinaryOp::And ? " && " : " || ") + b +
             ")";
    }
    default:
      break;
    }
    if (sym) {
      if (isPureInt(bin->getLHS()) && isPureInt(bin->getRHS())) {
        std::string a = lowerInt(bin->getLHS());
        return "(" + a + sym + lowerInt(bin->getRHS()) + ")";
      }
      std::string a = lowerValue(bin->getLHS());
      return "(" + a + sym + lowerValue(bin->getRHS()) + ")";
    }
  }
  if (const auto *un = dyn_cast<UnaryExpr>(&e))
    if (un->getOp() == UnaryOp::Not)
      return "(!" + lowerCond(un->getOperand()) + ")";
  if (isPureInt(e))
    return "(" + lowerInt(e) + " != 0)";
  return "(" + lowerValue(e) + " != 0.0)";
}

std::string KernelBuilder::lowerCall(const CallExpr &e) {
  if (!e.getBuiltin()) {
    fail("unknown function '" + e.getCallee() + "'");
    return "0.0";
  }
  SmallVector<std::string, 2> args;
  for (const ExprPtr &arg : e.getArgs())
    args.push_back(lowerValue(*arg));
  switch (*e.getBuiltin()) {
  // The numeric builtins: the prelude's helpers (MathBuiltins.def).
#define TDL_MATH_BUILTIN(Id, Arity, Expr)                                      \
  case Builtin::Id:                                                            \
    return "tofu_kg::tdl_" #Id "(" + llvm::join(args, ", ") + ")";
#include "tofu/TDL/MathBuiltins.def"
  case Builtin::Opaque:
    fail("it is opaque: its value cannot be computed by TDL");
    return "0.0";
  default:
    fail("'" + e.getCallee() +
         "' is left in the body; instantiate the operator first");
    return "0.0";
  }
}

/// `select(c, a, b)` evaluates only the branch taken: a branch that needs
/// statements (a reduction, a checked index) becomes an if/else.
std::string KernelBuilder::lowerSelect(const CallExpr &e) {
  std::string cond = lowerCond(e.getArg(0));
  std::string values[2];
  Scope branches[2];
  for (unsigned i = 0; i != 2; ++i) {
    scopes.emplace_back();
    scopes.back().barrier = true;
    values[i] = lowerValue(e.getArg(i + 1));
    branches[i] = std::move(scopes.back());
    scopes.pop_back();
  }
  if (branches[0].lines.empty() && branches[1].lines.empty()) {
    // Both values are expressions without statements (their reads are in
    // their tensor's box or checked): computed before the choice, so that
    // the choice is a conditional move. A `?:` over the values themselves
    // became a branch, mispredicted half the time on a ReLU's gradient
    // (threshold_backward, max_pool2d_with_indices_backward).
    std::string chosen[2];
    for (unsigned i = 0; i != 2; ++i) {
      chosen[i] = fresh("v");
      current().lines.push_back("const double " + chosen[i] + " = " +
                                values[i] + ";");
    }
    return "(" + cond + " ? " + chosen[0] + " : " + chosen[1] + ")";
  }
  std::string result = fresh("s");
  std::vector<std::string> &lines = current().lines;
  lines.push_back("double " + result + ";");
  lines.push_back("if " + cond + " {");
  for (unsigned i = 0; i != 2; ++i) {
    if (i == 1)
      lines.push_back("} else {");
    for (std::string &line : branches[i].lines)
      lines.push_back(std::move(line));
    lines.push_back(result + " = " + values[i] + ";");
  }
  lines.push_back("}");
  return result;
}

std::string KernelBuilder::inputOffset(unsigned t, ArrayRef<std::string> index) const {
  std::string s;
  std::string in = "in" + std::to_string(t);
  for (unsigned d = 0, rank = index.size(); d != rank; ++d) {
    if (!s.empty())
      s += " + ";
    s += "(" + index[d] + " - " + in + "lo" + std::to_string(d) + ")";
    if (d + 1 != rank)
      s += " * " + in + "s" + std::to_string(d);
  }
  return s.empty() ? "0" : s;
}

std::string KernelBuilder::outputOffset(ArrayRef<std::string> index) const {
  std::string s;
  for (unsigned d = 0, rank = index.size(); d != rank; ++d) {
    if (!s.empty())
      s += " + ";
    s += "(" + index[d] + " - outlo" + std::to_string(d) + ")";
    if (d + 1 != rank)
      s += " * outs" + std::to_string(d);
  }
  return s.empty() ? "0" : s;
}

std::string KernelBuilder::lowerRead(const TensorReadExpr &e) {
  const TensorDecl *tensor = e.getTensor();
  if (!tensor) {
    fail("unresolved tensor '" + e.getTensorName() + "'");
    return "0.0";
  }
  unsigned t = tensor->getPosition();
  const Shape &shape = inst.inputShapes[t];
  if (e.getNumIndices() != shape.size()) {
    fail("tensor '" + tensor->getName() + "' is read with " +
         Twine(e.getNumIndices()) + " indices but has shape " +
         formatShape(shape));
    return "0.0";
  }
  SmallVector<std::string, 4> index;
  std::string checks;
  for (unsigned d = 0, n = e.getNumIndices(); d != n; ++d) {
    const Expr &ix = e.getIndex(d);
    std::string value;
    if (isPureInt(ix)) {
      value = lowerInt(ix);
      llvm::Optional<Interval> range = intervalOf(ix);
      if (range && range->lo >= 0 && range->hi < shape[d]) {
        index.push_back(value);
        continue;
      }
    } else {
      value = "tofu_kg::toIndex(" + lowerValue(ix) + ")";
    }
    std::string name = fresh("x");
    current().lines.push_back("const std::int64_t " + name + " = " + value + ";");
    index.push_back(name);
    if (!checks.empty())
      checks += " && ";
    checks += "std::uint64_t(" + name + ") < " + std::to_string(shape[d]) + "u";
  }
  std::string element =
      t < inlinedInputs.size() && !inlinedInputs[t].empty()
          ? inlinedInputs[t]
          : "in" + std::to_string(t) + "[" + inputOffset(t, index) + "]";
  std::string read = inst.inputTypes[t] == DType::BF16  ? "tofu_kg::fromBF16(" + element + ")"
                     : inst.inputTypes[t] == DType::F16 ? "tofu_kg::fromF16(" + element + ")"
                                                        : "double(" + element + ")";
  if (checks.empty())
    return read;
  return "(" + checks + " ? " + read + " : 0.0)";
}

namespace {
const char *identityOf(Reducer r) {
  switch (r) {
  case Reducer::Sum: return "0.0";
  case Reducer::Prod: return "1.0";
  case Reducer::Max: return "(-tofu_kg::inf)";
  case Reducer::Min: return "tofu_kg::inf";
  }
  return "0.0";
}

/// The statement adding `value` to the accumulator `acc` with reducer `r`.
std::string accumulate(Reducer r, const std::string &acc, const std::string &value) {
  switch (r) {
  case Reducer::Sum: return acc + " += " + value + ";";
  case Reducer::Prod: return acc + " *= " + value + ";";
  case Reducer::Max: return acc + " = tofu_kg::maxOf(" + value + ", " + acc + ");";
  case Reducer::Min: return acc + " = tofu_kg::minOf(" + value + ", " + acc + ");";
  }
  return acc + " += " + value + ";";
}

/// `text` with each identifier of `names` replaced by `$` and its position:
/// two reductions' bodies that differ only in their variables' names give
/// the same text.
std::string numberNames(const std::string &text,
                        const std::vector<std::string> &names) {
  std::string out;
  for (size_t at = 0; at < text.size();) {
    char c = text[at];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') {
      out += c;
      ++at;
      continue;
    }
    size_t end = at;
    while (end < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[end])) ||
            text[end] == '_' || (std::isdigit(static_cast<unsigned char>(c)) &&
                                 text[end] == '.')))
      ++end;
    std::string token = text.substr(at, end - at);
    auto it = llvm::find(names, token);
    out += it == names.end() ? token
                             : "$" + std::to_string(it - names.begin());
    at = end;
  }
  return out;
}

/// True if `body` has no reduction, reads some tensor along its last free
/// variable (that variable is the read's last index) and every read that
/// uses a free variable does so: run innermost, the loop nest's reduction
/// would stride down those tensors' columns (a column sum). A matrix
/// product's `a[i, k] * b[k, j]` is not such a body (`a` walks its rows
/// with k).
bool readsAlongRows(const Expr &body, ArrayRef<unsigned> free) {
  bool found = false, other = false;
  walkExpr(body, [&](const Expr &sub) {
    other |= isa<ReduceExpr>(sub);
    const auto *read = dyn_cast<TensorReadExpr>(&sub);
    if (!read || read->getNumIndices() == 0)
      return;
    const auto *name = dyn_cast<NameExpr>(&read->getIndex(read->getNumIndices() - 1));
    if (name && !name->isEllipsis() && name->getIndexVar() &&
        name->getIndexVar()->getId() == free.back()) {
      found = true;
      return;
    }
    for (unsigned d = 0; d != read->getNumIndices(); ++d)
      walkExpr(read->getIndex(d), [&](const Expr &index) {
        if (const auto *n = dyn_cast<NameExpr>(&index))
          if (const IndexVarDecl *var = n->getIndexVar())
            other |= llvm::is_contained(free, var->getId());
      });
  });
  return found && !other;
}
} // namespace

std::string KernelBuilder::lowerReduce(const ReduceExpr &e) {
  resolveExtents(e);
  if (contraction && contraction->reduce == &e) {
    SmallVector<std::string, 4> index;
    for (unsigned d = 0, n = op.getOutputRank(); d != n; ++d)
      index.push_back(varName(d));
    if (contraction->widened)
      return "gsum[" + boxOffset(index) + "]";
    // The GEMM left its value in the output element.
    return "double(out[" + outputOffset(index) + "])";
  }
  if (llvm::Optional<std::string> table = tabulateReduce(e))
    return *table;
  // The outermost scope where every free variable is bound, not above the
  // innermost select branch.
  unsigned target = 0;
  for (unsigned s = 0; s != scopes.size(); ++s)
    if (scopes[s].barrier)
      target = s;
  for (unsigned var : collectFreeIndexVars(e))
    for (unsigned s = 0; s != scopes.size(); ++s)
      if (llvm::is_contained(scopes[s].vars, var))
        target = std::max(target, s);
  // Hoisted out of enclosing reductions, it runs only where their ranges
  // are not empty, as the reads the analysis allows for do.
  std::string guard;
  unsigned rank = op.getOutputRank();
  for (unsigned s = std::max(target + 1, rank + 1); s < scopes.size(); ++s)
    for (unsigned var : scopes[s].vars) {
      std::string v = varName(var);
      guard += (guard.empty() ? "" : " && ") + v + "lo < " + v + "hi";
    }
  if (guard.empty())
    if (llvm::Optional<KeyedSum> keyed = matchKeyedSum(e))
      return lowerKeyedSum(e, *keyed, target);
  if (cudaTarget)
    if (llvm::Optional<std::string> entry = hoistToPhase(e, target))
      return *entry;
  std::vector<Scope> inner(std::make_move_iterator(scopes.begin() + target + 1),
                           std::make_move_iterator(scopes.end()));
  scopes.resize(target + 1);

  std::string acc = fresh("r");
  scopes.emplace_back();
  for (const auto &var : e.getVars())
    scopes.back().vars.push_back(var->getId());
  std::string value = lowerValue(e.getBody());
  Scope body = std::move(scopes.back());
  scopes.pop_back();

  // The same reduction already computed in this scope (a layer norm's three
  // row sums of x) gives its value, the same bits, where the variables'
  // ranges are the same; the loop still runs where a share cut them apart.
  std::vector<std::string> vars;
  for (const auto &var : e.getVars())
    vars.push_back(varName(var->getId()));
  std::string key;
  const Scope::Sum *same = nullptr;
  if (!cudaTarget && body.lines.empty()) {
    key = std::to_string(static_cast<int>(e.getReducer())) + " " + guard +
          " " + numberNames(value, vars);
    for (const Scope::Sum &sum : scopes[target].sums)
      if (sum.key == key)
        same = &sum;
  }
  std::vector<std::string> &lines = scopes[target].lines;
  lines.push_back("double " + acc + " = " +
                  (same ? same->acc : identityOf(e.getReducer())) + ";");
  if (same) {
    std::string differ;
    for (size_t i = 0; i != vars.size(); ++i)
      for (const char *end : {"lo", "hi"})
        differ += (differ.empty() ? "" : " || ") + vars[i] + end +
                  " != " + same->vars[i] + end;
    lines.push_back("if (" + differ + ") {");
    lines.push_back(acc + " = " + identityOf(e.getReducer()) + ";");
  } else if (!key.empty()) {
    scopes[target].sums.push_back({key, acc, vars});
  }
  if (!guard.empty())
    lines.push_back("if (" + guard + ") {");
  if (!cudaTarget && e.getVars().size() == 1 && body.lines.empty() &&
      callsVectorForms(value)) {
    // A body calling exp or erf (a softmax's sum): its values computed
    // into a block with a loop that vectorizes, then added in order, the
    // same values in the same order as one loop (MathHelpers.h).
    std::string v = varName(e.getVars()[0]->getId()), blk = fresh("blk");
    lines.push_back("for (std::int64_t " + blk + " = " + v + "lo; " + blk +
                    " < " + v + "hi; " + blk + " += 256) {");
    lines.push_back("const std::int64_t " + blk + "end = std::min<std::int64_t>(" +
                    blk + " + 256, " + v + "hi);");
    lines.push_back("double " + blk + "v[256];");
    std::string loop = "for (std::int64_t " + v + " = " + blk + "; " + v +
                       " < " + blk + "end; ++" + v + ") {";
    lines.push_back(loop);
    lines.push_back(blk + "v[" + v + " - " + blk + "] = " + value + ";");
    lines.push_back("}");
    lines.push_back(loop);
    lines.push_back(accumulate(e.getReducer(), acc,
                               blk + "v[" + v + " - " + blk + "]"));
    lines.push_back("}");
    lines.push_back("}");
  } else if (&e == cudaSplit) {
    // The thread's share of a split phase (hoistToPhase): the points of the
    // reduction's box whose row-major rank is `part` modulo SplitParts, in
    // increasing rank.
    std::string count = acc + "n", rank = acc + "f", rest = acc + "q";
    std::string size;
    for (const auto &var : e.getVars()) {
      std::string v = varName(var->getId());
      size += (size.empty() ? "" : " * ") + ("std::max<std::int64_t>(" + v +
                                             "hi - " + v + "lo, 0)");
    }
    lines.push_back("const std::int64_t " + count + " = " + size + ";");
    lines.push_back("for (std::int64_t " + rank + " = part; " + rank + " < " +
                    count + "; " + rank + " += " +
                    std::to_string(CudaPhase::SplitParts) + ") {");
    lines.push_back("std::int64_t " + rest + " = " + rank + ";");
    for (unsigned i = e.getVars().size(); i-- > 0;) {
      std::string v = varName(e.getVars()[i]->getId());
      if (i == 0) {
        lines.push_back("const std::int64_t " + v + " = " + v + "lo + " + rest + ";");
        continue;
      }
      lines.push_back("const std::int64_t " + v + " = " + v + "lo + " + rest +
                      " % (" + v + "hi - " + v + "lo);");
      lines.push_back(rest + " /= " + v + "hi - " + v + "lo;");
    }
    for (std::string &line : body.lines)
      lines.push_back(std::move(line));
    lines.push_back(accumulate(e.getReducer(), acc, value));
    lines.push_back("}");
  } else {
    for (const auto &var : e.getVars()) {
      std::string v = varName(var->getId());
      lines.push_back("for (std::int64_t " + v + " = " + v + "lo; " + v +
                      " < " + v + "hi; ++" + v + ") {");
    }
    for (std::string &line : body.lines)
      lines.push_back(std::move(line));
    lines.push_back(accumulate(e.getReducer(), acc, value));
    for (unsigned i = 0, n = e.getVars().size(); i != n; ++i)
      lines.push_back("}");
  }
  if (!guard.empty())
    lines.push_back("}");
  if (same)
    lines.push_back("}");
  for (Scope &s : inner)
    scopes.push_back(std::move(s));
  return acc;
}

llvm::Optional<std::string> KernelBuilder::tabulateReduce(const ReduceExpr &e) {
  // Only a reduction of the loop nest's body itself (no enclosing reduction
  // or select branch), free in output variables only, that the nest would
  // recompute: an outer output variable it does not use (a normalization's
  // per-channel sums under the batch loop).
  // Not on CUDA: there each thread computes one output element, so a table
  // would be filled by every thread (and std::vector is host-only).
  unsigned rank = op.getOutputRank();
  if (tabulating || scopes.size() != rank + 1 || contraction ||
      options.target == KernelTarget::Cuda)
    return llvm::None;
  SmallVector<unsigned, 4> free = collectFreeIndexVars(e);
  if (free.empty() || free.back() >= rank)
    return llvm::None;
  if (matchKeyedSum(e))
    return llvm::None;
  if (readsAlongRows(e.getBody(), free))
    return tabulateAcross(e, free);
  if (free.size() == free.back() + 1)
    return llvm::None;
  // Lower it where only its free variables are bound, each by one loop.
  std::vector<Scope> saved = std::move(scopes);
  scopes.assign(free.size() + 1, Scope());
  for (unsigned i = 0; i != free.size(); ++i)
    scopes[i + 1].vars.push_back(free[i]);
  tabulating = true;
  std::string acc = lowerReduce(e);
  tabulating = false;
  std::vector<std::string> lines = std::move(scopes[0].lines);
  std::string entry = declareTable(free, "", lines);
  lines.push_back("{");
  for (unsigned i = 0; i != free.size(); ++i) {
    std::string v = varName(free[i]), f = std::to_string(free[i]);
    lines.push_back("for (std::int64_t " + v + " = lo[" + f + "]; " + v +
                    " < hi[" + f + "]; ++" + v + ") {");
    for (std::string &line : scopes[i + 1].lines)
      lines.push_back(std::move(line));
  }
  lines.push_back(entry + " = " + acc + ";");
  for (unsigned i = 0; i != free.size() + 1; ++i)
    lines.push_back("}");
  scopes = std::move(saved);
  for (std::string &line : lines)
    scopes[0].lines.push_back(std::move(line));
  return entry;
}

std::string KernelBuilder::declareTable(ArrayRef<unsigned> free, StringRef init,
                                        std::vector<std::string> &lines) {
  std::string table = fresh("tab");
  std::string size = "1", offset = "0";
  for (unsigned i = free.size(); i-- != 0;) {
    std::string f = std::to_string(free[i]), stride = table + "s" + f;
    lines.push_back("const std::int64_t " + stride + " = " + size + ";");
    offset += " + (" + varName(free[i]) + " - lo[" + f + "]) * " + stride;
    size = "(hi[" + f + "] - lo[" + f + "]) * " + stride;
  }
  lines.push_back("std::vector<double> " + table + "(" + size +
                  (init.empty() ? "" : ", " + init.str()) + ");");
  return table + "[" + offset + "]";
}

std::string KernelBuilder::tabulateAcross(const ReduceExpr &e,
                                          ArrayRef<unsigned> free) {
  // The table starts at the reducer's identity; the reduction's loops run
  // outside the loops over its free variables, so that the innermost loop
  // walks the rows. Every entry still takes its values in the reduction's
  // order: the loop nest's value, bit for bit.
  std::vector<Scope> saved = std::move(scopes);
  scopes.assign(2, Scope());
  scopes[1].vars.assign(free.begin(), free.end());
  for (const auto &var : e.getVars())
    scopes[1].vars.push_back(var->getId());
  tabulating = true;
  std::string value = lowerValue(e.getBody());
  tabulating = false;
  std::vector<std::string> lines = std::move(scopes[0].lines);
  std::string entry = declareTable(free, identityOf(e.getReducer()), lines);
  lines.push_back("{");
  for (const auto &var : e.getVars()) {
    std::string v = varName(var->getId());
    lines.push_back("for (std::int64_t " + v + " = " + v + "lo; " + v + " < " +
                    v + "hi; ++" + v + ") {");
  }
  for (unsigned i = 0; i != free.size(); ++i) {
    std::string v = varName(free[i]), f = std::to_string(free[i]);
    lines.push_back("for (std::int64_t " + v + " = lo[" + f + "]; " + v +
                    " < hi[" + f + "]; ++" + v + ") {");
  }
  for (std::string &line : scopes[1].lines)
    lines.push_back(std::move(line));
  lines.push_back(accumulate(e.getReducer(), entry, value));
  for (unsigned i = 0; i != free.size() + e.getVars().size() + 1; ++i)
    lines.push_back("}");
  scopes = std::move(saved);
  for (std::string &line : lines)
    scopes[0].lines.push_back(std::move(line));
  return entry;
}

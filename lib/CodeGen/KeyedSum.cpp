//===- KeyedSum.cpp - Sums over the points whose key is an output index ---===//
//
// This file implements the keyed-sum lowering of KernelBuilder: a sum
//   Sum(lambda k..: select(KEY(k..) == w && REST, V, 0.0))
// where w is an output variable and KEY depends on the sum's own variables
// only (an embedding's gradient: `select(indices[k, l] == w, g[k, l, d],
// 0.0)`) adds, for each w, only the points whose key is w. The loop nest
// would visit every point for every output element: gpt-2l's embedding
// gradient (8192 x 512 outputs, 1024 tokens) made 4.3e9 comparisons, 77%
// of its step. Before the loop nest the points of the sum's clamped ranges
// are sorted by key into one bucket per w of the box (a stable counting
// sort, so each bucket keeps the loop's order); the sum then runs over w's
// bucket. A point whose key is not w adds 0.0 in the loop nest, which
// leaves the accumulator unchanged (it starts at +0.0 and a sum in round-
// to-nearest is never -0.0), so the value is the loop nest's bit for bit.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "tofu/TDL/ExprWalk.h"

#include "llvm/ADT/StringExtras.h"

using namespace tofu;
using namespace tofu::codegen;
using namespace tofu::tdl;

namespace {

/// The conjuncts of `e` (its operands under `&&`), in source order.
void collectConjuncts(const Expr &e, SmallVectorImpl<const Expr *> &out) {
  if (const auto *bin = dyn_cast<BinaryExpr>(&e))
    if (bin->getOp() == BinaryOp::And) {
      collectConjuncts(bin->getLHS(), out);
      collectConjuncts(bin->getRHS(), out);
      return;
    }
  out.push_back(&e);
}

/// The output variable `e` names, if it is one.
llvm::Optional<unsigned> outputVarOf(const Expr &e, unsigned rank) {
  const auto *name = dyn_cast<NameExpr>(&e);
  if (!name || name->isEllipsis() || !name->getIndexVar() ||
      name->getIndexVar()->getId() >= rank)
    return llvm::None;
  return name->getIndexVar()->getId();
}

/// True if `e` has no reduction and uses no index variable outside `vars`.
bool usesOnly(const Expr &e, ArrayRef<unsigned> vars) {
  bool ok = true;
  walkExpr(e, [&](const Expr &sub) {
    if (isa<ReduceExpr>(sub))
      ok = false;
    if (const auto *name = dyn_cast<NameExpr>(&sub))
      if (const IndexVarDecl *var = name->getIndexVar())
        ok &= llvm::is_contained(vars, var->getId());
  });
  return ok;
}

bool isZero(const Expr &e) {
  if (const auto *f = dyn_cast<FloatLiteralExpr>(&e))
    return f->getValue() == 0.0;
  if (const auto *i = dyn_cast<IntLiteralExpr>(&e))
    return i->getValue() == 0;
  return false;
}

} // namespace

llvm::Optional<KeyedSum> KernelBuilder::matchKeyedSum(const ReduceExpr &e) const {
  if (options.target == KernelTarget::Cuda || e.getReducer() != Reducer::Sum)
    return llvm::None;
  unsigned rank = op.getOutputRank();
  // Not inside another reduction (its variables would be bound around the
  // buckets, which are built once per call).
  for (const Scope &s : scopes)
    for (unsigned var : s.vars)
      if (var >= rank)
        return llvm::None;
  const auto *select = dyn_cast<CallExpr>(&e.getBody());
  if (!select || !select->getBuiltin() || *select->getBuiltin() != Builtin::Select ||
      !isZero(select->getArg(2)))
    return llvm::None;
  SmallVector<unsigned, 4> own;
  for (const auto &var : e.getVars())
    own.push_back(var->getId());
  SmallVector<const Expr *, 4> conjuncts;
  collectConjuncts(select->getArg(0), conjuncts);
  for (unsigned c = 0; c != conjuncts.size(); ++c) {
    const auto *eq = dyn_cast<BinaryExpr>(conjuncts[c]);
    if (!eq || eq->getOp() != BinaryOp::Eq)
      continue;
    for (unsigned side = 0; side != 2; ++side) {
      const Expr &var = side ? eq->getRHS() : eq->getLHS();
      const Expr &key = side ? eq->getLHS() : eq->getRHS();
      llvm::Optional<unsigned> w = outputVarOf(var, rank);
      if (!w || !usesOnly(key, own))
        continue;
      KeyedSum k;
      k.key = &key;
      k.outputVar = *w;
      k.value = &select->getArg(1);
      for (unsigned r = 0; r != conjuncts.size(); ++r)
        if (r != c)
          k.rest.push_back(conjuncts[r]);
      return k;
    }
  }
  return llvm::None;
}

std::string KernelBuilder::lowerKeyedSum(const ReduceExpr &e, const KeyedSum &k,
                                         unsigned target) {
  std::string id = std::to_string(counter++);
  std::string w = std::to_string(k.outputVar);
  std::string width = "kw" + id, bucket = "kb" + id, start = "ks" + id;
  SmallVector<std::string, 4> vars, points;
  for (const auto &var : e.getVars()) {
    vars.push_back(varName(var->getId()));
    points.push_back("kp" + id + "_" + std::to_string(var->getId()));
  }
  auto openLoops = [&](std::vector<std::string> &lines) {
    for (const std::string &v : vars)
      lines.push_back("for (std::int64_t " + v + " = " + v + "lo; " + v + " < " +
                      v + "hi; ++" + v + ") {");
  };

  // The key of every point, in the loop nest's order.
  scopes.emplace_back();
  for (const auto &var : e.getVars())
    scopes.back().vars.push_back(var->getId());
  std::string key = lowerValue(*k.key);
  Scope keyScope = std::move(scopes.back());
  scopes.pop_back();

  std::vector<std::string> &pre = scopes[0].lines;
  pre.push_back("// Keyed sum: the points of the sum sorted by their key, one "
                "bucket per '" + op.getIndexVars()[k.outputVar]->getName().str() +
                "' of the box (docs/CodeGen.md).");
  pre.push_back("const std::int64_t " + width + " = hi[" + w + "] - lo[" + w + "];");
  pre.push_back("std::vector<std::int64_t> " + bucket + ", " + start + "(" +
                width + " + 1, 0);");
  pre.push_back("{");
  openLoops(pre);
  for (std::string &line : keyScope.lines)
    pre.push_back(std::move(line));
  pre.push_back("const double key = " + key + ";");
  pre.push_back("std::int64_t b = -1;");
  pre.push_back("if (key >= double(lo[" + w + "]) && key < double(hi[" + w +
                "]) && double(std::int64_t(key)) == key) {");
  pre.push_back("b = std::int64_t(key) - lo[" + w + "];");
  pre.push_back("++" + start + "[b + 1];");
  pre.push_back("}");
  pre.push_back(bucket + ".push_back(b);");
  for (unsigned i = 0; i != vars.size(); ++i)
    pre.push_back("}");
  pre.push_back("}");
  pre.push_back("for (std::int64_t b = 0; b < " + width + "; ++b) " + start +
                "[b + 1] += " + start + "[b];");
  std::string decl = "std::vector<std::int64_t> ";
  for (unsigned i = 0; i != points.size(); ++i)
    decl += (i ? ", " : "") + points[i] + "(" + start + "[" + width + "])";
  pre.push_back(decl + ";");
  pre.push_back("{");
  pre.push_back("std::vector<std::int64_t> at(" + start + ".begin(), " + start +
                ".end() - 1);");
  pre.push_back("std::int64_t p = 0;");
  openLoops(pre);
  pre.push_back("const std::int64_t b = " + bucket + "[p++];");
  pre.push_back("if (b >= 0) {");
  for (unsigned i = 0; i != vars.size(); ++i)
    pre.push_back(points[i] + "[at[b]] = " + vars[i] + ";");
  pre.push_back("++at[b];");
  pre.push_back("}");
  for (unsigned i = 0; i != vars.size(); ++i)
    pre.push_back("}");
  pre.push_back("}");

  // The sum over w's bucket.
  std::vector<Scope> inner(std::make_move_iterator(scopes.begin() + target + 1),
                           std::make_move_iterator(scopes.end()));
  scopes.resize(target + 1);
  scopes.emplace_back();
  for (const auto &var : e.getVars())
    scopes.back().vars.push_back(var->getId());
  std::string cond;
  for (const Expr *c : k.rest)
    cond += (cond.empty() ? "" : " && ") + lowerCond(*c);
  Scope condScope = std::move(scopes.back());
  scopes.back() = Scope();
  for (const auto &var : e.getVars())
    scopes.back().vars.push_back(var->getId());
  std::string value = lowerValue(*k.value);
  Scope body = std::move(scopes.back());
  scopes.pop_back();

  std::string acc = "r" + id, self = varName(k.outputVar);
  std::vector<std::string> &lines = scopes[target].lines;
  lines.push_back("double " + acc + " = 0.0;");
  lines.push_back("for (std::int64_t p = " + start + "[" + self + " - lo[" + w +
                  "]]; p < " + start + "[" + self + " - lo[" + w + "] + 1]; ++p) {");
  for (unsigned i = 0; i != vars.size(); ++i)
    lines.push_back("const std::int64_t " + vars[i] + " = " + points[i] + "[p];");
  for (std::string &line : condScope.lines)
    lines.push_back(std::move(line));
  if (!cond.empty())
    lines.push_back("if (" + cond + ") {");
  for (std::string &line : body.lines)
    lines.push_back(std::move(line));
  lines.push_back(acc + " += " + value + ";");
  if (!cond.empty())
    lines.push_back("}");
  lines.push_back("}");
  for (Scope &s : inner)
    scopes.push_back(std::move(s));
  return acc;
}

//===- OperatorAnalysis.cpp - The symbolic analysis of one operator -------===//
//
// This file implements OperatorAnalysis::analyze: it compiles every tensor
// read's indices (noting the ones that fall back to the whole dimension),
// the explicit extents of index variables (`ky < 2`, and output variables'
// `z < 1`), and then discovers the
// strategies (StrategyDiscovery.cpp).
//
//===----------------------------------------------------------------------===//

#include "tofu/Analysis/OperatorAnalysis.h"

#include "tofu/TDL/Printers.h"

using namespace tofu;
using namespace tofu::analysis;
using namespace tofu::tdl;

StringRef analysis::getStrategyKindName(Strategy::Kind kind) {
  return kind == Strategy::Kind::Split ? "split" : "reduce";
}

int OperatorAnalysis::getTensorRank(unsigned tensor) const {
  return op->getTensors()[tensor]->getRank();
}

namespace {
/// Visits the tensor reads of a body with the mask of the index variables
/// in scope at each.
void visitReads(const Expr &e, uint64_t scope,
                llvm::function_ref<void(const TensorReadExpr &, uint64_t)> fn) {
  switch (e.getKind()) {
  case Expr::Kind::IntLiteral:
  case Expr::Kind::FloatLiteral:
  case Expr::Kind::Name:
    return;
  case Expr::Kind::TensorRead:
    fn(cast<TensorReadExpr>(e), scope);
    for (const ExprPtr &index : cast<TensorReadExpr>(e).getIndices())
      visitReads(*index, scope, fn);
    return;
  case Expr::Kind::Call:
    for (const ExprPtr &arg : cast<CallExpr>(e).getArgs())
      visitReads(*arg, scope, fn);
    return;
  case Expr::Kind::Reduce: {
    const auto &red = cast<ReduceExpr>(e);
    for (const auto &var : red.getVars())
      scope |= uint64_t(1) << var->getId();
    visitReads(red.getBody(), scope, fn);
    return;
  }
  case Expr::Kind::Unary:
    visitReads(cast<UnaryExpr>(e).getOperand(), scope, fn);
    return;
  case Expr::Kind::Binary:
    visitReads(cast<BinaryExpr>(e).getLHS(), scope, fn);
    visitReads(cast<BinaryExpr>(e).getRHS(), scope, fn);
    return;
  }
}

std::string describeWholeIndex(const TensorReadExpr &read, unsigned dim) {
  std::string what;
  switch (read.getIndexKind(dim)) {
  case IndexKind::DataDependent:
    what = "is data dependent";
    break;
  case IndexKind::Opaque:
    what = "is not affine (a product of index expressions, a comparison or a "
           "call)";
    break;
  default:
    what = "cannot be analysed";
    break;
  }
  return ("index " + Twine(dim) + " of '" + read.getTensorName() + "' (" +
          exprToString(read.getIndex(dim)) + ") " + what +
          ": the whole dimension is read")
      .str();
}
} // namespace

void OperatorAnalysis::analyzeReads() {
  uint64_t outputScope = 0;
  for (unsigned i = 0, e = op->getOutputRank(); i != e; ++i)
    outputScope |= uint64_t(1) << i;
  visitReads(op->getBody(), outputScope,
             [&](const TensorReadExpr &read, uint64_t scope) {
               ReadAnalysis ra;
               ra.expr = &read;
               ra.tensor = read.getTensor()->getPosition();
               ra.scopeMask = scope;
               for (unsigned d = 0, n = read.getNumIndices(); d != n; ++d) {
                 std::string why;
                 llvm::Optional<IndexProgram> prog;
                 IndexKind kind = read.getIndexKind(d);
                 if (kind == IndexKind::Affine || kind == IndexKind::DivMod)
                   prog = compiler.compileIndex(read.getIndex(d), why);
                 if (!prog) {
                   notes.push_back({read.getIndex(d).getLoc(),
                                    describeWholeIndex(read, d)});
                   prog = IndexProgram();
                 }
                 ra.dims.push_back(std::move(*prog));
               }
               reads.push_back(std::move(ra));
             });
}

void OperatorAnalysis::computeIndexWeight() {
  indexWeight = 1;
  for (const ReadAnalysis &read : reads)
    for (const IndexProgram &prog : read.dims) {
      unsigned weight = 0;
      for (const IndexInst &inst : prog.insts) {
        if (inst.op == IndexInst::Op::MulConst) {
          indexWeight = 0;
          return;
        }
        if (inst.op == IndexInst::Op::Affine)
          weight += compiler.affineForms[inst.operand].terms.size() + 1;
      }
      indexWeight = std::max(indexWeight, weight);
    }
}

void OperatorAnalysis::analyzeExtents() {
  extentSlots.assign(numVars, -1);
  for (const IndexVarDecl *var : op->getIndexVars())
    if (var->getExtent().kind == Extent::Kind::Explicit &&
        var->getExtentExpr())
      extentSlots[var->getId()] = compiler.addCoefficient(
          compiler.compileConstant(*var->getExtentExpr()));
}

llvm::Expected<OperatorAnalysis>
OperatorAnalysis::analyze(const tdl::OpDecl &op) {
  auto fail = [&](const Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot analyse operator '" + op.getName() +
                                       "': " + why);
  };
  if (op.isGeneric())
    return fail("it is generic (an ellipsis, a guard, or dim/rank); "
                "instantiate it first (tofu/TDL/Instantiate.h)");
  if (op.getIndexVars().size() > MaxIndexVars)
    return fail("more than " + Twine(MaxIndexVars) + " index variables");
  if (op.getTensors().size() > 0x3fff || op.getParams().size() > 0x3fff)
    return fail("too many tensors or params");
  for (const auto &t : op.getTensors())
    if (t->getRank() > 0x3fff)
      return fail("a tensor of too high a rank");
  OperatorAnalysis result;
  result.op = &op;
  result.numVars = op.getIndexVars().size();
  result.analyzeReads();
  result.analyzeExtents();
  for (const Poly &coef : result.getCoefficients())
    if (!coef.isValid())
      return fail("a constant of an index or extent overflows 64-bit "
                  "arithmetic");
  result.computeIndexWeight();
  result.discoverStrategies();
  return result;
}

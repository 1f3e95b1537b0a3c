//===- InstanceBuilder.cpp - The concrete form of a generic operator ------===//
//
// This file implements buildInstanceOp: a copy of a generic operator in
// which the output ellipsis `...i` becomes n variables `i0 .. i{n-1}`, each
// read `T[...i]` becomes T's trailing ellipsis positions (right-aligned, as
// in NumPy) with index 0 where T broadcasts (extent 1 where the output's is
// larger), `dim`/`rank` become literals, and the guard is dropped. The copy
// is then checked by Sema; any error becomes the llvm::Error.
//
//===----------------------------------------------------------------------===//

#include "InstantiateImpl.h"

#include "tofu/Support/Diagnostics.h"
#include "tofu/TDL/Clone.h"
#include "tofu/TDL/ExprWalk.h"
#include "tofu/TDL/Sema.h"

using namespace tofu;
using namespace tofu::tdl;
using namespace tofu::tdl::detail;

namespace {

/// Where the ellipsis of one read lands in its tensor's dimensions.
struct EllipsisLayout {
  /// The tensor's dimension of the first ellipsis position it has.
  unsigned firstDim;
  /// How many ellipsis positions the tensor has (the last ones).
  unsigned count;
};

class InstanceBuilder : public OpCloner {
public:
  InstanceBuilder(const OpDecl &op, const Use &use, BroadcastPlan &plan)
      : op(op), use(use), plan(plan) {}

  llvm::Expected<std::unique_ptr<OpDecl>> build();

protected:
  void cloneOutputVar(const IndexVarDecl &var, IndexVarList &out) override;
  void cloneIndex(const TensorReadExpr &read, const Expr &index,
                  std::vector<ExprPtr> &out) override;
  ExprPtr cloneCall(const CallExpr &call) override;
  ExprPtr cloneGuard(const Expr &) override { return nullptr; }

private:
  EllipsisLayout layoutOf(const TensorReadExpr &read) const;
  llvm::Error computeEllipsisLength();
  llvm::Error computeBroadcast();
  llvm::Error checkInstance(OpDecl &instance) const;
  llvm::Error fail(const Twine &msg) const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "operator '" + op.getName() + "': " + msg);
  }
  const Shape &shapeOf(const TensorReadExpr &read) const {
    return use.inputShapes[op.lookupTensor(read.getTensorName())->getPosition()];
  }

  const OpDecl &op;
  const Use &use;
  BroadcastPlan &plan;
  /// The ellipsis length.
  unsigned length = 0;
  /// Per ellipsis position, the broadcast extent and a tensor that has it.
  SmallVector<int64_t, 4> extents;
  SmallVector<const TensorReadExpr *, 4> extentReads;
  /// The first error met while copying.
  std::string copyError;
};

} // namespace

EllipsisLayout InstanceBuilder::layoutOf(const TensorReadExpr &read) const {
  unsigned before = 0;
  for (const ExprPtr &index : read.getIndices()) {
    auto *name = dyn_cast<NameExpr>(index.get());
    if (name && name->isEllipsis())
      break;
    ++before;
  }
  unsigned named = read.getNumIndices() - 1;
  return {before, unsigned(shapeOf(read).size()) - named};
}

llvm::Error InstanceBuilder::computeEllipsisLength() {
  const IndexVarDecl *ellipsis = op.getEllipsisVar();
  unsigned named = op.getOutputRank() - 1;
  llvm::Optional<unsigned> fromReads;
  for (const auto &t : op.getTensors())
    if (t->isRankPolymorphic()) {
      unsigned count = use.inputShapes[t->getPosition()].size() -
                       t->getNumNamedDims();
      fromReads = std::max(fromReads.getValueOr(0), count);
    }
  if (use.outputRank) {
    length = *use.outputRank - named;
    if (fromReads && *fromReads > length)
      return fail("an input has " + Twine(*fromReads) + " dimensions for '..." +
                  ellipsis->getName() + "' but the output rank " +
                  Twine(*use.outputRank) + " leaves it " + Twine(length));
    return llvm::Error::success();
  }
  if (!fromReads)
    return fail("the length of '..." + ellipsis->getName() +
                "' is unknown: no tensor is read with it; give the output "
                "rank");
  length = *fromReads;
  return llvm::Error::success();
}

llvm::Error InstanceBuilder::computeBroadcast() {
  extents.assign(length, 1);
  extentReads.assign(length, nullptr);
  plan.length = length;
  plan.outputFirst = 0;
  while (!op.getOutputVars()[plan.outputFirst]->isEllipsis())
    ++plan.outputFirst;
  // A known output shape broadcasts too: its ellipsis extents come first.
  if (!use.outputShape.empty())
    for (unsigned pos = 0; pos != length; ++pos)
      extents[pos] = use.outputShape[plan.outputFirst + pos];
  for (const TensorReadExpr *read : collectTensorReads(op)) {
    if (!read->getTensor() || !read->getTensor()->isRankPolymorphic())
      continue;
    EllipsisLayout layout = layoutOf(*read);
    plan.reads.push_back({read->getTensor()->getPosition(), layout.firstDim,
                          layout.count});
    const Shape &shape = shapeOf(*read);
    for (unsigned q = 0; q != layout.count; ++q) {
      unsigned pos = length - layout.count + q;
      int64_t extent = shape[layout.firstDim + q];
      if (extent == 1 || extent == extents[pos])
        continue;
      if (extents[pos] == 1 && use.outputShape.empty()) {
        extents[pos] = extent;
        extentReads[pos] = read;
        continue;
      }
      const TensorReadExpr *other = extentReads[pos];
      std::string otherName =
          other ? "'" + other->getTensorName().str() + "' (" +
                      formatShape(shapeOf(*other)) + ")"
                : "the output (" + formatShape(use.outputShape) + ")";
      return fail("the shapes of " + otherName + " and '" +
                  read->getTensorName() + "' (" + formatShape(shape) +
                  ") do not broadcast: extents " + Twine(extents[pos]) +
                  " and " + Twine(extent) + " at position " + Twine(pos) +
                  " of '..." + op.getEllipsisVar()->getName() + "'");
    }
  }
  return llvm::Error::success();
}

void InstanceBuilder::cloneOutputVar(const IndexVarDecl &var,
                                     IndexVarList &out) {
  if (!var.isEllipsis())
    return OpCloner::cloneOutputVar(var, out);
  for (unsigned pos = 0; pos != length; ++pos)
    out.push_back(std::make_unique<IndexVarDecl>(
        (var.getName() + Twine(pos)).str(), var.getLoc(),
        IndexVarDecl::Role::Output, nullptr));
}

void InstanceBuilder::cloneIndex(const TensorReadExpr &read, const Expr &index,
                                 std::vector<ExprPtr> &out) {
  auto *ellipsis = dyn_cast<NameExpr>(&index);
  if (!ellipsis || !ellipsis->isEllipsis())
    return OpCloner::cloneIndex(read, index, out);
  EllipsisLayout layout = layoutOf(read);
  const Shape &shape = shapeOf(read);
  for (unsigned q = 0; q != layout.count; ++q) {
    unsigned pos = length - layout.count + q;
    if (shape[layout.firstDim + q] == 1 && extents[pos] > 1)
      out.push_back(std::make_unique<IntLiteralExpr>(index.getLoc(), 0));
    else
      out.push_back(std::make_unique<NameExpr>(
          index.getLoc(), (ellipsis->getName() + Twine(pos)).str()));
  }
}

ExprPtr InstanceBuilder::cloneCall(const CallExpr &call) {
  if (call.getBuiltin() != Builtin::Dim && call.getBuiltin() != Builtin::Rank)
    return OpCloner::cloneCall(call);
  std::string why;
  llvm::Optional<int64_t> value =
      evaluateShapeQuery(call, op, use.inputShapes, why);
  if (!value && copyError.empty())
    copyError = why;
  return std::make_unique<IntLiteralExpr>(call.getLoc(), value.getValueOr(0));
}

llvm::Error InstanceBuilder::checkInstance(OpDecl &instance) const {
  llvm::SourceMgr srcMgr;
  std::string messages;
  srcMgr.setDiagHandler(
      [](const llvm::SMDiagnostic &d, void *ctx) {
        if (d.getKind() != llvm::SourceMgr::DK_Error)
          return;
        auto &out = *static_cast<std::string *>(ctx);
        out += (out.empty() ? "" : "; ") + d.getMessage().str();
      },
      &messages);
  DiagnosticEngine diags(srcMgr);
  if (checkOp(instance, diags))
    return llvm::Error::success();
  return fail("the instance for these shapes is invalid: " + messages);
}

llvm::Expected<std::unique_ptr<OpDecl>> InstanceBuilder::build() {
  if (op.getEllipsisVar()) {
    if (llvm::Error err = computeEllipsisLength())
      return err;
    if (llvm::Error err = computeBroadcast())
      return err;
  }
  std::unique_ptr<OpDecl> instance = cloneOp(op);
  if (!copyError.empty())
    return fail(copyError);
  if (llvm::Error err = checkInstance(*instance))
    return err;
  return instance;
}

llvm::Expected<std::unique_ptr<OpDecl>>
detail::buildInstanceOp(const OpDecl &op, const Use &use, BroadcastPlan &plan) {
  return InstanceBuilder(op, use, plan).build();
}

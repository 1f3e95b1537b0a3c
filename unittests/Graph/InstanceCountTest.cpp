//===- InstanceCountTest.cpp - Instances of a real graph under halving ----===//
//
// A planner that partitions the batch recursively instantiates every op of
// the graph again at each level with the batch halved. Instances depend on
// ranks, broadcasting, the values of the dim() calls folded into bodies,
// the outcomes of the guards' dim() comparisons, and params; not on other
// extents. So once the batch has been halved (and a guard comparing it with
// a param, as `view`'s, has flipped), a halved batch makes a new instance
// only for an overload whose body folds the batch (batch norm's element
// count): the count grows linearly, not by all 84 ops a level. This test
// instantiates every op of the bundled ResNet-50 training step against the
// standard library (specs/) at batch 32, 16, 8, 4 and 2.
//
//===----------------------------------------------------------------------===//

#include "tofu/Graph/GraphReader.h"
#include "tofu/Graph/SpecLibrary.h"
#include "tofu/Support/Diagnostics.h"
#include "tofu/TDL/ExprWalk.h"
#include "tofu/TDL/Printers.h"

#include "llvm/Support/SourceMgr.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <random>
#include <set>

using namespace tofu;
using namespace tofu::graph;

namespace {

/// True if `op` calls dim() in its body or extents (not just its guard).
bool foldsDim(const tdl::OpDecl *op) {
  bool found = false;
  auto visit = [&](const tdl::Expr &e) {
    if (auto *call = dyn_cast<tdl::CallExpr>(&e))
      found |= call->getBuiltin() == tdl::Builtin::Dim;
  };
  tdl::walkExpr(op->getBody(), visit);
  for (const tdl::IndexVarDecl *var : op->getIndexVars())
    if (const tdl::Expr *extent = var->getExtentExpr())
      tdl::walkExpr(*extent, visit);
  return found;
}

/// The standard library (specs/), checked.
class InstanceCountTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(specs.addDirectory(TOFU_SOURCE_DIR "/specs", diags));
    ASSERT_TRUE(specs.check(diags));
  }
  llvm::SourceMgr srcMgr;
  DiagnosticEngine diags{srcMgr};
  SpecLibrary specs;
};

TEST_F(InstanceCountTest, HalvingTheBatchMakesInstancesOnlyWhereABodyFoldsIt) {
  std::unique_ptr<Graph> g =
      readGraphFile(TOFU_SOURCE_DIR "/models/resnet50.json", diags);
  ASSERT_TRUE(g);
  const int64_t batch = g->getTensor(g->getOps().front().inputs[0].index).shape[0];
  ASSERT_EQ(batch, 32);
  std::set<std::string> types;
  std::set<const tdl::Instance *> seen;
  std::set<std::string> batchDependent;
  unsigned atFullBatch = 0, perLevel = 0;
  for (int64_t level = 0, b = batch; level != 5; ++level, b /= 2) {
    for (const Op &op : g->getOps()) {
      types.insert(op.type);
      // The batch dimension (dimension 0 of extent 32) is halved.
      SmallVector<Shape, 4> inputs;
      for (const TensorRef &ref : op.inputs) {
        inputs.push_back(g->getTensor(ref.index).shape);
        if (!inputs.back().empty() && inputs.back()[0] == batch)
          inputs.back()[0] = b;
      }
      unsigned outputRank = g->getTensor(op.getOutput()).shape.size();
      auto instance = specs.instantiate(op.type, inputs, op.params, outputRank);
      ASSERT_TRUE(bool(instance)) << op.name << " at batch " << b << ": "
                                  << toString(instance.takeError());
      if (!seen.insert(*instance).second || level < 2)
        continue;
      EXPECT_TRUE(foldsDim((*instance)->generic))
          << op.type << " made a new instance at batch " << b;
      batchDependent.insert(op.type);
    }
    unsigned count = specs.getNumInstances();
    std::printf("batch %lld: %u instances for %zu op types\n", (long long)b,
                count, types.size());
    if (level == 0)
      atFullBatch = count;
    // Each level adds at most what the first halving did.
    if (level == 1)
      perLevel = count - atFullBatch;
    EXPECT_LE(count, atFullBatch + level * perLevel);
  }
  for (const std::string &type : batchDependent)
    std::printf("  folds the batch into its body: %s\n", type.c_str());
  // Far fewer instances than ops: uses differing only in extents share.
  EXPECT_LT(atFullBatch, g->getOps().size() / 4);
  EXPECT_LT(perLevel, atFullBatch / 2);
}

/// The checked IR of an instance, or its error.
std::string describe(llvm::Expected<const tdl::Instance *> instance) {
  if (!instance)
    return "error: " + toString(instance.takeError());
  std::string text;
  llvm::raw_string_ostream os(text);
  tdl::printIR(os, *(*instance)->op);
  return os.str();
}

/// Over the whole standard library, at random ranks, extents 1-4 (keys
/// collide often) and params -1..3, the memo returns what a fresh
/// Instantiator makes: the key misses nothing an instance depends on.
TEST_F(InstanceCountTest, MemoAgreesWithFreshInstantiationOnTheLibrary) {
  tdl::Instantiator memo(specs.getModule());
  std::mt19937 rng(3);
  auto rand = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  unsigned made = 0;
  for (const auto &op : specs.getModule().getOps())
    for (unsigned trial = 0; trial != 12; ++trial) {
      SmallVector<Shape, 4> shapes;
      for (const auto &t : op->getTensors()) {
        int rank = t->isRankPolymorphic() ? t->getNumNamedDims() + rand(0, 2)
                                          : std::max(t->getRank(), 0);
        shapes.emplace_back();
        for (int d = 0; d != rank; ++d)
          shapes.back().push_back(rand(1, 4));
      }
      std::vector<tdl::NamedParamValue> params;
      for (const auto &p : op->getParams())
        params.push_back({p->getName().str(),
                          p->isReal() ? tdl::ParamValue::ofReal(0.5)
                                      : tdl::ParamValue::ofInt(rand(-1, 3))});
      llvm::Optional<unsigned> outputRank;
      if (rand(0, 1))
        outputRank = op->getOutputRank() + (op->getEllipsisVar() ? rand(0, 1) : 0);
      std::string memoized =
          describe(memo.instantiate(op->getName(), shapes, params, outputRank));
      made += memoized.rfind("error", 0) != 0;
      tdl::Instantiator fresh(specs.getModule());
      EXPECT_EQ(memoized, describe(fresh.instantiate(op->getName(), shapes,
                                                     params, outputRank)))
          << op->getName().str();
    }
  EXPECT_GT(made, 200u);
}

} // namespace

//===- InstantiateTest.cpp - Overloads, ellipses, broadcasting, memo ------===//

#include "TDLTestUtils.h"

#include "tofu/TDL/Instantiate.h"
#include "tofu/TDL/Printers.h"

#include "gtest/gtest.h"

#include <random>

using namespace tofu;
using namespace tofu::tdl;

namespace {

const char *const library = R"(
op add<alpha: real>(self, other) = lambda ...i: self[...i] + alpha * other[...i];
op relu(x) = lambda ...i: max(x[...i], 0.0);
op softmax<dim>(x) where dim == rank(x) - 1 || dim == -1 =
    lambda ...i, j: exp(x[...i, j]) / Sum(lambda k: exp(x[...i, k]));
op sum_dim<dim_0, keepdim>(x) where rank(x) == 2 && dim_0 == 0 && keepdim == 1 =
    lambda z < 1, j: Sum(lambda k: x[k, j]);
op sum_dim<dim_0, keepdim>(x) where rank(x) == 2 && dim_0 == 1 && keepdim == 0 =
    lambda i: Sum(lambda k: x[i, k]);
op view<size_0>(x) = lambda i < size_0: x[i];
op view<size_0, size_1>(x) = lambda i < size_0, j < size_1: x[i * size_1 + j];
op lastcol(x) = lambda i: x[i, dim(x, -1) - 1] * rank(x);
op matmul(A, B) = lambda i, j: Sum(lambda k: A[i, k] * B[k, j]);
op bernoulli<p: real>() = lambda ...i: opaque;
op expand(x) = lambda ...i: x[...i];
op addv(a, b) where dim(a, 0) == dim(b, 0) = lambda i: a[i] + b[i];
op addv(a, b) where dim(b, 0) == 1 = lambda i: a[i] + b[0];
)";

class InstantiateTest : public ::testing::Test {
protected:
  InstantiateTest() : src(library), instantiator(src.module) {}

  /// Instantiates and returns the instance, failing the test on error.
  const Instance *get(StringRef name, ArrayRef<Shape> shapes,
                      ArrayRef<NamedParamValue> params = {},
                      llvm::Optional<unsigned> outputRank = llvm::None) {
    auto instance = instantiator.instantiate(name, shapes, params, outputRank);
    if (!instance) {
      ADD_FAILURE() << toString(instance.takeError());
      return nullptr;
    }
    return *instance;
  }

  /// Instantiates and returns the error message ("" on success).
  std::string error(StringRef name, ArrayRef<Shape> shapes,
                    ArrayRef<NamedParamValue> params = {},
                    llvm::Optional<unsigned> outputRank = llvm::None) {
    auto instance = instantiator.instantiate(name, shapes, params, outputRank);
    return instance ? "" : toString(instance.takeError());
  }

  static std::string body(const Instance *instance) {
    return instance ? exprToString(instance->op->getBody()) : "";
  }

  ParsedSource src;
  Instantiator instantiator;
};

NamedParamValue intParam(StringRef name, int64_t v) {
  return {name.str(), ParamValue::ofInt(v)};
}

TEST_F(InstantiateTest, LibraryChecks) { ASSERT_TRUE(src.errors.empty()); }

TEST_F(InstantiateTest, PicksOverloadByGuard) {
  const Instance *keep =
      get("sum_dim", {{4, 6}}, {intParam("dim_0", 0), intParam("keepdim", 1)});
  const Instance *drop =
      get("sum_dim", {{4, 6}}, {intParam("keepdim", 0), intParam("dim_0", 1)});
  ASSERT_TRUE(keep && drop);
  EXPECT_EQ(keep->generic, src.module.lookupOverloads("sum_dim")[0]);
  EXPECT_EQ(drop->generic, src.module.lookupOverloads("sum_dim")[1]);
  EXPECT_EQ(keep->op->getOutputRank(), 2u);
  EXPECT_EQ(drop->op->getOutputRank(), 1u);
  // The instance has no guard and its params are ordered by declaration.
  EXPECT_EQ(keep->op->getGuard(), nullptr);
  EXPECT_FALSE(keep->op->isGeneric());
  EXPECT_EQ(drop->intParams, (SmallVector<int64_t, 4>{1, 0}));
}

TEST_F(InstantiateTest, PicksOverloadByParamNames) {
  const Instance *one = get("view", {{12}}, {intParam("size_0", 12)});
  const Instance *two =
      get("view", {{12}}, {intParam("size_1", 4), intParam("size_0", 3)});
  ASSERT_TRUE(one && two);
  EXPECT_EQ(one->op->getOutputRank(), 1u);
  EXPECT_EQ(two->op->getOutputRank(), 2u);
  EXPECT_EQ(two->intParams, (SmallVector<int64_t, 4>{3, 4}));
}

TEST_F(InstantiateTest, PlainOpComesBackAsItself) {
  const Instance *mm = get("matmul", {{4, 5}, {5, 3}});
  ASSERT_TRUE(mm);
  EXPECT_EQ(mm->op, src.module.lookupOp("matmul"));
  EXPECT_EQ(mm->generic, mm->op);
}

TEST_F(InstantiateTest, BroadcastReadsIndexZero) {
  NamedParamValue alpha{"alpha", ParamValue::ofReal(0.5)};
  EXPECT_EQ(body(get("add", {{2, 3}, {1, 3}}, {alpha})),
            "self[i0, i1] + alpha * other[0, i1]");
  // Right-aligned: a rank-1 tensor takes the last position.
  EXPECT_EQ(body(get("add", {{2, 3}, {3}}, {alpha})),
            "self[i0, i1] + alpha * other[i1]");
  // Extent 1 on both sides: no broadcast, the variable indexes both.
  EXPECT_EQ(body(get("add", {{1, 3}, {1, 3}}, {alpha})),
            "self[i0, i1] + alpha * other[i0, i1]");
  const Instance *add = get("add", {{2, 3}, {3}}, {alpha});
  ASSERT_TRUE(add);
  EXPECT_TRUE(add->params[0].isReal);
  EXPECT_EQ(add->params[0].realValue, 0.5);
  EXPECT_EQ(add->intParams[0], 0);
}

TEST_F(InstantiateTest, EllipsisLength) {
  const Instance *relu3 = get("relu", {{2, 3, 4}});
  ASSERT_TRUE(relu3);
  ASSERT_EQ(relu3->op->getOutputRank(), 3u);
  EXPECT_EQ(relu3->op->getOutputVars()[2]->getName(), "i2");
  EXPECT_EQ(relu3->op->getTensors()[0]->getRank(), 3);
  // The output rank, when given, fixes the length.
  const Instance *relu4 = get("relu", {{2, 3, 4}}, {}, 4u);
  ASSERT_TRUE(relu4);
  EXPECT_EQ(body(relu4), "max(x[i1, i2, i3], 0.0)");
  // Named variables follow the ellipsis.
  const Instance *softmax = get("softmax", {{2, 3, 5}}, {intParam("dim", 2)});
  ASSERT_TRUE(softmax);
  ASSERT_EQ(softmax->op->getOutputRank(), 3u);
  EXPECT_EQ(softmax->op->getOutputVars()[2]->getName(), "j");
  EXPECT_EQ(body(softmax),
            "exp(x[i0, i1, j]) / Sum(lambda k: exp(x[i0, i1, k]))");
  // A zero-length ellipsis vanishes.
  EXPECT_EQ(body(get("relu", {{}})), "max(x[], 0.0)");
}

TEST_F(InstantiateTest, KnownOutputShapeBroadcasts) {
  const Shape output = {4, 3};
  auto expanded = instantiator.instantiateForOutput("expand", {{1, 3}}, {},
                                                    output);
  ASSERT_TRUE(bool(expanded)) << toString(expanded.takeError());
  EXPECT_EQ(body(*expanded), "x[0, i1]");
  // Without the output shape only the inputs broadcast.
  EXPECT_EQ(body(get("expand", {{1, 3}}, {}, 2u)), "x[i0, i1]");
  auto wrong = instantiator.instantiateForOutput("expand", {{2, 3}}, {}, output);
  ASSERT_FALSE(bool(wrong));
  EXPECT_EQ(toString(wrong.takeError()),
            "operator 'expand': the shapes of the output (4x3) and 'x' (2x3) "
            "do not broadcast: extents 4 and 2 at position 0 of '...i'");
}

TEST_F(InstantiateTest, FoldsDimAndRank) {
  EXPECT_EQ(body(get("lastcol", {{4, 7}})), "x[i, 7 - 1] * 2");
}

TEST_F(InstantiateTest, OpaqueNeedsOutputRank) {
  NamedParamValue p{"p", ParamValue::ofReal(0.5)};
  const Instance *bern = get("bernoulli", {}, {p}, 2u);
  ASSERT_TRUE(bern);
  EXPECT_TRUE(bern->op->isOpaque());
  EXPECT_EQ(bern->op->getOutputRank(), 2u);
  EXPECT_NE(error("bernoulli", {}, {p}).find("the length of '...i' is unknown"),
            std::string::npos);
}

TEST_F(InstantiateTest, MemoizesByUse) {
  const Instance *a = get("relu", {{2, 3}});
  const Instance *b = get("relu", {{2, 3}});
  const Instance *d = get("relu", {{2, 3}}, {}, 3u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, d);
  EXPECT_EQ(instantiator.getNumInstances(), 2u);
}

TEST_F(InstantiateTest, MemoKeysOnWhatTheInstanceDependsOn) {
  // An extent nothing reads (no dim(), no broadcasting): one instance.
  const Instance *relu = get("relu", {{2, 3}});
  EXPECT_EQ(get("relu", {{16, 3}}), relu);
  EXPECT_EQ(get("relu", {{2, 300}}), relu);
  const Instance *mm = get("matmul", {{4, 5}, {5, 3}});
  EXPECT_EQ(get("matmul", {{2, 7}, {7, 9}}), mm);
  // Params in any order are the same use; a different value is not.
  NamedParamValue dim0 = intParam("dim_0", 1), keep = intParam("keepdim", 0);
  const Instance *sum = get("sum_dim", {{4, 6}}, {dim0, keep});
  EXPECT_EQ(get("sum_dim", {{8, 6}}, {keep, dim0}), sum);
  EXPECT_NE(get("view", {{12}}, {intParam("size_0", 12)}),
            get("view", {{12}}, {intParam("size_0", 6)}));
  // dim(x, -1) is folded into the body: its extent is part of the key,
  // the other one is not.
  const Instance *last7 = get("lastcol", {{4, 7}});
  EXPECT_EQ(body(last7), "x[i, 7 - 1] * 2");
  EXPECT_EQ(get("lastcol", {{9, 7}}), last7);
  const Instance *last8 = get("lastcol", {{4, 8}});
  EXPECT_NE(last8, last7);
  EXPECT_EQ(body(last8), "x[i, 8 - 1] * 2");
  // A guard that only compares dim() values: the outcomes are the key.
  const Instance *same = get("addv", {{4}, {4}});
  EXPECT_EQ(get("addv", {{8}, {8}}), same);
  const Instance *one = get("addv", {{4}, {1}});
  EXPECT_NE(one, same);
  EXPECT_EQ(get("addv", {{9}, {1}}), one);
  EXPECT_NE(error("addv", {{4}, {3}}).find("the guard is false"),
            std::string::npos);
  // Which extents are 1 decides broadcasting.
  NamedParamValue alpha{"alpha", ParamValue::ofReal(0.5)};
  const Instance *bcast = get("add", {{2, 3}, {1, 3}}, {alpha});
  EXPECT_EQ(get("add", {{5, 4}, {1, 4}}, {alpha}), bcast);
  EXPECT_NE(get("add", {{2, 3}, {2, 3}}, {alpha}), bcast);
  // A use with the key of a valid one whose extents do not broadcast still
  // fails.
  EXPECT_NE(error("add", {{2, 3}, {4, 3}}, {alpha})
                .find("do not broadcast: extents 2 and 4 at position 0"),
            std::string::npos);
  auto out = instantiator.instantiateForOutput("expand", {{1, 3}}, {},
                                               Shape{4, 3});
  ASSERT_TRUE(bool(out));
  auto other = instantiator.instantiateForOutput("expand", {{1, 5}}, {},
                                                 Shape{2, 5});
  ASSERT_TRUE(bool(other));
  EXPECT_EQ(*other, *out);
  auto wrong = instantiator.instantiateForOutput("expand", {{1, 5}}, {},
                                                 Shape{2, 4});
  ASSERT_FALSE(bool(wrong));
  EXPECT_NE(toString(wrong.takeError()).find("do not broadcast"),
            std::string::npos);
}

TEST_F(InstantiateTest, ErrorsNameTheOpAndEachReason) {
  EXPECT_EQ(error("nope", {}), "operator 'nope' is not defined");
  std::string noOverload =
      error("sum_dim", {{4, 6}}, {intParam("dim_0", 1), intParam("keepdim", 1)});
  EXPECT_NE(noOverload.find("operator 'sum_dim' has no overload for inputs "
                            "4x6; params dim_0=1, keepdim=1:"),
            std::string::npos)
      << noOverload;
  EXPECT_NE(noOverload.find("keepdim == 1: the guard is false\n  sum_dim"),
            std::string::npos)
      << noOverload;
  EXPECT_NE(error("view", {{12}}, {intParam("size_2", 1)})
                .find("takes params <size_0, size_1> but <size_2> were given"),
            std::string::npos);
  EXPECT_NE(error("matmul", {{4, 5}}).find("takes 2 tensors but 1 were given"),
            std::string::npos);
  EXPECT_NE(error("matmul", {{4, 5}, {5}})
                .find("tensor 'B' has rank 2 but its shape 5 has rank 1"),
            std::string::npos);
  EXPECT_NE(error("view", {{12}}, {{"size_0", ParamValue::ofReal(2.5)}})
                .find("int param 'size_0' was given the non-integral value"),
            std::string::npos);
  EXPECT_NE(error("add", {{2, 3}, {4, 3}}, {{"alpha", ParamValue::ofInt(1)}})
                .find("do not broadcast: extents 2 and 4 at position 0"),
            std::string::npos);
  EXPECT_NE(error("lastcol", {{4}}).find("tensor 'x' has rank 2"),
            std::string::npos);
  EXPECT_NE(error("relu", {{2, 3, 4}}, {}, 2u)
                .find("an input has 3 dimensions for '...i' but the output "
                      "rank 2 leaves it 2"),
            std::string::npos);
  // An integral real is a valid int param.
  EXPECT_EQ(error("view", {{12}}, {{"size_0", ParamValue::ofReal(12.0)}}), "");
}

/// The checked IR of an instance, or its error.
std::string describe(llvm::Expected<const Instance *> instance) {
  if (!instance)
    return "error: " + toString(instance.takeError());
  std::string text;
  llvm::raw_string_ostream os(text);
  printIR(os, *(*instance)->op);
  for (const ParamValue &p : (*instance)->params)
    os << " param " << p.isReal << ":" << p.intValue << ":" << p.realValue;
  return os.str();
}

/// The memo returns for every use what a fresh Instantiator makes: its key
/// misses nothing an instance depends on. Random uses with extents 1-3
/// share keys often.
TEST_F(InstantiateTest, MemoAgreesWithFreshInstantiation) {
  std::mt19937 rng(11);
  auto rand = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  unsigned hits = 0;
  for (const auto &op : src.module.getOps())
    for (unsigned trial = 0; trial != 100; ++trial) {
      SmallVector<Shape, 2> shapes(op->getTensors().size());
      for (Shape &shape : shapes)
        for (int d = rand(1, 3); d > 0; --d)
          shape.push_back(rand(1, 3));
      SmallVector<NamedParamValue, 2> params;
      for (const auto &p : op->getParams())
        params.push_back({p->getName().str(), ParamValue::ofInt(rand(-1, 2))});
      llvm::Optional<unsigned> outputRank;
      if (rand(0, 2) == 0)
        outputRank = rand(1, 3);
      unsigned before = instantiator.getNumInstances();
      std::string memoized = describe(
          instantiator.instantiate(op->getName(), shapes, params, outputRank));
      hits += instantiator.getNumInstances() == before &&
              memoized.rfind("error", 0) != 0;
      Instantiator fresh(src.module);
      EXPECT_EQ(memoized, describe(fresh.instantiate(op->getName(), shapes,
                                                     params, outputRank)))
          << op->getName().str();
    }
  EXPECT_GT(hits, 150u);
}

/// Random uses of every operator (ranks 0-3, extents 1-3, params -1..2,
/// sometimes an output rank) either fail with a message naming the
/// operator or give a concrete, checked instance; none crashes.
TEST_F(InstantiateTest, RandomUsesGiveInstancesOrErrors) {
  std::mt19937 rng(7);
  auto rand = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  unsigned made = 0;
  for (const auto &op : src.module.getOps())
    for (unsigned trial = 0; trial != 200; ++trial) {
      SmallVector<Shape, 2> shapes(op->getTensors().size());
      for (Shape &shape : shapes)
        for (int d = rand(0, 3); d > 0; --d)
          shape.push_back(rand(1, 3));
      SmallVector<NamedParamValue, 2> params;
      for (const auto &p : op->getParams())
        params.push_back({p->getName().str(), ParamValue::ofInt(rand(-1, 2))});
      llvm::Optional<unsigned> outputRank;
      if (rand(0, 3) == 0)
        outputRank = rand(0, 4);
      auto instance =
          instantiator.instantiate(op->getName(), shapes, params, outputRank);
      if (!instance) {
        std::string msg = toString(instance.takeError());
        EXPECT_EQ(msg.rfind("operator '" + op->getName().str() + "'", 0), 0u)
            << msg;
        continue;
      }
      ++made;
      const OpDecl &concrete = *(*instance)->op;
      EXPECT_FALSE(concrete.isGeneric());
      EXPECT_GE(concrete.getIndexVars().size(), concrete.getOutputRank());
      for (const auto &t : concrete.getTensors()) {
        if (t->getRank() >= 0) {
          EXPECT_EQ(unsigned(t->getRank()), shapes[t->getPosition()].size());
        }
      }
      if (outputRank) {
        EXPECT_EQ(concrete.getOutputRank(), *outputRank);
      }
    }
  EXPECT_GT(made, 300u);
}

} // namespace

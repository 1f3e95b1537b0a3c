//===- GraphTest.cpp - Unit tests of the Graph IR -------------------------===//

#include "tofu/Graph/Graph.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace tofu;
using namespace tofu::graph;

namespace {

Tensor makeTensor(StringRef name, Shape shape, Role role,
                  DType dtype = DType::F32) {
  Tensor t;
  t.name = name.str();
  t.shape = shape;
  t.role = role;
  t.roleName = getRoleName(role).str();
  t.dtype = dtype;
  return t;
}

Op makeOp(StringRef name, StringRef type, ArrayRef<StringRef> inputs,
          StringRef output) {
  Op op;
  op.name = name.str();
  op.type = type.str();
  for (StringRef in : inputs)
    op.inputs.push_back({in.str(), -1, SMLoc()});
  op.outputs.push_back({output.str(), -1, SMLoc()});
  return op;
}

TEST(GraphTest, DTypesRoundTrip) {
  for (StringRef name : {"f32", "f16", "bf16", "f64", "i64", "i32", "i8", "bool"}) {
    auto type = lookupDType(name);
    ASSERT_TRUE(type.hasValue()) << name.str();
    EXPECT_EQ(getDTypeName(*type), name);
  }
  EXPECT_FALSE(lookupDType("float32").hasValue());
  EXPECT_EQ(getDTypeSize(DType::BF16), 2u);
  EXPECT_EQ(getDTypeSize(DType::I64), 8u);
  EXPECT_EQ(getDTypeSize(DType::Bool), 1u);
}

TEST(GraphTest, RolesKeepFreeText) {
  EXPECT_EQ(lookupRole("param"), Role::Param);
  EXPECT_EQ(lookupRole("scratch"), Role::Other);
  EXPECT_TRUE(isGraphInputRole(Role::State));
  EXPECT_FALSE(isGraphInputRole(Role::Grad));
  EXPECT_FALSE(isGraphInputRole(Role::Other));
}

TEST(GraphTest, LinkResolvesProducersAndUsers) {
  Graph g;
  g.addTensor(makeTensor("x", {4, 8}, Role::Input));
  g.addTensor(makeTensor("w", {8, 2}, Role::Param));
  g.addTensor(makeTensor("h", {4, 2}, Role::Activation));
  g.addTensor(makeTensor("y", {4, 2}, Role::Output));
  g.addOp(makeOp("h", "mm", {"x", "w"}, "h"));
  g.addOp(makeOp("y", "add", {"h", "h"}, "y"));
  g.addOp(makeOp("bad", "relu", {"nope"}, "y"));
  g.link();
  EXPECT_EQ(g.lookupTensor("w"), 1);
  EXPECT_EQ(g.lookupTensor("nope"), -1);
  EXPECT_EQ(g.lookupOp("y"), 1);
  EXPECT_EQ(g.getProducer(2), 0);
  EXPECT_EQ(g.getProducer(0), -1);
  // The first producer wins; the verifier reports the second.
  EXPECT_EQ(g.getProducer(3), 1);
  ASSERT_EQ(g.getUsers(2).size(), 2u);
  EXPECT_EQ(g.getUsers(2)[0], 1u);
  EXPECT_EQ(g.getOp(2).inputs[0].index, -1);
  EXPECT_EQ(g.getOp(0).getOutput(), 2);
}

std::vector<std::string> opNames(const Graph &g) {
  std::vector<std::string> names;
  for (const Op &op : g.getOps())
    names.push_back(op.name);
  return names;
}

TEST(GraphTest, SortOpsIsStableAndRefusesCycles) {
  // a and c read only inputs, b reads a, d reads b and c: listed d, b, c, a.
  Graph g;
  for (StringRef t : {"x", "a", "b", "c", "d"})
    g.addTensor(makeTensor(t, {2}, t == "x" ? Role::Input : Role::Activation));
  g.addOp(makeOp("d", "add", {"b", "c"}, "d"));
  g.addOp(makeOp("b", "relu", {"a"}, "b"));
  g.addOp(makeOp("c", "relu", {"x"}, "c"));
  g.addOp(makeOp("a", "relu", {"x"}, "a"));
  g.link();
  ASSERT_TRUE(g.sortOps());
  // c was before a in the file and both are ready at once: c stays first.
  EXPECT_EQ(opNames(g), (std::vector<std::string>{"c", "a", "b", "d"}));
  EXPECT_EQ(g.lookupOp("d"), 3);
  EXPECT_EQ(g.getProducer(g.lookupTensor("b")), 2);
  EXPECT_EQ(g.getUsers(g.lookupTensor("c"))[0], 3u);
  // A valid order is kept as it is.
  ASSERT_TRUE(g.sortOps());
  EXPECT_EQ(opNames(g), (std::vector<std::string>{"c", "a", "b", "d"}));

  Graph cyclic;
  for (StringRef t : {"x", "p", "q"})
    cyclic.addTensor(
        makeTensor(t, {2}, t == "x" ? Role::Input : Role::Activation));
  cyclic.addOp(makeOp("q", "add", {"p", "x"}, "q"));
  cyclic.addOp(makeOp("p", "relu", {"q"}, "p"));
  cyclic.link();
  EXPECT_FALSE(cyclic.sortOps());
  EXPECT_EQ(opNames(cyclic), (std::vector<std::string>{"q", "p"}));
  Graph selfLoop;
  selfLoop.addTensor(makeTensor("s", {2}, Role::Activation));
  selfLoop.addOp(makeOp("s", "relu", {"s"}, "s"));
  selfLoop.link();
  EXPECT_FALSE(selfLoop.sortOps());
}

TEST(GraphTest, BytesSaturate) {
  Tensor t = makeTensor("big", {int64_t(1) << 40, int64_t(1) << 40}, Role::Param);
  EXPECT_EQ(t.getNumBytes(), std::numeric_limits<int64_t>::max());
  Tensor s = makeTensor("s", {}, Role::Output, DType::F64);
  EXPECT_EQ(s.getNumBytes(), 8);
  Tensor e = makeTensor("e", {0, 5}, Role::Input);
  EXPECT_EQ(e.getNumBytes(), 0);
}

TEST(GraphTest, ParamValues) {
  EXPECT_EQ(ParamValue::ofInt(3).getAsInteger(), llvm::Optional<int64_t>(3));
  EXPECT_EQ(ParamValue::ofReal(2.0).getAsInteger(), llvm::Optional<int64_t>(2));
  EXPECT_FALSE(ParamValue::ofReal(0.5).getAsInteger().hasValue());
  EXPECT_FALSE(ParamValue::ofReal(INFINITY).getAsInteger().hasValue());
  EXPECT_FALSE(ParamValue::ofReal(1e300).getAsInteger().hasValue());
  EXPECT_EQ(ParamValue::ofReal(NAN), ParamValue::ofReal(NAN));
  EXPECT_NE(ParamValue::ofReal(1.0), ParamValue::ofInt(1));
}

} // namespace

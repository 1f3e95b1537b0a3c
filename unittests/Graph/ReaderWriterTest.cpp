//===- ReaderWriterTest.cpp - Unit tests of the graph reader and writer ---===//

#include "GraphTestUtils.h"

#include "tofu/Graph/GraphWriter.h"
#include "tofu/Support/JSONLocations.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace tofu;
using namespace tofu::graph;

namespace {

const char *const SmallGraph = R"({"format": "tofu-graph", "version": 1,
 "tensors": [
  {"name": "x", "shape": [4, 8], "dtype": "f32", "role": "input"},
  {"name": "y", "shape": [4, 8], "dtype": "i64", "role": "activation", "grad_of": "x"}
 ],
 "ops": [
  {"name": "y", "type": "relu", "inputs": ["x"], "outputs": ["y"],
   "params": {"eps": 1e-05, "n": -3, "up": "inf"}, "group": "y", "aten": "relu.default"}
 ]})";

std::string write(const Graph &g) {
  std::string text;
  llvm::raw_string_ostream os(text);
  writeGraph(os, g);
  return os.str();
}

TEST(ReaderTest, ReadsFieldsAndLocations) {
  Collector c;
  auto g = c.read(SmallGraph);
  ASSERT_TRUE(g) << (c.messages.empty() ? "" : c.messages[0]);
  ASSERT_EQ(g->getNumTensors(), 2u);
  const Tensor &y = g->getTensor(1);
  EXPECT_EQ(y.dtype, DType::I64);
  EXPECT_EQ(y.role, Role::Activation);
  ASSERT_EQ(y.extras.size(), 1u);
  EXPECT_EQ(y.extras[0].key, "grad_of");
  EXPECT_EQ(y.extras[0].json, "\"x\"");
  const Op &op = g->getOp(0);
  ASSERT_EQ(op.params.size(), 3u);
  EXPECT_TRUE(op.params[0].second.isReal);
  EXPECT_DOUBLE_EQ(op.params[0].second.realValue, 1e-5);
  EXPECT_FALSE(op.params[1].second.isReal);
  EXPECT_EQ(op.params[1].second.intValue, -3);
  EXPECT_TRUE(std::isinf(op.params[2].second.realValue));
  EXPECT_TRUE(op.hasGroup);
  EXPECT_EQ(op.getOutput(), 1);
  // Locations point at the values: line 4 column 26 is y's shape.
  auto lineCol = c.srcMgr.getLineAndColumn(y.shapeLoc);
  EXPECT_EQ(lineCol.first, 4u);
  EXPECT_EQ(lineCol.second, 26u);
  lineCol = c.srcMgr.getLineAndColumn(op.inputs[0].loc);
  EXPECT_EQ(lineCol.first, 7u);
  EXPECT_EQ(lineCol.second, 44u);
}

TEST(ReaderTest, ReportsEveryProblemWithItsLocation) {
  Collector c;
  auto g = c.read(R"({"format": "tofu-graph", "version": 1,
 "tensors": [{"name": "x", "shape": [2, 1.5], "dtype": "f99", "role": "input"}],
 "ops": [{"name": "a"}]})");
  EXPECT_FALSE(g);
  ASSERT_EQ(c.messages.size(), 5u);
  EXPECT_EQ(c.messages[0], "2:41: error: tensor 'x': dimension 1 must be an integer, not '1.5'");
  EXPECT_EQ(c.messages[1], "2:56: error: tensor 'x': unknown dtype 'f99' (expected one of f32 f16 bf16 f64 i64 i32 i8 bool)");
  EXPECT_EQ(c.messages[2], "3:10: error: op 'a': missing field 'type'");
}

TEST(ReaderTest, SyntaxErrorsAreLocated) {
  Collector c;
  EXPECT_FALSE(c.read("{\"format\":\n  tofu}"));
  ASSERT_EQ(c.messages.size(), 1u);
  // llvm::json stops at the first character that cannot continue `true`.
  EXPECT_EQ(c.messages[0], "2:5: error: invalid JSON: Invalid JSON value (true?)");
}

TEST(ReaderTest, TextEndingInABackslashInsideAString) {
  // Found by the fuzzer: the nesting check skipped past the end.
  Collector c;
  EXPECT_FALSE(c.read("{\"a\": [\"x\\"));
  ASSERT_EQ(c.messages.size(), 1u);
  EXPECT_EQ(c.messages[0].rfind("1:", 0), 0u) << c.messages[0];
}

TEST(ReaderTest, DeepNestingIsRejectedWithoutRecursing) {
  Collector c;
  std::string deep(100000, '[');
  EXPECT_FALSE(c.read(deep));
  ASSERT_EQ(c.messages.size(), 1u);
  EXPECT_EQ(c.messages[0], "1:65: error: JSON nested deeper than 64 levels");
}

TEST(WriterTest, RoundTripIsStable) {
  Collector c;
  auto g = c.read(SmallGraph);
  ASSERT_TRUE(g);
  std::string once = write(*g);
  auto g2 = c.read(once);
  ASSERT_TRUE(g2);
  EXPECT_EQ(write(*g2), once);
  EXPECT_NE(once.find("\"params\": {\"eps\": 1e-05, \"n\": -3, \"up\": \"inf\"}, "
                      "\"group\": \"y\", \"aten\": \"relu.default\"}"),
            std::string::npos)
      << once;
}

TEST(WriterTest, RealsAreShortestAndPythonLike) {
  EXPECT_EQ(formatReal(0.1), "0.1");
  EXPECT_EQ(formatReal(1.0), "1.0");
  EXPECT_EQ(formatReal(-0.0), "-0.0");
  EXPECT_EQ(formatReal(1e-5), "1e-05");
  EXPECT_EQ(formatReal(0.0001), "0.0001");
  EXPECT_EQ(formatReal(100000.0), "100000.0");
  EXPECT_EQ(formatReal(1e16), "1e+16");
  EXPECT_EQ(formatReal(1.5e300), "1.5e+300");
  EXPECT_EQ(formatReal(123456.789), "123456.789");
  EXPECT_EQ(formatReal(0.1 + 0.2), "0.30000000000000004");
  for (double v : {3.14159, 2.5e-7, 6.02e23, 1.0 / 3, 5e-324})
    EXPECT_EQ(std::strtod(formatReal(v).c_str(), nullptr), v);
}

TEST(WriterTest, StringsAreEscaped) {
  std::string text;
  llvm::raw_string_ostream os(text);
  writeJSONString(os, "a\"b\\c\n\x01");
  EXPECT_EQ(os.str(), "\"a\\\"b\\\\c\\n\\u0001\"");
}

TEST(JSONLocationsTest, CompactKeepsStringsAndOrder) {
  EXPECT_EQ(compactJSON("{ \"b\" :[1 ,2],\n \"a\": \"x , y\" }"),
            "{\"b\": [1, 2], \"a\": \"x , y\"}");
  JSONLocations locs = JSONLocations::scan("{\"k\\u00e9\": [1, {\"a\": 2}]}");
  const auto *member = locs.getMember(locs.getRoot(), "k\xc3\xa9");
  ASSERT_TRUE(member);
  EXPECT_EQ(locs.getText(*member), "[1, {\"a\": 2}]");
  const auto *second = locs.getElement(*member, 1);
  ASSERT_TRUE(second);
  EXPECT_EQ(locs.getText(*locs.getMember(*second, "a")), "2");
  EXPECT_FALSE(locs.findDuplicateKey());
  EXPECT_TRUE(JSONLocations::scan("{\"a\": {\"b\": 1, \"b\": 2}}").findDuplicateKey());
}

// String values are skipped, not decoded: escaped quotes and backslashes,
// \u escapes and a surrogate pair end where the string ends, and the
// members after them are found.
TEST(JSONLocationsTest, StringValuesEndAtTheirClosingQuote) {
  const char *text = R"({"a": "x\"y\\", "b": ["\u0022\"", "\ud83d\ude00,"], "c": 3})";
  JSONLocations locs = JSONLocations::scan(text);
  const auto *a = locs.getMember(locs.getRoot(), "a");
  ASSERT_TRUE(a);
  EXPECT_EQ(locs.getText(*a), R"("x\"y\\")");
  const auto *b = locs.getMember(locs.getRoot(), "b");
  ASSERT_TRUE(b);
  ASSERT_TRUE(locs.getElement(*b, 1));
  EXPECT_EQ(locs.getText(*locs.getElement(*b, 0)), R"("\u0022\"")");
  EXPECT_EQ(locs.getText(*locs.getElement(*b, 1)), R"("\ud83d\ude00,")");
  EXPECT_FALSE(locs.getElement(*b, 2));
  const auto *c = locs.getMember(locs.getRoot(), "c");
  ASSERT_TRUE(c);
  EXPECT_EQ(locs.getText(*c), "3");
}

// The strict check the graph reader runs instead of llvm::json::parse: it
// accepts strict JSON, gives the offset of the first error, and accepts
// nothing llvm::json rejects.
TEST(JSONSyntaxTest, AcceptsStrictJSON) {
  for (const char *text :
       {"{}", "[]", " {\"a\": [1, -2.5e+3, 0, true, false, null]} ",
        "\"x\\u00e9\\n\\\"\"", "[[[{\"k\": {}}]], \"\xc3\xa9\"]", "0.5E-7"}) {
    EXPECT_EQ(findJSONSyntaxError(text), llvm::None) << text;
    EXPECT_TRUE(bool(llvm::json::parse(text))) << text;
  }
}

TEST(JSONSyntaxTest, FindsTheFirstError) {
  struct Case {
    const char *text;
    size_t offset;
  } cases[] = {{"", 0},           {"{\"a\" 1}", 5},  {"[1,]", 3},
               {"[1 2]", 3},      {"{\"a\": 1,}", 8}, {"[01]", 2},
               {"[1.]", 3},       {"[tru]", 1},      {"\"a\tb\"", 2},
               {"\"\\x\"", 2},     {"[1] x", 4},      {"{1: 2}", 1},
               {"[\"\\u12\"]", 6}, {"\"\xff\"", 1}};
  for (const Case &c : cases) {
    EXPECT_EQ(findJSONSyntaxError(c.text), llvm::Optional<size_t>(c.offset))
        << c.text;
  }
  // What llvm::json rejects the check rejects too.
  for (const Case &c : cases) {
    auto parsed = llvm::json::parse(c.text);
    if (!parsed) {
      llvm::consumeError(parsed.takeError());
      EXPECT_TRUE(findJSONSyntaxError(c.text).hasValue()) << c.text;
    }
  }
}

} // namespace

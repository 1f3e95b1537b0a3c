//===- GeneratedPlanTest.cpp - Plans compiled into a program --------------===//
//
// Tests buildExecutablePlan and LinkedPlan on tables written as
// `tofu-plan --emit=cpp` writes them (docs/PlanFormat.md): two workers,
// y = 2 * x split in halves, then loss = Sum(y) as partial sums reduced
// across the workers.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Checkpoint.h"
#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/LinkedPlan.h"
#include "tofu/Runtime/MemoryCheck.h"
#include "tofu/Runtime/Npz.h"

#include "gtest/gtest.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace tofu::runtime;

namespace {

/// y[i] = 2 * x[i] over the iteration box.
void twice(const KernelCall &call) {
  const float *x = static_cast<const float *>(call.inputs[0].data);
  float *y = static_cast<float *>(call.output.data);
  for (std::int64_t i = call.varLo[0]; i < call.varHi[0]; ++i)
    y[i - call.output.lo[0]] = 2 * x[i - call.inputs[0].lo[0]];
}

/// loss = Sum_i y[i] over the box of i.
void sum(const KernelCall &call) {
  const float *y = static_cast<const float *>(call.inputs[0].data);
  float total = 0;
  for (std::int64_t i = call.varLo[0]; i < call.varHi[0]; ++i)
    total += y[i - call.inputs[0].lo[0]];
  *static_cast<float *>(call.output.data) = total;
}

const char *const iVar[] = {"i"};
const KernelInfo kernels[] = {{"twice", twice, iVar, 1},
                              {"sum", sum, iVar, 1}};

const std::int64_t lowHalf[] = {1, 0, 2}, highHalf[] = {1, 2, 4};
const std::int64_t whole[] = {1, 0, 4}, scalar[] = {0};
const std::int64_t shape4[] = {4}, shape0[] = {0};
const GeneratedBox halves[] = {lowHalf, highHalf};
const GeneratedBox scalars[] = {scalar, scalar};
const GeneratedTensor tensors[] = {
    {"x", "input", ElementType::F32, 1, shape4, true, true, -1, halves},
    {"y", "activation", ElementType::F32, 1, shape4, false, false, -1, halves},
    {"loss", "output", ElementType::F32, 0, shape0, false, true, -1, scalars}};
const unsigned twiceInputs[] = {0}, sumInputs[] = {1};
const GeneratedBox lowIn[] = {lowHalf}, highIn[] = {highHalf};
const GeneratedShare twiceShares[] = {{lowHalf, lowIn, lowHalf},
                                      {highHalf, highIn, highHalf}};
const GeneratedShare sumShares[] = {{lowHalf, lowIn, scalar},
                                    {highHalf, highIn, scalar}};
const GeneratedOp ops[] = {
    {"twice", "mul", 1, twiceInputs, 1, 0, false, Reducer::Sum, twiceShares},
    {"loss", "sum", 1, sumInputs, 2, 1, true, Reducer::Sum, sumShares}};
const std::int64_t peaks[] = {24, 24};

GeneratedPlan makeGenerated() {
  return GeneratedPlan{"test.json", 2, 3, tensors, 2, ops, 8, peaks, 2,
                       kernels};
}

TEST(GeneratedPlanTest, RebuildsTheExecutablePlan) {
  ExecutablePlan plan = buildExecutablePlan(makeGenerated());
  ASSERT_EQ(plan.workers, 2u);
  ASSERT_EQ(plan.tensors.size(), 3u);
  EXPECT_EQ(plan.tensors[0].name, "x");
  EXPECT_TRUE(plan.tensors[0].graphInput);
  EXPECT_EQ(plan.tensors[0].shape, std::vector<std::int64_t>{4});
  ASSERT_TRUE(plan.tensors[0].stored[1].has_value());
  EXPECT_EQ(plan.tensors[0].stored[1]->format(), "[2,4)");
  EXPECT_TRUE(plan.tensors[2].shape.empty());
  ASSERT_EQ(plan.ops.size(), 2u);
  EXPECT_TRUE(plan.ops[1].partial);
  EXPECT_EQ(plan.ops[1].kernel, 1u);
  EXPECT_EQ(plan.ops[1].workers[1].iteration.format(), "[2,4)");
  EXPECT_EQ(plan.ops[1].workers[1].inputs[0].format(), "[2,4)");
  EXPECT_EQ(plan.ops[1].workers[0].output.getRank(), 0u);
  EXPECT_EQ(plan.commBytes, 8);
  EXPECT_EQ(plan.peakBytesPerWorker, (std::vector<std::int64_t>{24, 24}));
  EXPECT_EQ(lookupTensor(makeGenerated(), "y"), 1);
  EXPECT_EQ(lookupTensor(makeGenerated(), "z"), -1);
}

TEST(GeneratedPlanTest, RejectsInconsistentTables) {
  // The second worker's x would lie outside the tensor.
  const std::int64_t outside[] = {1, 2, 6};
  const GeneratedBox bad[] = {lowHalf, outside};
  GeneratedTensor badTensors[] = {tensors[0], tensors[1], tensors[2]};
  badTensors[0].stored = bad;
  GeneratedPlan generated = makeGenerated();
  generated.tensors = badTensors;
  EXPECT_THROW(buildExecutablePlan(generated), RuntimeError);
}

TEST(GeneratedPlanTest, LinkedPlanRunsAStep) {
  GeneratedPlan generated = makeGenerated();
  LinkedPlan linked(generated);
  EXPECT_EQ(linked.getLoss(), 2u);
  EXPECT_EQ(linked.getTensorsOfRole("input"), std::vector<unsigned>{0});
  linked.setInput("x", std::vector<float>{1, 2, 3, 4});
  StepResult result = linked.runStep();
  EXPECT_EQ(linked.getLossValue(), 20.0);
  // The partial sum one worker sends the other, and the result back.
  EXPECT_EQ(result.movedBytes, 8);
  EXPECT_EQ(linked.gatherFloats("x"), (std::vector<float>{1, 2, 3, 4}));
}

TEST(GeneratedPlanTest, AScalarThatUpdatesStateIsNoLoss) {
  // As Adam's next step count: a scalar output that updates a state.
  GeneratedTensor stepTensors[] = {
      tensors[0], tensors[1], tensors[2],
      {"count", "state", ElementType::F32, 0, shape0, true, true, -1,
       scalars}};
  stepTensors[2].updates = 3;
  GeneratedPlan generated = makeGenerated();
  generated.tensors = stepTensors;
  generated.numTensors = 4;
  LinkedPlan linked(generated);
  try {
    linked.getLoss();
    FAIL() << "an updating scalar taken for the loss";
  } catch (const RuntimeError &e) {
    EXPECT_STREQ(e.what(), "the graph has no scalar floating-point output");
  }
  // One that updates a tensor of another shape is refused, not run.
  stepTensors[2].updates = 0;
  try {
    LinkedPlan bad(generated);
    FAIL() << "no error for an update of another shape";
  } catch (const RuntimeError &e) {
    EXPECT_STREQ(e.what(),
                 "tensor 'loss' updates 'x', which is not of its type and shape");
  }
}

TEST(GeneratedPlanTest, LinkedPlanRefusesAPlanLargerThanTheMemory) {
  GeneratedPlan generated = makeGenerated();
  LinkOptions options;
  options.availableMemory = 40; // the two workers' peaks are 24 bytes each
  try {
    LinkedPlan linked(generated, std::move(options));
    FAIL() << "no error for a plan larger than the memory";
  } catch (const RuntimeError &e) {
    EXPECT_STREQ(e.what(),
                 "the plan of 'test.json': not enough memory: the plan's peak "
                 "is up to 24 bytes per worker; 2 workers in this process need "
                 "48 bytes, but 40 are available "
                 "(LinkOptions::availableMemory); it would fit with a peak of "
                 "at most 20 bytes per worker (tofu-plan --peak-memory 20), or "
                 "with more workers");
  }
  LinkOptions enough;
  enough.availableMemory = 48;
  LinkedPlan linked(generated, std::move(enough));
  EXPECT_EQ(linked.getNumWorkers(), 2u);
  EXPECT_EQ(parseMemAvailable("MemTotal: 10 kB\nMemAvailable:   24 kB\n"),
            std::optional<std::int64_t>(24 * 1024));
  EXPECT_EQ(parseMemAvailable("MemAvailable: 24 MB\n"), std::nullopt);
}

TEST(GeneratedPlanTest, LinkedPlanNamesWhatIsWrong) {
  GeneratedPlan generated = makeGenerated();
  LinkedPlan linked(generated);
  try {
    linked.getTensor("z");
    FAIL() << "no error for a missing tensor";
  } catch (const RuntimeError &e) {
    EXPECT_STREQ(e.what(), "the plan of 'test.json' has no tensor 'z'");
  }
  try {
    linked.setInput("x", std::vector<float>{1, 2, 3});
    FAIL() << "no error for a wrong element count";
  } catch (const RuntimeError &e) {
    EXPECT_STREQ(e.what(), "tensor 'x' has 4 elements, got 3");
  }
  try {
    linked.setInput("x", std::vector<std::int64_t>{1, 2, 3, 4});
    FAIL() << "no error for a wrong element type";
  } catch (const RuntimeError &e) {
    EXPECT_STREQ(e.what(), "tensor 'x' is f32, not i64");
  }
}

HostTensor floats(std::vector<std::int64_t> shape, std::vector<float> values) {
  HostTensor tensor{ElementType::F32, std::move(shape), {}};
  tensor.data.resize(values.size() * sizeof(float));
  std::memcpy(tensor.data.data(), values.data(), tensor.data.size());
  return tensor;
}

std::vector<float> toFloats(const HostTensor &tensor) {
  std::vector<float> values(tensor.data.size() / sizeof(float));
  std::memcpy(values.data(), tensor.data.data(), tensor.data.size());
  return values;
}

/// A fresh, empty directory for one test.
std::filesystem::path makeTestDirectory(const std::string &name) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("tofu-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(GeneratedPlanTest, LinkedPlanTakesAndGivesShards) {
  GeneratedPlan generated = makeGenerated();
  LinkedPlan linked(generated);
  unsigned x = linked.getTensor("x");
  ASSERT_TRUE(linked.getStoredBox(x, 1).has_value());
  EXPECT_EQ(linked.getStoredBox(x, 1)->format(), "[2,4)");
  EXPECT_EQ(linked.getPersistentTensors(), std::vector<unsigned>{x});
  linked.setShard(x, 0, floats({2}, {1, 2}));
  linked.setShard(x, 1, floats({2}, {3, 4}));
  linked.runStep();
  EXPECT_EQ(linked.getLossValue(), 20.0);
  EXPECT_EQ(toFloats(linked.getShard(x, 1)), (std::vector<float>{3, 4}));
  // A shard replaces only its worker's box; a whole value replaces both.
  linked.setShard(x, 1, floats({2}, {10, 10}));
  linked.runStep();
  EXPECT_EQ(linked.getLossValue(), 46.0);
  linked.setInput("x", std::vector<float>{0, 0, 0, 1});
  linked.runStep();
  EXPECT_EQ(linked.getLossValue(), 2.0);
  try {
    linked.setShard(x, 1, floats({3}, {1, 2, 3}));
    FAIL() << "no error for a shard of the wrong shape";
  } catch (const RuntimeError &e) {
    EXPECT_STREQ(e.what(),
                 "tensor 'x': worker 1's shard [2,4) needs f32 [0,2), got "
                 "f32 [0,3)");
  }
  EXPECT_THROW(linked.setShard(linked.getTensor("y"), 0, floats({2}, {1, 2})),
               RuntimeError);
}

TEST(GeneratedPlanTest, CheckpointsRestoreAndRejectOtherGraphs) {
  std::filesystem::path dir = makeTestDirectory("checkpoint");
  GeneratedPlan generated = makeGenerated();
  {
    LinkedPlan linked(generated);
    linked.setInput("x", std::vector<float>{1, 2, 3, 4});
    linked.runStep();
    saveCheckpoint(linked, dir.string(), 7);
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "step-00000007" / "manifest.json"));
  EXPECT_TRUE(std::filesystem::exists(dir / "step-00000007" / "worker-1.bin"));
  EXPECT_FALSE(std::filesystem::exists(dir / "step-00000007.tmp"));
  {
    std::ifstream latest(dir / "latest");
    std::string name;
    latest >> name;
    EXPECT_EQ(name, "step-00000007");
  }
  LinkedPlan restored(generated);
  EXPECT_EQ(loadCheckpoint(restored, dir.string()), 7);
  restored.runStep();
  EXPECT_EQ(restored.getLossValue(), 20.0);

  // A shard file cut short, then a manifest of another graph.
  std::filesystem::resize_file(dir / "step-00000007" / "worker-1.bin", 4);
  try {
    loadCheckpoint(restored, dir.string());
    FAIL() << "no error for a truncated shard";
  } catch (const RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("is cut short: 4 bytes"),
              std::string::npos)
        << e.what();
  }
  std::ofstream(dir / "step-00000007" / "manifest.json")
      << "{\"format\": \"tofu-checkpoint\", \"version\": 1, \"graph\": "
         "\"other.json\", \"workers\": 1, \"step\": 3, \"tensors\": [{\"name\": "
         "\"w\", \"dtype\": \"f32\", \"shape\": [4], \"shards\": []}]}";
  try {
    loadCheckpoint(restored, dir.string());
    FAIL() << "no error for another graph's checkpoint";
  } catch (const RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("(graph 'other.json') is not one of "
                                         "this plan's graph 'test.json': it "
                                         "has no tensor 'x'"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(GeneratedPlanTest, NpzArchivesRoundTrip) {
  std::filesystem::path dir = makeTestDirectory("npz");
  HostTensor matrix = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor scalar{ElementType::I64, {}, Bytes(8, 0)};
  scalar.data[0] = 42;
  std::string path = (dir / "a.npz").string();
  writeNpz(path, {{"m", matrix}, {"s.t", scalar}});
  std::vector<NamedArray> arrays = readNpz(path);
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_EQ(arrays[0].first, "m");
  EXPECT_EQ(arrays[0].second.shape, matrix.shape);
  EXPECT_EQ(arrays[0].second.data, matrix.data);
  EXPECT_EQ(arrays[1].first, "s.t");
  EXPECT_EQ(arrays[1].second.type, ElementType::I64);
  EXPECT_TRUE(arrays[1].second.shape.empty());
  EXPECT_EQ(arrays[1].second.data, scalar.data);
  Bytes npy = encodeNpy(matrix);
  EXPECT_EQ(npy.size(), 128u + 24);
  EXPECT_EQ(std::string(npy.begin() + 10, npy.begin() + 69),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  EXPECT_EQ(npy[127], '\n'); // the data starts at a multiple of 64

  GeneratedPlan generated = makeGenerated();
  LinkedPlan linked(generated);
  writeNpz(path, {{"x", floats({4}, {1, 2, 3, 4})}});
  EXPECT_TRUE(loadNpz(linked, path).empty());
  linked.runStep();
  EXPECT_EQ(linked.getLossValue(), 20.0);
  saveNpz(linked, (dir / "out.npz").string());
  std::vector<NamedArray> saved = readNpz((dir / "out.npz").string());
  ASSERT_EQ(saved.size(), 0u); // the test graph has no role "param"
  writeNpz(path, {{"x", floats({2, 2}, {1, 2, 3, 4})}});
  EXPECT_THROW(loadNpz(linked, path), RuntimeError);
  // A damaged member fails its CRC.
  writeNpz(path, {{"x", floats({4}, {1, 2, 3, 4})}});
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(140);
    file.put('\x7f');
  }
  EXPECT_THROW(readNpz(path), RuntimeError);
  std::filesystem::remove_all(dir);
}

} // namespace

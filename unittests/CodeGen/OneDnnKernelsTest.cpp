//===- OneDnnKernelsTest.cpp - oneDNN against the generated kernels -------===//
//
// Checks the CPU runtime's oneDNN path (runtime/OneDnnKernels.h) on
// ResNet-18's graph: for each distinct kernel the generator describes as a
// library problem (forward convolutions, their input and weight gradients,
// batch norms, the max pooling), OneDnnKernels::run writes what the
// generated C++ kernel writes over the whole iteration box and over a box
// of one image, two channels and the first rows, with every input and the
// output stored as whole tensors (so oneDNN reads and writes strided
// windows of larger boxes); it computes every whole box and declines what
// is not one library problem. Built only with oneDNN.
//
//===----------------------------------------------------------------------===//

#include "tofu/CodeGen/GraphKernels.h"
#include "tofu/Runtime/OneDnnKernels.h"
#include "DeviceTestUtils.h"

#include <set>

using namespace tofu;
using namespace tofu::codegen;
using namespace tofu::runtime;
using namespace tofu::testing;

namespace {

TEST(OneDnnKernelsTest, ResNetProblemsAgreeWithTheCppKernels) {
  TestGraph tg;
  tg.loadFile(TOFU_SOURCE_DIR "/models/resnet18.json");
  ASSERT_TRUE(tg.graph);
  const graph::Graph &g = *tg.graph;
  auto unit = emitGraphKernels(g, tg.specs);
  ASSERT_TRUE(bool(unit)) << llvm::toString(unit.takeError());
  auto library = KernelCompiler().compile(unit->source);
  ASSERT_TRUE(bool(library)) << llvm::toString(library.takeError());
  llvm::ArrayRef<KernelInfo> table = (*library)->getKernels();
  ASSERT_EQ(table.size(), g.getNumOps());

  // One op per distinct described kernel, described by op index.
  LibraryProblems problems;
  problems.convs.resize(g.getNumOps());
  problems.batchNorms.resize(g.getNumOps());
  problems.poolings.resize(g.getNumOps());
  std::vector<unsigned> ops;
  std::set<int> seen;
  for (unsigned op = 0; op != g.getNumOps(); ++op) {
    int k = unit->opKernel[op];
    if (k < 0 || !seen.insert(k).second)
      continue;
    const GeneratedKernel &kernel = unit->kernels[k];
    if (kernel.conv)
      problems.convs[op] = *kernel.conv;
    else if (kernel.batchNorm)
      problems.batchNorms[op] = *kernel.batchNorm;
    else if (kernel.pooling)
      problems.poolings[op] = *kernel.pooling;
    else
      continue;
    ops.push_back(op);
  }
  OneDnnKernels oneDnn(problems, 1);
  ASSERT_EQ(oneDnn.getNumDescribed(), ops.size());

  std::mt19937_64 rng(19);
  unsigned whole = 0, part = 0, declined = 0;
  for (unsigned op : ops) {
    const GeneratedKernel &kernel = unit->kernels[unit->opKernel[op]];
    const graph::Op &o = g.getOp(op);
    std::vector<TestBox> inputs;
    for (const graph::TensorRef &in : o.inputs) {
      const graph::Tensor &t = g.getTensor(in.index);
      inputs.push_back(makeBox(ElementType::F32,
                               std::vector<std::int64_t>(t.shape.size(), 0),
                               std::vector<std::int64_t>(t.shape.begin(),
                                                         t.shape.end()),
                               rng));
      // Values in [0, 1): the weight gradients sum 32768 products, whose
      // f32 sums would otherwise cancel to values a few units of rounding
      // apart in any two summation orders.
      for (float &v : inputs.back().f32)
        v = std::abs(v);
    }
    std::vector<BoxView> views;
    for (TestBox &box : inputs)
      views.push_back(box.view());
    const graph::Tensor &out = g.getTensor(o.outputs[0].index);
    TestBox output = makeBox(
        ElementType::F32, std::vector<std::int64_t>(out.shape.size(), 0),
        std::vector<std::int64_t>(out.shape.begin(), out.shape.end()), rng);
    for (unsigned box = 0; box != 2; ++box) {
      std::vector<std::int64_t> lo(kernel.varExtents.size(), 0),
          hi(kernel.varExtents.begin(), kernel.varExtents.end());
      if (box == 1) {
        // One image (or filter), two channels, the first half of the rows.
        hi[0] = 1;
        lo[1] = std::min<std::int64_t>(1, hi[1] - 1);
        hi[1] = std::min<std::int64_t>(lo[1] + 2, hi[1]);
        if (out.shape.size() == 4)
          hi[2] = std::max<std::int64_t>(1, hi[2] / 2);
      }
      KernelCall call{views.data(), unsigned(views.size()), {}, lo.data(),
                      hi.data()};
      bool ran = false;
      EXPECT_TRUE(agreeOnBox(
          table[op].fn, call, output,
          [&](const KernelCall &c) { return oneDnn.run(op, c); }, ran))
          << o.name << " (" << o.type << ") box " << box;
      if (box == 0) {
        EXPECT_TRUE(ran) << o.name << ": the whole box is one problem";
      }
      ++(ran ? (box ? part : whole) : declined);
    }
  }
  OneDnnCounts counts = oneDnn.getCounts();
  EXPECT_EQ(whole, ops.size());
  EXPECT_GE(part, 1u);
  EXPECT_EQ(counts.total(), whole + part);
  EXPECT_EQ(counts.fallbacks, declined);
  // ResNet-18 has each kind: the stem and 3x3 convolutions of both
  // strides, their gradients, batch norms, the max pooling.
  EXPECT_GE(counts.convForward, 4u);
  EXPECT_GE(counts.convBackwardData, 4u);
  EXPECT_GE(counts.convBackwardFilter, 4u);
  EXPECT_GE(counts.batchNorm, 4u);
  EXPECT_GE(counts.pooling, 1u);
}

} // namespace

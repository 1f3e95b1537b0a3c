// Links two plans of one graph emitted by tofu-plan --emit=cpp (namespaces
// one and two), runs training steps of each on the same inputs and prints
// what they hold and the losses (test/Plan/emit.test).
#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/LinkedPlan.h"

#include <cmath>
#include <cstdio>
#include <random>

TOFU_DECLARE_PLAN(one)
TOFU_DECLARE_PLAN(two)

using namespace tofu::runtime;

/// Sets every graph input of `linked` from a generator seeded alike.
static void setInputs(LinkedPlan &linked) {
  std::mt19937 rng(7);
  const GeneratedPlan &g = linked.getGenerated();
  for (unsigned t = 0; t != g.numTensors; ++t) {
    const GeneratedTensor &tensor = g.tensors[t];
    if (!tensor.graphInput)
      continue;
    std::size_t n = 1;
    for (unsigned d = 0; d != tensor.rank; ++d)
      n *= tensor.shape[d];
    if (tensor.type == ElementType::I64) {
      std::vector<std::int64_t> values(n);
      for (auto &v : values)
        v = rng() % 10;
      linked.setInput(tensor.name, values);
    } else {
      std::uniform_real_distribution<float> dist(-0.05f, 0.05f);
      std::vector<float> values(n);
      for (auto &v : values)
        v = dist(rng);
      linked.setInput(tensor.name, values);
    }
  }
}

int main() {
  try {
    LinkedPlan a(one::getGeneratedPlan()), b(two::getGeneratedPlan());
    const GeneratedPlan &g = b.getGenerated();
    std::printf("graph %s workers %u ops %u tensors %u kernels %u\n",
                g.graphName, g.workers, g.numOps, g.numTensors, g.numKernels);
    std::printf("loss %s params %zu\n", g.tensors[b.getLoss()].name,
                b.getTensorsOfRole("param").size());
    setInputs(a);
    setInputs(b);
    double worst = 0;
    for (unsigned step = 0; step != 3; ++step) {
      StepResult moved = b.runStep();
      a.runStep();
      double la = a.getLossValue(), lb = b.getLossValue();
      worst = std::fmax(worst, std::fabs(la - lb));
      std::printf("step %u loss %.5f %.5f moved %s\n", step, la, lb,
                  moved.movedBytes == g.commBytes ? "comm_bytes" : "other");
    }
    std::printf("%s\n", worst < 1e-4 ? "same losses" : "losses differ");
    b.getTensor("no such tensor");
  } catch (const RuntimeError &e) {
    std::printf("error: %s\n", e.what());
  }
}

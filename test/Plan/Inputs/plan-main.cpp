// Links with a plan emitted by tofu-plan --emit=cpp and prints what it holds
// (test/Plan/emit.test).
#include <cstdint>
#include <cstdio>

namespace tofu {
namespace generated {
struct PlanRange { std::int64_t lo, hi; };
struct PlanOp { const char *name; const char *const *steps; };
struct PlanTensor {
  const char *name;
  unsigned rank;
  const PlanRange *regions;
  const bool *has;
};
struct Plan {
  unsigned workers, numLevels;
  const unsigned *levels;
  std::int64_t commBytes;
  unsigned numOps;
  const PlanOp *ops;
  unsigned numTensors;
  const PlanTensor *tensors;
};
const Plan &plan();
} // namespace generated
} // namespace tofu

int main() {
  const tofu::generated::Plan &p = tofu::generated::plan();
  const tofu::generated::PlanTensor &t = p.tensors[0];
  std::printf("workers %u ops %u tensors %u\n", p.workers, p.numOps,
              p.numTensors);
  std::printf("op %s step %s\n", p.ops[0].name, p.ops[0].steps[0]);
  std::printf("tensor %s worker 1 dim 0 [%lld, %lld)\n", t.name,
              (long long)t.regions[t.rank].lo, (long long)t.regions[t.rank].hi);
}

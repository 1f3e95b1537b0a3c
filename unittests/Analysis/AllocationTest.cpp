//===- AllocationTest.cpp - The planner's hot path does not allocate ------===//
//
// The planner computes regions thousands of times per plan, for operators
// with many inputs (batch norm has five) and for worker counts that change
// from one recursion level to the next. This test counts heap allocations
// by interposing malloc (LLVM's SmallVector grows with malloc, not operator
// new; glibc's own allocator does the work, and nothing is counted unless a
// test asks) and checks that, once the caller's vectors have held as many
// workers as they ever will, computing regions allocates nothing. Under
// AddressSanitizer, which owns malloc, the test is skipped.
//
//===----------------------------------------------------------------------===//

#include "AnalysisTestUtils.h"

#include <atomic>
#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define TOFU_COUNT_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define TOFU_COUNT_MALLOC 0
#endif
#endif
#ifndef TOFU_COUNT_MALLOC
#define TOFU_COUNT_MALLOC 1
#endif

namespace {
std::atomic<bool> counting{false};
std::atomic<unsigned> allocations{0};
} // namespace

#if TOFU_COUNT_MALLOC
extern "C" {
void *__libc_malloc(std::size_t);
void *__libc_calloc(std::size_t, std::size_t);
void *__libc_realloc(void *, std::size_t);
void __libc_free(void *);

void *malloc(std::size_t size) {
  if (counting.load(std::memory_order_relaxed))
    ++allocations;
  return __libc_malloc(size);
}
void *calloc(std::size_t n, std::size_t size) {
  if (counting.load(std::memory_order_relaxed))
    ++allocations;
  return __libc_calloc(n, size);
}
void *realloc(void *p, std::size_t size) {
  if (counting.load(std::memory_order_relaxed))
    ++allocations;
  return __libc_realloc(p, size);
}
void free(void *p) { __libc_free(p); }
}
#endif

using namespace tofu;
using namespace tofu::analysis;

namespace {

/// Keeps the compiler from removing an allocation.
void escape(void *p) { asm volatile("" : : "g"(p) : "memory"); }

/// Counts the heap allocations `fn` makes.
template <typename Fn> unsigned countAllocations(Fn fn) {
  allocations = 0;
  counting = true;
  fn();
  counting = false;
  return allocations;
}

TEST(AllocationTest, RegionsOfFiveInputsForChangingWorkerCountsDoNotAllocate) {
  if (!TOFU_COUNT_MALLOC)
    GTEST_SKIP() << "malloc belongs to the sanitizer";
  // The counter itself works.
  ASSERT_GT(countAllocations([] {
              SmallVector<Range, 1> v(100);
              escape(v.data());
            }),
            0u);
  // Batch norm's five inputs, and nine index variables (more than a small
  // inline box of eight).
  AnalysedOp op(
      "op bn5(x, w, b, m, v) = lambda n, c, h, q: Sum(lambda r < 3, s < 3, t, u, z: "
      "(x[n, c, h + r, q + s] - m[c]) * w[c, t] / v[c, u] + b[c, z]);",
      "bn5");
  Binding binding = op.bind({{8, 16, 10, 10}, {16, 3}, {16, 2}, {16}, {16, 4}},
                            {8, 16, 8, 8});
  ASSERT_EQ(op.analysis->getNumVars(), 9u);
  SmallVector<Range, 8> parts;
  SmallVector<WorkerRegions, 8> workers;
  auto run = [&](unsigned numWorkers) {
    for (const Strategy &s : op.analysis->getStrategies()) {
      splitEvenly(binding.getVarExtent(s.var), numWorkers, parts);
      instantiateStrategy(binding, s, parts, workers);
    }
  };
  // The vectors grow once to the most workers used.
  run(16);
  ASSERT_EQ(workers.size(), 16u);
  EXPECT_EQ(workers[3].inputs.size(), 5u);
  unsigned n = countAllocations([&] {
    for (unsigned numWorkers : {2u, 16u, 3u, 1u, 8u, 16u, 5u})
      run(numWorkers);
  });
  EXPECT_EQ(n, 0u) << "allocations while computing regions";
  // One worker's regions, recomputed in a fresh WorkerRegions.
  SmallVector<Range, 16> box;
  getFullBox(binding, box);
  n = countAllocations([&] {
    WorkerRegions fresh;
    computeWorkerRegions(binding, box, fresh);
  });
  EXPECT_EQ(n, 0u);
}

} // namespace

//===- InputShards.h - Graph inputs' values per local worker ----*- C++ -*-===//
//
// This file declares InputShards, what both executors keep of the graph
// inputs' values (the batch, params and state before their first step):
// per local worker and input, the elements of the box that worker stores,
// and whether the worker has taken them since they were set. A value set
// whole is cut into the local workers' boxes at once, so a process keeps
// only its own shards whichever way the program hands them over.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_INPUTSHARDS_H
#define TOFU_RUNTIME_INPUTSHARDS_H

#include "tofu/Runtime/ExecutablePlan.h"
#include "tofu/Runtime/Transport.h"

#include <functional>
#include <optional>
#include <vector>

namespace tofu {
namespace runtime {

struct HostTensor;

class InputShards {
public:
  /// The graph inputs of `plan`, held for the workers `localWorkers` (by
  /// id) only.
  InputShards(const ExecutablePlan &plan,
              const std::vector<unsigned> &localWorkers);

  /// Sets graph input `tensor` from its whole value (checkInput's checks).
  void setWhole(unsigned tensor, const HostTensor &value);
  /// Sets local worker `worker`'s box of graph input `tensor` from
  /// `values`, its elements in row-major order. Throws RuntimeError for a
  /// tensor that is no graph input, a worker not local or storing nothing
  /// of it, or a wrong number of bytes.
  void setShard(unsigned tensor, unsigned worker, Bytes values);

  /// Calls `take(tensor, box, values)` for each graph input worker
  /// `worker` stores a box of and must take before a step: one it does not
  /// hold now (`held(tensor)` false) or that was set since it last took
  /// it. Throws RuntimeError for one never set.
  void takePending(unsigned worker, const std::function<bool(unsigned)> &held,
                   const std::function<void(unsigned, const Box &,
                                            const Bytes &)> &take);

private:
  const ExecutablePlan &plan;
  /// Per worker id (empty for workers not local), per tensor: the values
  /// of the worker's box, and whether they were set since it took them.
  std::vector<std::vector<std::optional<Bytes>>> values;
  std::vector<std::vector<bool>> fresh;
};

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_INPUTSHARDS_H

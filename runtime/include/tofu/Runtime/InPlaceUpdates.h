//===- InPlaceUpdates.h - Next values written over what they replace -*- C++ -*-===//
//
// This file declares the in-place rule, which both executors (Executor.h,
// DeviceExecutor.h) and the peak prediction (StepMemory.h) follow: the
// next value U of a parameter or optimizer state P (U's `updates` is P) is
// written into P's buffer, as PyTorch's optimizer step writes into
// p.data, where
//  - the plan allows it (ExecutablePlan::inPlaceUpdates),
//  - an op produces U, no op after U's producer reads P (TDL has no
//    aliases: the old value is dead once its last reader ran), and U and P
//    have the same element size;
//  - and, worker by worker, the worker stores both U and P with the same
//    box.
// On such a worker U's producer computes into a workspace buffer, then,
// where it would allocate U's stored box, takes P's buffer as U's and
// delivers into it (a copy). Where instead the producer computes U's stored
// box and reads P, where it reads P's buffer, only at the element it
// writes (its operator reads P at the output's own index:
// OpInfo::pointwise; and so does the op before it, which fusion may run
// block by block inside it), it computes straight into P's buffer: no
// workspace, no copy (writesOverReplaced). After the next
// step's messages (in which it still sends U's pieces to the workers that
// need them) the buffer is P's again, with no new buffer and no copy. Other
// workers allocate U and, after the last op, a new buffer for P's next
// value as before (docs/Runtime.md, "Memory").
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_INPLACEUPDATES_H
#define TOFU_RUNTIME_INPLACEUPDATES_H

#include "tofu/Runtime/ExecutablePlan.h"

#include <functional>
#include <vector>

namespace tofu {
namespace runtime {

/// Per tensor, whether it is a next value that the in-place rule lets a
/// worker write over what it replaces (the worker-independent conditions
/// above); `lastUse` is computeLastUse's and `elementSize(t)` tensor t's
/// element size.
inline std::vector<bool>
getInPlaceCandidates(const ExecutablePlan &plan, const std::vector<int> &lastUse,
                     const std::function<unsigned(unsigned)> &elementSize) {
  std::vector<bool> candidates(plan.tensors.size(), false);
  if (!plan.inPlaceUpdates)
    return candidates;
  std::vector<int> producer(plan.tensors.size(), -1);
  for (unsigned i = 0, e = plan.ops.size(); i != e; ++i)
    producer[plan.ops[i].output] = int(i);
  for (unsigned t = 0, e = plan.tensors.size(); t != e; ++t) {
    int p = plan.tensors[t].updates;
    candidates[t] = p >= 0 && unsigned(p) != t && producer[t] >= 0 &&
                    lastUse[p] <= producer[t] &&
                    elementSize(t) == elementSize(unsigned(p));
  }
  return candidates;
}

/// Whether a worker that stores `param` and `updated` (a candidate's
/// boxes; none: it stores none) writes the update in place: it stores both,
/// with the same box.
inline bool isUpdatedInPlace(const std::optional<Box> &param,
                             const std::optional<Box> &updated) {
  return param && updated && !param->isEmpty() && *param == *updated;
}

/// Per tensor, whether worker `w` of a built plan writes it in place
/// (element sizes from the tensors' types).
inline std::vector<bool> getInPlaceUpdates(const ExecutablePlan &plan,
                                           const std::vector<int> &lastUse,
                                           unsigned w) {
  std::vector<bool> inPlace = getInPlaceCandidates(
      plan, lastUse,
      [&](unsigned t) { return getElementSize(plan.tensors[t].type); });
  for (unsigned t = 0, e = plan.tensors.size(); t != e; ++t)
    if (inPlace[t])
      inPlace[t] = isUpdatedInPlace(
          plan.tensors[plan.tensors[t].updates].stored[w],
          plan.tensors[t].stored[w]);
  return inPlace;
}

/// Whether op `i`, whose output U is a next value, reads what U replaces,
/// P, only at the element it writes where it reads P's buffer:
/// `readsStored(p)` says whether the worker reads input position p (which
/// holds P) where P is stored, as is (readsInPlace); a position read from
/// a copy does not count. Op i - 1, which fusion may run block by block
/// inside op i (Fusion.h), must read P only pointwise wherever it reads it.
template <typename ReadsStoredFn>
bool readsReplacedPointwise(const ExecutablePlan &plan, unsigned i,
                            ReadsStoredFn readsStored) {
  if (!plan.directUpdates)
    return false;
  const OpInfo &op = plan.ops[i];
  int param = plan.tensors[op.output].updates;
  for (unsigned p = 0, e = op.inputs.size(); p != e; ++p)
    if (int(op.inputs[p]) == param && !readsPointwise(op, p) && readsStored(p))
      return false;
  if (i == 0)
    return true;
  const OpInfo &before = plan.ops[i - 1];
  for (unsigned p = 0, e = before.inputs.size(); p != e; ++p)
    if (int(before.inputs[p]) == param && !readsPointwise(before, p))
      return false;
  return true;
}

/// Whether worker `w`'s share of op `i` reads the value it replaces only
/// pointwise (readsReplacedPointwise with `w`'s inputs): writesOverReplaced's
/// last condition.
inline bool readsReplacedInPlace(const ExecutablePlan &plan, unsigned i,
                                 unsigned w) {
  return readsReplacedPointwise(
      plan, i, [&](unsigned p) { return readsInPlace(plan, i, p, w); });
}

/// Where worker `w` computes op `i`'s output, as both executors and the
/// step-time estimate decide it once per op and worker.
struct OutputPlace {
  /// Into the buffer it is delivered in, with no copy: its stored box
  /// (writesInPlace), unless it is a next value written in place that is
  /// not written over what it replaces.
  bool direct;
  /// Into the buffer of what it replaces (writesOverReplaced).
  bool overReplaced;
};

/// Op `i`'s output place on worker `w` (`inPlace`: getInPlaceUpdates').
/// A next value written in place is computed aside and copied unless the
/// worker computes its stored box and reads the replaced value only
/// pointwise.
inline OutputPlace getOutputPlace(const ExecutablePlan &plan, unsigned i,
                                  unsigned w,
                                  const std::vector<bool> &inPlace) {
  bool inBox = writesInPlace(plan, i, w);
  bool updated = inPlace[plan.ops[i].output];
  bool over = inBox && updated && readsReplacedInPlace(plan, i, w);
  return {inBox && (!updated || over), over};
}

/// Whether worker `w` computes op `i`'s output, a next value it writes in
/// place (`inPlace`: getInPlaceUpdates'), straight into the buffer of what
/// it replaces: it computes its stored box (writesInPlace) and reads the
/// replaced value only pointwise (readsReplacedPointwise). Otherwise such
/// a value is computed aside and copied.
inline bool writesOverReplaced(const ExecutablePlan &plan, unsigned i,
                               unsigned w, const std::vector<bool> &inPlace) {
  return getOutputPlace(plan, i, w, inPlace).overReplaced;
}

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_INPLACEUPDATES_H

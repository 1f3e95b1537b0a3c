//===- Schedule.cpp - Who sends which box to whom -------------------------===//
//
// This file implements validatePlan, buildSchedule and getMessages. Every transfer is
// decided per cell of a grid cut at the boundaries of the boxes involved,
// so a cell lies wholly within or outside each stored and computed box and
// the per-element rules of docs/CostModel.md apply to it as a whole:
//  - fetch: a cell of worker w's input box outside what w stores comes from
//    the lowest worker storing it;
//  - deliver (not partial): a destination that did not compute a cell gets
//    it from the lowest worker that did;
//  - partial: the cell's computers send their partial values to a root (the
//    lowest computer that also stores the cell, else the lowest computer),
//    which combines them and sends the result to the other destinations;
//  - next step: a cell of a parameter's stored box the worker does not hold
//    of the update comes from the lowest worker storing the update.
// buildWorkerSchedule applies the same rules to the cells one worker can
// send or receive: those of its own boxes, and of an other worker's box
// intersected with its own.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Schedule.h"
#include "tofu/Runtime/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

using namespace tofu::runtime;
using std::int64_t;

static const Box *getStored(const TensorInfo &t, unsigned w) {
  return t.stored[w] ? &*t.stored[w] : nullptr;
}

static std::vector<const Box *> getStoredBoxes(const TensorInfo &t) {
  std::vector<const Box *> boxes;
  for (unsigned w = 0, e = t.stored.size(); w != e; ++w)
    boxes.push_back(getStored(t, w));
  return boxes;
}

static bool holds(const Box *box, const Box &cell) {
  return box && !box->isEmpty() && box->contains(cell);
}

void tofu::runtime::checkBoxInTensor(const std::string &what, const Box &box,
                                     const std::vector<int64_t> &shape) {
  if (box.getRank() != shape.size())
    throw RuntimeError(fmt::format("{} has rank {} but the tensor has rank {}",
                                   what, box.getRank(), shape.size()));
  if (!box.isEmpty() && !Box::whole(shape).contains(box))
    throw RuntimeError(fmt::format("{} {} lies outside the tensor {}", what,
                                   box.format(), Box::whole(shape).format()));
}

void tofu::runtime::checkBoxesCover(const std::string &what,
                                    const std::vector<const Box *> &boxes,
                                    const std::vector<int64_t> &shape) {
  Box whole = Box::whole(shape);
  if (whole.isEmpty())
    return;
  // The cells of the grid of every box's bounds (forEachCell's cells): each
  // box marks the cells it holds, so a partition among K workers costs K
  // marks, not K cells times K boxes (GPT-3 at K = 1024).
  // A box equal to the one before it adds nothing to the union (workers
  // next to each other often hold one box), and a dimension's bounds equal
  // to the box before's add none.
  unsigned rank = shape.size();
  std::vector<const Box *> distinct;
  distinct.reserve(boxes.size());
  for (const Box *box : boxes)
    if (box && !box->isEmpty() &&
        (distinct.empty() || !(*distinct.back() == *box)))
      distinct.push_back(box);
  std::vector<std::vector<int64_t>> bounds(rank);
  size_t cells = 1;
  for (unsigned d = 0; d != rank; ++d) {
    std::vector<int64_t> &b = bounds[d];
    b = {0, shape[d]};
    const Box *prev = nullptr;
    for (const Box *box : distinct) {
      if (!prev || box->lo[d] != prev->lo[d] || box->hi[d] != prev->hi[d])
        for (int64_t v : {box->lo[d], box->hi[d]})
          if (v > 0 && v < shape[d])
            b.push_back(v);
      prev = box;
    }
    std::sort(b.begin(), b.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
    cells *= b.size() - 1;
  }
  if (cells > (size_t(1) << 26)) { // too many cells for a map: scan them
    forEachCell(whole, boxes, [&](const Box &cell) {
      for (const Box *b : boxes)
        if (holds(b, cell))
          return;
      throw RuntimeError(fmt::format("{} leave {} uncovered", what,
                                     cell.format()));
    });
    return;
  }
  std::vector<bool> covered(cells, false);
  std::vector<size_t> first(rank), last(rank), at(rank);
  const Box *prev = nullptr;
  for (const Box *box : distinct) {
    bool inside = true;
    for (unsigned d = 0; d != rank; ++d) {
      // The box before's range of cells where its bounds are the same.
      if (prev && box->lo[d] == prev->lo[d] && box->hi[d] == prev->hi[d]) {
        inside &= first[d] < last[d];
        continue;
      }
      const std::vector<int64_t> &b = bounds[d];
      int64_t lo = std::max<int64_t>(box->lo[d], 0);
      int64_t hi = std::min<int64_t>(box->hi[d], shape[d]);
      first[d] = std::lower_bound(b.begin(), b.end(), lo) - b.begin();
      last[d] = std::lower_bound(b.begin(), b.end(), hi) - b.begin();
      inside &= first[d] < last[d];
    }
    prev = box;
    if (!inside)
      continue;
    at = first;
    for (;;) {
      size_t cell = 0;
      for (unsigned d = 0; d != rank; ++d)
        cell = cell * (bounds[d].size() - 1) + at[d];
      covered[cell] = true;
      unsigned d = rank;
      while (d-- > 0 && ++at[d] == last[d])
        at[d] = first[d];
      if (d == unsigned(-1))
        break;
    }
  }
  for (size_t cell = 0; cell != cells; ++cell) {
    if (covered[cell])
      continue;
    Box hole = whole;
    size_t rest = cell;
    for (unsigned d = rank; d-- > 0;) {
      size_t n = bounds[d].size() - 1, i = rest % n;
      rest /= n;
      hole.lo[d] = bounds[d][i];
      hole.hi[d] = bounds[d][i + 1];
    }
    throw RuntimeError(fmt::format("{} leave {} uncovered", what,
                                   hole.format()));
  }
}

void tofu::runtime::validatePlan(const ExecutablePlan &plan) {
  unsigned k = plan.workers;
  if (k == 0)
    throw RuntimeError("the plan has no workers");
  for (const TensorInfo &t : plan.tensors) {
    if (t.stored.size() != k)
      throw RuntimeError(fmt::format("tensor '{}' has {} boxes for {} workers",
                                     t.name, t.stored.size(), k));
    for (unsigned w = 0; w != k; ++w)
      if (t.stored[w])
        checkBoxInTensor(
            fmt::format("tensor '{}' stored on worker {}", t.name, w),
            *t.stored[w], t.shape);
    checkBoxesCover(fmt::format("the stored boxes of tensor '{}'", t.name),
                    getStoredBoxes(t), t.shape);
    if (t.updates >= int(plan.tensors.size()))
      throw RuntimeError(fmt::format("tensor '{}' updates no tensor", t.name));
    // A next value moves into its tensor's boxes (in any layout of its
    // own): the same type and shape.
    if (t.updates >= 0) {
      const TensorInfo &old = plan.tensors[t.updates];
      if (old.type != t.type || old.shape != t.shape)
        throw RuntimeError(fmt::format(
            "tensor '{}' updates '{}', which is not of its type and shape",
            t.name, old.name));
    }
  }
  for (const OpInfo &op : plan.ops) {
    if (op.workers.size() != k)
      throw RuntimeError(fmt::format("op '{}' has {} shares for {} workers",
                                     op.name, op.workers.size(), k));
    if (op.output >= plan.tensors.size())
      throw RuntimeError(fmt::format("op '{}' writes no tensor", op.name));
    const TensorInfo &out = plan.tensors[op.output];
    std::vector<const Box *> computed;
    for (unsigned w = 0; w != k; ++w) {
      const OpShare &share = op.workers[w];
      std::string where = fmt::format("op '{}' on worker {}", op.name, w);
      if (share.inputs.size() != op.inputs.size())
        throw RuntimeError(fmt::format("{} reads {} boxes of {} inputs", where,
                                       share.inputs.size(), op.inputs.size()));
      for (unsigned p = 0, e = op.inputs.size(); p != e; ++p) {
        if (op.inputs[p] >= plan.tensors.size())
          throw RuntimeError(fmt::format("op '{}' reads no tensor", op.name));
        checkBoxInTensor(fmt::format("{}: the box of input {}", where, p),
                         share.inputs[p], plan.tensors[op.inputs[p]].shape);
      }
      checkBoxInTensor(where + ": the output box", share.output, out.shape);
      computed.push_back(&share.output);
    }
    checkBoxesCover(fmt::format("the computed boxes of op '{}'", op.name),
                    computed, out.shape);
  }
}

namespace {

/// Builds the schedule op by op: every worker's pieces, or (`only` >= 0)
/// those whose source or destination is worker `only`.
class ScheduleBuilder {
public:
  ScheduleBuilder(const ExecutablePlan &plan, int only)
      : plan(plan), only(only) {}
  Schedule build();

private:
  void addFetches(const OpInfo &op, OpSchedule &ops);
  void addDelivery(const OpInfo &op, OpSchedule &ops);
  void addNextStep(unsigned updated);
  /// The lowest worker whose box in `boxes` holds `cell`, or -1.
  static int findHolder(const std::vector<const Box *> &boxes,
                        const Box &cell) {
    for (unsigned w = 0, e = boxes.size(); w != e; ++w)
      if (holds(boxes[w], cell))
        return w;
    return -1;
  }
  /// Whether the schedule holds a piece from `src` to `dst`.
  bool keeps(unsigned src, unsigned dst) const {
    return only < 0 || int(src) == only || int(dst) == only;
  }
  /// Calls `fn` on the cells of `target` (worker `dst`'s box) cut by
  /// `cuts` that the schedule may hold pieces of: all of them, unless the
  /// schedule is worker `only`'s and `dst` is an other worker; then those
  /// within `mine`, `only`'s box among `cuts` (the only cells it may send
  /// to `dst`), in the same row-major order.
  void forEachCellTo(unsigned dst, const Box &target, const Box *mine,
                     const std::vector<const Box *> &cuts,
                     const std::function<void(const Box &)> &fn) const {
    if (only < 0 || int(dst) == only) {
      forEachCell(target, cuts, fn);
      return;
    }
    if (!mine || mine->isEmpty())
      return;
    Box part = intersect(target, *mine);
    if (!part.isEmpty())
      forEachCell(part, cuts, fn);
  }
  void count(int64_t &bytes, const Piece &piece, unsigned tensor) {
    if (piece.src != piece.dst)
      bytes += piece.box.getVolume() *
               getElementSize(plan.tensors[tensor].type);
  }

  const ExecutablePlan &plan;
  int only;
  Schedule schedule;
};

} // namespace

void ScheduleBuilder::addFetches(const OpInfo &op, OpSchedule &ops) {
  for (unsigned p = 0, e = op.inputs.size(); p != e; ++p) {
    const TensorInfo &t = plan.tensors[op.inputs[p]];
    std::vector<const Box *> stored = getStoredBoxes(t);
    const Box *mine = only < 0 ? nullptr : stored[only];
    for (unsigned w = 0; w != plan.workers; ++w)
      forEachCellTo(w, op.workers[w].inputs[p], mine, stored,
                    [&](const Box &cell) {
                      int src = holds(stored[w], cell)
                                    ? int(w)
                                    : findHolder(stored, cell);
                      if (!keeps(src, w))
                        return;
                      ops.fetch.push_back(Piece{unsigned(src), w, cell, p});
                      count(schedule.fetchBytes, ops.fetch.back(),
                            op.inputs[p]);
                    });
  }
}

void ScheduleBuilder::addDelivery(const OpInfo &op, OpSchedule &ops) {
  const TensorInfo &out = plan.tensors[op.output];
  std::vector<const Box *> stored = getStoredBoxes(out), computed, cuts;
  for (const OpShare &share : op.workers)
    computed.push_back(&share.output);
  cuts = stored;
  cuts.insert(cuts.end(), computed.begin(), computed.end());
  auto addCell = [&](const Box &cell) {
    int first = findHolder(computed, cell);
    int root = first;
    if (op.partial) {
      for (unsigned w = 0; w != plan.workers; ++w)
        if (holds(computed[w], cell) && holds(stored[w], cell)) {
          root = w;
          break;
        }
      for (unsigned w = 0; w != plan.workers; ++w)
        if (int(w) != root && holds(computed[w], cell) && keeps(w, root)) {
          ops.reduce.push_back(Piece{w, unsigned(root), cell});
          count(schedule.reduceBytes, ops.reduce.back(), op.output);
        }
    }
    for (unsigned d = 0; d != plan.workers; ++d) {
      if (!holds(stored[d], cell))
        continue;
      unsigned src = op.partial ? root : holds(computed[d], cell) ? d : first;
      if (!keeps(src, d))
        continue;
      ops.deliver.push_back(Piece{src, d, cell});
      count(schedule.deliverBytes, ops.deliver.back(), op.output);
    }
  };
  if (only < 0) {
    forEachCell(Box::whole(out.shape), cuts, addCell);
    return;
  }
  // Worker `only` sends or receives pieces of the cells it computes or
  // stores: those cells of the whole grid, in its row-major order.
  std::vector<Box> cells;
  const Box *mine = stored[only];
  if (mine)
    forEachCell(*mine, cuts, [&](const Box &cell) { cells.push_back(cell); });
  forEachCell(*computed[only], cuts, [&](const Box &cell) {
    if (!holds(mine, cell))
      cells.push_back(cell);
  });
  std::sort(cells.begin(), cells.end(),
            [](const Box &a, const Box &b) { return a.lo < b.lo; });
  for (const Box &cell : cells)
    addCell(cell);
}

void ScheduleBuilder::addNextStep(unsigned updated) {
  const TensorInfo &o = plan.tensors[updated];
  const TensorInfo &param = plan.tensors[o.updates];
  std::vector<const Box *> stored = getStoredBoxes(o);
  const Box *mine = only < 0 ? nullptr : stored[only];
  for (unsigned w = 0; w != plan.workers; ++w) {
    if (!param.stored[w])
      continue;
    forEachCellTo(w, *param.stored[w], mine, stored, [&](const Box &cell) {
      int src = holds(stored[w], cell) ? int(w) : findHolder(stored, cell);
      if (!keeps(src, w))
        return;
      schedule.nextStep.push_back(Piece{unsigned(src), w, cell, updated});
      count(schedule.nextStepBytes, schedule.nextStep.back(), updated);
    });
  }
}

Schedule ScheduleBuilder::build() {
  schedule.worker = only;
  schedule.ops.resize(plan.ops.size());
  for (unsigned i = 0, e = plan.ops.size(); i != e; ++i) {
    addFetches(plan.ops[i], schedule.ops[i]);
    addDelivery(plan.ops[i], schedule.ops[i]);
  }
  for (unsigned t = 0, e = plan.tensors.size(); t != e; ++t)
    if (plan.tensors[t].updates >= 0)
      addNextStep(t);
  return std::move(schedule);
}

Schedule tofu::runtime::buildSchedule(const ExecutablePlan &plan) {
  return ScheduleBuilder(plan, -1).build();
}

Schedule tofu::runtime::buildWorkerSchedule(const ExecutablePlan &plan,
                                            unsigned worker) {
  if (worker >= plan.workers)
    throw RuntimeError(fmt::format("worker {} is not one of the plan's {}",
                                   worker, plan.workers));
  return ScheduleBuilder(plan, int(worker)).build();
}

std::vector<Message> tofu::runtime::getMessages(
    const std::vector<Piece> &pieces,
    const std::function<unsigned(const Piece &)> &elementSize) {
  std::map<std::pair<unsigned, unsigned>, std::size_t> bytes;
  for (const Piece &piece : pieces)
    if (piece.src != piece.dst)
      bytes[{piece.src, piece.dst}] +=
          std::size_t(piece.box.getVolume()) * elementSize(piece);
  std::vector<Message> messages;
  for (const auto &[pair, size] : bytes)
    messages.push_back(Message{pair.first, pair.second, size});
  return messages;
}

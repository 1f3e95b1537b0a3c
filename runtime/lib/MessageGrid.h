//===- MessageGrid.h - Messages counted on a grid of boxes ------*- C++ -*-===//
//
// This file declares what the peak prediction (StepMemory.cpp) and its
// staging (PhaseStaging.cpp) count messages with, without listing pieces:
// the grid cut at every bound of a set of boxes (Grid), the fetch rule over
// it (FetchGrid: each target cell from the lowest worker storing it), the
// workers holding each cell (CellWorkers), and the fetch, reduce and
// deliver rules' bytes per (source, destination) pair (MessageGrid.cpp).
// Internal to the runtime library.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_LIB_MESSAGEGRID_H
#define TOFU_RUNTIME_LIB_MESSAGEGRID_H

#include "tofu/Runtime/StepMemory.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace tofu {
namespace runtime {
namespace detail {

/// Box::isEmpty without multiplying out the volume (asked about K boxes per
/// op and phase).
inline bool isEmptyBox(const Box &box) {
  for (unsigned d = 0, e = box.getRank(); d != e; ++d)
    if (box.hi[d] <= box.lo[d])
      return true;
  return false;
}

/// Messages as found, in any order and with repeated pairs (toMessages
/// sorts and merges them).
struct PairBytes {
  std::vector<Message> found;
  std::size_t &operator[](std::pair<unsigned, unsigned> pair) {
    found.push_back(Message{pair.first, pair.second, 0});
    return found.back().bytes;
  }
  void clear() { found.clear(); }
};

inline bool holds(const Box *box, const Box &cell) {
  return box && !isEmptyBox(*box) && box->contains(cell);
}

inline int findHolder(const std::vector<const Box *> &boxes, const Box &cell) {
  for (unsigned w = 0, e = boxes.size(); w != e; ++w)
    if (holds(boxes[w], cell))
      return w;
  return -1;
}

/// The grid cut at every bound of a set of boxes: cells are numbered row
/// major, and every box of the set is a block of whole cells.
class Grid {
public:
  /// `bounds` holds the cuts; the caller keeps it, so that its memory
  /// serves grid after grid.
  Grid(const std::vector<const std::vector<const Box *> *> &sets,
       std::size_t maxCells, std::vector<std::vector<int64_t>> &bounds)
      : bounds(bounds), maxCells(maxCells) {
    const Box *first = nullptr;
    for (const auto *set : sets)
      for (const Box *box : *set)
        if (!first && box && !isEmptyBox(*box))
          first = box;
    unsigned rank = first ? first->getRank() : 0;
    bounds.resize(rank);
    for (std::vector<int64_t> &b : bounds)
      b.clear();
    // Neighbouring workers' boxes often share their bounds in a dimension
    // (all of them where it is not split): those are in already.
    const Box *last = nullptr;
    for (const auto *set : sets)
      for (const Box *box : *set) {
        if (!box || isEmptyBox(*box))
          continue;
        for (unsigned d = 0; d != rank; ++d) {
          if (last && box->lo[d] == last->lo[d] && box->hi[d] == last->hi[d])
            continue;
          std::vector<int64_t> &b = bounds[d];
          // A bound just pushed (the previous box's upper bound is often
          // this one's lower bound) is not pushed again.
          if (b.empty() || b.back() != box->lo[d])
            b.push_back(box->lo[d]);
          b.push_back(box->hi[d]);
        }
        last = box;
      }
    stride.assign(rank, 1);
    lastRanges.assign(rank, LastRange{});
    for (unsigned d = rank; d-- > 0;) {
      std::vector<int64_t> &b = bounds[d];
      std::sort(b.begin(), b.end());
      b.erase(std::unique(b.begin(), b.end()), b.end());
      std::size_t n = b.size() - 1;
      if (d > 0)
        stride[d - 1] = stride[d] * n;
      cells = cells > maxCells ? cells : cells * n;
    }
  }
  unsigned getRank() const { return bounds.size(); }
  std::size_t size() const { return cells; }
  bool isTooLarge() const { return cells > maxCells; }

  /// The cells `box` overlaps, per dimension [first, last); false if none.
  /// Callers ask about K boxes in worker order, and neighbouring workers'
  /// boxes mostly share their bounds in a dimension (all of them where it
  /// is not split): a dimension's cells are searched for only when its
  /// bounds differ from the last box's.
  bool getRange(const Box &box, std::vector<std::size_t> &first,
                std::vector<std::size_t> &last) const {
    unsigned rank = getRank();
    first.resize(rank);
    last.resize(rank);
    for (unsigned d = 0; d != rank; ++d) {
      LastRange &m = lastRanges[d];
      if (!m.valid || box.lo[d] != m.lo || box.hi[d] != m.hi) {
        const std::vector<int64_t> &b = bounds[d];
        auto lo = std::upper_bound(b.begin(), b.end(), box.lo[d]);
        m.first = lo == b.begin() ? 0 : lo - b.begin() - 1;
        m.last = std::min<std::size_t>(
            std::lower_bound(b.begin(), b.end(), box.hi[d]) - b.begin(),
            b.size() - 1);
        m.lo = box.lo[d];
        m.hi = box.hi[d];
        m.valid = true;
      }
      first[d] = m.first;
      last[d] = m.last;
      if (first[d] >= last[d])
        return false;
    }
    return true;
  }
  /// Calls fn(cell, at) for each cell of the range (`at`: its index per
  /// dimension).
  template <typename Fn>
  void forEach(const std::vector<std::size_t> &first,
               const std::vector<std::size_t> &last, Fn fn) const {
    unsigned rank = getRank();
    std::vector<std::size_t> at = first;
    for (;;) {
      std::size_t cell = 0;
      for (unsigned d = 0; d != rank; ++d)
        cell += at[d] * stride[d];
      fn(cell, at);
      unsigned d = rank;
      while (d-- > 0 && ++at[d] == last[d])
        at[d] = first[d];
      if (d == unsigned(-1))
        return;
    }
  }
  std::size_t getIntervals(unsigned d) const { return bounds[d].size() - 1; }
  int64_t getLength(unsigned d, std::size_t i) const {
    return bounds[d][i + 1] - bounds[d][i];
  }
  /// The length of cell interval `i` of dimension `d` within [lo, hi).
  int64_t getOverlap(unsigned d, std::size_t i, int64_t lo, int64_t hi) const {
    return std::max<int64_t>(0, std::min(hi, bounds[d][i + 1]) -
                                    std::max(lo, bounds[d][i]));
  }

private:
  std::vector<std::vector<int64_t>> &bounds;
  std::vector<std::size_t> stride;
  std::size_t maxCells;
  std::size_t cells = 1;
  /// Per dimension, getRange's last bounds and their cells.
  struct LastRange {
    bool valid = false;
    int64_t lo = 0, hi = 0;
    std::size_t first = 0, last = 0;
  };
  mutable std::vector<LastRange> lastRanges;
};

/// The fetch (and next-step) rule for one stored tensor: what each target
/// box not stored by its worker receives, from the lowest worker storing
/// each cell. Built once per tensor; targets are then added one at a time
/// (in any order), so that a caller may visit the workers in the outer
/// loop and the inputs in the inner one. Its memory serves tensor after
/// tensor.
class FetchGrid {
public:
  void assign(const std::vector<const Box *> &stored, unsigned elementSize,
              std::size_t maxCells) {
    this->stored = &stored;
    this->elementSize = elementSize;
    grid.emplace(std::vector<const std::vector<const Box *> *>{&stored},
                 maxCells, bounds);
    haveTarget = false;
    if (grid->isTooLarge())
      return;
    lowest.assign(grid->size(), -1);
    // Each worker's range of cells, kept for addTarget's own-box test.
    unsigned rank = grid->getRank();
    owns.assign(stored.size(), false);
    ownRanges.resize(stored.size() * 2 * rank);
    for (unsigned w = 0, e = stored.size(); w != e; ++w)
      if (stored[w] && !isEmptyBox(*stored[w]) &&
          grid->getRange(*stored[w], first, last)) {
        owns[w] = true;
        std::copy(first.begin(), first.end(), ownRanges.begin() + 2 * rank * w);
        std::copy(last.begin(), last.end(),
                  ownRanges.begin() + 2 * rank * w + rank);
        grid->forEach(first, last, [&](std::size_t cell, const auto &) {
          if (lowest[cell] < 0)
            lowest[cell] = w;
        });
      }
  }
  /// Calls add(src, bytes) for each cell worker `w` receives of `target`
  /// (null: none), in the grid's cell order.
  template <typename Add>
  void addTarget(unsigned w, const Box *target, Add add) {
    const std::vector<const Box *> &held = *stored;
    if (grid->isTooLarge()) {
      if (target)
        forEachCell(*target, held, [&](const Box &cell) {
          int src = holds(held[w], cell) ? int(w) : findHolder(held, cell);
          if (src >= 0 && unsigned(src) != w)
            add(unsigned(src), std::size_t(cell.getVolume()) * elementSize);
        });
      return;
    }
    if (!target || isEmptyBox(*target))
      return;
    // Workers in turn often read the same box (an all-gather's whole
    // tensor): its range is found once.
    if (!haveTarget || !(*target == lastTarget)) {
      haveTarget = true;
      lastTarget = *target;
      targetHit = grid->getRange(*target, first, last);
    }
    if (!targetHit)
      return;
    unsigned rank = grid->getRank();
    bool own = w < held.size() && owns[w];
    const std::size_t *ownFirst = ownRanges.data() + 2 * rank * w,
                      *ownLast = ownFirst + rank;
    auto inOwn = [&](const std::vector<std::size_t> &at) {
      for (unsigned d = 0; d != rank; ++d)
        if (at[d] < ownFirst[d] || at[d] >= ownLast[d])
          return false;
      return true;
    };
    grid->forEach(first, last, [&](std::size_t cell, const auto &at) {
      if ((own && inOwn(at)) || lowest[cell] < 0)
        return;
      int64_t volume = 1;
      for (unsigned d = 0, r = at.size(); d != r; ++d)
        volume *= grid->getOverlap(d, at[d], target->lo[d], target->hi[d]);
      add(unsigned(lowest[cell]), std::size_t(volume) * elementSize);
    });
  }

  /// The cells of `target` (0: none; SIZE_MAX where the grid is too large
  /// to build).
  std::size_t countCells(const Box &target) {
    if (grid->isTooLarge())
      return SIZE_MAX;
    if (isEmptyBox(target) || !grid->getRange(target, first, last))
      return 0;
    haveTarget = false;
    std::size_t n = 1;
    for (unsigned d = 0, r = grid->getRank(); d != r; ++d)
      n *= last[d] - first[d];
    return n;
  }
  /// Calls add(src, bytes) for each cell of `target` whose lowest storer
  /// is src, counting every cell (no worker's own box skipped); the grid
  /// must not be too large.
  template <typename Add> void addRow(const Box &target, Add add) {
    haveTarget = false;
    if (isEmptyBox(target) || !grid->getRange(target, first, last))
      return;
    grid->forEach(first, last, [&](std::size_t cell, const auto &at) {
      if (lowest[cell] >= 0)
        add(unsigned(lowest[cell]), getBytes(target, at));
    });
  }
  /// What addRow counts of the cells in worker `w`'s own box, which
  /// addTarget skips (w receives none of them).
  template <typename Add>
  void addOwnOverlap(unsigned w, const Box &target, Add add) {
    haveTarget = false;
    if (w >= stored->size() || !owns[w] || isEmptyBox(target) ||
        !grid->getRange(target, first, last))
      return;
    unsigned rank = grid->getRank();
    const std::size_t *ownFirst = ownRanges.data() + 2 * rank * w,
                      *ownLast = ownFirst + rank;
    for (unsigned d = 0; d != rank; ++d) {
      first[d] = std::max(first[d], ownFirst[d]);
      last[d] = std::min(last[d], ownLast[d]);
      if (first[d] >= last[d])
        return;
    }
    grid->forEach(first, last, [&](std::size_t cell, const auto &at) {
      if (lowest[cell] >= 0)
        add(unsigned(lowest[cell]), getBytes(target, at));
    });
  }

private:
  std::size_t getBytes(const Box &target,
                       const std::vector<std::size_t> &at) const {
    int64_t volume = 1;
    for (unsigned d = 0, r = at.size(); d != r; ++d)
      volume *= grid->getOverlap(d, at[d], target.lo[d], target.hi[d]);
    return std::size_t(volume) * elementSize;
  }
  const std::vector<const Box *> *stored = nullptr;
  unsigned elementSize = 0;
  std::vector<std::vector<int64_t>> bounds;
  std::optional<Grid> grid;
  std::vector<int> lowest;
  /// Per worker, whether its stored box holds cells, and its cell range
  /// (first then last per dimension).
  std::vector<bool> owns;
  std::vector<std::size_t> ownRanges;
  /// The last target's box and cell range ([first, last); targetHit: any).
  Box lastTarget;
  bool haveTarget = false, targetHit = false;
  std::vector<std::size_t> first, last;
};

/// Adds the bytes each worker w receives into `targets[w]` of what it does
/// not store itself in `stored`, from the lowest worker storing each cell
/// (the fetch and next-step rules). `fetch` is scratch space.
void addFetchedBytes(const std::vector<const Box *> &targets,
                     const std::vector<const Box *> &stored,
                     unsigned elementSize, std::size_t maxCells,
                     PairBytes &bytes, FetchGrid &fetch);

/// The workers whose boxes hold each cell of a grid, lowest first
/// (compressed rows: cell c's are workers[offsets[c]..offsets[c+1])).
/// Assigned grid after grid, reusing its memory.
struct CellWorkers {
  std::vector<std::size_t> offsets;
  std::vector<unsigned> workers;

  void assign(const Grid &grid, const std::vector<const Box *> &boxes) {
    unsigned rank = grid.getRank();
    offsets.assign(grid.size() + 1, 0);
    // Each box's range of cells, found once: (w, first..., last...).
    ranges.clear();
    for (unsigned w = 0, e = boxes.size(); w != e; ++w)
      if (boxes[w] && !isEmptyBox(*boxes[w]) &&
          grid.getRange(*boxes[w], first, last)) {
        ranges.push_back(w);
        ranges.insert(ranges.end(), first.begin(), first.end());
        ranges.insert(ranges.end(), last.begin(), last.end());
      }
    auto visit = [&](auto fn) {
      for (std::size_t i = 0, e = ranges.size(); i != e; i += 1 + 2 * rank) {
        unsigned w = ranges[i];
        first.assign(ranges.begin() + i + 1, ranges.begin() + i + 1 + rank);
        last.assign(ranges.begin() + i + 1 + rank,
                    ranges.begin() + i + 1 + 2 * rank);
        grid.forEach(first, last,
                     [&](std::size_t cell, const auto &) { fn(cell, w); });
      }
    };
    visit([&](std::size_t cell, unsigned) { ++offsets[cell + 1]; });
    for (std::size_t c = 0, e = grid.size(); c != e; ++c)
      offsets[c + 1] += offsets[c];
    workers.resize(offsets.back());
    next.assign(offsets.begin(), offsets.end() - 1);
    visit([&](std::size_t cell, unsigned w) { workers[next[cell]++] = w; });
  }
  const unsigned *begin(std::size_t cell) const {
    return workers.data() + offsets[cell];
  }
  const unsigned *end(std::size_t cell) const {
    return workers.data() + offsets[cell + 1];
  }

private:
  std::vector<std::size_t> ranges, next, first, last;
};

template <typename T> struct Span {
  const T *b, *e;
  const T *begin() const { return b; }
  const T *end() const { return e; }
  bool empty() const { return b == e; }
  const T &front() const { return *b; }
};

/// The deliver (and for a partial op, reduce) rule's bytes of an op that
/// computes `computed` and stores `stored` (per worker). A non-partial
/// op's is the fetch rule with the computed boxes as the holders (each
/// stored cell from its lowest computer, unless its storer computes it):
/// a grid of the computed boxes alone, not of both (GPT-3 at K = 16384
/// stores an output of 8 x 2048 x 4096 cells of both). `bounds`,
/// `computers`, `storers` and `fetch` are scratch space.
void addDeliveryBytes(const std::vector<const Box *> &computed,
                      const std::vector<const Box *> &stored,
                      unsigned elementSize, bool partial, std::size_t maxCells,
                      PairBytes &reduce, PairBytes &deliver,
                      std::vector<std::vector<int64_t>> &bounds,
                      CellWorkers &computers, CellWorkers &storers,
                      FetchGrid &fetch);

/// Stable counting sort of `in` by `key` (below `keys`); `start` is
/// scratch space.
template <typename Key>
void countingSort(std::vector<Message> &in, std::vector<Message> &out,
                  unsigned keys, Key key, std::vector<std::size_t> &start) {
  start.assign(keys + 1, 0);
  for (const Message &m : in)
    ++start[key(m) + 1];
  for (unsigned k = 0; k != keys; ++k)
    start[k + 1] += start[k];
  out.resize(in.size());
  for (const Message &m : in)
    out[start[key(m)]++] = m;
}

} // namespace detail
} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_LIB_MESSAGEGRID_H

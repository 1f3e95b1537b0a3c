//===- StepMemory.cpp - What a worker's pool holds during a step ----------===//
//
// This file implements getMessages, which both executors stage their
// messages by; getOpMessages and addNextStepBytes, which count the same
// messages from a grid of the boxes; and predictPeaks, which replays the
// executors' allocation order (StepMemory.h) for every worker over a
// FreeList of sizes, from a built schedule or op by op from PlanBoxes (each
// worker's staging then gathered by PhaseStaging, one destination at a
// time, from the same grid rules; a partial op's reduce per group of
// workers computing one box (addGroupedReduce), and the fetch of the
// destinations reading one large box per group (FetchStaging), so that
// neither walks K x K messages).
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/StepMemory.h"
#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/Executor.h"
#include "tofu/Runtime/FreeList.h"
#include "tofu/Runtime/InPlaceUpdates.h"

#include <fmt/format.h>

#include <algorithm>

using namespace tofu::runtime;
using std::int64_t;

/// Box::isEmpty without multiplying out the volume (asked about K boxes per
/// op and phase).
static bool isEmptyBox(const Box &box) {
  for (unsigned d = 0, e = box.getRank(); d != e; ++d)
    if (box.hi[d] <= box.lo[d])
      return true;
  return false;
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

const char *tofu::runtime::getMemoryUseName(MemoryUse use) {
  switch (use) {
  case MemoryUse::Parameter: return "parameters";
  case MemoryUse::OptimizerState: return "optimizer state";
  case MemoryUse::Gradient: return "gradients";
  case MemoryUse::Activation: return "activations";
  case MemoryUse::Workspace: return "workspace";
  case MemoryUse::Send: return "send buffers";
  case MemoryUse::Receive: return "receive buffers";
  }
  return "?";
}

tofu::runtime::PlanBoxes::~PlanBoxes() = default;

//===----------------------------------------------------------------------===//
// Messages from a grid of the boxes
//===----------------------------------------------------------------------===//

namespace {

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


bool holds(const Box *box, const Box &cell) {
  return box && !isEmptyBox(*box) && box->contains(cell);
}

int findHolder(const std::vector<const Box *> &boxes, const Box &cell) {
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
  bool getRange(const Box &box, std::vector<std::size_t> &first,
                std::vector<std::size_t> &last) const {
    unsigned rank = getRank();
    first.resize(rank);
    last.resize(rank);
    for (unsigned d = 0; d != rank; ++d) {
      const std::vector<int64_t> &b = bounds[d];
      auto lo = std::upper_bound(b.begin(), b.end(), box.lo[d]);
      first[d] = lo == b.begin() ? 0 : lo - b.begin() - 1;
      last[d] = std::min<std::size_t>(
          std::lower_bound(b.begin(), b.end(), box.hi[d]) - b.begin(),
          b.size() - 1);
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
                     PairBytes &bytes, FetchGrid &fetch) {
  fetch.assign(stored, elementSize, maxCells);
  for (unsigned w = 0, e = targets.size(); w != e; ++w)
    fetch.addTarget(w, targets[w], [&](unsigned src, std::size_t b) {
      bytes[{src, w}] += b;
    });
}

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

/// The deliver (and, for partial ops, reduce) rule on one cell of volume
/// `volume`, whose computers and storers are given lowest first.
template <typename Computers, typename Storers>
void addDelivered(const Computers &computers, const Storers &storers,
                  std::size_t bytesPerCell, bool partial, PairBytes &reduce,
                  PairBytes &deliver) {
  if (computers.empty())
    return;
  unsigned first = computers.front(), root = first;
  if (partial) {
    for (unsigned c : computers)
      if (std::binary_search(storers.begin(), storers.end(), c)) {
        root = c;
        break;
      }
    for (unsigned c : computers)
      if (c != root)
        reduce[{c, root}] += bytesPerCell;
  }
  for (unsigned d : storers) {
    unsigned src = partial ? root
                   : std::binary_search(computers.begin(), computers.end(), d)
                       ? d
                       : first;
    if (src != d)
      deliver[{src, d}] += bytesPerCell;
  }
}

template <typename T> struct Span {
  const T *b, *e;
  const T *begin() const { return b; }
  const T *end() const { return e; }
  bool empty() const { return b == e; }
  const T &front() const { return *b; }
};

/// `bounds`, `computers` and `storers` are scratch space.
void addDeliveryBytes(const std::vector<const Box *> &computed,
                      const std::vector<const Box *> &stored,
                      unsigned elementSize, bool partial, std::size_t maxCells,
                      PairBytes &reduce, PairBytes &deliver,
                      std::vector<std::vector<int64_t>> &bounds,
                      CellWorkers &computers, CellWorkers &storers) {
  Grid grid({&stored, &computed}, maxCells, bounds);
  if (grid.isTooLarge()) {
    std::vector<const Box *> cuts = stored;
    cuts.insert(cuts.end(), computed.begin(), computed.end());
    const Box *hull = nullptr;
    for (const Box *b : computed)
      if (b && !isEmptyBox(*b))
        hull = b;
    if (!hull)
      return;
    // The computed boxes cover the tensor: their hull is the whole of it.
    Box whole = *hull;
    for (const Box *b : computed)
      if (b && !isEmptyBox(*b))
        for (unsigned d = 0; d != whole.getRank(); ++d) {
          whole.lo[d] = std::min(whole.lo[d], b->lo[d]);
          whole.hi[d] = std::max(whole.hi[d], b->hi[d]);
        }
    forEachCell(whole, cuts, [&](const Box &cell) {
      std::vector<unsigned> computers, storers;
      for (unsigned w = 0, e = computed.size(); w != e; ++w) {
        if (holds(computed[w], cell))
          computers.push_back(w);
        if (holds(stored[w], cell))
          storers.push_back(w);
      }
      addDelivered(computers, storers,
                   std::size_t(cell.getVolume()) * elementSize, partial,
                   reduce, deliver);
    });
    return;
  }
  computers.assign(grid, computed);
  storers.assign(grid, stored);
  std::vector<std::size_t> first(grid.getRank(), 0), last(grid.getRank());
  for (unsigned d = 0; d != grid.getRank(); ++d)
    last[d] = grid.getIntervals(d);
  grid.forEach(first, last, [&](std::size_t cell, const auto &at) {
    int64_t volume = 1;
    for (unsigned d = 0, r = at.size(); d != r; ++d)
      volume *= grid.getLength(d, at[d]);
    addDelivered(Span<unsigned>{computers.begin(cell), computers.end(cell)},
                 Span<unsigned>{storers.begin(cell), storers.end(cell)},
                 std::size_t(volume) * elementSize, partial, reduce, deliver);
  });
}

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

/// The messages of `bytes` into `messages`, in (src, dst) order, one per
/// pair; `byDst` and `start` are scratch space.
void toMessages(PairBytes &bytes, std::vector<Message> &byDst,
                std::vector<std::size_t> &start,
                std::vector<Message> &messages) {
  std::vector<Message> &found = bytes.found;
  unsigned workers = 0;
  for (const Message &m : found)
    workers = std::max({workers, m.src + 1, m.dst + 1});
  if (found.size() >= workers) {
    // Many messages (an all-gather has K per worker): by destination (the
    // fetch rule finds them in that order already), then stably by source.
    auto byDestination = [](const Message &a, const Message &b) {
      return a.dst < b.dst;
    };
    if (!std::is_sorted(found.begin(), found.end(), byDestination)) {
      countingSort(
          found, byDst, workers, [](const Message &m) { return m.dst; }, start);
      found.swap(byDst);
    }
    countingSort(
        found, byDst, workers, [](const Message &m) { return m.src; }, start);
    found.swap(byDst);
  } else {
    std::sort(found.begin(), found.end(), [](const Message &a, const Message &b) {
      return a.src != b.src ? a.src < b.src : a.dst < b.dst;
    });
  }
  messages.clear();
  for (const Message &m : found) {
    if (!messages.empty() && messages.back().src == m.src &&
        messages.back().dst == m.dst)
      messages.back().bytes += m.bytes;
    else
      messages.push_back(m);
  }
}

/// What counting an op's messages writes besides its result, kept from op
/// to op by the peak prediction so that counting allocates nothing once
/// these have grown.
struct MessageBuffers {
  PairBytes fetch, reduce, deliver;
  std::vector<std::vector<int64_t>> bounds;
  FetchGrid fetchGrid;
  CellWorkers computers, storers;
  std::vector<Message> sorted;
  std::vector<std::size_t> start;
  std::vector<const Box *> targets;
};

/// getOpMessages into `out`, with `buffers` as scratch space.
void countOpMessages(const std::vector<OpShare> &shares,
                     const std::vector<std::vector<const Box *>> &storedInputs,
                     const std::vector<unsigned> &inputElementSizes,
                     const std::vector<const Box *> &storedOutput,
                     unsigned outputElementSize, bool partial,
                     std::size_t maxGridCells, MessageBuffers &buffers,
                     OpMessages &out) {
  MessageBuffers &b = buffers;
  b.fetch.clear();
  b.reduce.clear();
  b.deliver.clear();
  b.targets.resize(shares.size());
  for (unsigned p = 0, e = storedInputs.size(); p != e; ++p) {
    for (unsigned w = 0, k = shares.size(); w != k; ++w)
      b.targets[w] = &shares[w].inputs[p];
    addFetchedBytes(b.targets, storedInputs[p], inputElementSizes[p],
                    maxGridCells, b.fetch, b.fetchGrid);
  }
  for (unsigned w = 0, k = shares.size(); w != k; ++w)
    b.targets[w] = &shares[w].output;
  addDeliveryBytes(b.targets, storedOutput, outputElementSize, partial,
                   maxGridCells, b.reduce, b.deliver, b.bounds, b.computers,
                   b.storers);
  toMessages(b.fetch, b.sorted, b.start, out.fetch);
  toMessages(b.reduce, b.sorted, b.start, out.reduce);
  toMessages(b.deliver, b.sorted, b.start, out.deliver);
}

} // namespace

OpMessages tofu::runtime::getOpMessages(
    const std::vector<OpShare> &shares,
    const std::vector<std::vector<const Box *>> &storedInputs,
    const std::vector<unsigned> &inputElementSizes,
    const std::vector<const Box *> &storedOutput, unsigned outputElementSize,
    bool partial, std::size_t maxGridCells) {
  MessageBuffers buffers;
  OpMessages out;
  countOpMessages(shares, storedInputs, inputElementSizes, storedOutput,
                  outputElementSize, partial, maxGridCells, buffers, out);
  return out;
}

void tofu::runtime::addNextStepBytes(
    const std::vector<const Box *> &param,
    const std::vector<const Box *> &updated, unsigned elementSize,
    std::map<std::pair<unsigned, unsigned>, std::size_t> &bytes,
    std::size_t maxGridCells) {
  MessageBuffers b;
  addFetchedBytes(param, updated, elementSize, maxGridCells, b.fetch,
                  b.fetchGrid);
  std::vector<Message> messages;
  toMessages(b.fetch, b.sorted, b.start, messages);
  for (const Message &m : messages)
    bytes[{m.src, m.dst}] += m.bytes;
}

//===----------------------------------------------------------------------===//
// The replay
//===----------------------------------------------------------------------===//

namespace {

/// A worker's share of one op as its pool sees it.
struct ShareMemory {
  /// The input buffers it allocates (boxes not stored as they are), bytes.
  std::vector<std::size_t> inputs;
  /// The computed output box's bytes (0: empty).
  std::size_t output = 0;
  /// Computed into its stored box (a non-partial op storing exactly it).
  bool intoStored = false;
  /// The output's stored box's bytes (0: none).
  std::size_t stored = 0;
  /// Computed into its stored box, reading what the output replaces (a
  /// next value) only pointwise: written in place, it goes straight into
  /// that buffer (InPlaceUpdates.h, writesOverReplaced).
  bool overReplaced = false;

};

/// A worker's messages of one phase, in (src, dst) order.
using Messages = Span<Message>;

/// One staging buffer a phase allocates and releases.
struct Staged {
  std::size_t bytes;
  MemoryUse use;
};
/// A phase's staging as a pool sees it: the first message of each size, in
/// message order. Staging takes and releases one buffer at a time, so a
/// message of a size already staged in the phase is served by the buffer
/// the first one was (nothing kept since lies between its size and that
/// buffer's: FreeList would have reused the buffer rather than make one),
/// at the same live bytes: it changes neither the pool nor the peak.
using Staging = std::vector<Staged>;

/// Each worker's staging of one phase (the first message of each size, in
/// the worker's (src, dst) order of the phase's messages), from the bytes
/// each source sends each destination, given one destination at a time
/// without listing the messages: a destination's bytes are summed per
/// source, and a worker's staging is kept in the three runs its (src, dst)
/// order visits in turn: what it receives from lower workers, what it
/// sends (destinations in increasing order), what it receives from higher
/// workers. An all-gather's K messages per worker cost an addition and a
/// comparison each; nothing is sorted or copied per message.
class PhaseStaging {
public:
  /// Starts a phase of `workers` workers.
  void begin(unsigned workers) {
    this->workers = workers;
    if (mark.size() < workers) {
      mark.resize(workers, 0);
      sum.resize(workers, 0);
      runs.resize(workers);
      runPhase.resize(workers, 0);
    }
    ++phase;
    next = 0;
  }
  /// `bytes` from `src` to the destination being given.
  void add(unsigned src, std::size_t bytes) {
    if (mark[src] != current) {
      mark[src] = current;
      sum[src] = 0;
      sources.push_back(src);
    }
    sum[src] += bytes;
  }
  /// Ends destination `dst`'s bytes; destinations come in increasing order.
  void endDestination(unsigned dst) {
    if (dst < next)
      throw RuntimeError(fmt::format(
          "staging: destination {} after destination {}", dst, next - 1));
    next = dst + 1;
    auto message = [&](unsigned src) {
      note(dst, src < dst ? Before : After, sum[src], MemoryUse::Receive);
      if (deferring)
        deferred.push_back(Message{src, dst, sum[src]});
      else
        note(src, Sends, sum[src], MemoryUse::Send);
    };
    // Many sources (an all-gather's K): scanned in order rather than sorted.
    if (sources.size() * 16 >= workers) {
      for (unsigned src = 0; src != workers; ++src)
        if (mark[src] == current)
          message(src);
    } else {
      std::sort(sources.begin(), sources.end());
      for (unsigned src : sources)
        message(src);
    }
    sources.clear();
    ++current;
  }
  /// The messages of `found` (any order, repeated pairs summed); `byDst`
  /// and `start` are scratch space.
  void addFound(PairBytes &found, std::vector<Message> &byDst,
                std::vector<std::size_t> &start) {
    std::vector<Message> &all = found.found;
    if (all.empty())
      return;
    if (!std::is_sorted(all.begin(), all.end(),
                        [](const Message &a, const Message &b) {
                          return a.dst < b.dst;
                        })) {
      countingSort(
          all, byDst, workers, [](const Message &m) { return m.dst; }, start);
      all.swap(byDst);
    }
    for (std::size_t i = 0, e = all.size(); i != e;) {
      unsigned dst = all[i].dst;
      for (; i != e && all[i].dst == dst; ++i)
        add(all[i].src, all[i].bytes);
      endDestination(dst);
    }
  }
  /// One message's bytes noted on its destination only (its source's send
  /// is noted by noteSend): for callers that know a worker's messages in
  /// its runs' orders without listing them (addGroupedReduce).
  void noteReceive(unsigned dst, unsigned src, std::size_t bytes) {
    note(dst, src < dst ? Before : After, bytes, MemoryUse::Receive);
  }
  /// A send of `src`'s, noted in its destinations' increasing order.
  void noteSend(unsigned src, std::size_t bytes) {
    note(src, Sends, bytes, MemoryUse::Send);
  }
  /// From here to flushSends, sends are kept rather than noted: by
  /// endDestination and addSend, in any order; flushSends notes them in
  /// (src, dst) order. A caller that knows a source's sends to a run of
  /// destinations are one size adds only the first of them.
  void deferSends() {
    deferring = true;
    deferred.clear();
  }
  void addSend(unsigned src, unsigned dst, std::size_t bytes) {
    deferred.push_back(Message{src, dst, bytes});
  }
  void flushSends() {
    // (src, dst) order: by destination, then stably by source.
    countingSort(
        deferred, sorted, workers, [](const Message &m) { return m.dst; },
        start);
    countingSort(
        sorted, deferred, workers, [](const Message &m) { return m.src; },
        start);
    for (const Message &m : deferred)
      noteSend(m.src, m.bytes);
    deferred.clear();
    deferring = false;
  }
  /// Worker `w`'s staging into `out`.
  void get(unsigned w, Staging &out) const {
    out.clear();
    if (runPhase[w] != phase)
      return;
    for (const Staging &run : runs[w])
      for (const Staged &m : run)
        if (!contains(out, m.bytes))
          out.push_back(m);
  }

private:
  enum Run { Before, Sends, After };
  static bool contains(const Staging &staging, std::size_t bytes) {
    for (const Staged &s : staging)
      if (s.bytes == bytes)
        return true;
    return false;
  }
  void note(unsigned w, Run run, std::size_t bytes, MemoryUse use) {
    if (runPhase[w] != phase) {
      runPhase[w] = phase;
      for (Staging &r : runs[w])
        r.clear();
    }
    Staging &r = runs[w][run];
    if ((!r.empty() && r.back().bytes == bytes) || contains(r, bytes))
      return;
    r.push_back(Staged{bytes, use});
  }

  bool deferring = false;
  std::vector<Message> deferred, sorted;
  std::vector<std::size_t> start;
  unsigned workers = 0;
  /// The next destination allowed.
  unsigned next = 0;
  /// Per source, the destination count when it last sent (`current`: to
  /// the destination being given) and its bytes to that destination.
  std::vector<std::uint64_t> mark;
  std::uint64_t current = 1;
  std::vector<std::size_t> sum;
  std::vector<unsigned> sources;
  /// Per worker, its three runs, valid when runPhase matches `phase`.
  std::vector<std::array<Staging, 3>> runs;
  std::vector<std::uint64_t> runPhase;
  std::uint64_t phase = 0;
};

/// The fetch phase of an op, staged per worker without listing an
/// all-gather's K x K messages: the destinations whose box of one input
/// covers many cells of its grid are grouped by that input and box (an
/// all-gather's K workers read one box). A group's row, the bytes each
/// source holds of that box (the lowest storer of each cell), is counted
/// once; a destination of the group receives that row but at the sources
/// where its other inputs add bytes or its own stored box holds cells
/// (it receives none of those): a few sources, found from its own cells.
/// Its receive runs are then the row's first source of each distinct
/// size before and after it (positions per size, skipping those few) and
/// those few; a source's sends to a group are its row bytes at the
/// group's first destination that takes them unchanged, and the changed
/// ones. Destinations in no group are counted cell by cell, as before.
/// Every worker's staging is what PhaseStaging gets from all messages.
class FetchStaging {
public:
  /// A destination's box of fewer than `minRowCells` cells is counted
  /// cell by cell (cheap).
  explicit FetchStaging(std::size_t minRowCells) : minRowCells(minRowCells) {}
  void run(const std::vector<OpShare> &shares, std::vector<FetchGrid> &grids,
           unsigned numInputs, unsigned workers, PhaseStaging &fetch);

private:
  std::size_t minRowCells;
  /// At most this many groups per op, and distinct sizes per row.
  static constexpr unsigned kMaxGroups = 32, kMaxSizes = 16;
  struct Group {
    /// Per input, the box its destinations read of it when it covers
    /// minRowCells cells or more (null: fewer, counted as changes).
    std::vector<const Box *> targets;
    bool usable;
    /// Its row in rowSrc/rowBytes, its sizes in sizeBytes/sizeStart
    /// (positions in sizeSources), and its destinations.
    std::size_t rowBegin, rowEnd, sizeBegin, sizeEnd;
    std::vector<unsigned> dests;
  };
  int findGroup(std::vector<FetchGrid> &grids);
  /// The destination being grouped: per input, its box when it covers
  /// minRowCells cells or more, else null.
  std::vector<const Box *> rowTargets;
  int lastFound = -1;
  std::size_t getRowBytes(const Group &g, unsigned src) const;
  bool isChanged(unsigned w, unsigned src) const;

  std::vector<Group> groups;
  std::vector<int> groupOf;
  std::vector<unsigned> rowSrc, sizeSources;
  std::vector<std::size_t> rowBytes, sizeBytes, sizeStart;
  /// Per destination, its changed sources (ascending) and their bytes.
  std::vector<std::size_t> changeStart;
  std::vector<unsigned> changeSrc;
  std::vector<std::size_t> changeBytes;
  /// Dense scratch per worker: bytes and whether touched.
  std::vector<int64_t> acc;
  std::vector<bool> touched;
  std::vector<unsigned> touchedList;
  std::vector<std::pair<unsigned, std::size_t>> candidates;
};

int FetchStaging::findGroup(std::vector<FetchGrid> &grids) {
  auto same = [&](const Group &g) {
    for (unsigned p = 0, e = rowTargets.size(); p != e; ++p)
      if (bool(g.targets[p]) != bool(rowTargets[p]) ||
          (rowTargets[p] && !(*g.targets[p] == *rowTargets[p])))
        return false;
    return true;
  };
  if (lastFound >= 0 && same(groups[lastFound]))
    return lastFound;
  for (unsigned g = 0, e = groups.size(); g != e; ++g)
    if (same(groups[g]))
      return lastFound = int(g);
  if (groups.size() == kMaxGroups)
    return -1;
  Group g{rowTargets, true, rowSrc.size(), 0, sizeBytes.size(), 0, {}};
  // The row: bytes per source, ascending.
  touchedList.clear();
  for (unsigned p = 0, e = rowTargets.size(); p != e; ++p)
    if (rowTargets[p])
      grids[p].addRow(*rowTargets[p], [&](unsigned src, std::size_t b) {
        if (!touched[src]) {
          touched[src] = true;
          touchedList.push_back(src);
        }
        acc[src] += int64_t(b);
      });
  std::sort(touchedList.begin(), touchedList.end());
  for (unsigned src : touchedList) {
    rowSrc.push_back(src);
    rowBytes.push_back(std::size_t(acc[src]));
    acc[src] = 0;
    touched[src] = false;
  }
  g.rowEnd = rowSrc.size();
  // Its distinct sizes, with the sources of each in ascending order.
  for (std::size_t i = g.rowBegin; i != g.rowEnd && g.usable; ++i) {
    bool seen = false;
    for (std::size_t k = g.sizeBegin; k != sizeBytes.size() && !seen; ++k)
      seen = sizeBytes[k] == rowBytes[i];
    if (!seen) {
      if (sizeBytes.size() - g.sizeBegin == kMaxSizes)
        g.usable = false;
      else
        sizeBytes.push_back(rowBytes[i]);
    }
  }
  if (!g.usable)
    sizeBytes.resize(g.sizeBegin);
  g.sizeEnd = sizeBytes.size();
  // sizeStart[k] is size k's first source; its last is before the next
  // size's first (the next group's, if any) or the end.
  for (std::size_t k = g.sizeBegin; k != g.sizeEnd; ++k) {
    sizeStart.push_back(sizeSources.size());
    for (std::size_t i = g.rowBegin; i != g.rowEnd; ++i)
      if (rowBytes[i] == sizeBytes[k])
        sizeSources.push_back(rowSrc[i]);
  }
  groups.push_back(std::move(g));
  return lastFound = int(groups.size()) - 1;
}

std::size_t FetchStaging::getRowBytes(const Group &g, unsigned src) const {
  auto b = rowSrc.begin() + g.rowBegin, e = rowSrc.begin() + g.rowEnd;
  auto it = std::lower_bound(b, e, src);
  return it != e && *it == src ? rowBytes[it - rowSrc.begin()] : 0;
}

bool FetchStaging::isChanged(unsigned w, unsigned src) const {
  return std::binary_search(changeSrc.begin() + changeStart[w],
                            changeSrc.begin() + changeStart[w + 1], src);
}

void FetchStaging::run(const std::vector<OpShare> &shares,
                       std::vector<FetchGrid> &grids, unsigned numInputs,
                       unsigned workers, PhaseStaging &fetch) {
  fetch.begin(workers);
  groups.clear();
  rowSrc.clear();
  rowBytes.clear();
  sizeBytes.clear();
  sizeStart.clear();
  sizeSources.clear();
  groupOf.assign(workers, -1);
  lastFound = -1;
  if (acc.size() < workers) {
    acc.resize(workers, 0);
    touched.resize(workers, false);
  }
  bool any = false;
  rowTargets.resize(numInputs);
  for (unsigned w = 0; w != workers; ++w) {
    bool rows = false;
    for (unsigned p = 0; p != numInputs; ++p) {
      const Box &target = shares[w].inputs[p];
      std::size_t cells = grids[p].countCells(target);
      rowTargets[p] =
          cells != SIZE_MAX && cells >= minRowCells ? &target : nullptr;
      rows |= rowTargets[p] != nullptr;
    }
    if (!rows)
      continue;
    int g = findGroup(grids);
    if (g >= 0 && groups[g].usable) {
      groupOf[w] = g;
      any = true;
    }
  }
  if (!any) {
    for (unsigned w = 0; w != workers; ++w) {
      for (unsigned p = 0; p != numInputs; ++p)
        grids[p].addTarget(w, &shares[w].inputs[p],
                           [&](unsigned src, std::size_t b) { fetch.add(src, b); });
      fetch.endDestination(w);
    }
    return;
  }
  fetch.deferSends();
  changeStart.assign(workers + 1, 0);
  changeSrc.clear();
  changeBytes.clear();
  for (unsigned w = 0; w != workers; ++w) {
    int gi = groupOf[w];
    if (gi < 0) {
      changeStart[w + 1] = changeSrc.size();
      for (unsigned p = 0; p != numInputs; ++p)
        grids[p].addTarget(w, &shares[w].inputs[p],
                           [&](unsigned src, std::size_t b) { fetch.add(src, b); });
      fetch.endDestination(w);
      continue;
    }
    Group &g = groups[gi];
    // What its other inputs add and its own box takes away, per source.
    touchedList.clear();
    auto change = [&](unsigned src, int64_t b) {
      if (!touched[src]) {
        touched[src] = true;
        touchedList.push_back(src);
      }
      acc[src] += b;
    };
    for (unsigned p = 0; p != numInputs; ++p)
      if (!g.targets[p])
        grids[p].addTarget(w, &shares[w].inputs[p],
                           [&](unsigned src, std::size_t b) {
                             change(src, int64_t(b));
                           });
      else
        grids[p].addOwnOverlap(w, *g.targets[p],
                               [&](unsigned src, std::size_t b) {
                                 change(src, -int64_t(b));
                               });
    std::sort(touchedList.begin(), touchedList.end());
    for (unsigned src : touchedList) {
      changeSrc.push_back(src);
      changeBytes.push_back(
          std::size_t(int64_t(getRowBytes(g, src)) + acc[src]));
      acc[src] = 0;
      touched[src] = false;
    }
    changeStart[w + 1] = changeSrc.size();
    // Its receives: per size, the row's first source before it and after
    // it that is neither itself nor changed; and the changed ones.
    candidates.clear();
    auto excluded = [&](unsigned src) {
      return src == w || isChanged(w, src);
    };
    for (std::size_t k = g.sizeBegin; k != g.sizeEnd; ++k) {
      const unsigned *b = sizeSources.data() + sizeStart[k],
                     *e = sizeSources.data() +
                          (k + 1 < sizeStart.size() ? sizeStart[k + 1]
                                                    : sizeSources.size());
      for (const unsigned *it = b; it != e && *it < w; ++it)
        if (!excluded(*it)) {
          candidates.emplace_back(*it, sizeBytes[k]);
          break;
        }
      for (const unsigned *it = std::upper_bound(b, e, w); it != e; ++it)
        if (!excluded(*it)) {
          candidates.emplace_back(*it, sizeBytes[k]);
          break;
        }
    }
    for (std::size_t c = changeStart[w]; c != changeStart[w + 1]; ++c)
      if (changeSrc[c] != w && changeBytes[c])
        candidates.emplace_back(changeSrc[c], changeBytes[c]);
    std::sort(candidates.begin(), candidates.end());
    for (const auto &[src, bytes] : candidates)
      fetch.noteReceive(w, src, bytes);
    g.dests.push_back(w);
  }
  // The sends: per group and source, the first destination taking its row
  // bytes unchanged; then every changed message.
  for (const Group &g : groups) {
    if (!g.usable)
      continue;
    for (std::size_t i = g.rowBegin; i != g.rowEnd; ++i) {
      unsigned src = rowSrc[i];
      for (unsigned d : g.dests)
        if (d != src && !isChanged(d, src)) {
          fetch.addSend(src, d, rowBytes[i]);
          break;
        }
    }
  }
  for (unsigned w = 0; w != workers; ++w)
    if (groupOf[w] >= 0)
      for (std::size_t c = changeStart[w]; c != changeStart[w + 1]; ++c)
        if (changeSrc[c] != w && changeBytes[c])
          fetch.addSend(changeSrc[c], w, changeBytes[c]);
  fetch.flushSends();
}

/// addGroupedReduce's scratch space, kept from op to op.
struct GroupScratch {
  /// Per worker, its group (-1: it computes nothing) and the bytes it
  /// receives from each other member as its cells' root.
  std::vector<int> groupOf;
  std::vector<std::size_t> rootBytes;
  /// Workers sorted by computed box; per group, its first worker's box and
  /// its members (ascending), in flat rows (memberStart).
  std::vector<unsigned> order, members;
  std::vector<std::size_t> memberStart;
  std::vector<const Box *> groupBox;
  std::vector<int> cellGroup;
  std::vector<std::vector<int64_t>> bounds;
  CellWorkers storers;
  std::vector<std::size_t> first, last;
  /// A group's roots (ascending) and, per distinct size among their bytes,
  /// (size, index of its first and second root: -1 none).
  std::vector<unsigned> roots;
  struct FirstSize {
    std::size_t bytes;
    std::ptrdiff_t first, second;
  };
  std::vector<FirstSize> sizes;
  std::vector<std::pair<std::ptrdiff_t, std::size_t>> sends;
};

/// Whether box a sorts before box b (lo, then hi, dimension by dimension).
bool lessBox(const Box &a, const Box &b) {
  for (unsigned d = 0, e = a.getRank(); d != e; ++d)
    if (a.lo[d] != b.lo[d])
      return a.lo[d] < b.lo[d];
  for (unsigned d = 0, e = a.getRank(); d != e; ++d)
    if (a.hi[d] != b.hi[d])
      return a.hi[d] < b.hi[d];
  return false;
}

/// A partial op's reduce staging, noted straight into `reduce` (begun)
/// without listing its messages, and its deliver messages added to
/// `deliver` (addDeliveryBytes' rules, the same bytes), where the workers
/// computing a non-empty box form groups (the workers computing one box)
/// whose boxes are disjoint: every cell's computers are then one group.
/// Each cell's root receives the cell from every other member of its
/// group, so a root receives the same bytes (the sum of its cells) from
/// each other member: one size in each of its receive runs. A member sends
/// each root of its group (but itself) that root's bytes, in root order:
/// only the first root of each distinct size is noted, so a group of n
/// members costs n times its distinct sizes rather than n^2 messages (a
/// reduce-scatter over K workers: K^2). False, with nothing noted or
/// added, where the groups' boxes overlap or the grid is too large (then
/// addDeliveryBytes counts them cell by cell).
bool addGroupedReduce(const std::vector<const Box *> &computed,
                      const std::vector<const Box *> &stored,
                      unsigned elementSize, std::size_t maxCells,
                      PhaseStaging &reduce, PairBytes &deliver,
                      GroupScratch &s) {
  unsigned workers = computed.size();
  // Group the workers by computed box: sorted by box, equal boxes adjacent.
  s.order.clear();
  for (unsigned w = 0; w != workers; ++w)
    if (computed[w] && !isEmptyBox(*computed[w]))
      s.order.push_back(w);
  std::stable_sort(s.order.begin(), s.order.end(),
                   [&](unsigned a, unsigned b) {
                     return lessBox(*computed[a], *computed[b]);
                   });
  s.groupOf.assign(workers, -1);
  s.groupBox.clear();
  for (unsigned w : s.order) {
    if (s.groupBox.empty() || !(*s.groupBox.back() == *computed[w]))
      s.groupBox.push_back(computed[w]);
    s.groupOf[w] = int(s.groupBox.size()) - 1;
  }
  unsigned groups = s.groupBox.size();
  // Members per group, ascending (workers visited in order).
  s.memberStart.assign(groups + 1, 0);
  for (unsigned w = 0; w != workers; ++w)
    if (s.groupOf[w] >= 0)
      ++s.memberStart[s.groupOf[w] + 1];
  for (unsigned g = 0; g != groups; ++g)
    s.memberStart[g + 1] += s.memberStart[g];
  s.members.resize(s.memberStart.back());
  {
    std::vector<std::size_t> &next = s.first;
    next.assign(s.memberStart.begin(), s.memberStart.end() - 1);
    for (unsigned w = 0; w != workers; ++w)
      if (s.groupOf[w] >= 0)
        s.members[next[s.groupOf[w]]++] = w;
  }
  // The grid of addDeliveryBytes (the same cuts), each cell's group.
  Grid grid({&stored, &computed}, maxCells, s.bounds);
  if (grid.isTooLarge())
    return false;
  s.cellGroup.assign(grid.size(), -1);
  bool overlap = false;
  for (unsigned g = 0; g != groups && !overlap; ++g) {
    if (!grid.getRange(*s.groupBox[g], s.first, s.last))
      continue;
    grid.forEach(s.first, s.last, [&](std::size_t cell, const auto &) {
      if (s.cellGroup[cell] >= 0)
        overlap = true;
      s.cellGroup[cell] = int(g);
    });
  }
  if (overlap)
    return false;
  // Each cell's root (the lowest member storing it, else the lowest
  // member), its bytes, and the deliver rule's messages.
  s.storers.assign(grid, stored);
  s.rootBytes.assign(workers, 0);
  std::vector<std::size_t> all(grid.getRank(), 0), ends(grid.getRank());
  for (unsigned d = 0; d != grid.getRank(); ++d)
    ends[d] = grid.getIntervals(d);
  grid.forEach(all, ends, [&](std::size_t cell, const auto &at) {
    int g = s.cellGroup[cell];
    if (g < 0)
      return;
    int64_t volume = 1;
    for (unsigned d = 0, r = at.size(); d != r; ++d)
      volume *= grid.getLength(d, at[d]);
    std::size_t bytes = std::size_t(volume) * elementSize;
    unsigned root = s.members[s.memberStart[g]];
    for (const unsigned *w = s.storers.begin(cell); w != s.storers.end(cell);
         ++w)
      if (s.groupOf[*w] == g) {
        root = *w;
        break;
      }
    s.rootBytes[root] += bytes;
    for (const unsigned *d = s.storers.begin(cell); d != s.storers.end(cell);
         ++d)
      if (*d != root)
        deliver[{root, *d}] += bytes;
  });
  // The staging, group by group.
  for (unsigned g = 0; g != groups; ++g) {
    const unsigned *mb = s.members.data() + s.memberStart[g],
                   *me = s.members.data() + s.memberStart[g + 1];
    if (me - mb < 2)
      continue;
    s.roots.clear();
    s.sizes.clear();
    for (const unsigned *m = mb; m != me; ++m) {
      std::size_t bytes = s.rootBytes[*m];
      if (!bytes)
        continue;
      // A root receives its bytes from each other member.
      if (*mb < *m)
        reduce.noteReceive(*m, *mb, bytes);
      if (*(me - 1) > *m)
        reduce.noteReceive(*m, *(me - 1), bytes);
      std::ptrdiff_t index = s.roots.size();
      s.roots.push_back(*m);
      bool seen = false;
      for (GroupScratch::FirstSize &f : s.sizes)
        if (f.bytes == bytes) {
          if (f.second < 0)
            f.second = index;
          seen = true;
          break;
        }
      if (!seen)
        s.sizes.push_back({bytes, index, -1});
    }
    // Each member's sends: per distinct size, its first root but itself.
    for (const unsigned *m = mb; m != me; ++m) {
      s.sends.clear();
      for (const GroupScratch::FirstSize &f : s.sizes) {
        std::ptrdiff_t at = s.roots[f.first] == *m ? f.second : f.first;
        if (at >= 0)
          s.sends.emplace_back(at, f.bytes);
      }
      std::sort(s.sends.begin(), s.sends.end());
      for (const auto &[at, bytes] : s.sends)
        reduce.noteSend(*m, bytes);
    }
  }
  return true;
}

/// Worker `w`'s staging, every message replayed (the reference form over
/// a built schedule).
void getEveryStaging(Messages messages, unsigned w, Staging &out) {
  out.clear();
  for (const Message &m : messages)
    out.push_back(
        Staged{m.bytes, m.src == w ? MemoryUse::Send : MemoryUse::Receive});
}

/// What `bytes(t, w)` gives: worker w's stored bytes of tensor t (0: none).
using StoredBytesFn = std::function<std::size_t(unsigned t, unsigned w)>;

/// One worker's pool and stored tensors, replayed event by event.
class WorkerReplay {
public:
  WorkerReplay(const ExecutablePlan &plan, const std::vector<int> &lastUse,
               const std::vector<TensorMemory> &tensors,
               const StoredBytesFn &storedBytes, unsigned w)
      : plan(&plan), lastUse(&lastUse), tensors(&tensors),
        storedBytesFn(&storedBytes), w(w), stored(plan.tensors.size(), 0),
        inPlace(plan.tensors.size(), false) {}

  /// Whether this worker writes next value `t` in place (InPlaceUpdates.h).
  void setInPlace(unsigned t, bool value) { inPlace[t] = value; }
  void beginStep();
  void runOp(unsigned i, const ShareMemory &share, const Staging &fetch,
             const Staging &reduce, const Staging &deliver);
  void runNextStep(const Staging &staging);
  const WorkerPeak &getPeak() const { return peak; }

private:
  std::size_t storedBytes(unsigned t) const { return (*storedBytesFn)(t, w); }
  std::size_t take(std::size_t bytes, MemoryUse use, bool exact = false) {
    std::size_t capacity = exact ? pool.takeExact(bytes) : pool.take(bytes);
    live[unsigned(use)] += int64_t(capacity);
    if (pool.getLiveBytes() > peak.bytes) {
      peak.bytes = pool.getLiveBytes();
      peak.uses = live;
    }
    return capacity;
  }
  void put(std::size_t &capacity, MemoryUse use) {
    if (!capacity)
      return;
    pool.put(capacity);
    live[unsigned(use)] -= int64_t(capacity);
    capacity = 0;
  }
  void releaseStored(unsigned t) { put(stored[t], (*tensors)[t].use); }
  void ensureStored(unsigned t) {
    if (!stored[t])
      stored[t] = take(storedBytes(t), (*tensors)[t].use);
  }
  /// ensureStored where the caller has the bytes (`bytes` = storedBytes(t)).
  void ensureStored(unsigned t, std::size_t bytes) {
    if (!stored[t])
      stored[t] = take(bytes, (*tensors)[t].use);
  }
  /// Moves the buffer of tensor `from` to tensor `to` (a next value
  /// written in place and what it replaces), allocating nothing.
  void moveStored(unsigned from, unsigned to) {
    std::size_t capacity = stored[from];
    live[unsigned((*tensors)[from].use)] -= int64_t(capacity);
    live[unsigned((*tensors)[to].use)] += int64_t(capacity);
    stored[to] = capacity;
    stored[from] = 0;
  }
  /// A phase's staging: one message at a time, each buffer released
  /// before the next is allocated.
  void stage(const Staging &staging) {
    for (const Staged &m : staging) {
      std::size_t b = take(m.bytes, m.use);
      put(b, m.use);
    }
  }

  const ExecutablePlan *plan;
  const std::vector<int> *lastUse;
  const std::vector<TensorMemory> *tensors;
  const StoredBytesFn *storedBytesFn;
  unsigned w;
  SizeFreeList pool;
  std::array<int64_t, NumMemoryUses> live{};
  WorkerPeak peak;
  /// Per tensor, the capacity of its stored buffer (0: none held).
  std::vector<std::size_t> stored;
  /// runOp's input buffers.
  std::vector<std::size_t> inputs;
  /// Per tensor, a next value this worker writes in place.
  std::vector<bool> inPlace;
};

} // namespace

void WorkerReplay::runOp(unsigned i, const ShareMemory &share,
                         const Staging &fetch, const Staging &reduce,
                         const Staging &deliver) {
  const OpInfo &op = plan->ops[i];
  inputs.clear();
  for (std::size_t bytes : share.inputs)
    inputs.push_back(take(bytes, MemoryUse::Workspace));
  stage(fetch);
  unsigned o = op.output;
  std::size_t outTemp = 0;
  // A next value written in place is computed aside, or straight into
  // the buffer of what it replaces, then takes that buffer
  // (InPlaceUpdates.h).
  if (share.intoStored && !inPlace[o])
    ensureStored(o, share.stored);
  else if (share.output && !(inPlace[o] && share.overReplaced))
    outTemp = take(share.output, MemoryUse::Workspace);
  for (std::size_t &b : inputs)
    put(b, MemoryUse::Workspace);
  if (op.partial)
    stage(reduce);
  if (share.stored) {
    if (inPlace[o] && !stored[o])
      moveStored(unsigned(plan->tensors[o].updates), o);
    ensureStored(o, share.stored);
  }
  stage(deliver);
  put(outTemp, MemoryUse::Workspace);
  for (unsigned t : op.inputs)
    if ((*lastUse)[t] == int(i) && !plan->tensors[t].persistent)
      releaseStored(t);
  if ((*lastUse)[o] <= int(i) && !plan->tensors[o].persistent)
    releaseStored(o);
}

void WorkerReplay::runNextStep(const Staging &staging) {
  // A fresh buffer per parameter it stores, in the order of the updated
  // tensors (buildSchedule's next-step pieces), but for those updated in
  // place, whose buffers become their parameters' again after the staging.
  std::vector<std::pair<unsigned, std::size_t>> fresh;
  for (unsigned t = 0, e = plan->tensors.size(); t != e; ++t) {
    int param = plan->tensors[t].updates;
    if (param < 0 || !storedBytes(param) || inPlace[t])
      continue;
    bool have = false;
    for (auto &entry : fresh)
      have |= entry.first == unsigned(param);
    if (!have)
      fresh.emplace_back(param, take(storedBytes(param),
                                     (*tensors)[param].use, /*exact=*/true));
  }
  stage(staging);
  for (auto &[param, buffer] : fresh) {
    releaseStored(param);
    stored[param] = buffer;
  }
  for (unsigned t = 0, e = plan->tensors.size(); t != e; ++t)
    if (inPlace[t] && stored[t])
      moveStored(t, unsigned(plan->tensors[t].updates));
}

void WorkerReplay::beginStep() {
  for (unsigned t = 0, e = plan->tensors.size(); t != e; ++t)
    if (!isHeldAcrossSteps(plan->tensors[t]))
      releaseStored(t);
  pool.beginStep();
  for (unsigned t = 0, e = plan->tensors.size(); t != e; ++t)
    if (plan->tensors[t].graphInput && storedBytes(t))
      ensureStored(t);
  // The executors reset their pools' peaks here; the live bytes now are
  // at most the peak so far, so the running peak is the largest step's.
  pool.resetPeak();
}

namespace {

/// A worker's share as its pool sees it: `stored(t)` is its stored box of
/// tensor t (null: none).
template <typename StoredFn>
void getShareMemory(const ExecutablePlan &plan, unsigned i,
                    const OpShare &share,
                    const std::vector<TensorMemory> &tensors, StoredFn stored,
                    ShareMemory &out) {
  const OpInfo &op = plan.ops[i];
  out.inputs.clear();
  for (unsigned p = 0, e = op.inputs.size(); p != e; ++p) {
    unsigned t = op.inputs[p];
    const Box &box = share.inputs[p];
    const Box *held = stored(t);
    if (isEmptyBox(box) || (held && !isEmptyBox(*held) && *held == box))
      continue;
    out.inputs.push_back(std::size_t(box.getVolume()) *
                         tensors[t].elementSize);
  }
  const Box *held = stored(op.output);
  out.intoStored = !op.partial && held && !isEmptyBox(*held) &&
                   *held == share.output;
  out.stored = held ? std::size_t(held->getVolume()) *
                          tensors[op.output].elementSize
                    : 0;
  out.output = std::size_t(share.output.getVolume()) *
               tensors[op.output].elementSize;
  out.overReplaced =
      out.intoStored && plan.tensors[op.output].updates >= 0 &&
      readsReplacedPointwise(plan, i, [&](unsigned p) {
        const Box *input = stored(op.inputs[p]);
        return input && !isEmptyBox(*input) && *input == share.inputs[p];
      });
}

void getPointers(const std::vector<std::optional<Box>> &boxes,
                 std::vector<const Box *> &out) {
  out.clear();
  for (const auto &box : boxes)
    out.push_back(box ? &*box : nullptr);
}

} // namespace

std::vector<WorkerPeak>
tofu::runtime::predictPeaks(const ExecutablePlan &plan,
                            const Schedule &schedule,
                            const std::vector<TensorMemory> &tensors,
                            unsigned steps) {
  std::vector<int> lastUse = computeLastUse(plan);
  auto storedOf = [&](unsigned t, unsigned w) -> const Box * {
    const auto &box = plan.tensors[t].stored[w];
    return box ? &*box : nullptr;
  };
  auto mine = [](const std::vector<Message> &all, unsigned w) {
    std::vector<Message> out;
    for (const Message &m : all)
      if (m.src == w || m.dst == w)
        out.push_back(m);
    return out;
  };
  auto span = [](const std::vector<Message> &v) {
    return Messages{v.data(), v.data() + v.size()};
  };
  StoredBytesFn storedBytes = [&](unsigned t, unsigned w) {
    const Box *box = storedOf(t, w);
    return box ? std::size_t(box->getVolume()) * tensors[t].elementSize
               : std::size_t(0);
  };
  // The reference form: one replay per worker, every message staged.
  std::vector<WorkerPeak> peaks;
  Staging fetchStaging, reduceStaging, deliverStaging, nextStaging;
  std::vector<bool> candidates = getInPlaceCandidates(
      plan, lastUse, [&](unsigned t) { return tensors[t].elementSize; });
  for (unsigned w = 0; w != plan.workers; ++w) {
    WorkerReplay replay(plan, lastUse, tensors, storedBytes, w);
    for (unsigned t = 0, e = plan.tensors.size(); t != e; ++t)
      if (candidates[t])
        replay.setInPlace(
            t, isUpdatedInPlace(plan.tensors[plan.tensors[t].updates].stored[w],
                                plan.tensors[t].stored[w]));
    ShareMemory share;
    for (unsigned s = 0; s != steps; ++s) {
      replay.beginStep();
      for (unsigned i = 0, e = plan.ops.size(); i != e; ++i) {
        const OpInfo &op = plan.ops[i];
        const OpSchedule &sched = schedule.ops[i];
        getShareMemory(plan, i, op.workers[w], tensors,
                       [&](unsigned t) { return storedOf(t, w); }, share);
        auto inputSize = [&](const Piece &piece) {
          return tensors[op.inputs[piece.slot]].elementSize;
        };
        auto outputSize = [&](const Piece &) {
          return tensors[op.output].elementSize;
        };
        std::vector<Message> fetch = mine(getMessages(sched.fetch, inputSize), w),
                             reduce = mine(getMessages(sched.reduce, outputSize), w),
                             deliver = mine(getMessages(sched.deliver, outputSize), w);
        getEveryStaging(span(fetch), w, fetchStaging);
        getEveryStaging(span(reduce), w, reduceStaging);
        getEveryStaging(span(deliver), w, deliverStaging);
        replay.runOp(i, share, fetchStaging, reduceStaging, deliverStaging);
      }
      std::vector<Message> next = mine(
          getMessages(schedule.nextStep,
                      [&](const Piece &piece) {
                        return tensors[piece.slot].elementSize;
                      }),
          w);
      getEveryStaging(span(next), w, nextStaging);
      replay.runNextStep(nextStaging);
    }
    peaks.push_back(replay.getPeak());
  }
  return peaks;
}

/// True if checkBoxInTensor accepts `box` (checked first, so that its
/// message is formatted only for a box it rejects: K per op otherwise).
static bool isInTensor(const Box &box, const std::vector<int64_t> &shape) {
  if (box.getRank() != shape.size())
    return false;
  if (isEmptyBox(box))
    return true;
  for (unsigned d = 0, e = shape.size(); d != e; ++d)
    if (box.lo[d] < 0 || box.hi[d] > shape[d])
      return false;
  return true;
}

/// validatePlan's rules for one op's shares (computed boxes covering the
/// output, boxes in their tensors).
static void checkShares(const ExecutablePlan &plan, const OpInfo &op,
                        const std::vector<OpShare> &shares, unsigned workers) {
  if (shares.size() != workers)
    throw RuntimeError(fmt::format("op '{}' has {} shares for {} workers",
                                   op.name, shares.size(), workers));
  const TensorInfo &out = plan.tensors[op.output];
  std::vector<const Box *> computed;
  for (unsigned w = 0; w != workers; ++w) {
    const OpShare &share = shares[w];
    auto where = [&] { return fmt::format("op '{}' on worker {}", op.name, w); };
    if (share.inputs.size() != op.inputs.size())
      throw RuntimeError(fmt::format("{} reads {} boxes of {} inputs", where(),
                                     share.inputs.size(), op.inputs.size()));
    for (unsigned p = 0, e = op.inputs.size(); p != e; ++p) {
      const std::vector<int64_t> &shape = plan.tensors[op.inputs[p]].shape;
      if (!isInTensor(share.inputs[p], shape))
        checkBoxInTensor(fmt::format("{}: the box of input {}", where(), p),
                         share.inputs[p], shape);
    }
    if (!isInTensor(share.output, out.shape))
      checkBoxInTensor(where() + ": the output box", share.output, out.shape);
    computed.push_back(&share.output);
  }
  checkBoxesCover(fmt::format("the computed boxes of op '{}'", op.name),
                  computed, out.shape);
}

std::vector<WorkerPeak>
tofu::runtime::predictPeaks(const ExecutablePlan &plan, unsigned workers,
                            PlanBoxes &boxes,
                            const std::vector<TensorMemory> &tensors,
                            unsigned steps, std::size_t minRowCells) {
  // validatePlan's tensor rules, one tensor at a time.
  std::vector<std::optional<Box>> stored;
  std::vector<const Box *> pointers;
  for (unsigned t = 0, e = plan.tensors.size(); t != e; ++t) {
    const TensorInfo &info = plan.tensors[t];
    boxes.getStored(t, stored);
    if (stored.size() != workers)
      throw RuntimeError(fmt::format("tensor '{}' has {} boxes for {} workers",
                                     info.name, stored.size(), workers));
    for (unsigned w = 0; w != workers; ++w)
      if (stored[w] && !isInTensor(*stored[w], info.shape))
        checkBoxInTensor(
            fmt::format("tensor '{}' stored on worker {}", info.name, w),
            *stored[w], info.shape);
    getPointers(stored, pointers);
    checkBoxesCover(fmt::format("the stored boxes of tensor '{}'", info.name),
                    pointers, info.shape);
  }
  std::vector<int> lastUse = computeLastUse(plan);
  StoredBytesFn storedBytes = [&boxes, &tensors](unsigned t, unsigned w) {
    return std::size_t(boxes.getStoredVolume(t, w)) * tensors[t].elementSize;
  };
  // One replay per worker: workers differ in the order of their messages
  // as well as in their boxes (on GPT-3 at K = 64 and gpt-2l and
  // ResNet-18 at K = 16 and 256 no two workers see the same events).
  std::vector<WorkerReplay> replays;
  replays.reserve(workers);
  for (unsigned w = 0; w != workers; ++w)
    replays.emplace_back(plan, lastUse, tensors, storedBytes, w);
  // The next step's messages do not change from step to step.
  // Nor which workers write which next values in place.
  std::vector<bool> candidates = getInPlaceCandidates(
      plan, lastUse, [&](unsigned t) { return tensors[t].elementSize; });
  PairBytes nextBytes;
  FetchGrid fetchGrid;
  std::vector<std::optional<Box>> updated;
  std::vector<const Box *> updatedPointers;
  for (unsigned t = 0, e = plan.tensors.size(); t != e; ++t) {
    int param = plan.tensors[t].updates;
    if (param < 0)
      continue;
    boxes.getStored(param, stored);
    getPointers(stored, pointers);
    boxes.getStored(t, updated);
    if (candidates[t])
      for (unsigned w = 0; w != workers; ++w)
        replays[w].setInPlace(t, isUpdatedInPlace(stored[w], updated[w]));
    getPointers(updated, updatedPointers);
    addFetchedBytes(pointers, updatedPointers, tensors[t].elementSize,
                    kMaxGridCells, nextBytes, fetchGrid);
  }
  std::vector<Message> byDst;
  std::vector<std::size_t> start;
  PhaseStaging next, fetch, reduce, deliver;
  next.begin(workers);
  next.addFound(nextBytes, byDst, start);
  // Per input of an op, its fetch rule; kept from op to op.
  std::vector<FetchGrid> fetchGrids;
  PairBytes reduceBytes, deliverBytes;
  std::vector<std::vector<int64_t>> bounds;
  CellWorkers computers, storers;
  GroupScratch groupScratch;
  FetchStaging fetchPhase(minRowCells);
  std::vector<const Box *> computed;
  Staging fetchStaging, reduceStaging, deliverStaging, nextStaging;
  ShareMemory memory;
  // Each input's and the output's stored boxes, kept from op to op so that
  // their boxes' memory is reused.
  std::vector<std::vector<std::optional<Box>>> inputBoxes;
  std::vector<std::vector<const Box *>> storedInputs;
  std::vector<unsigned> inputSizes;
  std::vector<std::optional<Box>> outputBoxes;
  std::vector<const Box *> storedOutput;
  for (unsigned s = 0; s != steps; ++s) {
    for (WorkerReplay &replay : replays)
      replay.beginStep();
    for (unsigned i = 0, e = plan.ops.size(); i != e; ++i) {
      const OpInfo &op = plan.ops[i];
      const std::vector<OpShare> &shares = boxes.getShares(i);
      checkShares(plan, op, shares, workers);
      unsigned numInputs = op.inputs.size();
      if (inputBoxes.size() < numInputs)
        inputBoxes.resize(numInputs);
      storedInputs.resize(numInputs);
      inputSizes.clear();
      for (unsigned p = 0; p != numInputs; ++p) {
        boxes.getStored(op.inputs[p], inputBoxes[p]);
        getPointers(inputBoxes[p], storedInputs[p]);
        inputSizes.push_back(tensors[op.inputs[p]].elementSize);
      }
      boxes.getStored(op.output, outputBoxes);
      getPointers(outputBoxes, storedOutput);
      // The fetch messages destination by destination (each worker's of
      // every input); reduce and deliver as the delivery rule finds them.
      if (fetchGrids.size() < numInputs)
        fetchGrids.resize(numInputs);
      for (unsigned p = 0; p != numInputs; ++p)
        fetchGrids[p].assign(storedInputs[p], inputSizes[p], kMaxGridCells);
      fetchPhase.run(shares, fetchGrids, numInputs, workers, fetch);
      computed.resize(workers);
      for (unsigned w = 0; w != workers; ++w)
        computed[w] = &shares[w].output;
      reduceBytes.clear();
      deliverBytes.clear();
      reduce.begin(workers);
      if (!op.partial ||
          !addGroupedReduce(computed, storedOutput,
                            tensors[op.output].elementSize, kMaxGridCells,
                            reduce, deliverBytes, groupScratch)) {
        deliverBytes.clear();
        addDeliveryBytes(computed, storedOutput,
                         tensors[op.output].elementSize, op.partial,
                         kMaxGridCells, reduceBytes, deliverBytes, bounds,
                         computers, storers);
        reduce.addFound(reduceBytes, byDst, start);
      }
      deliver.begin(workers);
      deliver.addFound(deliverBytes, byDst, start);
      for (unsigned w = 0; w != workers; ++w) {
        getShareMemory(
            plan, i, shares[w], tensors,
            [&](unsigned t) -> const Box * {
              if (t == op.output)
                return storedOutput[w];
              for (unsigned p = 0, n = op.inputs.size(); p != n; ++p)
                if (op.inputs[p] == t)
                  return storedInputs[p][w];
              return nullptr;
            },
            memory);
        fetch.get(w, fetchStaging);
        reduce.get(w, reduceStaging);
        deliver.get(w, deliverStaging);
        replays[w].runOp(i, memory, fetchStaging, reduceStaging,
                         deliverStaging);
      }
    }
    for (unsigned w = 0; w != workers; ++w) {
      next.get(w, nextStaging);
      replays[w].runNextStep(nextStaging);
    }
  }
  std::vector<WorkerPeak> peaks;
  for (const WorkerReplay &replay : replays)
    peaks.push_back(replay.getPeak());
  return peaks;
}

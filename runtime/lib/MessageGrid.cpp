//===- MessageGrid.cpp - Messages counted on a grid of boxes
//---------------===//
//
// This file implements the fetch, reduce and deliver rules' bytes per
// (source, destination) pair on a grid of the boxes (MessageGrid.h), and
// with them getOpMessages and addNextStepBytes (StepMemory.h).
//
//===----------------------------------------------------------------------===//

#include "MessageGrid.h"

#include <algorithm>

using namespace tofu::runtime;
using namespace tofu::runtime::detail;
using std::int64_t;

void tofu::runtime::detail::addFetchedBytes(
    const std::vector<const Box *> &targets,
    const std::vector<const Box *> &stored, unsigned elementSize,
    std::size_t maxCells, PairBytes &bytes, FetchGrid &fetch) {
  fetch.assign(stored, elementSize, maxCells);
  for (unsigned w = 0, e = targets.size(); w != e; ++w)
    fetch.addTarget(w, targets[w], [&](unsigned src, std::size_t b) {
      bytes[{src, w}] += b;
    });
}

namespace {

/// A partial op's reduce and deliver rule on one cell of `bytesPerCell`,
/// whose computers and storers are given lowest first: the cell's root
/// (its lowest computer storing it, else its lowest computer) receives
/// every other computer's partial values and delivers the sum.
template <typename Computers, typename Storers>
void addReducedAndDelivered(const Computers &computers, const Storers &storers,
                            std::size_t bytesPerCell, PairBytes &reduce,
                            PairBytes &deliver) {
  if (computers.empty())
    return;
  unsigned root = computers.front();
  for (unsigned c : computers)
    if (std::binary_search(storers.begin(), storers.end(), c)) {
      root = c;
      break;
    }
  for (unsigned c : computers)
    if (c != root)
      reduce[{c, root}] += bytesPerCell;
  for (unsigned d : storers)
    if (root != d)
      deliver[{root, d}] += bytesPerCell;
}

} // namespace

void tofu::runtime::detail::addDeliveryBytes(
    const std::vector<const Box *> &computed,
    const std::vector<const Box *> &stored, unsigned elementSize, bool partial,
    std::size_t maxCells, PairBytes &reduce, PairBytes &deliver,
    std::vector<std::vector<int64_t>> &bounds, CellWorkers &computers,
    CellWorkers &storers, FetchGrid &fetch) {
  if (!partial) {
    addFetchedBytes(stored, computed, elementSize, maxCells, deliver, fetch);
    return;
  }
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
      addReducedAndDelivered(computers, storers,
                             std::size_t(cell.getVolume()) * elementSize,
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
    addReducedAndDelivered(
        Span<unsigned>{computers.begin(cell), computers.end(cell)},
        Span<unsigned>{storers.begin(cell), storers.end(cell)},
        std::size_t(volume) * elementSize, reduce, deliver);
  });
}

namespace {

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
    std::sort(found.begin(), found.end(),
              [](const Message &a, const Message &b) {
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
                   b.storers, b.fetchGrid);
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

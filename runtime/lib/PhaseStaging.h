//===- PhaseStaging.h - A phase's staging buffers per worker ----*- C++ -*-===//
//
// This file declares how the peak prediction (StepMemory.cpp) finds each
// worker's staging buffers of a phase (the first message of each size, in
// the worker's (src, dst) order) without listing an all-gather's or a
// reduce-scatter's K x K messages: PhaseStaging gathers them one
// destination at a time, FetchStaging groups the destinations reading one
// large box, and addGroupedReduce stages a partial op's reduce per group of
// workers computing one box. Internal to the runtime library.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_LIB_PHASESTAGING_H
#define TOFU_RUNTIME_LIB_PHASESTAGING_H

#include "MessageGrid.h"
#include "tofu/Runtime/Error.h"

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tofu {
namespace runtime {
namespace detail {

/// A worker's messages of one phase, in (src, dst) order.
using Messages = Span<Message>;

/// One staging buffer a phase allocates and releases.
struct Staged {
  std::size_t bytes;
  MemoryUse use;
  bool operator==(const Staged &o) const {
    return bytes == o.bytes && use == o.use;
  }
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
    if (!std::is_sorted(
            all.begin(), all.end(),
            [](const Message &a, const Message &b) { return a.dst < b.dst; })) {
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
                      GroupScratch &s);

/// Worker `w`'s staging, every message replayed (the reference form over
/// a built schedule).
void getEveryStaging(Messages messages, unsigned w, Staging &out);

} // namespace detail
} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_LIB_PHASESTAGING_H

//===- PhaseStaging.cpp - A phase's staging buffers per worker ------------===//
//
// This file implements FetchStaging, addGroupedReduce and getEveryStaging
// (PhaseStaging.h).
//
//===----------------------------------------------------------------------===//

#include "PhaseStaging.h"

#include <algorithm>

using namespace tofu::runtime;
using namespace tofu::runtime::detail;
using std::int64_t;

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
        grids[p].addTarget(
            w, &shares[w].inputs[p],
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
        grids[p].addTarget(
            w, &shares[w].inputs[p],
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
        grids[p].addTarget(
            w, &shares[w].inputs[p],
            [&](unsigned src, std::size_t b) { change(src, int64_t(b)); });
      else
        grids[p].addOwnOverlap(
            w, *g.targets[p],
            [&](unsigned src, std::size_t b) { change(src, -int64_t(b)); });
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
    auto excluded = [&](unsigned src) { return src == w || isChanged(w, src); };
    for (std::size_t k = g.sizeBegin; k != g.sizeEnd; ++k) {
      const unsigned *b = sizeSources.data() + sizeStart[k],
                     *e = sizeSources.data() + (k + 1 < sizeStart.size()
                                                    ? sizeStart[k + 1]
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

/// Whether box a sorts before box b (lo, then hi, dimension by dimension).
static bool lessBox(const Box &a, const Box &b) {
  for (unsigned d = 0, e = a.getRank(); d != e; ++d)
    if (a.lo[d] != b.lo[d])
      return a.lo[d] < b.lo[d];
  for (unsigned d = 0, e = a.getRank(); d != e; ++d)
    if (a.hi[d] != b.hi[d])
      return a.hi[d] < b.hi[d];
  return false;
}

bool tofu::runtime::detail::addGroupedReduce(
    const std::vector<const Box *> &computed,
    const std::vector<const Box *> &stored, unsigned elementSize,
    std::size_t maxCells, PhaseStaging &reduce, PairBytes &deliver,
    GroupScratch &s) {
  unsigned workers = computed.size();
  // Group the workers by computed box: sorted by box, equal boxes adjacent.
  s.order.clear();
  for (unsigned w = 0; w != workers; ++w)
    if (computed[w] && !isEmptyBox(*computed[w]))
      s.order.push_back(w);
  std::stable_sort(s.order.begin(), s.order.end(), [&](unsigned a, unsigned b) {
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

void tofu::runtime::detail::getEveryStaging(Messages messages, unsigned w,
                                            Staging &out) {
  out.clear();
  for (const Message &m : messages)
    out.push_back(
        Staged{m.bytes, m.src == w ? MemoryUse::Send : MemoryUse::Receive});
}

//===- CharLM.cpp - The charlm example's text, batches and init -----------===//
//
// This file implements the charlm example's batch and initialisation rules
// (CharLM.h); reference.py's splitmix64 and batch_offsets are the same
// batch rule in Python.
//
//===----------------------------------------------------------------------===//

#include "CharLM.h"

#include "tofu/Runtime/Error.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

using namespace tofu::runtime;

std::uint64_t charlm::splitmix64(std::uint64_t x) {
  std::uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<unsigned char> charlm::readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw RuntimeError("--text " + path + ": " + std::strerror(errno));
  std::vector<unsigned char> text((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
  if (in.bad())
    throw RuntimeError("--text " + path + ": cannot read it");
  return text;
}

std::uint64_t charlm::getBatchOffset(std::int64_t step, std::int64_t row,
                                     std::size_t textSize, std::int64_t seq) {
  std::uint64_t counter = (std::uint64_t(step) << 32) | std::uint64_t(row);
  return splitmix64(counter) % (textSize - std::uint64_t(seq));
}

namespace {

/// A dense host tensor of `type` shaped as `box`, with `fn(position)`
/// storing the element at each position of the box (global coordinates),
/// in row-major order.
template <typename T, typename Fn>
HostTensor makeShard(ElementType type, const Box &box, Fn fn) {
  HostTensor shard;
  shard.type = type;
  shard.shape = box.getExtents();
  std::int64_t volume = box.getVolume();
  shard.data.resize(std::size_t(volume) * sizeof(T));
  T *out = reinterpret_cast<T *>(shard.data.data());
  std::vector<std::int64_t> at = box.lo;
  for (std::int64_t i = 0; i != volume; ++i) {
    out[i] = fn(at);
    // The next position: the innermost dimension fastest.
    for (unsigned d = box.getRank(); d-- != 0;) {
      if (++at[d] != box.hi[d])
        break;
      at[d] = box.lo[d];
    }
  }
  return shard;
}

/// FNV-1a's 64-bit hash of `s`.
std::uint64_t fnv1a64(const std::string &s) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s)
    h = (h ^ c) * 0x100000001B3ull;
  return h;
}

bool endsWith(const std::string &s, const char *suffix) {
  std::size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

} // namespace

HostTensor charlm::makeBatchShard(const std::vector<unsigned char> &text,
                                  std::int64_t step, const Box &box,
                                  std::int64_t seq, unsigned shift) {
  std::int64_t row = -1;
  std::uint64_t offset = 0;
  return makeShard<std::int64_t>(
      ElementType::I64, box, [&](const std::vector<std::int64_t> &at) {
        if (at[0] != row) {
          row = at[0];
          offset = getBatchOffset(step, row, text.size(), seq);
        }
        return std::int64_t(text[offset + at[1] + shift]);
      });
}

float charlm::getInitialValue(const std::string &name, const std::string &role,
                              const std::vector<std::int64_t> &shape,
                              std::int64_t index) {
  if (role != "param") {
    if (endsWith(name, ".attn.mask") && shape.size() == 2) {
      std::int64_t row = index / shape[1], col = index % shape[1];
      return col > row ? -std::numeric_limits<float>::infinity() : 0.0f;
    }
    return 0.0f;
  }
  if (shape.size() == 1)
    return endsWith(name, ".weight") ? 1.0f : 0.0f;
  double bound = 1.0 / std::sqrt(double(shape.empty() ? 1 : shape.back()));
  std::uint64_t bits = splitmix64(fnv1a64(name) + std::uint64_t(index));
  double unit = double(bits >> 11) * 0x1p-53;
  return float((2 * unit - 1) * bound);
}

HostTensor charlm::makeInitialShard(const std::string &name,
                                    const std::string &role,
                                    const std::vector<std::int64_t> &shape,
                                    const Box &box) {
  return makeShard<float>(
      ElementType::F32, box, [&](const std::vector<std::int64_t> &at) {
        std::int64_t index = 0;
        for (unsigned d = 0; d != shape.size(); ++d)
          index = index * shape[d] + at[d];
        return getInitialValue(name, role, shape, index);
      });
}

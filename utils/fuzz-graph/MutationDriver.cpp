//===- MutationDriver.cpp - A random-mutation driver for the graph fuzzer -===//
//
// This file implements main() for tofu-graph-fuzzer: it loads seed graphs,
// and until the time is up, applies a few random mutations to a random seed
// and feeds the result to LLVMFuzzerTestOneInput (GraphFuzzer.cpp). It is
// built with g++ under ASan+UBSan, so a crash, leak, out-of-bounds access
// or undefined behaviour aborts with a report; the input that caused it is
// written first to `crash-input.json`. (libFuzzer needs clang, and clang 14
// cannot compile Debian's ANTLR 4.9 headers, which the spec parser uses.)
//
//   tofu-graph-fuzzer SECONDS SEED FILE.json...
//
// Mutations: byte flips, deletions and duplications of spans, insertion
// of JSON tokens and of numbers that stress the reader (negative, huge,
// non-integral), truncation, and swapping two quoted strings (which turns
// names into dangling references, duplicates and cycles).
//
//===----------------------------------------------------------------------===//

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

const char *const Tokens[] = {
    "{", "}", "[", "]", ",", ":", "\"", "null", "true", "-", "\\u0000",
    "\"name\": ", "\"shape\": [", "\"dtype\": ", "\"role\": ", "\"inputs\": [",
    "\"outputs\": [", "\"params\": {", "\"group\": ", "\"type\": ", "\"input\"",
    "\"param\"", "\"state\"", "\"f32\"", "\"i64\"", "\"inf\"", "\"nan\"",
    "-1", "0", "1", "2", "1.5", "1e999", "-9223372036854775808",
    "9223372036854775807", "99999999999999999999", "4294967296", "1e-05",
    "\xff", "\xc3\xa9", "\"\"", "[[[[[[[[", "]]]]"};

class Mutator {
public:
  explicit Mutator(uint64_t seed) : rng(seed) {}

  std::string mutate(std::string s) {
    unsigned n = 1 + pick(4);
    for (unsigned i = 0; i != n; ++i)
      mutateOnce(s);
    return s;
  }

private:
  size_t pick(size_t n) { return n ? rng() % n : 0; }

  void mutateOnce(std::string &s) {
    switch (pick(7)) {
    case 0: // flip a byte
      if (!s.empty())
        s[pick(s.size())] ^= char(1 << pick(8));
      break;
    case 1: { // delete a span
      size_t at = pick(s.size() + 1);
      s.erase(at, pick(std::min<size_t>(64, s.size() - at + 1)));
      break;
    }
    case 2: { // duplicate a span
      size_t at = pick(s.size() + 1);
      std::string span = s.substr(at, pick(256));
      s.insert(pick(s.size() + 1), span);
      break;
    }
    case 3: case 4: // insert a token
      s.insert(pick(s.size() + 1), Tokens[pick(std::size(Tokens))]);
      break;
    case 5: // truncate
      if (pick(4) == 0)
        s.resize(pick(s.size() + 1));
      break;
    case 6: swapStrings(s); break;
    }
  }

  /// Replaces one quoted string with another of the document.
  void swapStrings(std::string &s) {
    auto findString = [&](size_t from, size_t &b, size_t &e) {
      b = s.find('"', from);
      if (b == std::string::npos)
        return false;
      e = s.find('"', b + 1);
      return e != std::string::npos;
    };
    size_t b1, e1, b2, e2;
    if (!findString(pick(s.size() + 1), b1, e1) ||
        !findString(pick(s.size() + 1), b2, e2))
      return;
    std::string other = s.substr(b2, e2 - b2 + 1);
    s.replace(b1, e1 - b1 + 1, other);
  }

  std::mt19937_64 rng;
};

} // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    llvm::errs() << "usage: tofu-graph-fuzzer SECONDS SEED FILE.json...\n";
    return 2;
  }
  double seconds = std::atof(argv[1]);
  uint64_t seed = std::strtoull(argv[2], nullptr, 10);
  std::vector<std::string> corpus;
  for (int i = 3; i < argc; ++i) {
    auto buf = llvm::MemoryBuffer::getFile(argv[i]);
    if (!buf) {
      llvm::errs() << "cannot read '" << argv[i] << "'\n";
      return 1;
    }
    corpus.push_back((*buf)->getBuffer().str());
  }
  Mutator mutator(seed);
  std::mt19937_64 pickSeed(seed ^ 0x9e3779b97f4a7c15ull);
  auto start = std::chrono::steady_clock::now();
  uint64_t runs = 0;
  // Every seed once unmutated, then mutants.
  for (const std::string &s : corpus) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(s.data()),
                           s.size());
    ++runs;
  }
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
             .count() < seconds) {
    std::string input = mutator.mutate(corpus[pickSeed() % corpus.size()]);
    {
      std::ofstream out("crash-input.json", std::ios::binary);
      out << input;
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(input.data()),
                           input.size());
    if (++runs % 10000 == 0)
      llvm::errs() << "runs: " << runs << '\n';
  }
  std::remove("crash-input.json");
  llvm::outs() << "tofu-graph-fuzzer: " << runs << " inputs in " << seconds
               << " s, seed " << seed << ", no failures\n";
  return 0;
}

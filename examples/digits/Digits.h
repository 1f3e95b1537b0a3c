//===- Digits.h - scikit-learn's digits data set ----------------*- C++ -*-===//
//
// This file declares the loader of the digits data set that Debian's
// python3-sklearn ships as sklearn/datasets/data/digits.csv.gz: 1797 images
// of 8x8 pixels (values 0-16), one per line, the label (0-9) last.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_EXAMPLES_DIGITS_H
#define TOFU_EXAMPLES_DIGITS_H

#include <cstdint>
#include <string>
#include <vector>

/// Images as rows of 64 floats scaled to [0, 1], and their labels.
struct Digits {
  static constexpr unsigned Pixels = 64;
  std::vector<float> pixels;
  std::vector<std::int64_t> labels;

  std::size_t size() const { return labels.size(); }
};

/// Reads the gzip-compressed CSV at `path`; throws std::runtime_error
/// naming the file and line on a malformed one.
Digits loadDigits(const std::string &path);

#endif // TOFU_EXAMPLES_DIGITS_H

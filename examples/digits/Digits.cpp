//===- Digits.cpp - scikit-learn's digits data set ------------------------===//
//
// This file implements the loader of digits.csv.gz with zlib.
//
//===----------------------------------------------------------------------===//

#include "Digits.h"

#include <zlib.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>

Digits loadDigits(const std::string &path) {
  std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"),
                                                  gzclose);
  if (!file)
    throw std::runtime_error("cannot open '" + path + "'");
  Digits digits;
  char line[4096];
  unsigned lineNo = 0;
  while (gzgets(file.get(), line, sizeof line)) {
    ++lineNo;
    std::vector<double> fields;
    for (char *at = line, *end; *at && *at != '\n'; at = end + (*end == ',')) {
      fields.push_back(std::strtod(at, &end));
      if (end == at || (*end != ',' && *end != '\n' && *end != '\r' && *end))
        throw std::runtime_error(path + ":" + std::to_string(lineNo) +
                                 ": expected comma-separated numbers");
      if (*end == '\r')
        ++end;
    }
    if (fields.empty())
      continue;
    double label = fields.back();
    if (fields.size() != Digits::Pixels + 1 || label < 0 || label > 9)
      throw std::runtime_error(path + ":" + std::to_string(lineNo) +
                               ": expected 64 pixels and a label 0-9");
    for (unsigned p = 0; p != Digits::Pixels; ++p)
      digits.pixels.push_back(float(fields[p] / 16.0));
    digits.labels.push_back(std::int64_t(label));
  }
  if (digits.size() == 0)
    throw std::runtime_error("'" + path + "' holds no images");
  return digits;
}

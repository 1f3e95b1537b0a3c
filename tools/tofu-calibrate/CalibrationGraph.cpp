//===- CalibrationGraph.cpp - The ops tofu-calibrate times ----------------===//
//
// This file writes the calibration graph (CalibrationGraph.h).
//
//===----------------------------------------------------------------------===//

#include "CalibrationGraph.h"

#include <cstdint>
#include <sstream>
#include <vector>

using namespace tofu;

namespace {

/// Writes tensors and ops of a graph whose ops share no tensor.
class GraphText {
public:
  /// Adds an f32 graph input of `shape`; returns its name.
  std::string input(const std::vector<int64_t> &shape) {
    std::string name = "in" + std::to_string(tensors.size());
    tensor(name, shape, "input");
    return name;
  }
  void op(const std::string &type, const std::vector<std::string> &inputs,
          const std::vector<int64_t> &outShape, const std::string &params) {
    std::string name = type + "." + std::to_string(numOps++);
    tensor(name, outShape, "output");
    std::ostringstream os;
    os << "{\"name\": \"" << name << "\", \"type\": \"" << type
       << "\", \"inputs\": [";
    for (size_t i = 0; i != inputs.size(); ++i)
      os << (i ? ", " : "") << '"' << inputs[i] << '"';
    os << "], \"outputs\": [\"" << name << "\"], \"params\": {" << params
       << "}}";
    ops.push_back(os.str());
  }
  std::string str() const {
    std::ostringstream os;
    os << "{\"format\": \"tofu-graph\", \"version\": 1,\n \"tensors\": [";
    for (size_t i = 0; i != tensors.size(); ++i)
      os << (i ? ",\n  " : "\n  ") << tensors[i];
    os << "],\n \"ops\": [";
    for (size_t i = 0; i != ops.size(); ++i)
      os << (i ? ",\n  " : "\n  ") << ops[i];
    os << "]}\n";
    return os.str();
  }

private:
  void tensor(const std::string &name, const std::vector<int64_t> &shape,
              const char *role) {
    std::ostringstream os;
    os << "{\"name\": \"" << name << "\", \"shape\": [";
    for (size_t d = 0; d != shape.size(); ++d)
      os << (d ? ", " : "") << shape[d];
    os << "], \"dtype\": \"f32\", \"role\": \"" << role << "\"}";
    tensors.push_back(os.str());
  }
  std::vector<std::string> tensors, ops;
  unsigned numOps = 0;
};

} // namespace

std::string tofu::getCalibrationGraph(bool quick) {
  GraphText g;
  // Matrix products m x k by k x n: squares, then narrow ones (one small
  // dimension, which BLAS runs slower per multiply-add).
  struct MmSize {
    int64_t m, k, n;
  };
  for (MmSize s : {MmSize{8, 8, 8}, MmSize{64, 64, 64}, MmSize{16, 256, 8},
                   MmSize{256, 256, 256}, MmSize{512, 512, 512},
                   MmSize{1024, 1024, 1024}, MmSize{1024, 1024, 16},
                   MmSize{2048, 32, 1024}, MmSize{1024, 1024, 96},
                   MmSize{64, 1024, 2048}}) {
    if (quick && s.m * s.k * s.n > 64 * 64 * 64)
      continue;
    g.op("mm", {g.input({s.m, s.k}), g.input({s.k, s.n})}, {s.m, s.n}, "");
  }
  // 3x3 convolutions, padding 1, of b images of c channels h x h into c
  // channels.
  const char *conv =
      "\"stride_0\": 1, \"stride_1\": 1, \"padding_0\": 1, \"padding_1\": 1, "
      "\"dilation_0\": 1, \"dilation_1\": 1, \"transposed\": 0, "
      "\"output_padding_0\": 0, \"output_padding_1\": 0, \"groups\": 1";
  struct ConvSize {
    int64_t b, c, h;
  };
  // Many channels on few pixels give narrow im2col GEMMs.
  for (ConvSize s : {ConvSize{1, 4, 4}, ConvSize{2, 16, 8}, ConvSize{1, 32, 2},
                     ConvSize{4, 32, 16}, ConvSize{8, 64, 16},
                     ConvSize{8, 64, 32}, ConvSize{8, 128, 8},
                     ConvSize{8, 256, 4}, ConvSize{8, 512, 2}}) {
    if (quick && s.c > 32)
      continue;
    g.op("convolution_nobias",
         {g.input({s.b, s.c, s.h, s.h}), g.input({s.c, s.c, 3, 3})},
         {s.b, s.c, s.h, s.h}, conv);
  }
  // Transposes of n x n.
  for (int64_t n : {8, 128, 1024, 2048}) {
    if (quick && n > 128)
      break;
    g.op("t", {g.input({n, n})}, {n, n}, "");
  }
  // Element-wise sums of n elements.
  for (int64_t n : {16, 4096, 262144, 4194304}) {
    if (quick && n > 4096)
      break;
    g.op("add_Tensor", {g.input({n}), g.input({n})}, {n}, "\"alpha\": 1");
  }
  // Column sums of m x 256.
  for (int64_t m : {2, 64, 4096, 32768}) {
    if (quick && m > 64)
      break;
    g.op("sum_dim_IntList", {g.input({m, 256})}, {1, 256},
         "\"dim_0\": 0, \"keepdim\": 1");
  }
  return g.str();
}

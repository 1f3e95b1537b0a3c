//===- Models.cpp - The forward passes of the digits models ---------------===//
//
// This file implements the forward passes of model.py's MLP and CNN in
// plain C++, as PyTorch computes them (row-major weights, NCHW images).
//
//===----------------------------------------------------------------------===//

#include "Models.h"

#include <algorithm>

namespace {

constexpr unsigned Pixels = 64, Side = 8, Classes = 10;

/// out[o] = bias[o] + Sum_i weight[o, i] * in[i] for o < outputs.
void linear(const std::vector<float> &weight, const std::vector<float> &bias,
            const float *in, unsigned inputs, unsigned outputs, float *out) {
  for (unsigned o = 0; o != outputs; ++o) {
    float sum = bias[o];
    for (unsigned i = 0; i != inputs; ++i)
      sum += weight[o * inputs + i] * in[i];
    out[o] = sum;
  }
}

void mlpForward(const ParamValues &p, const float *x, float *logits) {
  constexpr unsigned Hidden = 128;
  float hidden[Hidden];
  linear(p[0], p[1], x, Pixels, Hidden, hidden);
  for (float &h : hidden)
    h = std::max(h, 0.0f);
  linear(p[2], p[3], hidden, Hidden, Classes, logits);
}

void cnnForward(const ParamValues &p, const float *x, float *logits) {
  constexpr unsigned Channels = 8;
  float features[Channels * Pixels];
  for (unsigned c = 0; c != Channels; ++c)
    for (int y = 0; y != int(Side); ++y)
      for (int z = 0; z != int(Side); ++z) {
        float sum = p[1][c];
        for (int dy = -1; dy <= 1; ++dy)
          for (int dz = -1; dz <= 1; ++dz) {
            int yy = y + dy, zz = z + dz;
            if (yy >= 0 && yy < int(Side) && zz >= 0 && zz < int(Side))
              sum += p[0][c * 9 + (dy + 1) * 3 + (dz + 1)] * x[yy * Side + zz];
          }
        features[c * Pixels + y * Side + z] = std::max(sum, 0.0f);
      }
  linear(p[2], p[3], features, Channels * Pixels, Classes, logits);
}

} // namespace

const Model &getMLP() {
  static const Model model{
      "mlp", {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}, mlpForward};
  return model;
}

const Model &getCNN() {
  static const Model model{
      "cnn", {"conv.weight", "conv.bias", "fc.weight", "fc.bias"}, cnnForward};
  return model;
}

//===- Models.h - The forward passes of the digits models -------*- C++ -*-===//
//
// This file declares the two models of model.py as the training program
// sees them: the graph names of their parameters (weight, bias per layer,
// in graph order) and their forward pass from parameters to logits, with
// which the program measures accuracy (the graphs output only the loss
// and the updated parameters).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_EXAMPLES_MODELS_H
#define TOFU_EXAMPLES_MODELS_H

#include <vector>

/// Parameter values in the order of Model::params.
using ParamValues = std::vector<std::vector<float>>;

/// One model of model.py.
struct Model {
  const char *name;
  /// The graph names of the parameters: a weight, then its bias, per layer.
  std::vector<const char *> params;
  /// Writes the 10 logits of the 64 pixels at `x` to `logits`.
  void (*forward)(const ParamValues &params, const float *x, float *logits);
};

/// MLP: Linear(64, 128) -> ReLU -> Linear(128, 10).
const Model &getMLP();
/// CNN: Conv2d(1, 8, 3, padding=1) -> ReLU -> flatten -> Linear(512, 10).
const Model &getCNN();

#endif // TOFU_EXAMPLES_MODELS_H

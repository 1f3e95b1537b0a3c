//===- train.cpp - Train on digits with 1, 2 and 4 workers ----------------===//
//
// This file implements the digits example (docs/Linking.md): the training
// steps of model.py's MLP (mlp.json) and CNN (cnn.json), each planned by
// tofu-plan for K = 1, 2 and 4 workers and compiled into this program by
// tofu_add_plan (namespaces mlp_k1 ... cnn_k4). For each model and K it
// initialises the parameters alike, trains with SGD on the first 1500
// images in batches of 100 (the same shuffled order for every K), prints
// the mean loss and the test accuracy of every epoch, and finally checks
// that the loss fell, the accuracy rose, and every step's loss with K
// workers equals the loss with one within float tolerance. The graphs
// output only the loss and the updated parameters, so the accuracy on the
// 297 held-out images is computed here from the trained parameters gathered
// from the workers (Models.h). Exit status: 0 when the checks pass, 1 when
// one fails, 2 on bad usage or data.
//
//===----------------------------------------------------------------------===//

#include "Digits.h"
#include "Models.h"

#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/LinkedPlan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <numeric>
#include <random>

TOFU_DECLARE_PLAN(mlp_k1)
TOFU_DECLARE_PLAN(mlp_k2)
TOFU_DECLARE_PLAN(mlp_k4)
TOFU_DECLARE_PLAN(cnn_k1)
TOFU_DECLARE_PLAN(cnn_k2)
TOFU_DECLARE_PLAN(cnn_k4)

#ifndef DIGITS_CSV
#define DIGITS_CSV "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
#endif

using tofu::runtime::LinkedPlan;

namespace {

constexpr unsigned TrainImages = 1500;
constexpr unsigned Classes = 10;

/// What training with one worker count measured.
struct Curve {
  /// The loss of every step.
  std::vector<double> losses;
  /// Per epoch (0: before training), the mean loss and the test accuracy.
  std::vector<double> epochLoss, accuracy;
};

/// PyTorch's default initialisation of a Linear layer: weights and bias
/// uniform in +-1/sqrt(fan_in), from `rng`.
std::vector<float> initialValues(std::size_t count, unsigned fanIn,
                                 std::mt19937 &rng) {
  float bound = 1.0f / std::sqrt(float(fanIn));
  std::uniform_real_distribution<float> dist(-bound, bound);
  std::vector<float> values(count);
  for (float &v : values)
    v = dist(rng);
  return values;
}

/// The fraction of images [first, end) of `data` that `model` with
/// parameters `params` classifies right (argmax of the logits).
double accuracy(const Model &model, const ParamValues &params,
                const Digits &data, unsigned first, unsigned end) {
  unsigned right = 0;
  for (unsigned i = first; i != end; ++i) {
    float logits[Classes];
    model.forward(params, &data.pixels[std::size_t(i) * Digits::Pixels],
                  logits);
    right += std::max_element(logits, logits + Classes) - logits ==
             data.labels[i];
  }
  return double(right) / (end - first);
}

Curve train(const Model &model, const tofu::runtime::GeneratedPlan &plan,
            const Digits &data, unsigned epochs) {
  LinkedPlan linked(plan);
  unsigned k = linked.getNumWorkers();
  // Weights and biases alike: uniform in +-1/sqrt(fan_in of the weight).
  std::mt19937 init(1);
  ParamValues params;
  unsigned fanIn = 1;
  for (unsigned p = 0; p != model.params.size(); ++p) {
    const tofu::runtime::GeneratedTensor &tensor =
        plan.tensors[linked.getTensor(model.params[p])];
    std::size_t count = 1;
    for (unsigned d = 0; d != tensor.rank; ++d)
      count *= tensor.shape[d];
    if (p % 2 == 0)
      fanIn = count / tensor.shape[0];
    params.push_back(initialValues(count, fanIn, init));
    linked.setInput(model.params[p], params.back());
  }

  const tofu::runtime::GeneratedTensor &input =
      plan.tensors[linked.getTensor("input")];
  unsigned batch = input.shape[0];
  const char *name = model.name;
  Curve curve;
  curve.epochLoss.push_back(NAN);
  curve.accuracy.push_back(
      accuracy(model, params, data, TrainImages, data.size()));
  std::printf("%s K=%u epoch 0: test accuracy %.4f\n", name, k,
              curve.accuracy.back());
  std::vector<unsigned> order(TrainImages);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 shuffle(2);
  for (unsigned epoch = 1; epoch <= epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), shuffle);
    double sum = 0;
    unsigned steps = 0;
    for (unsigned at = 0; at + batch <= TrainImages; at += batch, ++steps) {
      std::vector<float> pixels;
      std::vector<std::int64_t> labels;
      for (unsigned i = at; i != at + batch; ++i) {
        const float *image = &data.pixels[std::size_t(order[i]) * Digits::Pixels];
        pixels.insert(pixels.end(), image, image + Digits::Pixels);
        labels.push_back(data.labels[order[i]]);
      }
      linked.setInput("input", pixels);
      linked.setInput("target", labels);
      tofu::runtime::StepResult result = linked.runStep();
      if (epoch == 1 && steps == 0)
        std::printf("%s K=%u: %lld bytes moved per step, the plan's "
                    "comm_bytes %lld\n",
                    name, k, (long long)result.movedBytes,
                    (long long)plan.commBytes);
      curve.losses.push_back(linked.getLossValue());
      sum += curve.losses.back();
    }
    curve.epochLoss.push_back(sum / steps);
    // The trained parameters, gathered from the workers' stored boxes.
    for (unsigned p = 0; p != model.params.size(); ++p)
      params[p] = linked.gatherFloats(model.params[p]);
    curve.accuracy.push_back(
        accuracy(model, params, data, TrainImages, data.size()));
    std::printf("%s K=%u epoch %u: mean loss %.4f test accuracy %.4f\n", name,
                k, epoch, curve.epochLoss.back(), curve.accuracy.back());
  }
  return curve;
}

/// Checks `curve` and, for K > 1, that it matches `single`; prints a line
/// per check.
bool check(const char *name, unsigned k, const Curve &curve,
           const Curve *single, double tolerance) {
  bool ok = true;
  auto report = [&](bool pass, const char *what, const std::string &detail) {
    std::printf("%s K=%u %s: %s (%s)\n", name, k, what, pass ? "yes" : "NO",
                detail.c_str());
    ok &= pass;
  };
  char detail[160];
  double firstLoss = curve.epochLoss[1], lastLoss = curve.epochLoss.back();
  std::snprintf(detail, sizeof detail, "epoch 1 %.4f, last %.4f", firstLoss,
                lastLoss);
  report(lastLoss < 0.5 * firstLoss, "loss falls", detail);
  double before = curve.accuracy.front(), after = curve.accuracy.back();
  std::snprintf(detail, sizeof detail, "%.4f before training, %.4f after",
                before, after);
  report(after > before && after >= 0.85, "accuracy rises", detail);
  if (!single)
    return ok;
  double worst = 0;
  bool same = curve.losses.size() == single->losses.size();
  for (std::size_t s = 0; same && s != curve.losses.size(); ++s) {
    double diff = std::fabs(curve.losses[s] - single->losses[s]);
    worst = std::max(worst, diff);
    same = diff <= tolerance * (1 + std::fabs(single->losses[s]));
  }
  std::snprintf(detail, sizeof detail,
                "%zu steps, largest difference %.3g, tolerance %.0e",
                curve.losses.size(), worst, tolerance);
  report(same, "loss curve equals K=1", detail);
  return ok;
}

} // namespace

int main(int argc, char **argv) {
  std::string path = DIGITS_CSV;
  unsigned epochs = 20;
  double tolerance = 1e-4;
  const char *only = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--model") && i + 1 < argc &&
        (!std::strcmp(argv[i + 1], "mlp") || !std::strcmp(argv[i + 1], "cnn")))
      only = argv[++i];
    else if (!std::strcmp(argv[i], "--epochs") && i + 1 < argc)
      epochs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--tolerance") && i + 1 < argc)
      tolerance = std::atof(argv[++i]);
    else if (argv[i][0] != '-')
      path = argv[i];
    else {
      std::fprintf(stderr, "usage: %s [DIGITS.csv.gz] [--model mlp|cnn] "
                   "[--epochs N] [--tolerance T]\n", argv[0]);
      return 2;
    }
  }
  if (epochs == 0) {
    std::fprintf(stderr, "--epochs must be positive\n");
    return 2;
  }
  Digits data;
  try {
    data = loadDigits(path);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  if (data.size() <= TrainImages) {
    std::fprintf(stderr, "error: '%s' has %zu images, need more than %u\n",
                 path.c_str(), data.size(), TrainImages);
    return 2;
  }
  std::printf("digits: %zu images, %u for training, %zu for testing\n",
              data.size(), TrainImages, data.size() - TrainImages);
  struct Run {
    const Model &model;
    std::vector<const tofu::runtime::GeneratedPlan *> plans;
  };
  const Run runs[] = {
      {getMLP(),
       {&mlp_k1::getGeneratedPlan(), &mlp_k2::getGeneratedPlan(),
        &mlp_k4::getGeneratedPlan()}},
      {getCNN(),
       {&cnn_k1::getGeneratedPlan(), &cnn_k2::getGeneratedPlan(),
        &cnn_k4::getGeneratedPlan()}}};
  bool ok = true;
  for (const Run &run : runs) {
    if (only && std::strcmp(only, run.model.name) != 0)
      continue;
    std::map<unsigned, Curve> curves;
    try {
      for (const tofu::runtime::GeneratedPlan *plan : run.plans)
        curves[plan->workers] = train(run.model, *plan, data, epochs);
    } catch (const tofu::runtime::RuntimeError &e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      return 2;
    }
    for (const auto &[k, curve] : curves)
      ok &= check(run.model.name, k, curve, k == 1 ? nullptr : &curves[1],
                  tolerance);
  }
  std::printf("%s\n", ok ? "all checks passed" : "a check failed");
  return ok ? 0 : 1;
}

//===- ParallelBaselines.cpp - Megatron-LM 3D and ZeRO-3 step times -------===//
//
// This file implements the estimates of ParallelBaselines.h; every term is
// a formula of docs/Machines.md over the cluster's constants.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/ParallelBaselines.h"
#include "tofu/Planner/ClusterModel.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>

using namespace tofu;
using namespace tofu::planner;

static llvm::Error shapeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "not a GPT-style transformer: " + msg);
}

llvm::Expected<TransformerShape>
planner::getTransformerShape(const PlanningProblem &problem) {
  const graph::Graph &g = problem.getGraph();
  TransformerShape s;
  for (unsigned i = 0, e = g.getNumOps(); i != e && !s.hidden; ++i) {
    const graph::Op &op = g.getOp(i);
    if (op.type != "embedding" || op.inputs.size() < 2)
      continue;
    const graph::Tensor &table = g.getTensor(op.inputs[0].index);
    const graph::Tensor &tokens = g.getTensor(op.inputs[1].index);
    if (table.role != graph::Role::Param || table.shape.size() != 2 ||
        tokens.role != graph::Role::Input || tokens.shape.size() != 2)
      continue;
    s.vocabulary = table.shape[0];
    s.hidden = unsigned(table.shape[1]);
    s.batch = tokens.shape[0];
    s.sequence = tokens.shape[1];
  }
  if (!s.hidden)
    return shapeError("no token embedding (an 'embedding' op of a [V, h] "
                      "parameter by a [B, s] input)");
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t) {
    const graph::Tensor &tensor = g.getTensor(t);
    if (tensor.role != graph::Role::Param)
      continue;
    double elements = 1;
    for (int64_t d : tensor.shape)
      elements *= double(d);
    s.parameters += elements;
    if (tensor.shape.size() == 2 && tensor.shape[0] == 4 * int64_t(s.hidden) &&
        tensor.shape[1] == s.hidden)
      ++s.layers;
  }
  if (!s.layers)
    return shapeError("no layer's MLP weight of shape [4h, h] = [" +
                      llvm::Twine(4 * s.hidden) + ", " + llvm::Twine(s.hidden) +
                      "]");
  for (unsigned i = 0, e = g.getNumOps(); i != e && !s.heads; ++i) {
    const graph::Op &op = g.getOp(i);
    if (op.type != "bmm" || op.inputs.empty())
      continue;
    const graph::Tensor &a = g.getTensor(op.inputs[0].index);
    if (a.shape.size() == 3 && a.shape[0] % s.batch == 0)
      s.heads = unsigned(a.shape[0] / s.batch);
  }
  if (!s.heads || s.hidden % s.heads)
    return shapeError("no attention 'bmm' over B x heads dividing h = " +
                      llvm::Twine(s.hidden));
  // A layer: q, k, v, out (h^2 each), fc1 and fc2 (4h^2 each), their
  // biases (9h) and two layer norms (4h).
  double h = s.hidden;
  s.layerParameters = 12 * h * h + 13 * h;
  return s;
}

double planner::getMegatronFlops(const TransformerShape &shape) {
  double B = shape.batch, s = shape.sequence, l = shape.layers,
         h = shape.hidden, V = shape.vocabulary;
  return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
}

static llvm::Error configError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

llvm::Expected<Megatron3DConfig> planner::getMegatron3DConfig(
    const TransformerShape &shape, const GpuCluster &cluster, unsigned workers,
    unsigned tensor, unsigned pipeline, int64_t microbatchSize) {
  Megatron3DConfig c;
  c.tensor = tensor;
  c.pipeline = pipeline;
  c.microbatchSize = microbatchSize;
  if (!tensor || cluster.gpusPerNode % tensor)
    return configError("--tensor-parallel " + llvm::Twine(tensor) +
                       " must divide the " + llvm::Twine(cluster.gpusPerNode) +
                       " GPUs of a node (Megatron keeps tensor parallelism "
                       "on the node's NVSwitch)");
  if (shape.heads % tensor)
    return configError("--tensor-parallel " + llvm::Twine(tensor) +
                       " must divide the " + llvm::Twine(shape.heads) +
                       " attention heads");
  if (!pipeline || shape.layers % pipeline)
    return configError("--pipeline-parallel " + llvm::Twine(pipeline) +
                       " must divide the " + llvm::Twine(shape.layers) +
                       " layers");
  if (workers % (tensor * pipeline))
    return configError("--workers " + llvm::Twine(workers) +
                       " must be a multiple of --tensor-parallel x "
                       "--pipeline-parallel = " +
                       llvm::Twine(tensor * pipeline));
  c.data = workers / (tensor * pipeline);
  if (microbatchSize < 1 || shape.batch % (c.data * microbatchSize))
    return configError("the batch of " + llvm::Twine(shape.batch) +
                       " must split into microbatches of " +
                       llvm::Twine(microbatchSize) + " over " +
                       llvm::Twine(c.data) + " data-parallel replicas");
  c.microbatches = shape.batch / (c.data * microbatchSize);
  return c;
}

namespace {

/// One layer's kernels for one microbatch of `b` sequences, its tensor
/// parallelism `t` (docs/Machines.md, "A layer").
struct LayerTimes {
  double forward = 0, backward = 0;
};

LayerTimes getLayerTimes(const TransformerShape &shape, double b, unsigned t,
                         const GpuCluster &c) {
  double s = shape.sequence, h = shape.hidden, a = shape.heads;
  double bs = b * s, d = h / a, heads = b * a / t;
  // (m, n, k, count) of the forward GEMMs: QKV, scores, context, the
  // attention's output, the MLP's two.
  const double gemms[6][4] = {{bs, 3 * h / t, h, 1}, {s, s, d, heads},
                              {s, d, s, heads},      {bs, h, h / t, 1},
                              {bs, 4 * h / t, h, 1}, {bs, h, 4 * h / t, 1}};
  LayerTimes times;
  for (const auto &g : gemms) {
    times.forward += getGemmSeconds(c, g[0], g[1], g[2], g[3]);
    times.backward += getGemmBackwardSeconds(c, g[0], g[1], g[2], g[3]);
  }
  // Memory-bound kernels, bf16 (2 bytes), masks 1 byte: two layer norms
  // (read and write E), two bias-dropout-adds (read 2E, write E, mask E),
  // scale-mask-softmax (read and write S), attention dropout (read and
  // write S, mask S), bias-GeLU (read and write 4E / t). E = b s h is
  // whole on every tensor-parallel rank (no sequence parallelism), S =
  // b (a / t) s^2.
  double e = bs * h, scores = heads * s * s;
  double bytes =
      2 * (2 * 2 * e + 2 * 3 * e + 2 * scores + 2 * scores + 2 * 4 * e / t) +
      2 * e + scores;
  times.forward += getMemorySeconds(c, bytes);
  times.backward += getMemorySeconds(c, 2 * bytes);
  return times;
}

} // namespace

ParallelStepEstimate planner::estimateMegatron3D(const TransformerShape &shape,
                                                 const Megatron3DConfig &config,
                                                 const GpuCluster &c) {
  unsigned t = config.tensor, p = config.pipeline, dp = config.data;
  double b = config.microbatchSize, m = config.microbatches;
  double s = shape.sequence, h = shape.hidden, V = shape.vocabulary;
  double e = b * s * h, layersPerStage = double(shape.layers) / p;
  LayerTimes layer = getLayerTimes(shape, b, t, c);
  // Tensor parallelism: an all-reduce of the bf16 activation (2E bytes)
  // after the attention and after the MLP, forward (twice, with the
  // recomputation) and backward, on the node's NVSwitch.
  double tpAllReduce =
      getCollectiveSeconds(c, Collective::AllReduce, 2 * e, t, 1);
  double layerForward = layer.forward + 2 * tpAllReduce;
  double layerBackward = layer.forward + layer.backward + 4 * tpAllReduce;
  // The last stage's logits (a vocabulary-parallel GEMM, not recomputed)
  // and cross-entropy over fp32 logits (read and written twice forward,
  // twice backward); the first stage's embedding (read and write E).
  double logits = getGemmSeconds(c, b * s, V / t, h) +
                  getGemmBackwardSeconds(c, b * s, V / t, h) +
                  getMemorySeconds(c, 4 * 4 * b * s * V / t);
  double embedding = getMemorySeconds(c, 2 * 2 * e * 2);
  double stageKernels = layersPerStage * (layer.forward * 2 + layer.backward);
  double stageComm = layersPerStage * 6 * tpAllReduce;
  double lastExtra = logits + (p == 1 ? embedding : 0);
  double firstExtra = p == 1 ? 0 : embedding;
  double stage = layersPerStage * (layerForward + layerBackward) +
                 std::max(lastExtra, firstExtra);
  // Pipeline sends with the scatter/gather optimization: each of the t
  // ranks sends E / t over its own network link, and the next stage's
  // ranks all-gather it on NVSwitch; one forward and one backward per
  // microbatch, on the critical path.
  double p2p = 0;
  if (p > 1)
    p2p = 2 * e / t / c.links[1].busBandwidth + c.links[1].stepLatency +
          getCollectiveSeconds(c, Collective::AllGather, 2 * e, t, 1);
  double perMicrobatch = stage + 2 * p2p;
  // 1F1B: m microbatches plus the bubble of p - 1 microbatches' forward
  // and backward.
  double pipeline = (m + p - 1) * perMicrobatch;
  double bubble = (p - 1) * perMicrobatch;
  double paramsPerGPU = shape.parameters / (t * p);
  // Each microbatch's bf16 weight gradients added into fp32 main
  // gradients (read 2 + 4, write 4 bytes per parameter).
  double accumulate = m * getMemorySeconds(c, 10 * paramsPerGPU);
  // Data parallelism: the fp32 gradients all-reduced after the flush, over
  // the dp replicas (t apart in rank order: on dp t / gpusPerNode nodes).
  unsigned dpNodes = std::max(
      1u, unsigned((uint64_t(dp) * t + c.gpusPerNode - 1) / c.gpusPerNode));
  dpNodes = std::min(dpNodes, dp);
  double dataAllReduce = getCollectiveSeconds(c, Collective::AllReduce,
                                              4 * paramsPerGPU, dp, dpNodes);
  // The tied word embeddings' gradients between the first and last stage.
  double embeddingAllReduce =
      p > 1
          ? getCollectiveSeconds(c, Collective::AllReduce, 4 * V * h / t, 2, 2)
          : 0;
  // Adam on fp32 master weights: read weight, gradient, two moments (16
  // bytes), write weight and moments (12) and the bf16 copy (2).
  double optimizer = getMemorySeconds(c, 30 * paramsPerGPU);
  ParallelStepEstimate est;
  est.seconds =
      pipeline + accumulate + dataAllReduce + embeddingAllReduce + optimizer;
  est.computeSeconds = m * (stageKernels + std::max(lastExtra, firstExtra)) +
                       accumulate + optimizer;
  est.terms = {{"layer_forward", layer.forward},
               {"layer_backward", layer.backward},
               {"tensor_all_reduce", tpAllReduce},
               {"stage_microbatch", perMicrobatch},
               {"stage_communication", stageComm},
               {"pipeline_send", p2p},
               {"pipeline", pipeline},
               {"bubble", bubble},
               {"gradient_accumulation", accumulate},
               {"data_all_reduce", dataAllReduce},
               {"embedding_all_reduce", embeddingAllReduce},
               {"optimizer", optimizer}};
  est.flopsPerGPU =
      getMegatronFlops(shape) / (double(t) * p * dp) / est.seconds;
  return est;
}

llvm::Expected<ParallelStepEstimate>
planner::estimateZero3(const TransformerShape &shape, unsigned workers,
                       const GpuCluster &c) {
  if (shape.batch % workers)
    return configError("the batch of " + llvm::Twine(shape.batch) +
                       " does not split over " + llvm::Twine(workers) +
                       " GPUs (ZeRO-3 splits the batch)");
  double b = double(shape.batch) / workers;
  double s = shape.sequence, h = shape.hidden, V = shape.vocabulary;
  LayerTimes layer = getLayerTimes(shape, b, 1, c);
  unsigned nodes = std::max(1u, (workers + c.gpusPerNode - 1) / c.gpusPerNode);
  // Each layer's bf16 parameters all-gathered for its forward and again
  // for its recomputation and backward, its bf16 gradients
  // reduce-scattered; the next layer's gather overlaps this layer's
  // kernels (prefetching).
  double gather = getCollectiveSeconds(
      c, Collective::AllGather, 2 * shape.layerParameters, workers, nodes);
  double scatter = getCollectiveSeconds(
      c, Collective::ReduceScatter, 2 * shape.layerParameters, workers, nodes);
  double forward = std::max(layer.forward, gather);
  double backward = std::max(layer.forward + layer.backward, gather + scatter);
  double embeddingParams =
      shape.parameters - shape.layers * shape.layerParameters;
  double embeddingComm =
      2 * getCollectiveSeconds(c, Collective::AllGather, 2 * embeddingParams,
                               workers, nodes) +
      getCollectiveSeconds(c, Collective::ReduceScatter, 2 * embeddingParams,
                           workers, nodes);
  double logits = getGemmSeconds(c, b * s, V, h) +
                  getGemmBackwardSeconds(c, b * s, V, h) +
                  getMemorySeconds(c, 4 * 4 * b * s * V);
  double optimizer = getMemorySeconds(c, 30 * shape.parameters / workers);
  ParallelStepEstimate est;
  double layers = shape.layers;
  est.seconds = layers * (forward + backward) +
                std::max(logits, embeddingComm) + optimizer;
  est.computeSeconds =
      layers * (2 * layer.forward + layer.backward) + logits + optimizer;
  est.terms = {{"layer_forward", layer.forward},
               {"layer_backward", layer.backward},
               {"layer_all_gather", gather},
               {"layer_reduce_scatter", scatter},
               {"embedding_communication", embeddingComm},
               {"logits", logits},
               {"optimizer", optimizer}};
  est.flopsPerGPU = getMegatronFlops(shape) / workers / est.seconds;
  return est;
}

std::string planner::formatEstimateRecord(const TransformerShape &shape,
                                          const ParallelStepEstimate &est,
                                          const Megatron3DConfig *config,
                                          StringRef machineName) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream j(os);
  j.object([&] {
    j.attribute("estimated", true);
    j.attribute("note",
                config ? "simulated from the graph's transformer one "
                         "microbatch at a time; the plan's layout is tensor "
                         "x data parallelism, without pipeline stages "
                         "(docs/Machines.md)"
                       : "simulated from the graph's transformer "
                         "(docs/Machines.md)");
    j.attribute("machine", machineName);
    j.attributeObject("transformer", [&] {
      j.attribute("layers", int64_t(shape.layers));
      j.attribute("hidden", int64_t(shape.hidden));
      j.attribute("heads", int64_t(shape.heads));
      j.attribute("sequence", shape.sequence);
      j.attribute("vocabulary", shape.vocabulary);
      j.attribute("batch", shape.batch);
      j.attribute("parameters", shape.parameters);
    });
    if (config) {
      j.attribute("tensor_parallel", int64_t(config->tensor));
      j.attribute("pipeline_parallel", int64_t(config->pipeline));
      j.attribute("data_parallel", int64_t(config->data));
      j.attribute("microbatch_size", config->microbatchSize);
      j.attribute("microbatches", config->microbatches);
      j.attribute("schedule", "1f1b");
      j.attribute("recomputation", "full");
    }
    j.attributeObject("seconds", [&] {
      for (const auto &[name, seconds] : est.terms)
        j.attribute(name, seconds);
      j.attribute("step", est.seconds);
    });
    j.attribute("model_flops", getMegatronFlops(shape));
    j.attribute("tflops_per_gpu", est.flopsPerGPU / 1e12);
  });
  return os.str();
}

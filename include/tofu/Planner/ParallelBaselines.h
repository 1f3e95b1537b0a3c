//===- ParallelBaselines.h - Megatron-LM 3D and ZeRO-3 steps -*- C++ -*-===//
//
// This file declares the step-time estimates of the configurations large
// transformers are trained with, on a GPU cluster (docs/Machines.md):
// Megatron-LM's tensor x pipeline x data parallelism (PTD-P, Narayanan et
// al., SC'21) with its 1F1B schedule and full activation recomputation,
// and ZeRO-3 (DeepSpeed; the fsdp baseline) without model parallelism.
// Both are estimated from the graph's transformer (its layers, hidden size,
// heads, sequence, vocabulary and batch), one microbatch at a time: the
// planner has no pipeline execution, so the pipeline is simulated, not
// planned (issue 36, item 4).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_PARALLELBASELINES_H
#define TOFU_PLANNER_PARALLELBASELINES_H

#include "tofu/Planner/Machine.h"
#include "tofu/Planner/PlanningProblem.h"

#include "llvm/Support/Error.h"

#include <string>
#include <utility>
#include <vector>

namespace tofu {
namespace planner {

/// A GPT-style transformer as its graph describes it.
struct TransformerShape {
  unsigned layers = 0, hidden = 0, heads = 0;
  int64_t sequence = 0, vocabulary = 0, batch = 0;
  /// Elements of all parameters, and of one layer's.
  double parameters = 0, layerParameters = 0;
};

/// Finds the transformer in `problem`'s graph: the token embedding
/// ([V, h], read by an `embedding` op whose indices are the [B, s] input),
/// the layers (rank-2 parameters of shape [4h, h]: the MLP's first
/// weight), the heads (the first `bmm`'s batch over B). An error names
/// what is missing.
llvm::Expected<TransformerShape>
getTransformerShape(const PlanningProblem &problem);

/// Megatron-LM's counted FLOPs of one step, its Eq. (3):
/// 96 B s l h^2 (1 + s / (6 h) + V / (16 l h)).
double getMegatronFlops(const TransformerShape &shape);

/// Megatron-LM's configuration on `workers` GPUs.
struct Megatron3DConfig {
  unsigned tensor = 1, pipeline = 1, data = 1;
  int64_t microbatchSize = 1, microbatches = 1;
};

/// Checks T, P and b against the shape and the cluster (T divides the GPUs
/// of a node and the heads, P divides the layers, T P divides K, D b
/// divides the batch); an error says which.
llvm::Expected<Megatron3DConfig>
getMegatron3DConfig(const TransformerShape &shape, const GpuCluster &cluster,
                    unsigned workers, unsigned tensor, unsigned pipeline,
                    int64_t microbatchSize);

/// A simulated step: its seconds, what share of them is kernels, and the
/// named terms it is made of (for the plan's record and the summary).
struct ParallelStepEstimate {
  double seconds = 0, computeSeconds = 0;
  std::vector<std::pair<std::string, double>> terms;
  /// Eq. (3)'s FLOPs per GPU per second.
  double flopsPerGPU = 0;
};

/// Megatron-LM's step on `cluster` (docs/Machines.md, "Megatron-LM").
ParallelStepEstimate estimateMegatron3D(const TransformerShape &shape,
                                        const Megatron3DConfig &config,
                                        const GpuCluster &cluster);

/// ZeRO-3's step on `workers` GPUs of `cluster` (docs/Machines.md,
/// "ZeRO-3"); an error when the batch does not split over the workers.
llvm::Expected<ParallelStepEstimate>
estimateZero3(const TransformerShape &shape, unsigned workers,
              const GpuCluster &cluster);

/// The plan's record of an estimate (a JSON object's text): the
/// configuration, every term, TFLOP/s per GPU, and that it is an estimate.
std::string formatEstimateRecord(const TransformerShape &shape,
                                 const ParallelStepEstimate &estimate,
                                 const Megatron3DConfig *config,
                                 StringRef machineName);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_PARALLELBASELINES_H

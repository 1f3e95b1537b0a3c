//===- ClusterModel.h - Kernels and collectives on GPUs ---------*- C++ -*-===//
//
// This file declares the GPU cluster's timing model (docs/Machines.md): a
// GEMM's seconds from its shape (the best shapes' fraction of peak, tile
// and wave quantization over the GPU's multiprocessors, and the memory
// roofline), a memory-bound kernel's from its bytes, and a ring
// collective's from NCCL's own cost model (a fixed latency, one latency per
// ring step on the link it crosses, the bytes at the link's bus bandwidth).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_CLUSTERMODEL_H
#define TOFU_PLANNER_CLUSTERMODEL_H

#include "tofu/Planner/Machine.h"
#include "tofu/Planner/Topology.h"

namespace tofu {
namespace planner {

/// Seconds of `count` independent bf16 GEMMs of m x k by k x n.
double getGemmSeconds(const GpuCluster &c, double m, double n, double k,
                      double count = 1);

/// Seconds of the forward GEMM (m, n, k, count) and of its two backward
/// GEMMs (the input's gradient, m x n by n x k, and the weight's, k x m
/// by m x n).
double getGemmBackwardSeconds(const GpuCluster &c, double m, double n,
                              double k, double count = 1);

/// Seconds of memory-bound kernels moving `bytes` to and from HBM.
double getMemorySeconds(const GpuCluster &c, double bytes);

enum class Collective { AllReduce, AllGather, ReduceScatter };

/// Seconds of a ring collective over `ranks` GPUs on `nodes` nodes
/// (1: within a node) of a buffer of `bytes` (all-reduce: the buffer;
/// all-gather: the gathered result; reduce-scatter: the input).
double getCollectiveSeconds(const GpuCluster &c, Collective kind,
                            double bytes, unsigned ranks, unsigned nodes);

/// The cluster as a --topology for `workers` GPUs: nodes of
/// gpusPerNode GPUs (one level when they fit in one node), each level at
/// its links' bus bandwidth, compute at the best GEMMs' rate.
Topology getClusterTopology(const GpuCluster &c, unsigned workers);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_CLUSTERMODEL_H

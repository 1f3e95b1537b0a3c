//===- ClusterModel.cpp - Kernels and collectives on a GPU cluster --------===//
//
// This file implements the GPU cluster's timing model (ClusterModel.h,
// docs/Machines.md, "The model").
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/ClusterModel.h"

#include <algorithm>
#include <cmath>

using namespace tofu;
using namespace tofu::planner;

double planner::getGemmSeconds(const GpuCluster &c, double m, double n,
                               double k, double count) {
  if (!(m > 0 && n > 0 && k > 0 && count > 0))
    return 0;
  double flops = 2 * m * n * k * count;
  // Tile quantization (a partial tile costs a whole one) and wave
  // quantization (the last wave of thread blocks leaves multiprocessors
  // idle): the fraction of the GPU the GEMM's tiles keep busy.
  double tiles =
      std::ceil(m / c.tileRows) * std::ceil(n / c.tileColumns) * count;
  double waves = std::ceil(tiles / c.multiprocessors);
  double busy = (m * n * count) /
                (waves * c.multiprocessors * c.tileRows * c.tileColumns);
  double compute =
      flops / (c.peakFlops.at("bf16") * c.gemmEfficiency * std::min(1.0, busy));
  // The memory roofline: bf16 operands and result read or written once.
  double bytes = 2 * (m * k + k * n + m * n) * count;
  return std::max(compute, getMemorySeconds(c, bytes));
}

double planner::getGemmBackwardSeconds(const GpuCluster &c, double m, double n,
                                       double k, double count) {
  return getGemmSeconds(c, m, k, n, count) + getGemmSeconds(c, k, n, m, count);
}

double planner::getMemorySeconds(const GpuCluster &c, double bytes) {
  return bytes / (c.memoryBandwidth * c.memoryEfficiency);
}

double planner::getCollectiveSeconds(const GpuCluster &c, Collective kind,
                                     double bytes, unsigned ranks,
                                     unsigned nodes) {
  if (ranks <= 1 || !(bytes > 0))
    return 0;
  bool allReduce = kind == Collective::AllReduce;
  double steps = allReduce ? 2.0 * (ranks - 1) : ranks - 1.0;
  double interSteps = nodes <= 1  ? 0
                      : allReduce ? 2.0 * (nodes - 1)
                                  : nodes - 1.0;
  const GpuCluster::Link &link = c.links[nodes > 1 ? 1 : 0];
  double latency = c.collectiveLatency +
                   (steps - interSteps) * c.links[0].stepLatency +
                   interSteps * c.links[1].stepLatency;
  // A ring moves steps / ranks of the buffer through each GPU's link.
  return latency + bytes * steps / ranks / link.busBandwidth;
}

Topology planner::getClusterTopology(const GpuCluster &c, unsigned workers) {
  Topology t;
  unsigned node = c.gpusPerNode;
  if (workers > node && workers % node == 0) {
    t.factors = {workers / node, node};
    t.bandwidths = {c.links[1].busBandwidth, c.links[0].busBandwidth};
  } else if (workers > 1) {
    t.factors = {workers};
    t.bandwidths = {c.links[workers > node ? 1 : 0].busBandwidth};
  }
  t.latency = c.collectiveLatency;
  t.flops = c.peakFlops.at("bf16") * c.gemmEfficiency;
  return t;
}

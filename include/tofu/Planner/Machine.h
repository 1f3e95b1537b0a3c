//===- Machine.h - A measured machine for the step-time estimate -*- C++ -*-===//
//
// This file declares Machine, what `tofu-calibrate` measures on the machine
// it runs on and `tofu-plan --machine` estimates a plan's step time with
// (docs/StepTime.md): per kind of kernel, how long one call takes for a
// number of work points (WorkModel.h), measured with as many workers
// computing at once as the plan has; the bandwidth of a memory copy; and
// the transport's bandwidth and per-message latency. The machine file is
// JSON ("format": "tofu-machine"); the reader locates every error. A GPU
// cluster's file (machines/*.json, docs/Machines.md) carries a "cluster"
// object instead of the calibration's samples: each GPU's peak FLOP/s,
// memory and kernel-efficiency model, the links of the node and between
// nodes, and the collectives' algorithm (GpuCluster).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_MACHINE_H
#define TOFU_PLANNER_MACHINE_H

#include "tofu/Support/Diagnostics.h"
#include "tofu/Support/LLVM.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tofu {
namespace planner {

/// The kinds of kernel a machine file times, in file order (the names of
/// codegen::KernelKind).
extern const char *const MachineKernelKinds[5];

/// A GPU cluster as its published numbers describe it (docs/Machines.md):
/// nodes of `gpusPerNode` GPUs on one switch (NVSwitch), the nodes joined
/// by one network (InfiniBand), as many nodes as a plan needs.
struct GpuCluster {
  /// One level's links as NCCL's ring sees them.
  struct Link {
    std::string name;
    /// Bytes per second one GPU's ring channels move in one direction (a
    /// ring collective's bus bandwidth).
    double busBandwidth = 0;
    /// Seconds each step of a ring pays on this link.
    double stepLatency = 0;
  };
  std::string name;
  unsigned gpusPerNode = 8;
  /// Dense peak FLOP/s per GPU by dtype ("bf16", "fp16", "tf32", "fp32").
  std::map<std::string, double> peakFlops;
  /// HBM bytes per second and bytes per GPU.
  double memoryBandwidth = 0, memoryBytes = 0;
  /// The kernel-efficiency model: the fraction of peak the best GEMM
  /// shapes reach, the streaming multiprocessors and the output tile a
  /// GEMM's thread block computes (tile and wave quantization), and the
  /// fraction of memoryBandwidth memory-bound kernels reach.
  double gemmEfficiency = 0, memoryEfficiency = 0;
  unsigned multiprocessors = 0, tileRows = 0, tileColumns = 0;
  /// The node's links (index 0) and the network's (index 1).
  Link links[2];
  /// The collectives' algorithm ("ring") and its fixed latency per call.
  std::string collectiveAlgorithm = "ring";
  double collectiveLatency = 0;
};

struct Machine {
  /// One timed call: its work points, the seconds it took, and the
  /// elements it read and wrote (0: not recorded; gemm and convolution
  /// samples record them, WorkModel::getElements).
  struct Sample {
    double points = 0, seconds = 0, elements = 0;
  };
  /// "threads" or "mpi".
  std::string transport = "threads";
  /// How many workers computed at once while the kernels were timed (the
  /// plans the machine estimates have this many).
  unsigned workers = 1;
  /// The processor threads the machine has (informational).
  unsigned hardwareThreads = 1;
  /// Per kind of kernel, samples in increasing order of points.
  std::map<std::string, std::vector<Sample>> kernels;
  /// Per op type (a graph op's "type"), samples of that type's own
  /// kernels in increasing order of points (tofu-calibrate --graph); an op
  /// of a type listed here is timed from them, not from its kind's.
  std::map<std::string, std::vector<Sample>> ops;
  /// Bytes per second of a large memory copy (one worker).
  double memoryBandwidth = 0;
  /// Bytes per second of one message through the transport, and seconds
  /// per message.
  double transportBandwidth = 0;
  double transportLatency = 0;
  /// A GPU cluster's file ("cluster"): the model above instead of samples
  /// (`kernels` and the transport fields are then absent).
  std::shared_ptr<GpuCluster> cluster;

  /// Seconds of one call of a kernel of `kind` doing `points` work points
  /// on `elements` elements read and written; 0 for no work. An unknown
  /// kind is timed as "elementwise".
  ///  - Kinds whose samples record elements (gemm, convolution): the
  ///    smallest sample's time (a call's fixed cost) plus the points at
  ///    the rate of the calibration's calls of the same arithmetic
  ///    intensity (points / elements), interpolated in log intensity
  ///    between the calls that took over twice the fixed cost, clamped at
  ///    the ends. Narrow GEMMs (low intensity) run slower per point.
  ///  - Other kinds, or `elements` 0: the smallest sample's time below
  ///    it, linear between samples, the largest sample's rate above it.
  double getKernelSeconds(StringRef kind, double points,
                          double elements = 0) const;

  /// Seconds of one call of an op of type `type` (kernel kind `kind`)
  /// doing `points` work points on `elements` GEMM elements (0: not a
  /// GEMM kind). With samples of `type` in `ops`:
  ///  - elements given and recorded: the points at the seconds per point
  ///    of the type's calls of the same intensity, interpolated in log
  ///    intensity, clamped at the ends;
  ///  - otherwise linear in points between the type's samples, and at the
  ///    nearest end sample's seconds per point outside them.
  /// Without: getKernelSeconds(kind, points, elements).
  double getOpSeconds(StringRef type, StringRef kind, double points,
                      double elements = 0) const;
};

/// Reads a machine file (docs/StepTime.md); null after located
/// diagnostics.
std::unique_ptr<Machine> readMachineFile(StringRef path,
                                         DiagnosticEngine &diags);

/// Writes `machine` as a machine file.
void writeMachineJSON(llvm::raw_ostream &os, const Machine &machine);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_MACHINE_H

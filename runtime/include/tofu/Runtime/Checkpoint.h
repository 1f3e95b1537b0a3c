//===- Checkpoint.h - Saving and restoring a LinkedPlan's state -*- C++ -*-===//
//
// This file declares checkpoints of a LinkedPlan's persistent tensors
// (params and optimizer state) and their exchange with NumPy archives.
//
// A checkpoint is a directory `DIR/step-NNNNNNNN/` holding one shard file
// per process (`shards-R.bin`: the boxes its workers store, each box once
// over all workers) and `manifest.json` (graph, plan workers, step, per
// tensor its dtype, shape and the boxes with their file and offset), and
// `DIR/latest` naming the newest. Every process writes its own shards,
// nothing is gathered; the files are written under a temporary name and
// renamed once all processes are done, and `latest` is replaced last, so a
// crash at any moment leaves the previous checkpoint whole. Loading reads,
// for each box this process's workers store, the overlapping boxes of
// whatever shard files hold them: a checkpoint saved with K workers loads
// under any other K. docs/Linking.md, "Checkpoints".
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_CHECKPOINT_H
#define TOFU_RUNTIME_CHECKPOINT_H

#include "tofu/Runtime/LinkedPlan.h"
#include "tofu/Runtime/Npz.h"

#include <cstdint>
#include <string>

namespace tofu {
namespace runtime {

/// Saves `linked`'s persistent tensors (after a step) as the checkpoint of
/// step `step` in `dir` (created if missing) and makes it `dir`'s latest.
/// Every process calls it. Throws RuntimeError naming the file on failure.
void saveCheckpoint(LinkedPlan &linked, const std::string &dir,
                    std::int64_t step);

/// Loads the latest checkpoint of `dir` (or `dir` itself when it is one
/// step's directory) into `linked`'s persistent tensors and returns its
/// step. Every process calls it. Throws RuntimeError when there is none,
/// it is incomplete, or it holds another graph's tensors (a missing
/// tensor, another shape or dtype).
std::int64_t loadCheckpoint(LinkedPlan &linked, const std::string &dir);

/// Sets `linked`'s persistent tensors from the arrays of the NumPy archive
/// at `path`, keyed by the graph's names (numpy.savez of a PyTorch
/// state_dict). Every persistent tensor named in the archive is set; the
/// names of those it lacks are returned (the program decides whether that
/// is an error). Throws RuntimeError on an array of the wrong shape or
/// dtype, or a name the graph lacks.
std::vector<std::string> loadNpz(LinkedPlan &linked, const std::string &path);

/// Writes `linked`'s params (and, with `withState`, optimizer state) after
/// a step to the NumPy archive `path`, keyed by the graph's names; gathered
/// to the root process, which alone writes. Every process calls it.
void saveNpz(LinkedPlan &linked, const std::string &path,
             bool withState = false);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_CHECKPOINT_H

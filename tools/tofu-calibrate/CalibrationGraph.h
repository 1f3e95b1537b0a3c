//===- CalibrationGraph.h - The ops tofu-calibrate times --------*- C++ -*-===//
//
// This file declares the calibration graph: a tofu-graph of independent
// ops, one per timed call, covering each kind of kernel (matrix products,
// convolutions, transposes, element-wise ops, reductions) at sizes from a
// few elements to a few hundred million work points, so that the machine
// file's samples span the calls of real models (docs/StepTime.md).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TOOLS_TOFU_CALIBRATE_CALIBRATIONGRAPH_H
#define TOFU_TOOLS_TOFU_CALIBRATE_CALIBRATIONGRAPH_H

#include <string>

namespace tofu {

/// The calibration graph as tofu-graph JSON; `quick` keeps only its
/// smaller sizes (for tests).
std::string getCalibrationGraph(bool quick);

} // namespace tofu

#endif // TOFU_TOOLS_TOFU_CALIBRATE_CALIBRATIONGRAPH_H

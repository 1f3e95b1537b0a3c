//===- PointwiseInputs.h - Inputs read at the output's own index -*- C++ -*-===//
//
// This file declares getPointwiseInputs: which inputs of a concrete
// operator its body reads only at the output element's own index. The
// kernel generator's fusion hints (GeneratedKernel::pointwiseInputs) and
// the planner's ExecutablePlan (runtime::OpInfo::pointwise, which the
// runtime's in-place rule reads: InPlaceUpdates.h) both take it from here,
// so plan time and run time agree.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_ANALYSIS_POINTWISEINPUTS_H
#define TOFU_ANALYSIS_POINTWISEINPUTS_H

#include "tofu/Support/Shape.h"
#include "tofu/TDL/AST.h"

#include <vector>

namespace tofu {
namespace analysis {

/// Per input position of concrete operator `op` (inputs of shapes
/// `inputShapes`, output of shape `outputShape`): every read of that input
/// in the body is at the output element's own index (`x[i, j]` over the
/// output `(i, j)`, no padding), and the input's shape is the output's. Any
/// sub-box of the output's variables then reads the same sub-box of it, and
/// computing output element e reads no element of it but e.
std::vector<bool> getPointwiseInputs(const tdl::OpDecl &op,
                                     ArrayRef<Shape> inputShapes,
                                     ArrayRef<int64_t> outputShape);

} // namespace analysis
} // namespace tofu

#endif // TOFU_ANALYSIS_POINTWISEINPUTS_H

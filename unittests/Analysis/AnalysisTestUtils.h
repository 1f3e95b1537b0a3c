//===- AnalysisTestUtils.h - Analyse TDL snippets in unit tests -*- C++ -*-===//

#ifndef TOFU_UNITTESTS_ANALYSIS_ANALYSISTESTUTILS_H
#define TOFU_UNITTESTS_ANALYSIS_ANALYSISTESTUTILS_H

#include "TDL/TDLTestUtils.h"

#include "tofu/Analysis/Regions.h"

#include "gtest/gtest.h"

namespace tofu {
namespace analysis {

/// One operator parsed, checked and analysed.
struct AnalysedOp {
  AnalysedOp(StringRef source, StringRef name) : parsed(source) {
    EXPECT_TRUE(parsed.errors.empty());
    auto result = OperatorAnalysis::analyze(parsed.op(name));
    EXPECT_TRUE(bool(result));
    analysis.emplace(std::move(*result));
  }

  Binding bind(ArrayRef<Shape> inputs, ArrayRef<int64_t> output,
               ArrayRef<int64_t> params = {}) {
    auto binding = Binding::create(*analysis, inputs, output, params);
    EXPECT_TRUE(bool(binding)) << toString(binding.takeError());
    return std::move(*binding);
  }

  /// The strategy on variable `var`.
  const Strategy &strategy(StringRef var) const {
    for (const Strategy &s : analysis->getStrategies())
      if (analysis->getOp().getIndexVars()[s.var]->getName() == var)
        return s;
    ADD_FAILURE() << "no strategy on " << var.str();
    return analysis->getStrategies().front();
  }

  tdl::ParsedSource parsed;
  llvm::Optional<OperatorAnalysis> analysis;
};

inline Region region(std::initializer_list<std::pair<int64_t, int64_t>> dims) {
  Region r;
  for (auto [lo, hi] : dims)
    r.push_back(Range{lo, hi});
  return r;
}

} // namespace analysis
} // namespace tofu

#endif // TOFU_UNITTESTS_ANALYSIS_ANALYSISTESTUTILS_H

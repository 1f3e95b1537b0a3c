//===- PlannerTestUtils.h - Repository models in planner tests --*- C++ -*-===//
//
// A model of the repository's models/ folder read, verified against the
// operator library, made a planning problem and planned, and the case of
// a parameterized test on it (a model at a worker count) with its name,
// for the unit tests that plan real graphs.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_UNITTESTS_PLANNER_PLANNERTESTUTILS_H
#define TOFU_UNITTESTS_PLANNER_PLANNERTESTUTILS_H

#include "tofu/Graph/GraphReader.h"
#include "tofu/Graph/SpecLibrary.h"
#include "tofu/Graph/Verifier.h"
#include "tofu/Planner/Planner.h"
#include "tofu/Planner/PlanningProblem.h"
#include "tofu/Support/Diagnostics.h"

#include "llvm/Support/SourceMgr.h"
#include "gtest/gtest.h"

#include <cctype>
#include <memory>
#include <string>

namespace tofu {
namespace planner {

/// models/NAME of the source tree as a planning problem.
struct LoadedModel {
  /// Reads, verifies and builds models/`name`; a failure names the step.
  testing::AssertionResult load(const std::string &name) {
    std::string path = std::string(TOFU_SOURCE_DIR) + "/models/" + name;
    graph = graph::readGraphFile(path, diags);
    if (!graph)
      return testing::AssertionFailure() << "cannot read " << path;
    return bind(name);
  }

  /// As load, for a graph given as its JSON text.
  testing::AssertionResult loadText(const std::string &name, StringRef json) {
    unsigned buffer = srcMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(json, name), llvm::SMLoc());
    graph = graph::readGraph(buffer, diags);
    if (!graph)
      return testing::AssertionFailure() << "cannot read " << name;
    return bind(name);
  }

  /// Verifies the read graph against the operator library and builds its
  /// planning problem.
  testing::AssertionResult bind(const std::string &name) {
    if (!specs.loadFor(*graph, std::string(TOFU_SOURCE_DIR) + "/specs", {},
                       diags))
      return testing::AssertionFailure() << "cannot load the specs of " << name;
    if (!graph::verifyGraph(*graph, specs, diags))
      return testing::AssertionFailure() << name << " does not verify";
    problem = PlanningProblem::build(*graph, specs, diags);
    if (!problem)
      return testing::AssertionFailure() << "no planning problem for " << name;
    return testing::AssertionSuccess();
  }

  /// The default search's plan of the loaded model for `workers`.
  llvm::Expected<plan::Plan> plan(unsigned workers) {
    PlannerOptions options;
    options.workers = workers;
    PlannerReport report;
    return planGraph(*problem, options, report);
  }

  llvm::SourceMgr srcMgr;
  DiagnosticEngine diags{srcMgr};
  std::unique_ptr<graph::Graph> graph;
  graph::SpecLibrary specs;
  std::unique_ptr<PlanningProblem> problem;
};

/// A parameterized test's case: models/`model` planned for `workers`.
struct ModelCase {
  const char *model;
  unsigned workers;
};

/// A case's name: "gpt_2l_K8" for ("gpt-2l.json", 8).
inline std::string
getModelCaseName(const testing::TestParamInfo<ModelCase> &info) {
  std::string model = info.param.model;
  model = model.substr(0, model.find('.'));
  for (char &ch : model)
    if (!isalnum(static_cast<unsigned char>(ch)))
      ch = '_';
  return model + "_K" + std::to_string(info.param.workers);
}

} // namespace planner
} // namespace tofu

#endif // TOFU_UNITTESTS_PLANNER_PLANNERTESTUTILS_H

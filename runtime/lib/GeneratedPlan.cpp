//===- GeneratedPlan.cpp - Plans compiled into a training binary ----------===//
//
// This file implements the rebuilding of an ExecutablePlan from the tables
// `tofu-plan --emit=cpp` generates: every worker's stored boxes from the
// tensors' layouts and its op shares from the ops' rules (BoxRules.h).
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/GeneratedPlan.h"

#include "tofu/Runtime/BoxRules.h"
#include "tofu/Runtime/Error.h"

#include <fmt/format.h>

#include <cstring>
#include <map>

using namespace tofu;
using namespace tofu::runtime;

static Box decodeBox(GeneratedBox box) {
  if (!box)
    throw RuntimeError("generated plan: a box is missing");
  Box result;
  std::int64_t rank = box[0];
  result.lo.assign(box + 1, box + 1 + rank);
  result.hi.assign(box + 1 + rank, box + 1 + 2 * rank);
  return result;
}

/// Tensor row `row`'s stored box per worker: derived from its layout, or
/// as listed.
static void buildStored(const GeneratedPlan &generated,
                        const std::vector<unsigned> &levels,
                        const std::vector<std::vector<unsigned>> &digits,
                        const GeneratedTensor &row, TensorInfo &tensor) {
  if (!row.layout) {
    if (!row.stored)
      throw RuntimeError(fmt::format(
          "generated plan: tensor '{}' has neither a layout nor boxes",
          row.name));
    for (unsigned w = 0; w != generated.workers; ++w)
      tensor.stored.push_back(row.stored[w] ? std::optional<Box>(
                                                  decodeBox(row.stored[w]))
                                            : std::nullopt);
    return;
  }
  std::vector<unsigned> splits(row.layout, row.layout + levels.size());
  for (unsigned &d : splits)
    if (d == GeneratedReplicate)
      d = NoSplit;
  Box whole = Box::whole(tensor.shape);
  tensor.stored.reserve(generated.workers);
  for (unsigned w = 0; w != generated.workers; ++w) {
    Box box = whole;
    applyWorkerPart(box, levels, splits, digits[w]);
    tensor.stored.emplace_back(std::move(box));
  }
}

/// Op row `row`'s shares as listed.
static void buildListedShares(const GeneratedPlan &generated,
                              const GeneratedOp &row, OpInfo &op) {
  if (!row.workers)
    throw RuntimeError(fmt::format(
        "generated plan: op '{}' has neither a rule nor shares", row.name));
  for (unsigned w = 0; w != generated.workers; ++w) {
    const GeneratedShare &share = row.workers[w];
    OpShare result;
    result.iteration = decodeBox(share.iteration);
    for (unsigned j = 0; j != row.numInputs; ++j)
      result.inputs.push_back(decodeBox(share.inputs[j]));
    result.output = decodeBox(share.output);
    op.workers.push_back(std::move(result));
  }
}

/// Op `op`'s share per worker from its rule (decoded once per class).
static void buildShares(const ExecutablePlan &plan,
                        const std::vector<unsigned> &levels,
                        const std::vector<std::vector<unsigned>> &digits,
                        const OpRule &rule, int worker, OpInfo &op) {
  std::vector<unsigned> inputRanks;
  for (unsigned t : op.inputs)
    inputRanks.push_back(plan.tensors[t].shape.size());
  op.workers.resize(plan.workers);
  for (unsigned w = 0; w != plan.workers; ++w) {
    Box iteration = getIterationBox(rule, levels, digits[w]);
    getShareBoxes(rule, iteration, inputRanks, op.workers[w]);
    if (worker < 0 || unsigned(worker) == w)
      op.workers[w].iteration = std::move(iteration);
  }
}

ExecutablePlan runtime::buildExecutablePlan(const GeneratedPlan &generated,
                                            int worker) {
  ExecutablePlan plan;
  plan.workers = generated.workers;
  plan.commBytes = generated.commBytes;
  plan.peakBytesPerWorker.assign(generated.peakBytesPerWorker,
                                 generated.peakBytesPerWorker +
                                     generated.workers);
  std::vector<unsigned> levels(generated.levels,
                               generated.levels + generated.numLevels);
  bool derives = false;
  for (unsigned t = 0; t != generated.numTensors; ++t)
    derives |= generated.tensors[t].layout != nullptr;
  for (unsigned i = 0; i != generated.numOps; ++i)
    derives |= generated.ops[i].rule != nullptr;
  std::uint64_t product = 1;
  for (unsigned f : levels) {
    if (f < 2)
      throw RuntimeError(fmt::format("generated plan: a level of {}", f));
    product = std::min<std::uint64_t>(product * f, 1ull << 32);
  }
  if (derives && product != generated.workers)
    throw RuntimeError(fmt::format(
        "generated plan: levels multiply to {}, not {} workers", product,
        generated.workers));
  std::vector<std::vector<unsigned>> digits(generated.workers);
  if (derives)
    for (unsigned w = 0; w != generated.workers; ++w)
      getWorkerDigits(levels, w, digits[w]);
  for (unsigned t = 0; t != generated.numTensors; ++t) {
    const GeneratedTensor &row = generated.tensors[t];
    TensorInfo tensor;
    tensor.name = row.name;
    tensor.type = row.type;
    tensor.shape.assign(row.shape, row.shape + row.rank);
    tensor.graphInput = row.graphInput;
    tensor.persistent = row.persistent;
    tensor.updates = row.updates;
    buildStored(generated, levels, digits, row, tensor);
    plan.tensors.push_back(std::move(tensor));
  }
  std::map<const std::int64_t *, OpRule> rules;
  for (unsigned i = 0; i != generated.numOps; ++i) {
    const GeneratedOp &row = generated.ops[i];
    OpInfo op;
    op.name = row.name;
    op.type = row.type;
    op.inputs.assign(row.inputs, row.inputs + row.numInputs);
    for (unsigned t : op.inputs)
      if (t >= plan.tensors.size())
        throw RuntimeError(fmt::format(
            "generated plan: op '{}' reads tensor {} of {}", op.name, t,
            plan.tensors.size()));
    op.output = row.output;
    op.kernel = row.kernel;
    op.partial = row.partial;
    op.reducer = row.reducer;
    if (row.pointwise)
      op.pointwise.assign(row.pointwise, row.pointwise + row.numInputs);
    if (!row.rule) {
      buildListedShares(generated, row, op);
      plan.ops.push_back(std::move(op));
      continue;
    }
    auto found = rules.find(row.rule);
    if (found == rules.end())
      found = rules.emplace(row.rule, decodeOpRule(row.rule)).first;
    if (found->second.levelVars.size() != levels.size())
      throw RuntimeError(fmt::format(
          "generated plan: op '{}' has {} steps for {} levels", op.name,
          found->second.levelVars.size(), levels.size()));
    buildShares(plan, levels, digits, found->second, worker, op);
    plan.ops.push_back(std::move(op));
  }
  validatePlan(plan);
  return plan;
}

GeneratedTables::GeneratedTables(const CompactPlan &compact) {
  // A layout of no levels (one worker) is still a layout.
  static const std::uint8_t noLevels = 0;
  const ExecutablePlan &plan = compact.plan;
  stored.resize(plan.tensors.size());
  for (unsigned t = 0; t != plan.tensors.size(); ++t) {
    const TensorInfo &tensor = plan.tensors[t];
    const auto &layout = compact.layouts[t];
    if (!layout) {
      for (const std::optional<Box> &box : tensor.stored) {
        if (!box) {
          stored[t].push_back(nullptr);
          continue;
        }
        std::vector<std::int64_t> row{std::int64_t(box->getRank())};
        row.insert(row.end(), box->lo.begin(), box->lo.end());
        row.insert(row.end(), box->hi.begin(), box->hi.end());
        boxes.push_back(std::move(row));
        stored[t].push_back(boxes.back().data());
      }
    }
    tensors.push_back(GeneratedTensor{
        tensor.name.c_str(), compact.roles[t].c_str(), tensor.type,
        unsigned(tensor.shape.size()), tensor.shape.data(), tensor.graphInput,
        tensor.persistent, tensor.updates,
        layout ? nullptr : stored[t].data(),
        layout ? (layout->empty() ? &noLevels : layout->data()) : nullptr});
  }
  for (unsigned i = 0; i != plan.ops.size(); ++i) {
    const OpInfo &op = plan.ops[i];
    const bool *pointwiseRow = nullptr;
    if (!op.pointwise.empty()) {
      pointwise.emplace_back(new bool[op.pointwise.size()]);
      std::copy(op.pointwise.begin(), op.pointwise.end(),
                pointwise.back().get());
      pointwiseRow = pointwise.back().get();
    }
    ops.push_back(GeneratedOp{op.name.c_str(), op.type.c_str(),
                              unsigned(op.inputs.size()), op.inputs.data(),
                              op.output, op.kernel, op.partial, op.reducer,
                              nullptr, pointwiseRow,
                              compact.rules[compact.opRules[i]].data()});
  }
  generated = GeneratedPlan{compact.graphName.c_str(),
                            plan.workers,
                            unsigned(tensors.size()),
                            tensors.data(),
                            unsigned(ops.size()),
                            ops.data(),
                            plan.commBytes,
                            plan.peakBytesPerWorker.data(),
                            0,
                            nullptr,
                            unsigned(compact.levels.size()),
                            compact.levels.data()};
}

std::string runtime::findPlanDifference(const ExecutablePlan &expected,
                                        const ExecutablePlan &actual) {
  if (expected.workers != actual.workers)
    return fmt::format("{} workers, not {}", actual.workers, expected.workers);
  if (expected.tensors.size() != actual.tensors.size() ||
      expected.ops.size() != actual.ops.size())
    return fmt::format("{} tensors and {} ops, not {} and {}",
                       actual.tensors.size(), actual.ops.size(),
                       expected.tensors.size(), expected.ops.size());
  auto format = [](const std::optional<Box> &box) {
    return box ? box->format() : std::string("none");
  };
  for (unsigned t = 0; t != expected.tensors.size(); ++t) {
    const TensorInfo &a = expected.tensors[t], &b = actual.tensors[t];
    if (a.name != b.name || a.type != b.type || a.shape != b.shape ||
        a.graphInput != b.graphInput || a.persistent != b.persistent ||
        a.updates != b.updates || a.stored.size() != b.stored.size())
      return fmt::format("tensor {} ('{}') differs", t, a.name);
    for (unsigned w = 0; w != a.stored.size(); ++w)
      if (!(a.stored[w] == b.stored[w]))
        return fmt::format("tensor '{}': worker {} stores {}, not {}", a.name,
                           w, format(b.stored[w]), format(a.stored[w]));
  }
  for (unsigned i = 0; i != expected.ops.size(); ++i) {
    const OpInfo &a = expected.ops[i], &b = actual.ops[i];
    if (a.name != b.name || a.type != b.type || a.inputs != b.inputs ||
        a.output != b.output || a.kernel != b.kernel ||
        a.partial != b.partial || a.reducer != b.reducer ||
        a.pointwise != b.pointwise || a.workers.size() != b.workers.size())
      return fmt::format("op {} ('{}') differs", i, a.name);
    for (unsigned w = 0; w != a.workers.size(); ++w) {
      const OpShare &x = a.workers[w], &y = b.workers[w];
      if (!(x.iteration == y.iteration))
        return fmt::format("op '{}': worker {} iterates over {}, not {}",
                           a.name, w, y.iteration.format(),
                           x.iteration.format());
      if (!(x.output == y.output))
        return fmt::format("op '{}': worker {} computes {}, not {}", a.name,
                           w, y.output.format(), x.output.format());
      if (x.inputs.size() != y.inputs.size())
        return fmt::format("op '{}': worker {} reads {} inputs, not {}",
                           a.name, w, y.inputs.size(), x.inputs.size());
      for (unsigned j = 0; j != x.inputs.size(); ++j)
        if (!(x.inputs[j] == y.inputs[j]))
          return fmt::format("op '{}': worker {} reads {} of input {}, not {}",
                             a.name, w, y.inputs[j].format(), j,
                             x.inputs[j].format());
    }
  }
  return "";
}

int runtime::lookupTensor(const GeneratedPlan &generated,
                          const std::string &name) {
  for (unsigned t = 0; t != generated.numTensors; ++t)
    if (name == generated.tensors[t].name)
      return t;
  return -1;
}

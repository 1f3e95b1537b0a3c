//===- Recompute.cpp - Forward activations recomputed in the backward pass ===//
//
// This file implements the recomputation rewrite of Recompute.h: the
// candidates, the rewritten graph, the plan of the rewritten graph, and the
// live-bytes bound that says when no plan without recomputation fits.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/Recompute.h"
#include "tofu/Support/Diagnostics.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>

using namespace tofu;
using namespace tofu::planner;

unsigned planner::getBackwardStart(const graph::Graph &g) {
  for (unsigned i = 0, e = g.getNumOps(); i != e; ++i) {
    int o = g.getOp(i).getOutput();
    if (o >= 0 && g.getTensor(o).role == graph::Role::Grad)
      return i;
  }
  return g.getNumOps();
}

std::vector<unsigned> planner::getRecomputeCandidates(const graph::Graph &g) {
  unsigned backward = getBackwardStart(g);
  std::vector<unsigned> candidates;
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t) {
    int producer = g.getProducer(t);
    if (producer < 0 || unsigned(producer) >= backward ||
        g.getTensor(t).role != graph::Role::Activation ||
        g.getOp(producer).inputs.empty())
      continue;
    ArrayRef<unsigned> users = g.getUsers(t);
    if (!users.empty() && users.back() >= backward)
      candidates.push_back(t);
  }
  return candidates;
}

bool planner::isRecomputeChainMember(const graph::Graph &g, unsigned t,
                                     unsigned backward) {
  int producer = g.getProducer(t);
  if (producer < 0 || unsigned(producer) >= backward ||
      g.getTensor(t).role != graph::Role::Activation ||
      g.getOp(producer).inputs.empty())
    return false;
  ArrayRef<unsigned> users = g.getUsers(t);
  return users.empty() || users.back() < backward;
}

std::vector<unsigned> planner::getRecomputeChain(const graph::Graph &g,
                                                 unsigned t,
                                                 unsigned backward) {
  std::vector<unsigned> chain{t}, work{t};
  while (!work.empty()) {
    unsigned u = work.back();
    work.pop_back();
    for (const graph::TensorRef &in : g.getOp(g.getProducer(u)).inputs)
      if (isRecomputeChainMember(g, in.index, backward) &&
          std::find(chain.begin(), chain.end(), in.index) == chain.end()) {
        chain.push_back(in.index);
        work.push_back(in.index);
      }
  }
  std::sort(chain.begin(), chain.end());
  return chain;
}

std::vector<unsigned> planner::getRecomputeCuts(const graph::Graph &g) {
  unsigned backward = getBackwardStart(g);
  // Per forward op, the last forward op reading a tensor it writes.
  std::vector<unsigned> lastRead(backward, 0);
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t) {
    int producer = g.getProducer(t);
    if (producer < 0 || unsigned(producer) >= backward)
      continue;
    for (unsigned user : g.getUsers(t))
      if (user < backward)
        lastRead[producer] = std::max(lastRead[producer], user);
  }
  std::vector<unsigned> cuts;
  std::vector<unsigned> candidates = getRecomputeCandidates(g);
  // The candidates by producer: reach[i] is the last forward reader of
  // anything ops before i write.
  std::vector<unsigned> reach(backward + 1, 0);
  for (unsigned i = 1; i <= backward; ++i)
    reach[i] = std::max(reach[i - 1], lastRead[i - 1]);
  for (unsigned t : candidates) {
    unsigned producer = g.getProducer(t);
    if (reach[producer] <= producer)
      cuts.push_back(t);
  }
  return cuts;
}

namespace {

/// Builds the rewritten graph op by op.
class Rewriter {
public:
  Rewriter(const graph::Graph &g, std::vector<int> copyOf)
      : g(g), copyOf(std::move(copyOf)), materialized(g.getNumTensors()) {}

  RecomputedGraph run();

private:
  /// Emits the clones `t`'s copy needs, then its own, unless done.
  void materialize(unsigned t);
  /// The name a backward op reads for tensor `t`.
  const std::string &readName(unsigned t) const {
    return copyOf[t] >= 0 ? copies[copyOf[t]] : g.getTensor(t).name;
  }

  const graph::Graph &g;
  /// Per original tensor, its index among the copies, or -1.
  std::vector<int> copyOf;
  std::vector<bool> materialized;
  std::vector<std::string> copies;
  RecomputedGraph out;
};

} // namespace

void Rewriter::materialize(unsigned t) {
  if (materialized[t])
    return;
  materialized[t] = true;
  const graph::Op &producer = g.getOp(g.getProducer(t));
  for (const graph::TensorRef &in : producer.inputs)
    if (copyOf[in.index] >= 0)
      materialize(in.index);
  graph::Op clone;
  clone.name = producer.name + RecomputeSuffix;
  clone.type = producer.type;
  clone.params = producer.params;
  clone.group = producer.group;
  clone.hasGroup = producer.hasGroup;
  clone.extras = producer.extras;
  for (const graph::TensorRef &in : producer.inputs)
    clone.inputs.push_back(graph::TensorRef{readName(in.index), -1, SMLoc()});
  clone.outputs.push_back(graph::TensorRef{readName(t), -1, SMLoc()});
  out.graph->addOp(std::move(clone));
  out.opOrigin.push_back(g.getProducer(t));
}

RecomputedGraph Rewriter::run() {
  out.graph = std::make_unique<graph::Graph>();
  out.graph->extras = g.extras;
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t) {
    out.graph->addTensor(g.getTensor(t));
    out.tensorOrigin.push_back(t);
  }
  copies.resize(g.getNumTensors());
  unsigned numCopies = 0;
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t)
    if (copyOf[t] >= 0) {
      graph::Tensor copy = g.getTensor(t);
      copy.name += RecomputeSuffix;
      copyOf[t] = numCopies++;
      copies[copyOf[t]] = copy.name;
      out.graph->addTensor(std::move(copy));
      out.tensorOrigin.push_back(t);
    }
  unsigned backward = getBackwardStart(g);
  for (unsigned i = 0, e = g.getNumOps(); i != e; ++i) {
    graph::Op op = g.getOp(i);
    if (i >= backward)
      for (graph::TensorRef &in : op.inputs)
        if (copyOf[in.index] >= 0) {
          materialize(in.index);
          in.name = readName(in.index);
        }
    out.graph->addOp(std::move(op));
    out.opOrigin.push_back(i);
  }
  out.graph->link();
  return std::move(out);
}

llvm::Expected<RecomputedGraph>
planner::rewriteForRecompute(const graph::Graph &g,
                             ArrayRef<std::string> names) {
  auto fail = [](const Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "recompute: " + msg);
  };
  std::vector<unsigned> candidates = getRecomputeCandidates(g);
  unsigned backward = getBackwardStart(g);
  std::vector<int> copyOf(g.getNumTensors(), -1);
  std::vector<unsigned> members;
  for (const std::string &name : names) {
    int t = g.lookupTensor(name);
    if (t < 0)
      return fail("no tensor '" + name + "' in the graph");
    if (copyOf[t] >= 0)
      return fail("tensor '" + name + "' is listed twice");
    if (isRecomputeChainMember(g, t, backward))
      members.push_back(t);
    else if (!std::binary_search(candidates.begin(), candidates.end(),
                                 unsigned(t)))
      return fail("tensor '" + name +
                  "' cannot be recomputed: only activations that a forward "
                  "op with inputs writes and a backward op reads can be "
                  "(or, in a chain, one such a listed tensor's producer "
                  "reads)");
    std::string copy = name + RecomputeSuffix;
    std::string clone = g.getOp(g.getProducer(t)).name + RecomputeSuffix;
    if (g.lookupTensor(copy) >= 0)
      return fail("the graph already has a tensor named '" + copy + "'");
    if (g.lookupOp(clone) >= 0)
      return fail("the graph already has an op named '" + clone + "'");
    copyOf[t] = 0;
  }
  // A chain member is recomputed for a listed tensor that needs it: one a
  // backward op reads, or (recursively) a member that is.
  std::vector<bool> needed(g.getNumTensors());
  std::vector<unsigned> work;
  for (unsigned t : candidates)
    if (copyOf[t] >= 0) {
      needed[t] = true;
      work.push_back(t);
    }
  while (!work.empty()) {
    unsigned u = work.back();
    work.pop_back();
    for (const graph::TensorRef &in : g.getOp(g.getProducer(u)).inputs)
      if (copyOf[in.index] >= 0 && !needed[in.index]) {
        needed[in.index] = true;
        work.push_back(in.index);
      }
  }
  for (unsigned t : members)
    if (!needed[t])
      return fail("tensor '" + g.getTensor(t).name +
                  "' cannot be recomputed: no backward op reads it, and no "
                  "listed tensor's producer that is recomputed reads it");
  return Rewriter(g, std::move(copyOf)).run();
}

plan::Plan planner::expandRecomputePlan(const plan::Plan &p,
                                        const RecomputedGraph &r) {
  plan::Plan out = p;
  out.ops.clear();
  out.tensors.clear();
  for (unsigned i = 0, e = r.opOrigin.size(); i != e; ++i) {
    plan::OpPlan op = p.ops[r.opOrigin[i]];
    op.name = r.graph->getOp(i).name;
    out.ops.push_back(std::move(op));
  }
  for (unsigned t = 0, e = r.tensorOrigin.size(); t != e; ++t) {
    plan::TensorPlan tensor = p.tensors[r.tensorOrigin[t]];
    tensor.name = r.graph->getTensor(t).name;
    out.tensors.push_back(std::move(tensor));
  }
  return out;
}

int64_t planner::getLiveBytesBound(const graph::Graph &g, unsigned workers) {
  unsigned n = g.getNumOps();
  // Per op, the bytes of the tensors whose lifetime starts there, and of
  // those whose lifetime ends after it (difference array over ops).
  std::vector<int64_t> delta(n + 2, 0);
  std::vector<bool> updated(g.getNumTensors());
  // Per parameter or state, the op whose next value may be written over it
  // (the runtime's in-place rule, InPlaceUpdates.h: no op after that one
  // reads it, same bytes; a plan that lays both out alike keeps one copy
  // from then on), or -1.
  std::vector<int> overwrittenAt(g.getNumTensors(), -1);
  for (const graph::Tensor &t : g.getTensors())
    for (const graph::ExtraField &extra : t.extras)
      if (extra.key == "updates") {
        unsigned u = g.lookupTensor(t.name);
        updated[u] = true;
        auto value = llvm::json::parse(extra.json);
        if (!value) {
          llvm::consumeError(value.takeError());
          continue;
        }
        auto name = value->getAsString();
        int p = name ? g.lookupTensor(*name) : -1;
        int producer = g.getProducer(u);
        if (p >= 0 && producer >= 0 &&
            g.getTensor(p).getNumBytes() == t.getNumBytes() &&
            (g.getUsers(p).empty() ||
             int(g.getUsers(p).back()) <= producer))
          overwrittenAt[p] = producer;
      }
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t) {
    const graph::Tensor &tensor = g.getTensor(t);
    int producer = g.getProducer(t);
    ArrayRef<unsigned> users = g.getUsers(t);
    bool persistent =
        producer < 0 ? tensor.role != graph::Role::Input
                     : tensor.role == graph::Role::Output || updated[t] ||
                           users.empty();
    unsigned first = producer < 0 ? 0 : unsigned(producer);
    unsigned last = persistent ? n : (users.empty() ? first : users.back());
    if (overwrittenAt[t] >= 0)
      last = unsigned(overwrittenAt[t]);
    delta[first] += tensor.getNumBytes();
    delta[last + 1] -= tensor.getNumBytes();
  }
  int64_t live = 0, most = 0;
  for (unsigned i = 0; i <= n; ++i) {
    live += delta[i];
    most = std::max(most, live);
  }
  return (most + workers - 1) / workers;
}

llvm::Expected<RecomputedPlan>
planner::prepareRecomputedPlan(const graph::Graph &g, graph::SpecLibrary &specs,
                               const plan::Plan &p) {
  if (p.ops.size() != g.getNumOps() || p.tensors.size() != g.getNumTensors())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "recompute: the plan has " + Twine(p.ops.size()) + " ops and " +
            Twine(p.tensors.size()) + " tensors but the graph " +
            Twine(g.getNumOps()) + " and " + Twine(g.getNumTensors()));
  auto rewritten = rewriteForRecompute(g, p.recompute);
  if (!rewritten)
    return rewritten.takeError();
  RecomputedPlan out;
  out.rewritten = std::move(*rewritten);
  out.plan = expandRecomputePlan(p, out.rewritten);
  // The clones are ops the graph already binds: binding them cannot fail
  // unless the graph itself did not bind.
  llvm::SourceMgr srcMgr;
  std::string messages;
  llvm::raw_string_ostream os(messages);
  srcMgr.setDiagHandler(
      [](const llvm::SMDiagnostic &d, void *context) {
        d.print(nullptr, *static_cast<llvm::raw_string_ostream *>(context),
                /*ShowColors=*/false);
      },
      &os);
  DiagnosticEngine diags(srcMgr);
  out.problem = PlanningProblem::build(*out.rewritten.graph, specs, diags);
  if (!out.problem)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "recompute: the rewritten graph does not "
                                   "bind: " + os.str());
  return std::move(out);
}

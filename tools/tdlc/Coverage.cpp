//===- Coverage.cpp - tdlc's --coverage ---------------------------------===//
//
// For every op of a tofu graph (read and structurally checked by the graph
// library, tofu/Graph), instantiates the op's type with the op's input
// shapes, params and output rank, the way the graph verifier does, and checks
// the instance's output shape against the graph's:
//
//   exact    the shape inferred from the inputs (and explicit extents)
//            equals the graph's;
//   graph    some output dimension is not determined by the inputs (a
//            fill's shape, nll_loss_backward's class count), or the body is
//            opaque (its reads give regions, not extents): the graph's
//            extents are used and must keep the reads in bounds;
//   bounded  the reads allow an extent a stride away from the graph's (a
//            convolution backward whose forward dropped trailing rows: H is
//            not a function of the inputs), within the tolerance of the
//            graph verifier's rule (tofu/Analysis/ShapeAgreement.h);
//   mismatch anything else: an error.
//
// Distinct instances (type, params, input shapes, output shape) are checked
// once. Exit status 1 if an op type has no spec, an instance resolves to no
// overload, fails to instantiate or analyse, or its shape mismatches.
//
//===----------------------------------------------------------------------===//

#include "Coverage.h"

#include "tofu/Analysis/OperatorAnalysis.h"
#include "tofu/Analysis/ShapeAgreement.h"
#include "tofu/Graph/GraphReader.h"
#include "tofu/Graph/Verifier.h"
#include "tofu/Support/Diagnostics.h"
#include "tofu/Support/Shape.h"
#include "tofu/TDL/Instantiate.h"
#include "tofu/TDL/Printers.h"

#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <set>

using namespace tofu;
using namespace tofu::tdl;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory coverageCategory("tdlc coverage options (--coverage)");

cl::list<std::string> coverageGraphs(
    "coverage",
    cl::desc("Check that the library covers every op of tofu graph FILE "
             "(repeatable, or comma-separated)"),
    cl::value_desc("FILE"), cl::CommaSeparated, cl::cat(coverageCategory));

cl::opt<bool> coverageVerbose(
    "coverage-verbose",
    cl::desc("With --coverage: print every distinct instance and the "
             "overload it resolved to"),
    cl::init(false), cl::cat(coverageCategory));

cl::opt<bool> coverageIR(
    "coverage-ir",
    cl::desc("With --coverage: print the checked IR of every distinct "
             "instance (its index kinds show what the analysis sees)"),
    cl::init(false), cl::cat(coverageCategory));

enum class Outcome { Exact, Graph, Bounded, Mismatch, NoOverload, Error };

StringRef outcomeName(Outcome o) {
  switch (o) {
  case Outcome::Exact: return "exact";
  case Outcome::Graph: return "graph";
  case Outcome::Bounded: return "bounded";
  case Outcome::Mismatch: return "mismatch";
  case Outcome::NoOverload: return "no overload";
  case Outcome::Error: return "error";
  }
  return "?";
}

std::string oneLine(std::string s) {
  for (char &c : s)
    if (c == '\n')
      c = ' ';
  return s;
}

std::string where(const OpDecl *op, const llvm::SourceMgr &srcMgr) {
  if (!op || !op->getLoc().isValid())
    return "?";
  unsigned buf = srcMgr.FindBufferContainingLoc(op->getLoc());
  if (!buf)
    return "?";
  auto lc = srcMgr.getLineAndColumn(op->getLoc(), buf);
  StringRef path = srcMgr.getMemoryBuffer(buf)->getBufferIdentifier();
  size_t slash = path.find_last_of('/');
  if (slash != StringRef::npos)
    path = path.drop_front(slash + 1);
  return (path + ":" + llvm::Twine(lc.first)).str();
}

struct Result {
  Outcome outcome;
  std::string detail;
  std::string overload;
};

/// Checks one distinct instance.
Result check(llvm::raw_ostream &os, Instantiator &inst,
             const llvm::SourceMgr &srcMgr, StringRef type,
             ArrayRef<Shape> inputs, ArrayRef<NamedParamValue> params,
             ArrayRef<int64_t> outShape) {
  Result r{Outcome::Error, "", ""};
  llvm::Expected<const Instance *> instance =
      inst.instantiate(type, inputs, params, unsigned(outShape.size()));
  if (!instance) {
    r.outcome = Outcome::NoOverload;
    r.detail = oneLine(llvm::toString(instance.takeError()));
    return r;
  }
  const Instance &in = **instance;
  r.overload = where(in.generic, srcMgr);
  if (coverageIR) {
    os << "instance of " << type << " [" << r.overload << "]:\n";
    printIR(os, *in.op);
  }
  llvm::Expected<analysis::OperatorAnalysis> an =
      analysis::OperatorAnalysis::analyze(*in.op);
  if (!an) {
    r.outcome = Outcome::Error;
    r.detail = "analysis: " + oneLine(llvm::toString(an.takeError()));
    return r;
  }
  // The graph verifier's shape rule (tofu/Analysis/ShapeAgreement.h). An
  // opaque body's reads bound what it may read, not its extents: whatever
  // they allow is the graph's shape.
  bool opaque = in.op->isOpaque();
  analysis::ShapeVerdict verdict =
      analysis::judgeOutputShape(*an, inputs, in.intParams, outShape, opaque);
  switch (verdict.kind) {
  case analysis::ShapeVerdict::Kind::Exact:
    r.outcome = opaque ? Outcome::Graph : Outcome::Exact;
    break;
  case analysis::ShapeVerdict::Kind::Tolerated:
    r.outcome = opaque ? Outcome::Graph : Outcome::Bounded;
    r.detail = "inferred " + verdict.detail + ", graph " +
               formatShape(outShape);
    break;
  case analysis::ShapeVerdict::Kind::Undetermined:
    r.outcome = Outcome::Graph;
    r.detail = oneLine(verdict.detail);
    break;
  case analysis::ShapeVerdict::Kind::Mismatch:
    r.outcome = Outcome::Mismatch;
    r.detail = verdict.detail + ", graph " + formatShape(outShape);
    break;
  case analysis::ShapeVerdict::Kind::Invalid:
    r.outcome = Outcome::Error;
    r.detail = oneLine(verdict.detail);
    break;
  }
  return r;
}

} // namespace

cl::OptionCategory &tofu::getCoverageCategory() { return coverageCategory; }

bool tofu::coverageRequested() { return !coverageGraphs.empty(); }

int tofu::runCoverage(llvm::raw_ostream &os, const Module &library,
                      const llvm::SourceMgr &srcMgr) {
  Instantiator inst(library);
  bool failed = false;
  std::set<std::string> seenKeys;
  std::map<std::string, std::map<Outcome, unsigned>> perType;
  std::map<Outcome, unsigned> totals;
  unsigned numOps = 0;

  // Graphs are read (and their structure checked) by the graph library, so
  // a malformed file gets the same located diagnostics as in tofu-graph.
  llvm::SourceMgr graphSrcMgr;
  DiagnosticEngine graphDiags(graphSrcMgr);
  for (const std::string &path : coverageGraphs) {
    std::unique_ptr<graph::Graph> g = graph::readGraphFile(path, graphDiags);
    if (!g || !graph::verifyStructure(*g, graphDiags))
      return 1;
    StringRef file = path;
    file = file.drop_front(file.find_last_of('/') + 1);

    for (const graph::Op &op : g->getOps()) {
      ++numOps;
      StringRef type = op.type;
      StringRef opName = op.name;
      SmallVector<Shape, 4> inputShapes;
      std::string key = type.str() + "|";
      for (const graph::TensorRef &ref : op.inputs) {
        inputShapes.push_back(g->getTensor(ref.index).shape);
        key += formatShape(inputShapes.back()) + ",";
      }
      Shape outShape = g->getTensor(op.getOutput()).shape;
      key += "->" + formatShape(outShape) + "|";
      SmallVector<NamedParamValue, 8> params(op.params.begin(),
                                             op.params.end());
      llvm::sort(params, [](const NamedParamValue &a, const NamedParamValue &b) {
        return a.first < b.first;
      });
      for (const NamedParamValue &p : params)
        key += p.first + "=" +
               (p.second.isReal
                    ? llvm::formatv("{0:e16}", p.second.realValue).str()
                    : std::to_string(p.second.intValue)) +
               ",";
      if (!seenKeys.insert(key).second)
        continue;

      Result r;
      if (library.lookupOverloads(type).empty())
        r = Result{Outcome::NoOverload, "no spec for op type '" + type.str() + "'", ""};
      else
        r = check(os, inst, srcMgr, type, inputShapes, params,
                  outShape);
      ++perType[type.str()][r.outcome];
      ++totals[r.outcome];
      bool bad = r.outcome == Outcome::Mismatch ||
                 r.outcome == Outcome::NoOverload ||
                 r.outcome == Outcome::Error;
      failed |= bad;
      if (bad || coverageVerbose) {
        os << file << ": " << opName << " (" << type << "): "
           << outcomeName(r.outcome);
        if (!r.overload.empty())
          os << " [" << r.overload << "]";
        if (!r.detail.empty() && (bad || r.outcome != Outcome::Graph))
          os << ": " << r.detail;
        os << '\n';
      }
    }
  }

  unsigned typesOk = 0;
  for (const auto &kv : perType) {
    const auto &c = kv.second;
    auto get = [&](Outcome o) {
      auto it = c.find(o);
      return it == c.end() ? 0u : it->second;
    };
    bool bad = get(Outcome::NoOverload) || get(Outcome::Error) ||
               get(Outcome::Mismatch);
    typesOk += !bad;
    if (coverageVerbose || get(Outcome::Bounded) || bad) {
      os << "type " << kv.first << ":";
      for (Outcome o : {Outcome::Exact, Outcome::Graph, Outcome::Bounded,
                        Outcome::Mismatch, Outcome::NoOverload, Outcome::Error})
        if (get(o))
          os << ' ' << outcomeName(o) << '=' << get(o);
      os << '\n';
    }
  }
  auto total = [&](Outcome o) {
    auto it = totals.find(o);
    return it == totals.end() ? 0u : it->second;
  };
  unsigned instances = seenKeys.size();
  unsigned instOk = total(Outcome::Exact) + total(Outcome::Graph) +
                    total(Outcome::Bounded);
  os << "coverage: " << coverageGraphs.size() << " graphs, " << numOps
     << " ops; op types " << typesOk << "/" << perType.size()
     << " covered; instances " << instOk << "/" << instances
     << " resolved (output shape: " << total(Outcome::Exact) << " exact, "
     << total(Outcome::Graph) << " from the graph, " << total(Outcome::Bounded)
     << " bounded, " << total(Outcome::Mismatch) << " mismatched; "
     << total(Outcome::NoOverload) << " without an overload, "
     << total(Outcome::Error) << " errors)\n";
  return failed ? 1 : 0;
}

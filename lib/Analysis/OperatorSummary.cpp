//===- OperatorSummary.cpp - One-line summaries of operators --------------===//
//
// This file implements printOperatorSummary: one line per checked operator
// with its signature and the strategies the operator analysis found, for a
// quick look at a whole library.
//
//===----------------------------------------------------------------------===//

#include "tofu/Analysis/OperatorSummary.h"
#include "tofu/Analysis/OperatorAnalysis.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace tofu;
using namespace tofu::analysis;
using namespace tofu::tdl;

namespace {

/// `name(t1:rank, ...) -> rank`, with `...+n` for a rank-polymorphic
/// tensor or output.
std::string formatSignature(const OpDecl &op) {
  std::string signature;
  llvm::raw_string_ostream sig(signature);
  sig << op.getName() << '(';
  llvm::interleaveComma(op.getTensors(), sig, [&](const auto &t) {
    sig << t->getName() << ':';
    if (t->isRankPolymorphic())
      sig << "..." << '+' << t->getNumNamedDims();
    else
      sig << t->getRank();
  });
  sig << ") -> ";
  if (op.getEllipsisVar())
    sig << "...+" << op.getOutputRank() - 1;
  else
    sig << op.getOutputRank();
  return sig.str();
}

void printStrategies(llvm::raw_ostream &os, const OperatorAnalysis &analysis) {
  auto vars = analysis.getOp().getIndexVars();
  Strategy::Kind last = Strategy::Kind::Split;
  bool first = true;
  for (const Strategy &s : analysis.getStrategies()) {
    if (first || s.kind != last)
      os << "  " << getStrategyKindName(s.kind) << ':';
    os << ' ' << vars[s.var]->getName();
    if (s.kind == Strategy::Kind::Reduce)
      os << '(' << getReducerName(s.reducer) << ')';
    first = false;
    last = s.kind;
  }
  if (first)
    os << "  no strategies";
}

} // namespace

void analysis::printOperatorSummary(llvm::raw_ostream &os, const OpDecl &op) {
  os << llvm::left_justify(formatSignature(op), 44);
  if (op.isGeneric()) {
    os << "  (generic: the strategies depend on the instance)\n";
    return;
  }
  llvm::Expected<OperatorAnalysis> analysis = OperatorAnalysis::analyze(op);
  if (!analysis)
    os << "  (not analysed: " << llvm::toString(analysis.takeError()) << ')';
  else
    printStrategies(os, *analysis);
  os << '\n';
}

//===- SummaryPrinter.cpp - One-line summaries of TDL operators -----------===//
//
// This file implements printSummary: one line per checked operator with its
// signature and the partition dimensions the analysis will consider (its
// output and reduction variables), for a quick look at a whole library.
//
//===----------------------------------------------------------------------===//

#include "tofu/TDL/Printers.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace tofu;
using namespace tofu::tdl;

void tdl::printSummary(llvm::raw_ostream &os, const OpDecl &op) {
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
  os << llvm::left_justify(sig.str(), 44) << "  split:";
  for (const auto &v : op.getOutputVars())
    os << ' ' << (v->isEllipsis() ? "..." : "") << v->getName();
  if (!op.getReductionVars().empty()) {
    os << "  reduce:";
    for (const IndexVarDecl *v : op.getReductionVars())
      os << ' ' << v->getName() << '('
         << getReducerName(v->getReduction()->getReducer()) << ')';
  }
  if (op.isGeneric())
    os << "  (generic)";
  os << '\n';
}

//===- StrategyPrinter.cpp - Text and JSON renderings of strategies -------===//
//
// This file implements the text and JSON renderings of an operator's
// strategies, symbolic and concrete.
//
//===----------------------------------------------------------------------===//

#include "tofu/Analysis/StrategyPrinter.h"

#include "tofu/Analysis/Regions.h"
#include "tofu/Analysis/SymbolicRegions.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace tofu;
using namespace tofu::analysis;
using namespace tofu::tdl;

namespace {

StringRef getVarName(const OperatorAnalysis &analysis, unsigned var) {
  return analysis.getOp().getIndexVars()[var]->getName();
}

StringRef getTensorName(const OperatorAnalysis &analysis, unsigned tensor) {
  return analysis.getOp().getTensors()[tensor]->getName();
}

void printStrategyHeader(llvm::raw_ostream &os, const OperatorAnalysis &analysis,
                         const Strategy &s) {
  os << "  " << getStrategyKindName(s.kind) << ' ' << getVarName(analysis, s.var);
  if (s.kind == Strategy::Kind::Reduce)
    os << " (" << getReducerName(s.reducer) << ')';
  os << ":\n";
}

void printNotes(llvm::raw_ostream &os, const OperatorAnalysis &analysis) {
  for (const AnalysisNote &note : analysis.getNotes())
    os << "  note: " << note.message << '\n';
}

//===--- Text, symbolic ---------------------------------------------------===//

void printSymRegion(llvm::raw_ostream &os, const OperatorAnalysis &analysis,
                    ArrayRef<SymRange> region) {
  if (region.empty())
    os << "scalar";
  llvm::interleave(
      region, os,
      [&](const SymRange &r) {
        os << (r.exact ? "[" : "~[");
        printPoly(os, analysis, r.lo);
        os << ", ";
        printPoly(os, analysis, r.hi);
        os << ')';
      },
      " x ");
}

void printReductionExtents(llvm::raw_ostream &os,
                           const OperatorAnalysis &analysis) {
  for (const IndexVarDecl *var : analysis.getOp().getReductionVars()) {
    const Extent &extent = var->getExtent();
    if (extent.kind != Extent::Kind::TensorDim)
      continue;
    os << "  |" << var->getName() << "| = |" << extent.tensor->getName() << '.'
       << extent.dim << "|\n";
  }
}

} // namespace

void analysis::printSymbolicStrategies(llvm::raw_ostream &os,
                                       const OperatorAnalysis &analysis,
                                       unsigned numWorkers) {
  os << "operator " << analysis.getOp().getName() << " (symbolic, "
     << numWorkers << " workers)\n";
  printReductionExtents(os, analysis);
  for (const Strategy &s : analysis.getStrategies()) {
    printStrategyHeader(os, analysis, s);
    SmallVector<SymbolicWorker, 2> workers;
    computeSymbolicStrategy(analysis, s, numWorkers, workers);
    for (unsigned w = 0; w != workers.size(); ++w) {
      os << "    worker " << w << ": output " << (workers[w].partial ? "(partial) " : "");
      printSymRegion(os, analysis, workers[w].output);
      os << '\n';
      for (unsigned t = 0; t != workers[w].inputs.size(); ++t)
        for (const SymRegion &region : workers[w].inputs[t]) {
          os << "      " << getTensorName(analysis, t) << ' ';
          printSymRegion(os, analysis, region);
          os << '\n';
        }
    }
  }
  printNotes(os, analysis);
}

//===--- Text, concrete ---------------------------------------------------===//

static void printRegion(llvm::raw_ostream &os, ArrayRef<Range> region) {
  if (region.empty())
    os << "scalar";
  llvm::interleave(
      region, os, [&](const Range &r) { os << '[' << r.lo << ", " << r.hi << ')'; },
      " x ");
}

void analysis::printConcreteStrategies(llvm::raw_ostream &os,
                                       const Binding &binding,
                                       OutputShapeSource source,
                                       unsigned numWorkers) {
  const OperatorAnalysis &analysis = binding.getAnalysis();
  os << "operator " << analysis.getOp().getName() << ": output "
     << formatShape(binding.getOutputShape())
     << (source == OutputShapeSource::Inferred ? " (inferred)" : "") << ", "
     << numWorkers << " workers\n";
  SmallVector<Range, 8> parts;
  SmallVector<WorkerRegions, 2> workers;
  for (const Strategy &s : analysis.getStrategies()) {
    printStrategyHeader(os, analysis, s);
    splitEvenly(binding.getVarExtent(s.var), numWorkers, parts);
    instantiateStrategy(binding, s, parts, workers);
    for (unsigned w = 0; w != workers.size(); ++w) {
      os << "    worker " << w << ": output " << (workers[w].partial ? "(partial) " : "");
      printRegion(os, workers[w].output);
      os << '\n';
      for (unsigned t = 0; t != workers[w].inputs.size(); ++t) {
        os << "      " << getTensorName(analysis, t) << ' ';
        printRegion(os, workers[w].inputs[t]);
        os << '\n';
      }
    }
  }
  printNotes(os, analysis);
}

//===--- JSON -------------------------------------------------------------===//

namespace {

void writeStrategyFields(llvm::json::OStream &json,
                         const OperatorAnalysis &analysis, const Strategy &s) {
  json.attribute("kind", getStrategyKindName(s.kind));
  json.attribute("var", getVarName(analysis, s.var));
  if (s.kind == Strategy::Kind::Reduce)
    json.attribute("reducer", getReducerName(s.reducer));
}

void writeNotesJSON(llvm::json::OStream &json, const OperatorAnalysis &analysis) {
  json.attributeArray("notes", [&] {
    for (const AnalysisNote &note : analysis.getNotes())
      json.value(note.message);
  });
}

void writeRegionJSON(llvm::json::OStream &json, ArrayRef<Range> region) {
  json.array([&] {
    for (const Range &r : region)
      json.array([&] {
        json.value(r.lo);
        json.value(r.hi);
      });
  });
}

std::string polyToString(const OperatorAnalysis &analysis, const Poly &p) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printPoly(os, analysis, p);
  return os.str();
}

void writeSymRegionJSON(llvm::json::OStream &json,
                        const OperatorAnalysis &analysis,
                        ArrayRef<SymRange> region) {
  json.array([&] {
    for (const SymRange &r : region)
      json.array([&] {
        json.value(polyToString(analysis, r.lo));
        json.value(polyToString(analysis, r.hi));
      });
  });
}

void writeSymWorkerJSON(llvm::json::OStream &json,
                        const OperatorAnalysis &analysis,
                        const SymbolicWorker &worker) {
  json.object([&] {
    json.attributeBegin("output");
    writeSymRegionJSON(json, analysis, worker.output);
    json.attributeEnd();
    json.attribute("partial", worker.partial);
    json.attributeObject("inputs", [&] {
      for (unsigned t = 0; t != worker.inputs.size(); ++t)
        json.attributeArray(getTensorName(analysis, t), [&] {
          for (const SymRegion &region : worker.inputs[t])
            writeSymRegionJSON(json, analysis, region);
        });
    });
  });
}

void writeWorkerJSON(llvm::json::OStream &json, const OperatorAnalysis &analysis,
                     const WorkerRegions &worker) {
  json.object([&] {
    json.attributeBegin("output");
    writeRegionJSON(json, worker.output);
    json.attributeEnd();
    json.attribute("partial", worker.partial);
    json.attributeObject("inputs", [&] {
      for (unsigned t = 0; t != worker.inputs.size(); ++t) {
        json.attributeBegin(getTensorName(analysis, t));
        writeRegionJSON(json, worker.inputs[t]);
        json.attributeEnd();
      }
    });
  });
}

} // namespace

void analysis::writeSymbolicStrategiesJSON(llvm::json::OStream &json,
                                           const OperatorAnalysis &analysis,
                                           unsigned numWorkers) {
  json.object([&] {
    json.attribute("name", analysis.getOp().getName());
    json.attribute("symbolic", true);
    json.attributeArray("strategies", [&] {
      for (const Strategy &s : analysis.getStrategies())
        json.object([&] {
          writeStrategyFields(json, analysis, s);
          SmallVector<SymbolicWorker, 2> workers;
          computeSymbolicStrategy(analysis, s, numWorkers, workers);
          json.attributeArray("workers", [&] {
            for (const SymbolicWorker &worker : workers)
              writeSymWorkerJSON(json, analysis, worker);
          });
        });
    });
    writeNotesJSON(json, analysis);
  });
}

void analysis::writeConcreteStrategiesJSON(llvm::json::OStream &json,
                                           const Binding &binding,
                                           OutputShapeSource source,
                                           unsigned numWorkers) {
  const OperatorAnalysis &analysis = binding.getAnalysis();
  json.object([&] {
    json.attribute("name", analysis.getOp().getName());
    json.attributeObject("output", [&] {
      json.attributeArray("shape", [&] {
        for (int64_t d : binding.getOutputShape())
          json.value(d);
      });
      json.attribute("inferred", source == OutputShapeSource::Inferred);
    });
    SmallVector<Range, 8> parts;
    SmallVector<WorkerRegions, 2> workers;
    json.attributeArray("strategies", [&] {
      for (const Strategy &s : analysis.getStrategies())
        json.object([&] {
          writeStrategyFields(json, analysis, s);
          splitEvenly(binding.getVarExtent(s.var), numWorkers, parts);
          instantiateStrategy(binding, s, parts, workers);
          json.attributeArray("workers", [&] {
            for (const WorkerRegions &worker : workers)
              writeWorkerJSON(json, analysis, worker);
          });
        });
    });
    writeNotesJSON(json, analysis);
  });
}

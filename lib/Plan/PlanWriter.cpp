//===- PlanWriter.cpp - Write plan JSON -----------------------------------===//
//
// This file implements writing a plan as JSON, streamed (a plan of a large
// graph for many workers has a region per tensor and worker), one op or
// tensor per line.
//
//===----------------------------------------------------------------------===//

#include "tofu/Plan/PlanJSON.h"

#include "tofu/Plan/Layouts.h"

#include "llvm/Support/JSON.h"

using namespace tofu;
using namespace tofu::plan;

static void writeNumbers(llvm::json::OStream &j, ArrayRef<int64_t> values) {
  j.array([&] {
    for (int64_t v : values)
      j.value(v);
  });
}

static void writeRegion(llvm::raw_ostream &os,
                        const llvm::Optional<Region> &region) {
  if (!region) {
    os << "null";
    return;
  }
  os << '[';
  for (unsigned d = 0, e = region->size(); d != e; ++d)
    os << (d ? "," : "") << '[' << (*region)[d].lo << ',' << (*region)[d].hi
       << ']';
  os << ']';
}

/// The estimated step's seconds.
static void writeSeconds(llvm::raw_ostream &os, const StepEstimate &estimate) {
  os << ",\n \"estimated_step_seconds\": ";
  llvm::json::OStream j(os);
  j.object([&] {
    j.attribute("communication", estimate.communicationSeconds);
    j.attribute("compute", estimate.computeSeconds);
    j.attribute("total", estimate.totalSeconds());
  });
}

/// The topology a plan was made for and its estimated step (fields beyond
/// the contract, docs/PlanFormat.md).
static void writeEstimate(llvm::raw_ostream &os, const Topology &topology,
                          const StepEstimate &estimate) {
  os << ",\n \"topology\": ";
  llvm::json::OStream j(os);
  j.object([&] {
    j.attributeArray("levels", [&] {
      for (unsigned f : topology.factors)
        j.value(int64_t(f));
    });
    j.attributeArray("bandwidths", [&] {
      for (double bw : topology.bandwidths)
        j.value(bw);
    });
    j.attribute("latency", topology.latency);
    j.attribute("flops", topology.flops);
  });
  os << ",\n \"level_bytes\": ";
  llvm::json::OStream bytes(os);
  writeNumbers(bytes, estimate.levelBytes);
  writeSeconds(os, estimate);
}

/// What the search did (docs/PlanFormat.md, "search").
static void writeSearch(llvm::raw_ostream &os, const SearchRecord &search) {
  os << ",\n \"search\": ";
  llvm::json::OStream j(os);
  j.object([&] {
    j.attribute("kind", search.kind);
    j.attribute("exact", search.exact);
    j.attributeArray("factorings", [&] {
      for (const auto &levels : search.factorings)
        j.array([&] {
          for (unsigned f : levels)
            j.value(int64_t(f));
        });
    });
    j.attributeArray("approximations", [&] {
      for (const SearchRecord::Approximation &a : search.approximations)
        j.object([&] {
          j.attribute("kind", a.kind);
          j.attribute("message", a.message);
        });
    });
  });
}

void plan::writePlanJSON(llvm::raw_ostream &os, const Plan &p,
                         StringRef graphPath) {
  os << "{\"format\": \"tofu-plan\", \"version\": 1, ";
  if (!graphPath.empty()) {
    os << "\"graph\": ";
    llvm::json::OStream(os).value(graphPath);
    os << ", ";
  }
  os << "\"workers\": " << p.workers << ",\n \"levels\": [";
  for (unsigned l = 0, e = p.levels.size(); l != e; ++l)
    os << (l ? ", " : "") << p.levels[l];
  os << "],\n \"comm_bytes\": " << p.commBytes << ",\n";
  {
    os << " \"resident_bytes_per_worker\": ";
    llvm::json::OStream j(os);
    writeNumbers(j, p.residentBytesPerWorker);
  }
  {
    os << ",\n \"peak_bytes_per_worker\": ";
    llvm::json::OStream j(os);
    writeNumbers(j, p.peakBytesPerWorker);
  }
  if (p.topology && p.estimate)
    writeEstimate(os, *p.topology, *p.estimate);
  else if (p.estimate) // tofu-plan --machine
    writeSeconds(os, *p.estimate);
  for (const auto &[name, json] : p.extraFields) {
    os << ",\n ";
    llvm::json::OStream(os).value(name);
    os << ": " << json;
  }
  if (p.search)
    writeSearch(os, *p.search);
  if (!p.recompute.empty()) {
    os << ",\n \"recompute\": ";
    llvm::json::OStream j(os);
    j.array([&] {
      for (const std::string &name : p.recompute)
        j.value(name);
    });
  }
  os << ",\n \"ops\": [";
  for (unsigned i = 0, e = p.ops.size(); i != e; ++i) {
    os << (i ? ",\n  " : "\n  ") << "{\"name\": ";
    llvm::json::OStream(os).value(p.ops[i].name);
    os << ", \"steps\": [";
    for (unsigned l = 0, n = p.ops[i].steps.size(); l != n; ++l)
      os << (l ? ", " : "") << '"' << formatStep(p.ops[i].steps[l]) << '"';
    os << "]}";
  }
  os << "],\n \"tensors\": [";
  for (unsigned t = 0, e = p.tensors.size(); t != e; ++t) {
    os << (t ? ",\n  " : "\n  ") << "{\"name\": ";
    const TensorPlan &tensor = p.tensors[t];
    llvm::json::OStream(os).value(tensor.name);
    if (tensor.layout) {
      os << ", \"steps\": [";
      for (unsigned l = 0, n = tensor.layout->size(); l != n; ++l)
        os << (l ? ", " : "") << '"' << formatLayoutStep((*tensor.layout)[l])
           << '"';
      os << ']';
    }
    // Large plans give such tensors by their layout alone
    // (docs/PlanFormat.md, "Compact layouts").
    if (!tensor.layout || p.workers <= kMaxListedWorkers) {
      os << ", \"workers\": [";
      // Listed regions as listed; a layout's derived (getStoredRegion).
      unsigned n = tensor.regions.empty() ? p.workers : tensor.regions.size();
      Region region;
      for (unsigned w = 0; w != n; ++w) {
        os << (w ? ", " : "") << "{\"region\": ";
        writeRegion(os, getStoredRegion(p, tensor, w, region)
                            ? llvm::Optional<Region>(region)
                            : llvm::None);
        os << '}';
      }
      os << ']';
    }
    os << '}';
  }
  os << "]}\n";
}

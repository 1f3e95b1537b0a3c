//===- Machine.cpp - Read and write machine files -------------------------===//
//
// This file implements the machine file (Machine.h, docs/StepTime.md): the
// located reader, the writer and the interpolation of kernel times.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/Machine.h"
#include "tofu/Support/JSONLocations.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>

using namespace tofu;
using namespace tofu::planner;
using Node = JSONLocations::Node;

const char *const planner::MachineKernelKinds[5] = {
    "gemm", "convolution", "transpose", "elementwise", "reduction"};

/// The intensity model of getKernelSeconds: the fixed cost plus the points
/// at the rate of the calls of the same intensity; false if the samples
/// record too few elements to interpolate.
static bool getSecondsByIntensity(const std::vector<Machine::Sample> &samples,
                                  double points, double elements,
                                  double &seconds) {
  if (!(elements > 0))
    return false;
  double fixed = samples.front().seconds;
  // (log intensity, seconds per point beyond the fixed cost), by intensity.
  std::vector<std::pair<double, double>> rates;
  for (const Machine::Sample &s : samples)
    if (s.elements > 0 && s.seconds > 2 * fixed)
      rates.push_back({std::log(s.points / s.elements),
                       (s.seconds - fixed) / s.points});
  if (rates.size() < 2)
    return false;
  llvm::sort(rates);
  double x = std::log(points / elements), perPoint;
  if (x <= rates.front().first) {
    perPoint = rates.front().second;
  } else if (x >= rates.back().first) {
    perPoint = rates.back().second;
  } else {
    size_t i = 1;
    while (rates[i].first < x)
      ++i;
    const auto &a = rates[i - 1], &b = rates[i];
    double f = b.first > a.first ? (x - a.first) / (b.first - a.first) : 0;
    perPoint = a.second + f * (b.second - a.second);
  }
  seconds = fixed + points * perPoint;
  return true;
}

double Machine::getKernelSeconds(StringRef kind, double points,
                                 double elements) const {
  if (!(points > 0))
    return 0;
  auto it = kernels.find(kind.str());
  if (it == kernels.end() || it->second.empty())
    it = kernels.find("elementwise");
  if (it == kernels.end() || it->second.empty())
    return 0;
  const std::vector<Sample> &samples = it->second;
  double seconds;
  if (getSecondsByIntensity(samples, points, elements, seconds))
    return seconds;
  if (points <= samples.front().points)
    return samples.front().seconds;
  for (size_t i = 1, e = samples.size(); i != e; ++i)
    if (points <= samples[i].points) {
      const Sample &a = samples[i - 1], &b = samples[i];
      double f = (points - a.points) / (b.points - a.points);
      return a.seconds + f * (b.seconds - a.seconds);
    }
  return samples.back().seconds * points / samples.back().points;
}

/// The value at `x` of the piecewise-linear function through `xy` (sorted
/// by x; points of equal x averaged), constant beyond the ends.
static double interpolate(std::vector<std::pair<double, double>> xy,
                          double x) {
  llvm::sort(xy);
  std::vector<std::pair<double, double>> merged;
  for (size_t i = 0, e = xy.size(); i != e;) {
    size_t j = i;
    double sum = 0;
    for (; j != e && xy[j].first == xy[i].first; ++j)
      sum += xy[j].second;
    merged.push_back({xy[i].first, sum / double(j - i)});
    i = j;
  }
  if (x <= merged.front().first)
    return merged.front().second;
  for (size_t i = 1, e = merged.size(); i != e; ++i)
    if (x <= merged[i].first) {
      const auto &a = merged[i - 1], &b = merged[i];
      return a.second +
             (x - a.first) / (b.first - a.first) * (b.second - a.second);
    }
  return merged.back().second;
}

double Machine::getOpSeconds(StringRef type, StringRef kind, double points,
                             double elements) const {
  auto it = ops.find(type.str());
  if (it == ops.end() || it->second.empty())
    return getKernelSeconds(kind, points, elements);
  if (!(points > 0))
    return 0;
  const std::vector<Sample> &samples = it->second;
  std::vector<std::pair<double, double>> rates;
  if (elements > 0)
    for (const Sample &s : samples)
      if (s.elements > 0)
        rates.push_back({std::log(s.points / s.elements),
                         s.seconds / s.points});
  if (!rates.empty())
    return points * interpolate(rates, std::log(points / elements));
  // Linear in points between samples; the end samples' rate beyond them.
  const Sample &first = samples.front(), &last = samples.back();
  if (points <= first.points)
    return first.seconds * points / first.points;
  if (points >= last.points)
    return last.seconds * points / last.points;
  std::vector<std::pair<double, double>> curve;
  for (const Sample &s : samples)
    curve.push_back({s.points, s.seconds});
  return interpolate(curve, points);
}

namespace {

/// Walks a machine file's location tree, reporting at the offending value.
class Reader {
public:
  Reader(DiagnosticEngine &diags, const JSONLocations &locs)
      : diags(diags), locs(locs) {}
  std::unique_ptr<Machine> read();

private:
  bool fail(const Node &node, const Twine &msg) {
    diags.error(SMLoc::getFromPointer(locs.getPointer(node)), msg);
    return false;
  }
  const Node *member(const Node &obj, StringRef key) {
    const Node *n = locs.getMember(obj, key);
    if (!n)
      fail(obj, "the machine file has no \"" + key + "\"");
    return n;
  }
  bool number(const Node &node, StringRef what, double &value,
              bool positive = true) {
    if (node.kind != Node::Kind::Number ||
        locs.getText(node).getAsDouble(value) || !std::isfinite(value) ||
        (positive ? !(value > 0) : value < 0))
      return fail(node, "\"" + what + "\" must be a " +
                            (positive ? "positive" : "non-negative") +
                            " number");
    return true;
  }
  /// Reads the object member `key` of `obj` as a positive number.
  bool positiveMember(const Node &obj, StringRef key, double &value) {
    const Node *n = member(obj, key);
    return n && number(*n, key, value);
  }
  bool positiveInteger(const Node &obj, StringRef key, unsigned &value) {
    const Node *n = member(obj, key);
    if (!n)
      return false;
    if (n->kind != Node::Kind::Number ||
        locs.getText(*n).getAsInteger(10, value) || value == 0)
      return fail(*n, "\"" + key + "\" must be a positive integer");
    return true;
  }
  bool object(const Node *n, StringRef key) {
    if (!n)
      return false;
    if (n->kind != Node::Kind::Object)
      return fail(*n, "\"" + key + "\" must be an object");
    return true;
  }
  bool string(const Node &obj, StringRef key, std::string &value) {
    const Node *n = member(obj, key);
    if (!n)
      return false;
    StringRef text = locs.getText(*n);
    if (n->kind != Node::Kind::String || text.size() < 2)
      return fail(*n, "\"" + key + "\" must be a string");
    value = text.drop_front().drop_back().str();
    return true;
  }
  /// The "cluster" object of a GPU cluster's file (docs/Machines.md).
  bool cluster(const Node &node, GpuCluster &c);
  bool link(const Node &node, GpuCluster::Link &l);
  /// Reads the samples at `node` (`where`: "kernels.KIND" or "ops.TYPE").
  bool samples(const Node &node, const Twine &where,
               std::vector<Machine::Sample> &out);

  DiagnosticEngine &diags;
  const JSONLocations &locs;
};

bool Reader::samples(const Node &node, const Twine &where,
                     std::vector<Machine::Sample> &out) {
  if (node.kind != Node::Kind::Array || node.children.empty())
    return fail(node, where +
                          " must be a non-empty array of [points, seconds]");
  for (uint32_t c : node.children) {
    const Node &pair = locs.getNode(c);
    if (pair.kind != Node::Kind::Array ||
        (pair.children.size() != 2 && pair.children.size() != 3))
      return fail(pair, "a sample of " + where +
                            " must be [points, seconds] or [points, "
                            "seconds, elements]");
    Machine::Sample s;
    if (!number(locs.getNode(pair.children[0]), "points", s.points) ||
        !number(locs.getNode(pair.children[1]), "seconds", s.seconds) ||
        (pair.children.size() == 3 &&
         !number(locs.getNode(pair.children[2]), "elements", s.elements)))
      return false;
    if (!out.empty() && s.points <= out.back().points)
      return fail(pair, "the samples of " + where +
                            " must have increasing points");
    out.push_back(s);
  }
  return true;
}

bool Reader::link(const Node &node, GpuCluster::Link &l) {
  if (!string(node, "name", l.name) ||
      !positiveMember(node, "bus_bandwidth", l.busBandwidth))
    return false;
  const Node *latency = member(node, "step_latency");
  return latency &&
         number(*latency, "step_latency", l.stepLatency, /*positive=*/false);
}

bool Reader::cluster(const Node &node, GpuCluster &c) {
  if (!object(&node, "cluster") || !string(node, "name", c.name) ||
      !positiveInteger(node, "gpus_per_node", c.gpusPerNode))
    return false;
  const Node *gpu = member(node, "gpu");
  if (!object(gpu, "gpu"))
    return false;
  const Node *peaks = member(*gpu, "peak_flops");
  if (!object(peaks, "peak_flops"))
    return false;
  static const char *const dtypes[] = {"bf16", "fp16", "tf32", "fp32"};
  for (uint32_t child : peaks->children) {
    const Node &peak = locs.getNode(child);
    if (!llvm::is_contained(dtypes, peak.key)) {
      diags.error(SMLoc::getFromPointer(locs.getKeyPointer(peak)),
                  "unknown dtype '" + peak.key +
                      "' in \"peak_flops\" (expected bf16, fp16, tf32, "
                      "fp32)");
      return false;
    }
    if (!number(peak, "peak_flops." + peak.key, c.peakFlops[peak.key]))
      return false;
  }
  if (!c.peakFlops.count("bf16"))
    return fail(*peaks, "\"peak_flops\" has no \"bf16\"");
  if (!positiveMember(*gpu, "memory_bandwidth", c.memoryBandwidth) ||
      !positiveMember(*gpu, "memory_bytes", c.memoryBytes) ||
      !positiveMember(*gpu, "gemm_efficiency", c.gemmEfficiency) ||
      !positiveMember(*gpu, "memory_efficiency", c.memoryEfficiency) ||
      !positiveInteger(*gpu, "multiprocessors", c.multiprocessors))
    return false;
  for (auto [key, value] :
       {std::pair<StringRef, double>{"gemm_efficiency", c.gemmEfficiency},
        {"memory_efficiency", c.memoryEfficiency}})
    if (value > 1)
      return fail(*locs.getMember(*gpu, key),
                  "\"" + key + "\" is a fraction of the peak (at most 1)");
  const Node *tile = member(*gpu, "gemm_tile");
  if (!tile)
    return false;
  if (tile->kind != Node::Kind::Array || tile->children.size() != 2)
    return fail(*tile, "\"gemm_tile\" must be [rows, columns]");
  for (unsigned i = 0; i != 2; ++i) {
    const Node &n = locs.getNode(tile->children[i]);
    unsigned &v = i ? c.tileColumns : c.tileRows;
    if (n.kind != Node::Kind::Number || locs.getText(n).getAsInteger(10, v) ||
        v == 0)
      return fail(n, "\"gemm_tile\" must be [rows, columns] of positive "
                     "integers");
  }
  const Node *links = member(node, "links");
  if (!object(links, "links"))
    return false;
  for (auto [key, index] :
       {std::pair<StringRef, unsigned>{"node", 0}, {"network", 1}}) {
    const Node *l = member(*links, key);
    if (!object(l, key) || !link(*l, c.links[index]))
      return false;
  }
  const Node *collectives = member(node, "collectives");
  if (!object(collectives, "collectives") ||
      !string(*collectives, "algorithm", c.collectiveAlgorithm))
    return false;
  if (c.collectiveAlgorithm != "ring")
    return fail(*locs.getMember(*collectives, "algorithm"),
                "\"algorithm\" must be \"ring\" (the one modelled)");
  const Node *latency = member(*collectives, "latency");
  return latency && number(*latency, "latency", c.collectiveLatency,
                           /*positive=*/false);
}

std::unique_ptr<Machine> Reader::read() {
  const Node &root = locs.getRoot();
  if (root.kind != Node::Kind::Object) {
    fail(root, "a machine file is a JSON object");
    return nullptr;
  }
  auto machine = std::make_unique<Machine>();
  const Node *format = member(root, "format");
  if (!format)
    return nullptr;
  if (locs.getText(*format) != "\"tofu-machine\"") {
    fail(*format, "\"format\" must be \"tofu-machine\" (a file written by "
                  "tofu-calibrate)");
    return nullptr;
  }
  const Node *version = member(root, "version");
  if (!version)
    return nullptr;
  if (locs.getText(*version) != "1") {
    fail(*version, "unsupported version " + locs.getText(*version) +
                       " (this tofu reads version 1)");
    return nullptr;
  }
  // A GPU cluster's file: the model, not a calibration's samples.
  if (const Node *c = locs.getMember(root, "cluster")) {
    for (StringRef key : {"kernels", "ops", "transport"})
      if (const Node *n = locs.getMember(root, key)) {
        fail(*n, "a GPU cluster's file (\"cluster\") has no \"" + key +
                     "\": its kernels are timed by the cluster's model "
                     "(docs/Machines.md)");
        return nullptr;
      }
    machine->cluster = std::make_shared<GpuCluster>();
    if (!cluster(*c, *machine->cluster))
      return nullptr;
    machine->transport = "nccl";
    machine->workers = machine->cluster->gpusPerNode;
    machine->memoryBandwidth = machine->cluster->memoryBandwidth;
    return machine;
  }
  const Node *transport = member(root, "transport");
  if (!transport)
    return nullptr;
  StringRef t = locs.getText(*transport);
  if (t != "\"threads\"" && t != "\"mpi\"") {
    fail(*transport, "\"transport\" must be \"threads\" or \"mpi\"");
    return nullptr;
  }
  machine->transport = t.drop_front().drop_back().str();
  for (auto [key, field] :
       {std::pair<StringRef, unsigned *>{"workers", &machine->workers},
        {"hardware_threads", &machine->hardwareThreads}}) {
    const Node *n = member(root, key);
    if (!n)
      return nullptr;
    unsigned v = 0;
    if (n->kind != Node::Kind::Number || locs.getText(*n).getAsInteger(10, v) ||
        v == 0) {
      fail(*n, "\"" + key + "\" must be a positive integer");
      return nullptr;
    }
    *field = v;
  }
  for (auto [key, field] : {std::pair<StringRef, double *>{
                                "memory_bandwidth", &machine->memoryBandwidth},
                            {"transport_bandwidth",
                             &machine->transportBandwidth}}) {
    const Node *n = member(root, key);
    if (!n || !number(*n, key, *field))
      return nullptr;
  }
  const Node *latency = member(root, "transport_latency");
  if (!latency ||
      !number(*latency, "transport_latency", machine->transportLatency,
              /*positive=*/false))
    return nullptr;
  const Node *kernels = member(root, "kernels");
  if (!kernels)
    return nullptr;
  if (kernels->kind != Node::Kind::Object) {
    fail(*kernels, "\"kernels\" must be an object of kinds of kernel");
    return nullptr;
  }
  for (uint32_t c : kernels->children) {
    const Node &kind = locs.getNode(c);
    if (!llvm::is_contained(MachineKernelKinds, kind.key)) {
      diags.error(SMLoc::getFromPointer(locs.getKeyPointer(kind)),
                  "unknown kind of kernel '" + kind.key +
                      "' (expected gemm, convolution, transpose, "
                      "elementwise, reduction)");
      return nullptr;
    }
    if (!samples(kind, "kernels." + kind.key, machine->kernels[kind.key]))
      return nullptr;
  }
  for (const char *kind : MachineKernelKinds)
    if (!machine->kernels.count(kind)) {
      fail(*kernels, "\"kernels\" has no \"" + Twine(kind) + "\"");
      return nullptr;
    }
  // Optional: samples per op type (tofu-calibrate --graph).
  if (const Node *ops = locs.getMember(root, "ops")) {
    if (ops->kind != Node::Kind::Object) {
      fail(*ops, "\"ops\" must be an object of op types");
      return nullptr;
    }
    for (uint32_t c : ops->children) {
      const Node &type = locs.getNode(c);
      if (!samples(type, "ops." + type.key, machine->ops[type.key]))
        return nullptr;
    }
  }
  return machine;
}

} // namespace

std::unique_ptr<Machine> planner::readMachineFile(StringRef path,
                                                  DiagnosticEngine &diags) {
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buf) {
    diags.error(SMLoc(), "cannot read '" + path + "': " +
                             buf.getError().message());
    return nullptr;
  }
  unsigned id =
      diags.getSourceMgr().AddNewSourceBuffer(std::move(*buf), SMLoc());
  StringRef text = diags.getSourceMgr().getMemoryBuffer(id)->getBuffer();
  auto locs = scanJSONDocument(text, diags);
  if (!locs)
    return nullptr;
  return Reader(diags, *locs).read();
}

void planner::writeMachineJSON(llvm::raw_ostream &os, const Machine &machine) {
  auto number = [&](double value) {
    llvm::json::OStream(os).value(value);
  };
  auto writeSamples = [&](const std::vector<Machine::Sample> &samples,
                          const char *separator) {
    for (size_t i = 0, e = samples.size(); i != e; ++i) {
      os << (i ? separator : "") << "[";
      number(samples[i].points);
      os << ", ";
      number(samples[i].seconds);
      if (samples[i].elements > 0) {
        os << ", ";
        number(samples[i].elements);
      }
      os << "]";
    }
  };
  os << "{\"format\": \"tofu-machine\", \"version\": 1, \"transport\": ";
  llvm::json::OStream(os).value(machine.transport);
  os << ",\n \"workers\": " << machine.workers
     << ", \"hardware_threads\": " << machine.hardwareThreads
     << ",\n \"kernels\": {";
  bool first = true;
  for (const char *kind : MachineKernelKinds) {
    auto it = machine.kernels.find(kind);
    if (it == machine.kernels.end())
      continue;
    os << (first ? "\n  \"" : "],\n  \"") << kind << "\": [";
    first = false;
    writeSamples(it->second, ",\n    ");
  }
  os << (first ? "},\n" : "]},\n");
  if (!machine.ops.empty()) {
    os << " \"ops\": {";
    bool firstType = true;
    for (const auto &[type, samples] : machine.ops) {
      os << (firstType ? "\n  " : ",\n  ");
      firstType = false;
      llvm::json::OStream(os).value(type);
      os << ": [";
      writeSamples(samples, ", ");
      os << "]";
    }
    os << "},\n";
  }
  os << " \"memory_bandwidth\": ";
  number(machine.memoryBandwidth);
  os << ",\n \"transport_bandwidth\": ";
  number(machine.transportBandwidth);
  os << ",\n \"transport_latency\": ";
  number(machine.transportLatency);
  os << "}\n";
}

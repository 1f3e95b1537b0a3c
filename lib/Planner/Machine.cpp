//===- Machine.cpp - Read and write machine files -------------------------===//
//
// This file implements the machine file (Machine.h, docs/StepTime.md): the
// located reader, the writer and the interpolation of kernel times.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/Machine.h"
#include "tofu/Graph/JSONLocations.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>

using namespace tofu;
using namespace tofu::planner;
using graph::JSONLocations;
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
  bool samples(const Node &node, StringRef kind,
               std::vector<Machine::Sample> &out);

  DiagnosticEngine &diags;
  const JSONLocations &locs;
};

bool Reader::samples(const Node &node, StringRef kind,
                     std::vector<Machine::Sample> &out) {
  if (node.kind != Node::Kind::Array || node.children.empty())
    return fail(node, "kernels." + kind +
                          " must be a non-empty array of [points, seconds]");
  for (uint32_t c : node.children) {
    const Node &pair = locs.getNode(c);
    if (pair.kind != Node::Kind::Array ||
        (pair.children.size() != 2 && pair.children.size() != 3))
      return fail(pair, "a sample of kernels." + kind +
                            " must be [points, seconds] or [points, "
                            "seconds, elements]");
    Machine::Sample s;
    if (!number(locs.getNode(pair.children[0]), "points", s.points) ||
        !number(locs.getNode(pair.children[1]), "seconds", s.seconds) ||
        (pair.children.size() == 3 &&
         !number(locs.getNode(pair.children[2]), "elements", s.elements)))
      return false;
    if (!out.empty() && s.points <= out.back().points)
      return fail(pair, "the samples of kernels." + kind +
                            " must have increasing points");
    out.push_back(s);
  }
  return true;
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
    if (!samples(kind, kind.key, machine->kernels[kind.key]))
      return nullptr;
  }
  for (const char *kind : MachineKernelKinds)
    if (!machine->kernels.count(kind)) {
      fail(*kernels, "\"kernels\" has no \"" + Twine(kind) + "\"");
      return nullptr;
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
  if (auto deep = graph::findExcessiveNesting(text, graph::MaxJSONDepth)) {
    diags.error(SMLoc::getFromPointer(text.data() + *deep),
                "JSON nested too deep");
    return nullptr;
  }
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
  if (!value) {
    // llvm::json says "[L:C, byte=N]: why".
    std::string message = llvm::toString(value.takeError());
    StringRef msg = message;
    size_t offset = 0, byte = msg.find("byte="), close = msg.find("]: ");
    if (byte != StringRef::npos && close != StringRef::npos &&
        !msg.slice(byte + 5, close).getAsInteger(10, offset))
      msg = msg.drop_front(close + 3);
    offset = std::min(offset, text.size());
    diags.error(SMLoc::getFromPointer(text.data() + offset),
                "invalid JSON: " + msg);
    return nullptr;
  }
  JSONLocations locs = JSONLocations::scan(text);
  if (const Node *dup = locs.findDuplicateKey()) {
    diags.error(SMLoc::getFromPointer(locs.getKeyPointer(*dup)),
                "invalid JSON: duplicate key '" + dup->key + "'");
    return nullptr;
  }
  return Reader(diags, locs).read();
}

void planner::writeMachineJSON(llvm::raw_ostream &os, const Machine &machine) {
  auto number = [&](double value) {
    llvm::json::OStream(os).value(value);
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
    for (size_t i = 0, e = it->second.size(); i != e; ++i) {
      os << (i ? ",\n    [" : "[");
      number(it->second[i].points);
      os << ", ";
      number(it->second[i].seconds);
      if (it->second[i].elements > 0) {
        os << ", ";
        number(it->second[i].elements);
      }
      os << "]";
    }
  }
  os << (first ? "},\n" : "]},\n") << " \"memory_bandwidth\": ";
  number(machine.memoryBandwidth);
  os << ",\n \"transport_bandwidth\": ";
  number(machine.transportBandwidth);
  os << ",\n \"transport_latency\": ";
  number(machine.transportLatency);
  os << "}\n";
}

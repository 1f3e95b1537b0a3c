//===- Checkpoint.cpp - Saving and restoring a LinkedPlan's state ---------===//
//
// This file implements checkpoints (Checkpoint.h) and the exchange of a
// LinkedPlan's persistent tensors with NumPy archives. A checkpoint's boxes
// are written by the lowest worker storing each distinct box, one file per
// worker (`worker-W.bin`, the boxes in graph order), so the manifest follows
// from the plan alone and the root writes it without hearing from the
// others. Processes meet three times (Transport::sumOverProcesses, which
// also tells every process whether any failed): after the root prepared the
// temporary directory, after every shard file is on disk, and after the
// root renamed the checkpoint into place and replaced `latest`.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Checkpoint.h"

#include "tofu/Runtime/Error.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

using namespace tofu::runtime;
namespace fs = std::filesystem;
using std::int64_t;

//===----------------------------------------------------------------------===//
// The manifest's JSON
//===----------------------------------------------------------------------===//

namespace {
/// A JSON value of a manifest: objects, arrays, strings and integers (all
/// the manifest holds).
struct Json {
  enum Kind { Null, Integer, String, Array, Object } kind = Null;
  int64_t integer = 0;
  std::string string;
  std::vector<Json> elements;
  std::vector<std::pair<std::string, Json>> members;

  const Json *get(const std::string &key) const {
    for (const auto &member : members)
      if (member.first == key)
        return &member.second;
    return nullptr;
  }
};

/// A strict reader of the manifest's JSON subset, with a depth limit.
class JsonParser {
public:
  JsonParser(const std::string &text, const std::string &path)
      : text(text), path(path) {}

  Json parseDocument() {
    Json value = parseValue(0);
    skipSpace();
    if (at != text.size())
      fail("text after the document");
    return value;
  }

private:
  [[noreturn]] void fail(const std::string &why) {
    throw RuntimeError(fmt::format("{}: offset {}: {}", path, at, why));
  }
  void skipSpace() {
    while (at < text.size() && std::strchr(" \t\r\n", text[at]))
      ++at;
  }
  bool consume(char c) {
    skipSpace();
    if (at < text.size() && text[at] == c) {
      ++at;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!consume(c))
      fail(fmt::format("expected '{}'", c));
  }
  std::string parseString() {
    expect('"');
    std::string result;
    while (at < text.size() && text[at] != '"') {
      char c = text[at++];
      if (c == '\\') {
        if (at == text.size())
          break;
        char e = text[at++];
        if (e == 'n')
          result += '\n';
        else if (e == 't')
          result += '\t';
        else if (e == '"' || e == '\\' || e == '/')
          result += e;
        else
          fail("unsupported escape in a string");
      } else {
        result += c;
      }
    }
    if (at == text.size())
      fail("unterminated string");
    ++at;
    return result;
  }
  Json parseValue(unsigned depth) {
    if (depth > 16)
      fail("nested too deeply");
    skipSpace();
    Json value;
    if (at == text.size())
      fail("unexpected end");
    char c = text[at];
    if (c == '"') {
      value.kind = Json::String;
      value.string = parseString();
    } else if (c == '[') {
      ++at;
      value.kind = Json::Array;
      if (!consume(']')) {
        do
          value.elements.push_back(parseValue(depth + 1));
        while (consume(','));
        expect(']');
      }
    } else if (c == '{') {
      ++at;
      value.kind = Json::Object;
      if (!consume('}')) {
        do {
          skipSpace();
          std::string key = parseString();
          if (value.get(key))
            fail("duplicate key '" + key + "'");
          expect(':');
          value.members.emplace_back(key, parseValue(depth + 1));
        } while (consume(','));
        expect('}');
      }
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      errno = 0;
      char *end;
      long long n = std::strtoll(text.c_str() + at, &end, 10);
      if (errno == ERANGE || end == text.c_str() + at)
        fail("an integer out of range");
      at = end - text.c_str();
      value.kind = Json::Integer;
      value.integer = n;
    } else {
      fail("expected a string, integer, array or object");
    }
    return value;
  }

  const std::string &text;
  const std::string &path;
  std::size_t at = 0;
};

/// What a manifest says of one stored box.
struct ShardEntry {
  std::string file;
  int64_t offset = 0;
  Box box;
};

/// What a manifest says of one tensor.
struct TensorEntry {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<ShardEntry> shards;
};

struct Manifest {
  std::string graph;
  int64_t workers = 0;
  int64_t step = 0;
  std::map<std::string, TensorEntry> tensors;
};
} // namespace

static std::string readText(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw RuntimeError("cannot open '" + path.string() + "'");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

static Manifest parseManifest(const fs::path &path) {
  std::string text = readText(path);
  Json root = JsonParser(text, path.string()).parseDocument();
  auto bad = [&](const std::string &why) -> RuntimeError {
    return RuntimeError(path.string() + ": " + why);
  };
  auto integer = [&](const Json *value, const char *what) {
    if (!value || value->kind != Json::Integer)
      throw bad(std::string("'") + what + "' must be an integer");
    return value->integer;
  };
  auto string = [&](const Json *value, const char *what) {
    if (!value || value->kind != Json::String)
      throw bad(std::string("'") + what + "' must be a string");
    return value->string;
  };
  if (root.kind != Json::Object ||
      string(root.get("format"), "format") != "tofu-checkpoint")
    throw bad("not a tofu checkpoint manifest");
  if (integer(root.get("version"), "version") != 1)
    throw bad("unsupported manifest version");
  Manifest manifest;
  manifest.graph = string(root.get("graph"), "graph");
  manifest.workers = integer(root.get("workers"), "workers");
  manifest.step = integer(root.get("step"), "step");
  const Json *tensors = root.get("tensors");
  if (!tensors || tensors->kind != Json::Array)
    throw bad("'tensors' must be an array");
  for (const Json &row : tensors->elements) {
    TensorEntry entry;
    std::string name = string(row.get("name"), "name");
    entry.dtype = string(row.get("dtype"), "dtype");
    const Json *shape = row.get("shape");
    if (!shape || shape->kind != Json::Array)
      throw bad("tensor '" + name + "': 'shape' must be an array");
    for (const Json &extent : shape->elements)
      entry.shape.push_back(integer(&extent, "shape"));
    const Json *shards = row.get("shards");
    if (!shards || shards->kind != Json::Array)
      throw bad("tensor '" + name + "': 'shards' must be an array");
    for (const Json &s : shards->elements) {
      ShardEntry shard;
      shard.file = string(s.get("file"), "file");
      if (shard.file.find('/') != std::string::npos || shard.file == "..")
        throw bad("tensor '" + name + "': a shard file outside the directory");
      shard.offset = integer(s.get("offset"), "offset");
      const Json *box = s.get("box");
      if (!box || box->kind != Json::Array ||
          box->elements.size() != entry.shape.size())
        throw bad("tensor '" + name + "': a shard's 'box' must have one "
                  "range per dimension");
      for (std::size_t d = 0; d != entry.shape.size(); ++d) {
        const Json &range = box->elements[d];
        if (range.kind != Json::Array || range.elements.size() != 2)
          throw bad("tensor '" + name + "': a range must be [lo, hi]");
        int64_t lo = integer(&range.elements[0], "box"),
                hi = integer(&range.elements[1], "box");
        if (lo < 0 || hi < lo || hi > entry.shape[d])
          throw bad("tensor '" + name + "': a shard's box is outside it");
        shard.box.lo.push_back(lo);
        shard.box.hi.push_back(hi);
      }
      entry.shards.push_back(std::move(shard));
    }
    if (!manifest.tensors.emplace(name, std::move(entry)).second)
      throw bad("tensor '" + name + "' appears twice");
  }
  return manifest;
}

//===----------------------------------------------------------------------===//
// Saving
//===----------------------------------------------------------------------===//

/// Per worker, whether it writes its box of `t`: it stores one, and no
/// lower worker stores the same box (each distinct box once, found in
/// O(K log K): replicated layouts repeat a box on many workers).
static std::vector<bool> getBoxWriters(const ExecutablePlan &plan,
                                       unsigned t) {
  const TensorInfo &info = plan.tensors[t];
  std::vector<bool> writes(plan.workers, false);
  std::set<std::pair<std::vector<int64_t>, std::vector<int64_t>>> seen;
  for (unsigned w = 0; w != plan.workers; ++w)
    if (info.stored[w] && !info.stored[w]->isEmpty())
      writes[w] = seen.emplace(info.stored[w]->lo, info.stored[w]->hi).second;
  return writes;
}

static std::string getWorkerFile(unsigned w) {
  return fmt::format("worker-{}.bin", w);
}

static std::string formatStepDirectory(int64_t step) {
  return fmt::format("step-{:08}", step);
}

/// Throws on every process when `ok` is false on any (every process
/// calls it; `what` is this process's error, or empty).
static void meet(LinkedPlan &linked, const std::string &what) {
  std::vector<int64_t> failed = {what.empty() ? 0 : 1};
  linked.getTransport().sumOverProcesses(failed);
  if (!what.empty())
    throw RuntimeError(what);
  if (failed[0])
    throw RuntimeError("another process failed to write or read the "
                       "checkpoint");
}

/// Writes `data` to `path` and makes it durable (fsync).
static void writeDurably(const fs::path &path, const Bytes &data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    throw RuntimeError(fmt::format("cannot create '{}': {}", path.string(),
                                   std::strerror(errno)));
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int error = errno;
      ::close(fd);
      throw RuntimeError(fmt::format("cannot write '{}': {}", path.string(),
                                     std::strerror(error)));
    }
    done += n;
  }
  bool ok = ::fsync(fd) == 0;
  ok &= ::close(fd) == 0;
  if (!ok)
    throw RuntimeError("cannot write '" + path.string() + "'");
}

/// `text` as a JSON string's contents.
static std::string escapeJson(const std::string &text) {
  std::string result;
  for (char c : text) {
    if (c == '"' || c == '\\')
      result += '\\';
    if (c == '\n') {
      result += "\\n";
      continue;
    }
    result += c;
  }
  return result;
}

static std::string formatBox(const Box &box) {
  std::string text = "[";
  for (unsigned d = 0; d != box.getRank(); ++d)
    text += fmt::format("{}[{}, {}]", d ? ", " : "", box.lo[d], box.hi[d]);
  return text + "]";
}

/// The manifest of `linked`'s checkpoint at `step`.
static std::string writeManifest(const LinkedPlan &linked, int64_t step) {
  const ExecutablePlan &plan = linked.getPlan();
  std::vector<int64_t> offsets(plan.workers, 0);
  std::string text = fmt::format(
      "{{\"format\": \"tofu-checkpoint\", \"version\": 1,\n"
      " \"graph\": \"{}\", \"workers\": {}, \"step\": {},\n \"tensors\": [",
      escapeJson(linked.getGenerated().graphName), plan.workers, step);
  bool first = true;
  for (unsigned t : linked.getPersistentTensors()) {
    const TensorInfo &info = plan.tensors[t];
    std::string shape;
    for (int64_t extent : info.shape)
      shape += (shape.empty() ? "" : ", ") + std::to_string(extent);
    text += fmt::format("{}\n  {{\"name\": \"{}\", \"dtype\": \"{}\", "
                        "\"shape\": [{}], \"shards\": [",
                        first ? "" : ",", info.name,
                        getElementTypeName(info.type), shape);
    first = false;
    bool firstShard = true;
    std::vector<bool> writes = getBoxWriters(plan, t);
    for (unsigned w = 0; w != plan.workers; ++w) {
      if (!writes[w])
        continue;
      const Box &box = *info.stored[w];
      text += fmt::format("{}\n    {{\"file\": \"{}\", \"offset\": {}, "
                          "\"box\": {}}}",
                          firstShard ? "" : ",", getWorkerFile(w), offsets[w],
                          formatBox(box));
      firstShard = false;
      offsets[w] += box.getVolume() * getElementSize(info.type);
    }
    text += "]}";
  }
  return text + "]}\n";
}

void tofu::runtime::saveCheckpoint(LinkedPlan &linked, const std::string &dir,
                                   int64_t step) {
  fs::path root(dir);
  fs::path final = root / formatStepDirectory(step);
  fs::path temporary = root / (formatStepDirectory(step) + ".tmp");
  std::string error;
  if (linked.isRoot()) {
    try {
      fs::create_directories(root);
      // What an earlier save that crashed left.
      for (const fs::directory_entry &entry : fs::directory_iterator(root))
        if (entry.path().extension() == ".tmp")
          fs::remove_all(entry.path());
      fs::create_directory(temporary);
    } catch (const fs::filesystem_error &e) {
      error = fmt::format("checkpoint '{}': {}", dir, e.what());
    }
  }
  meet(linked, error);
  try {
    std::vector<unsigned> persistent = linked.getPersistentTensors();
    std::vector<std::vector<bool>> writers;
    for (unsigned t : persistent)
      writers.push_back(getBoxWriters(linked.getPlan(), t));
    for (unsigned w : linked.getLocalWorkers()) {
      Bytes data;
      for (unsigned i = 0, e = persistent.size(); i != e; ++i)
        if (writers[i][w]) {
          HostTensor shard = linked.getShard(persistent[i], w);
          data.insert(data.end(), shard.data.begin(), shard.data.end());
        }
      writeDurably(temporary / getWorkerFile(w), data);
    }
  } catch (const std::exception &e) {
    error = e.what();
  }
  meet(linked, error);
  if (linked.isRoot()) {
    try {
      std::string manifest = writeManifest(linked, step);
      writeDurably(temporary / "manifest.json",
                   Bytes(manifest.begin(), manifest.end()));
      fs::remove_all(final);
      fs::rename(temporary, final);
      std::string latest = formatStepDirectory(step) + "\n";
      writeDurably(root / "latest.tmp", Bytes(latest.begin(), latest.end()));
      fs::rename(root / "latest.tmp", root / "latest");
    } catch (const std::exception &e) {
      error = fmt::format("checkpoint '{}': {}", dir, e.what());
    }
  }
  meet(linked, error);
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

/// The directory of the checkpoint `dir` names: its latest, or itself.
static fs::path findCheckpoint(const std::string &dir) {
  fs::path root(dir);
  if (fs::exists(root / "manifest.json"))
    return root;
  fs::path latest = root / "latest";
  if (!fs::exists(latest))
    throw RuntimeError("'" + dir + "' holds no checkpoint (no 'latest' and "
                       "no 'manifest.json')");
  std::string name = readText(latest);
  while (!name.empty() && (name.back() == '\n' || name.back() == ' '))
    name.pop_back();
  if (name.empty() || name.find('/') != std::string::npos)
    throw RuntimeError("'" + latest.string() + "' names no checkpoint");
  return root / name;
}

/// Reads `bytes` bytes at `offset` of `path`.
static Bytes readAt(const fs::path &path, int64_t offset, int64_t bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw RuntimeError("cannot open '" + path.string() + "'");
  in.seekg(0, std::ios::end);
  if (int64_t(in.tellg()) < offset + bytes)
    throw RuntimeError(fmt::format("'{}' is cut short: {} bytes, the "
                                   "manifest needs {}",
                                   path.string(), int64_t(in.tellg()),
                                   offset + bytes));
  Bytes data(bytes);
  in.seekg(offset);
  in.read(reinterpret_cast<char *>(data.data()), bytes);
  if (!in)
    throw RuntimeError("cannot read '" + path.string() + "'");
  return data;
}

/// "[3, 3]".
static std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text;
  for (int64_t extent : shape)
    text += (text.empty() ? "" : ", ") + std::to_string(extent);
  return "[" + text + "]";
}

/// Checks that `manifest` holds exactly `linked`'s persistent tensors.
static void checkSameTensors(const LinkedPlan &linked,
                             const Manifest &manifest, const fs::path &where) {
  const ExecutablePlan &plan = linked.getPlan();
  std::string graph = linked.getGenerated().graphName;
  auto other = [&](const std::string &why) {
    return RuntimeError(fmt::format(
        "checkpoint '{}' (graph '{}') is not one of this plan's graph '{}': "
        "{}",
        where.string(), manifest.graph, graph, why));
  };
  std::vector<unsigned> persistent = linked.getPersistentTensors();
  for (unsigned t : persistent) {
    const TensorInfo &info = plan.tensors[t];
    auto found = manifest.tensors.find(info.name);
    if (found == manifest.tensors.end())
      throw other("it has no tensor '" + info.name + "'");
    if (found->second.dtype != getElementTypeName(info.type) ||
        found->second.shape != info.shape)
      throw other(fmt::format("its '{}' is {} {}, here {} {}", info.name,
                              found->second.dtype,
                              formatShape(found->second.shape),
                              getElementTypeName(info.type),
                              formatShape(info.shape)));
  }
  if (manifest.tensors.size() != persistent.size())
    for (const auto &entry : manifest.tensors) {
      int t = lookupTensor(linked.getGenerated(), entry.first);
      if (t < 0 || !plan.tensors[t].persistent || !plan.tensors[t].graphInput)
        throw other("this graph has no param or state '" + entry.first +
                    "'");
    }
}

/// The values of `box` of `info` from the shards of `entry`.
static Bytes readBox(const TensorInfo &info, const Box &box,
                     const TensorEntry &entry, const fs::path &where) {
  unsigned size = getElementSize(info.type);
  Bytes result(box.getVolume() * size);
  std::vector<const Box *> cuts;
  for (const ShardEntry &shard : entry.shards)
    cuts.push_back(&shard.box);
  std::map<std::size_t, Bytes> loaded;
  forEachCell(box, cuts, [&](const Box &cell) {
    for (std::size_t s = 0; s != entry.shards.size(); ++s) {
      const ShardEntry &shard = entry.shards[s];
      if (shard.box.isEmpty() || !shard.box.contains(cell))
        continue;
      auto it = loaded.find(s);
      if (it == loaded.end())
        it = loaded
                 .emplace(s, readAt(where / shard.file, shard.offset,
                                    shard.box.getVolume() * size))
                 .first;
      copyRegion(cell, it->second.data(), shard.box, result.data(), box,
                 size);
      return;
    }
    throw RuntimeError(fmt::format("checkpoint '{}': no shard holds {} of "
                                   "'{}'",
                                   where.string(), cell.format(), info.name));
  });
  return result;
}

int64_t tofu::runtime::loadCheckpoint(LinkedPlan &linked,
                                      const std::string &dir) {
  std::string error;
  int64_t step = 0;
  try {
    fs::path where = findCheckpoint(dir);
    Manifest manifest = parseManifest(where / "manifest.json");
    checkSameTensors(linked, manifest, where);
    const ExecutablePlan &plan = linked.getPlan();
    for (unsigned t : linked.getPersistentTensors())
      for (unsigned w : linked.getLocalWorkers()) {
        std::optional<Box> box = linked.getStoredBox(t, w);
        if (!box)
          continue;
        const TensorInfo &info = plan.tensors[t];
        HostTensor shard;
        shard.type = info.type;
        shard.shape = box->getExtents();
        shard.data = readBox(info, *box, manifest.tensors[info.name], where);
        linked.setShard(t, w, shard);
      }
    step = manifest.step;
  } catch (const std::exception &e) {
    error = e.what();
  }
  meet(linked, error);
  return step;
}

//===----------------------------------------------------------------------===//
// NumPy archives
//===----------------------------------------------------------------------===//

std::vector<std::string> tofu::runtime::loadNpz(LinkedPlan &linked,
                                                const std::string &path) {
  const ExecutablePlan &plan = linked.getPlan();
  std::vector<bool> set(plan.tensors.size(), false);
  for (NamedArray &array : readNpz(path)) {
    int t = lookupTensor(linked.getGenerated(), array.first);
    if (t < 0)
      throw RuntimeError(fmt::format("'{}': the graph '{}' has no tensor "
                                     "'{}'",
                                     path, linked.getGenerated().graphName,
                                     array.first));
    const TensorInfo &info = plan.tensors[t];
    if (!info.persistent || !info.graphInput)
      throw RuntimeError(fmt::format("'{}': '{}' is no param or state of "
                                     "the graph",
                                     path, array.first));
    if (array.second.type != info.type || array.second.shape != info.shape)
      throw RuntimeError(fmt::format(
          "'{}': '{}' is {} {}, the graph's is {} {}", path, array.first,
          getElementTypeName(array.second.type),
          formatShape(array.second.shape), getElementTypeName(info.type),
          formatShape(info.shape)));
    linked.setInput(t, array.second);
    set[t] = true;
  }
  std::vector<std::string> missing;
  for (unsigned t : linked.getPersistentTensors())
    if (!set[t])
      missing.push_back(plan.tensors[t].name);
  return missing;
}

void tofu::runtime::saveNpz(LinkedPlan &linked, const std::string &path,
                            bool withState) {
  std::vector<NamedArray> arrays;
  for (unsigned t : withState ? linked.getPersistentTensors()
                              : linked.getTensorsOfRole("param")) {
    HostTensor value = linked.gather(t);
    if (linked.isRoot())
      arrays.emplace_back(linked.getPlan().tensors[t].name, std::move(value));
  }
  std::string error;
  if (linked.isRoot()) {
    try {
      writeNpz(path, arrays);
    } catch (const std::exception &e) {
      error = e.what();
    }
  }
  meet(linked, error);
}

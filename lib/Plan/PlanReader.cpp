//===- PlanReader.cpp - Read plan JSON ------------------------------------===//
//
// This file implements reading plan JSON into the plan IR. The text first
// passes the JSON front end every reader shares (scanJSONText: nesting
// depth, syntax, duplicate keys; errors at LINE:COLUMN) and a check that
// every integer literal fits 64 bits (llvm::json reads a larger one as
// INT64_MAX); every later error names the JSON path of the offending value.
//
//===----------------------------------------------------------------------===//

#include "tofu/Plan/PlanJSON.h"

#include "tofu/Plan/Layouts.h"
#include "tofu/Support/JSONLocations.h"

#include "llvm/Support/JSON.h"

using namespace tofu;
using namespace tofu::plan;
namespace json = llvm::json;

namespace {

llvm::Error malformed(const Twine &path, const Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "plan: " + path + ": " + what);
}

llvm::Expected<const json::Array *> getArray(const json::Object &obj,
                                             StringRef key,
                                             const Twine &path) {
  const json::Array *array = obj.getArray(key);
  if (!array)
    return malformed(path.isTriviallyEmpty() ? Twine(key) : path + "." + key,
                     "expected an array");
  return array;
}

llvm::Expected<int64_t> getInteger(const json::Value &v, const Twine &path) {
  if (auto n = v.getAsInteger())
    return *n;
  return malformed(path, "expected an integer");
}

llvm::Error readNumbers(const json::Object &obj, StringRef key,
                        std::vector<int64_t> &out) {
  const json::Value *v = obj.get(key);
  const json::Array *array = v ? v->getAsArray() : nullptr;
  if (!array)
    return malformed(key, "expected an array of integers");
  for (unsigned i = 0, e = array->size(); i != e; ++i) {
    auto n = getInteger((*array)[i], key + "[" + Twine(i) + "]");
    if (!n)
      return n.takeError();
    out.push_back(*n);
  }
  return llvm::Error::success();
}

llvm::Expected<llvm::Optional<Region>> readRegion(const json::Value *v,
                                                  const Twine &path) {
  if (!v)
    return malformed(path, "missing 'region'");
  if (v->getAsNull())
    return llvm::Optional<Region>();
  const json::Array *dims = v->getAsArray();
  if (!dims)
    return malformed(path, "expected null or an array of [lo, hi] pairs");
  Region region;
  for (unsigned d = 0, e = dims->size(); d != e; ++d) {
    const json::Array *pair = (*dims)[d].getAsArray();
    std::string dimPath = (path + "[" + Twine(d) + "]").str();
    if (!pair || pair->size() != 2)
      return malformed(dimPath, "expected [lo, hi]");
    auto lo = getInteger((*pair)[0], dimPath);
    if (!lo)
      return lo.takeError();
    auto hi = getInteger((*pair)[1], dimPath);
    if (!hi)
      return hi.takeError();
    region.push_back(Range{*lo, *hi});
  }
  return llvm::Optional<Region>(std::move(region));
}

llvm::Error readOps(const json::Array &ops, Plan &p) {
  for (unsigned i = 0, e = ops.size(); i != e; ++i) {
    std::string path = "ops[" + std::to_string(i) + "]";
    const json::Object *obj = ops[i].getAsObject();
    if (!obj)
      return malformed(path, "expected an object");
    OpPlan op;
    if (auto name = obj->getString("name"))
      op.name = name->str();
    else
      return malformed(path + ".name", "expected a string");
    auto steps = getArray(*obj, "steps", path);
    if (!steps)
      return steps.takeError();
    for (unsigned l = 0, n = (*steps)->size(); l != n; ++l) {
      auto text = (**steps)[l].getAsString();
      llvm::Optional<Step> step = text ? parseStep(*text) : llvm::None;
      if (!step)
        return malformed(path + ".steps[" + Twine(l) + "]",
                         "expected \"split:VAR\", \"reduce:VAR\" or "
                         "\"replicate\"");
      op.steps.push_back(std::move(*step));
    }
    p.ops.push_back(std::move(op));
  }
  return llvm::Error::success();
}

llvm::Error readTensors(const json::Array &tensors, Plan &p) {
  for (unsigned t = 0, e = tensors.size(); t != e; ++t) {
    std::string path = "tensors[" + std::to_string(t) + "]";
    const json::Object *obj = tensors[t].getAsObject();
    if (!obj)
      return malformed(path, "expected an object");
    TensorPlan tensor;
    if (auto name = obj->getString("name"))
      tensor.name = name->str();
    else
      return malformed(path + ".name", "expected a string");
    if (const json::Value *steps = obj->get("steps")) {
      const json::Array *array = steps->getAsArray();
      if (!array)
        return malformed(path + ".steps", "expected an array");
      tensor.layout.emplace();
      for (unsigned l = 0, n = array->size(); l != n; ++l) {
        auto text = (*array)[l].getAsString();
        llvm::Optional<uint8_t> dim = text ? parseLayoutStep(*text) : llvm::None;
        if (!dim)
          return malformed(path + ".steps[" + Twine(l) + "]",
                           "expected \"split:DIM\" or \"replicate\"");
        tensor.layout->push_back(*dim);
      }
    }
    const json::Array *workers = obj->getArray("workers");
    if (!workers && !tensor.layout)
      return malformed(path + ".workers",
                       "expected an array (or the tensor's \"steps\")");
    for (unsigned w = 0, n = workers ? workers->size() : 0; w != n; ++w) {
      std::string workerPath = path + ".workers[" + std::to_string(w) + "]";
      const json::Object *worker = (*workers)[w].getAsObject();
      if (!worker)
        return malformed(workerPath, "expected an object");
      auto region = readRegion(worker->get("region"), workerPath + ".region");
      if (!region)
        return region.takeError();
      tensor.regions.push_back(std::move(*region));
    }
    p.tensors.push_back(std::move(tensor));
  }
  return llvm::Error::success();
}

llvm::Expected<StringRef> getString(const json::Object &obj, StringRef key,
                                    const Twine &path) {
  if (auto text = obj.getString(key))
    return *text;
  return malformed(path + "." + key, "expected a string");
}

/// The optional "search" object (docs/PlanFormat.md).
llvm::Error readSearch(const json::Value &value, Plan &p) {
  const json::Object *obj = value.getAsObject();
  if (!obj)
    return malformed("search", "expected an object");
  SearchRecord search;
  auto kind = getString(*obj, "kind", "search");
  if (!kind)
    return kind.takeError();
  search.kind = kind->str();
  if (auto exact = obj->getBoolean("exact"))
    search.exact = *exact;
  else
    return malformed("search.exact", "expected true or false");
  auto factorings = getArray(*obj, "factorings", "search");
  if (!factorings)
    return factorings.takeError();
  for (unsigned i = 0, e = (*factorings)->size(); i != e; ++i) {
    std::string path = "search.factorings[" + std::to_string(i) + "]";
    const json::Array *levels = (**factorings)[i].getAsArray();
    if (!levels)
      return malformed(path, "expected an array of integers");
    SmallVector<unsigned, 4> factoring;
    for (unsigned l = 0, n = levels->size(); l != n; ++l) {
      auto f = getInteger((*levels)[l], path + "[" + Twine(l) + "]");
      if (!f)
        return f.takeError();
      if (*f < 2 || *f > (1 << 20))
        return malformed(path, "each factor must be at least 2");
      factoring.push_back(*f);
    }
    search.factorings.push_back(std::move(factoring));
  }
  auto approximations = getArray(*obj, "approximations", "search");
  if (!approximations)
    return approximations.takeError();
  for (unsigned i = 0, e = (*approximations)->size(); i != e; ++i) {
    std::string path = "search.approximations[" + std::to_string(i) + "]";
    const json::Object *a = (**approximations)[i].getAsObject();
    if (!a)
      return malformed(path, "expected an object");
    auto aKind = getString(*a, "kind", path);
    if (!aKind)
      return aKind.takeError();
    auto message = getString(*a, "message", path);
    if (!message)
      return message.takeError();
    search.approximations.push_back({aKind->str(), message->str()});
  }
  p.search = std::move(search);
  return llvm::Error::success();
}

/// The first integer literal under `node` (at JSON path `path`) that does
/// not fit int64_t, as an error quoting it as written. Recurses once per
/// level, which scanJSONText has bounded.
llvm::Error checkIntegers(const JSONLocations &locs,
                          const JSONLocations::Node &node,
                          const std::string &path) {
  using Kind = JSONLocations::Node::Kind;
  if (node.kind == Kind::Number) {
    StringRef literal = locs.getText(node);
    int64_t value;
    if (literal.find_first_of(".eE") == StringRef::npos &&
        literal.getAsInteger(10, value))
      return malformed(path, literal + " is out of range (a 64-bit integer)");
    return llvm::Error::success();
  }
  for (unsigned i = 0, e = node.children.size(); i != e; ++i) {
    const JSONLocations::Node &child = locs.getNode(node.children[i]);
    std::string childPath =
        node.kind == Kind::Object
            ? (path.empty() ? child.key : path + "." + child.key)
            : path + "[" + std::to_string(i) + "]";
    if (llvm::Error err = checkIntegers(locs, child, childPath))
      return err;
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<Plan> plan::readPlanJSON(StringRef text) {
  JSONProblem problem;
  llvm::Optional<JSONLocations> locs = scanJSONText(text, problem);
  if (!locs)
    return malformed(getLineAndColumn(text, problem.offset), problem.message);
  if (llvm::Error err = checkIntegers(*locs, locs->getRoot(), ""))
    return err;
  auto doc = json::parse(text);
  if (!doc)
    return malformed("document", llvm::toString(doc.takeError()));
  const json::Object *root = doc->getAsObject();
  if (!root || root->getString("format") != llvm::Optional<StringRef>("tofu-plan"))
    return malformed("format", "not a tofu-plan document (expected "
                               "\"format\": \"tofu-plan\")");
  if (root->getInteger("version") != llvm::Optional<int64_t>(1))
    return malformed("version", "unsupported version (expected 1)");
  Plan p;
  // At most tofu-plan's limit, 65536: a larger count would not fit the
  // plan's unsigned `workers` (2^32 + 1 read as 1 worker).
  auto workers = root->getInteger("workers");
  if (!workers || *workers < 1 || *workers > (1 << 16))
    return malformed("workers", "expected an integer from 1 to 65536");
  p.workers = *workers;
  std::vector<int64_t> levels;
  if (llvm::Error err = readNumbers(*root, "levels", levels))
    return err;
  for (int64_t f : levels) {
    if (f < 2 || f > (1 << 20))
      return malformed("levels", "each factor must be at least 2");
    p.levels.push_back(f);
  }
  if (auto comm = root->getInteger("comm_bytes"))
    p.commBytes = *comm;
  else
    return malformed("comm_bytes", "expected an integer");
  if (llvm::Error err =
          readNumbers(*root, "resident_bytes_per_worker", p.residentBytesPerWorker))
    return err;
  if (llvm::Error err =
          readNumbers(*root, "peak_bytes_per_worker", p.peakBytesPerWorker))
    return err;
  if (const json::Value *search = root->get("search"))
    if (llvm::Error err = readSearch(*search, p))
      return err;
  if (const json::Value *recompute = root->get("recompute")) {
    const json::Array *names = recompute->getAsArray();
    if (!names)
      return malformed("recompute", "expected an array of tensor names");
    for (unsigned i = 0, e = names->size(); i != e; ++i) {
      auto name = (*names)[i].getAsString();
      if (!name)
        return malformed("recompute[" + Twine(i) + "]",
                         "expected a tensor name");
      p.recompute.push_back(name->str());
    }
  }
  auto ops = getArray(*root, "ops", Twine());
  if (!ops)
    return ops.takeError();
  if (llvm::Error err = readOps(**ops, p))
    return err;
  auto tensors = getArray(*root, "tensors", Twine());
  if (!tensors)
    return tensors.takeError();
  if (llvm::Error err = readTensors(**tensors, p))
    return err;
  return p;
}

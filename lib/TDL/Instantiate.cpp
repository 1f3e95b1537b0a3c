//===- Instantiate.cpp - Concrete operators from generic ones -------------===//
//
// This file implements the Instantiator: the memo (keyed by what an
// instance depends on, InstanceKey.cpp), overload resolution (the first
// overload in library order that matchOverload accepts), and the error that
// lists why each overload was rejected.
//
//===----------------------------------------------------------------------===//

#include "InstantiateImpl.h"

#include "tofu/TDL/Printers.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/raw_ostream.h"

using namespace tofu;
using namespace tofu::tdl;
using namespace tofu::tdl::detail;

/// One memoized instance and how to re-check broadcasting for a hit.
struct detail::MemoEntry {
  std::unique_ptr<Instance> instance;
  BroadcastPlan plan;
};

namespace {

/// "(inputs 2x3, 3; params alpha=1)", for error messages.
std::string describeUse(const Use &use) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "inputs ";
  if (use.inputShapes.empty())
    os << "none";
  llvm::interleaveComma(use.inputShapes, os,
                        [&](const Shape &s) { os << formatShape(s); });
  if (!use.params.empty()) {
    os << "; params ";
    llvm::interleaveComma(use.params, os, [&](const NamedParamValue &p) {
      os << p.first << '=';
      if (p.second.isReal)
        os << p.second.realValue;
      else
        os << p.second.intValue;
    });
  }
  if (!use.outputShape.empty() || (use.outputRank && *use.outputRank == 0))
    os << "; output " << formatShape(use.outputShape);
  else if (use.outputRank)
    os << "; output rank " << *use.outputRank;
  return os.str();
}

llvm::Error noMatch(const Use &use, ArrayRef<const OpDecl *> overloads,
                    ArrayRef<std::string> reasons) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "operator '" << use.opName << "' ";
  if (overloads.empty()) {
    os << "is not defined";
  } else if (overloads.size() == 1) {
    os << '(';
    printSignature(os, *overloads[0]);
    os << ") does not fit " << describeUse(use) << ": " << reasons[0];
  } else {
    os << "has no overload for " << describeUse(use) << ':';
    for (size_t i = 0; i != overloads.size(); ++i) {
      os << "\n  ";
      printSignature(os, *overloads[i]);
      os << ": " << reasons[i];
    }
  }
  return llvm::createStringError(llvm::inconvertibleErrorCode(), os.str());
}

} // namespace

Instantiator::Instantiator(const Module &library) : libraries({&library}) {}

Instantiator::Instantiator(ArrayRef<const Module *> modules)
    : libraries(modules.begin(), modules.end()) {}

Instantiator::~Instantiator() = default;

ArrayRef<const OpDecl *>
Instantiator::lookupOverloads(StringRef name,
                              SmallVectorImpl<const OpDecl *> &buf) const {
  if (libraries.size() == 1)
    return libraries[0]->lookupOverloads(name);
  for (const Module *module : libraries)
    llvm::append_range(buf, module->lookupOverloads(name));
  return buf;
}

const NameDeps *Instantiator::getNameDeps(StringRef name) {
  auto [it, inserted] = nameDeps.try_emplace(name);
  if (inserted) {
    SmallVector<const OpDecl *, 4> buf;
    ArrayRef<const OpDecl *> overloads = lookupOverloads(name, buf);
    if (!overloads.empty())
      it->second = std::make_unique<NameDeps>(
          computeNameDeps(overloads, nameDeps.size()));
  }
  return it->second.get();
}

llvm::Expected<std::unique_ptr<MemoEntry>>
Instantiator::resolve(const Use &use) {
  SmallVector<const OpDecl *, 4> buf;
  ArrayRef<const OpDecl *> overloads = lookupOverloads(use.opName, buf);
  SmallVector<std::string, 4> reasons;
  auto entry = std::make_unique<MemoEntry>();
  entry->instance = std::make_unique<Instance>();
  Instance *instance = entry->instance.get();
  for (const OpDecl *op : overloads) {
    reasons.push_back(matchOverload(*op, use, instance->params));
    if (!reasons.back().empty())
      continue;
    instance->generic = op;
    instance->op = op;
    if (op->isGeneric()) {
      auto built = buildInstanceOp(*op, use, entry->plan);
      if (!built)
        return built.takeError();
      ownedOps.push_back(std::move(*built));
      instance->op = ownedOps.back().get();
    }
    for (const ParamValue &value : instance->params)
      instance->intParams.push_back(value.isReal ? 0 : value.intValue);
    return entry;
  }
  return noMatch(use, overloads, reasons);
}

llvm::Expected<const Instance *>
Instantiator::instantiate(StringRef opName, ArrayRef<Shape> inputShapes,
                          ArrayRef<NamedParamValue> params,
                          llvm::Optional<unsigned> outputRank) {
  return lookupOrResolve({opName, inputShapes, params, outputRank, {}});
}

llvm::Expected<const Instance *>
Instantiator::instantiateForOutput(StringRef opName,
                                   ArrayRef<Shape> inputShapes,
                                   ArrayRef<NamedParamValue> params,
                                   ArrayRef<int64_t> outputShape) {
  return lookupOrResolve({opName, inputShapes, params,
                          unsigned(outputShape.size()), outputShape});
}

llvm::Expected<const Instance *>
Instantiator::lookupOrResolve(const Use &use) {
  const NameDeps *deps = getNameDeps(use.opName);
  bool memoizable = deps && encodeKey(*deps, use, scratchKey);
  if (memoizable) {
    auto it = memo.find(scratchKey);
    // A hit with extents that do not broadcast goes on to resolve, which
    // says why.
    if (it != memo.end() && isBroadcastCompatible(it->second->plan, use))
      return it->second->instance.get();
  }
  llvm::Expected<std::unique_ptr<MemoEntry>> entry = resolve(use);
  if (!entry)
    return entry.takeError();
  const Instance *instance = (*entry)->instance.get();
  // A resolved use has known param names, and a key that failed the
  // broadcast check resolves to the error; keep the instance alive anyway.
  if (!memoizable || memo.count(scratchKey)) {
    unmemoized.push_back(std::move(*entry));
    return instance;
  }
  int64_t *words = keyStorage.Allocate<int64_t>(scratchKey.size());
  std::copy(scratchKey.begin(), scratchKey.end(), words);
  memo.try_emplace(ArrayRef<int64_t>(words, scratchKey.size()),
                   std::move(*entry));
  return instance;
}

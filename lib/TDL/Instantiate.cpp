//===- Instantiate.cpp - Concrete operators from generic ones -------------===//
//
// This file implements the Instantiator: the memo (keyed by the bytes of
// the use: name, shapes, params, output rank), overload resolution (the
// first overload in library order that matchOverload accepts), and the
// error that lists why each overload was rejected.
//
//===----------------------------------------------------------------------===//

#include "InstantiateImpl.h"

#include "tofu/TDL/Printers.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/raw_ostream.h"

using namespace tofu;
using namespace tofu::tdl;
using namespace tofu::tdl::detail;

namespace {

template <typename T> void appendBytes(SmallVectorImpl<char> &key, T value) {
  const char *bytes = reinterpret_cast<const char *>(&value);
  key.append(bytes, bytes + sizeof(T));
}

/// The memo key: every input of the use, as bytes.
void encodeKey(const Use &use, SmallVectorImpl<char> &key) {
  key.append(use.opName.begin(), use.opName.end());
  appendBytes(key, uint32_t(use.inputShapes.size()));
  for (const Shape &shape : use.inputShapes) {
    appendBytes(key, uint32_t(shape.size()));
    for (int64_t d : shape)
      appendBytes(key, d);
  }
  for (const auto &[name, value] : use.params) {
    key.append(name.begin(), name.end());
    key.push_back(value.isReal ? 'r' : 'i');
    if (value.isReal)
      appendBytes(key, value.realValue);
    else
      appendBytes(key, value.intValue);
  }
  appendBytes(key, use.outputRank ? int64_t(*use.outputRank) : int64_t(-1));
  appendBytes(key, uint32_t(use.outputShape.size()));
  for (int64_t d : use.outputShape)
    appendBytes(key, d);
}

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

llvm::Expected<std::unique_ptr<Instance>>
Instantiator::resolve(const Use &use) {
  SmallVector<const OpDecl *, 4> buf;
  ArrayRef<const OpDecl *> overloads = lookupOverloads(use.opName, buf);
  SmallVector<std::string, 4> reasons;
  auto instance = std::make_unique<Instance>();
  for (const OpDecl *op : overloads) {
    reasons.push_back(matchOverload(*op, use, instance->params));
    if (!reasons.back().empty())
      continue;
    instance->generic = op;
    instance->op = op;
    if (op->isGeneric()) {
      auto built = buildInstanceOp(*op, use);
      if (!built)
        return built.takeError();
      ownedOps.push_back(std::move(*built));
      instance->op = ownedOps.back().get();
    }
    for (const ParamValue &value : instance->params)
      instance->intParams.push_back(value.isReal ? 0 : value.intValue);
    return instance;
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
  llvm::SmallString<128> key;
  encodeKey(use, key);
  auto it = memo.find(key);
  if (it != memo.end())
    return it->second.get();
  llvm::Expected<std::unique_ptr<Instance>> instance = resolve(use);
  if (!instance)
    return instance.takeError();
  return memo.try_emplace(key, std::move(*instance)).first->second.get();
}

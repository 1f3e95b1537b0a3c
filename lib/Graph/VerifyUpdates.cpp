//===- VerifyUpdates.cpp - What a tensor's "updates" field names -----------===//
//
// This file implements the check of the training-step relation
// `"updates": "P"` (a tensor holds the next value of parameter or state P):
// P must be a tensor of the graph, of role param or state, with the
// updating tensor's shape and dtype, and updated by one tensor only. The
// planner charges the next step and the runtime copies the update over P
// by this relation, so a wrong one would be a wrong cost or a crash.
//
//===----------------------------------------------------------------------===//

#include "tofu/Graph/Verifier.h"
#include "tofu/Support/Diagnostics.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/JSON.h"

using namespace tofu;
using namespace tofu::graph;

namespace {

/// "f32 8x8x3x3" ("f32 scalar" for rank 0).
std::string describeType(const Tensor &t) {
  return (getDTypeName(t.dtype) + " " +
          (t.shape.empty() ? std::string("scalar") : formatShape(t.shape)))
      .str();
}

/// How a JSON value is named in messages.
StringRef describeJSON(const llvm::json::Value &value) {
  switch (value.kind()) {
  case llvm::json::Value::Object: return "an object";
  case llvm::json::Value::Array: return "an array";
  case llvm::json::Value::Number: return "a number";
  case llvm::json::Value::Boolean:
  case llvm::json::Value::Null: return "a boolean or null";
  case llvm::json::Value::String: return "a string";
  }
  return "a value";
}

} // namespace

bool graph::verifyUpdates(const Graph &g, DiagnosticEngine &diags) {
  unsigned before = diags.getNumErrors();
  // The updating tensor of each updated one, with its field, for the
  // duplicate check.
  llvm::DenseMap<unsigned, std::pair<unsigned, const ExtraField *>> updater;
  for (unsigned i = 0, e = g.getNumTensors(); i != e; ++i) {
    const Tensor &t = g.getTensor(i);
    for (const ExtraField &field : t.extras) {
      if (field.key != "updates")
        continue;
      std::string what = "tensor '" + t.name + "'";
      auto value = llvm::json::parse(field.json);
      if (!value) {
        // The reader kept the text of a value it parsed: unreachable for
        // graphs it read, reported all the same.
        diags.error(field.valueLoc,
                    what + ": 'updates' is not valid JSON: " +
                        llvm::toString(value.takeError()));
        continue;
      }
      llvm::Optional<StringRef> name = value->getAsString();
      if (!name) {
        diags.error(field.valueLoc,
                    what + ": 'updates' must be the name of a tensor (a "
                           "string), not " +
                        describeJSON(*value));
        continue;
      }
      int target = g.lookupTensor(*name);
      if (target < 0) {
        diags.error(field.valueLoc, what + " updates '" + *name +
                                        "', which is not a tensor of the "
                                        "graph");
        continue;
      }
      const Tensor &p = g.getTensor(target);
      if (p.role != Role::Param && p.role != Role::State) {
        diags.error(field.valueLoc,
                    what + " updates '" + p.name + "' of role '" +
                        p.roleName +
                        "'; only tensors of role param or state are updated");
        diags.note(p.roleLoc, "tensor '" + p.name + "' has its role here");
        continue;
      }
      if (p.shape != t.shape || p.dtype != t.dtype) {
        diags.error(field.valueLoc,
                    what + " (" + describeType(t) + ") updates '" + p.name +
                        "' (" + describeType(p) +
                        "); an update has the shape and dtype of the tensor "
                        "it updates");
        diags.note(p.loc, "tensor '" + p.name + "' is declared here");
        continue;
      }
      auto inserted = updater.try_emplace(unsigned(target), i, &field);
      if (!inserted.second) {
        const Tensor &first = g.getTensor(inserted.first->second.first);
        diags.error(field.valueLoc, what + " updates '" + p.name +
                                        "', which tensor '" + first.name +
                                        "' already updates");
        diags.note(inserted.first->second.second->valueLoc,
                   "tensor '" + first.name + "' updates it here");
      }
    }
  }
  return diags.getNumErrors() == before;
}

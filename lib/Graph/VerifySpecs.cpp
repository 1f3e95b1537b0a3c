//===- VerifySpecs.cpp - Check graph ops against their TDL operators ------===//
//
// This file implements the spec half of the graph verifier. For each op:
// the operator its type names; for a plain operator (one overload, not
// generic) the number and ranks of its inputs, its params by name and type,
// and its output rank, each reported where it is in the JSON; then the
// concrete operator for the op's shapes and params (tdl::Instantiator,
// which resolves overloads and expands ellipses and reports why no
// overload fits), and its output shape against the shape inferred from the
// operator's reads, by the one shape rule (analysis::judgeOutputShape,
// docs/GraphFormat.md): where inference determines the output shape, the
// declared shape must equal it (up to a stride); where it does not
// determine every dimension, the declared shape must bind with the inputs
// and each declared extent must keep the reads that bound that dimension
// in bounds. A tensor whose element is another read's index
// (`self[n, target[n]]`) must have an integer dtype.
//
//===----------------------------------------------------------------------===//

#include "tofu/Graph/GraphWriter.h"
#include "tofu/Graph/SpecLibrary.h"
#include "tofu/Graph/Verifier.h"
#include "tofu/Analysis/ShapeAgreement.h"
#include "tofu/Support/Diagnostics.h"
#include "tofu/TDL/ExprWalk.h"

#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace tofu;
using namespace tofu::graph;

namespace {

std::string formatParam(const ParamValue &value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  writeParamValue(os, value);
  return os.str();
}

class SpecVerifier {
public:
  SpecVerifier(const Graph &g, SpecLibrary &specs, DiagnosticEngine &diags)
      : g(g), specs(specs), diags(diags) {}

  void checkOp(const Op &op);

private:
  bool checkInputs(const Op &op, const tdl::OpDecl &decl);
  bool checkOutputRank(const Op &op, const tdl::OpDecl &decl);
  bool checkParams(const Op &op, const tdl::OpDecl &decl);
  const tdl::Instance *instantiate(const Op &op);
  void checkIndexDTypes(const Op &op, const tdl::OpDecl &decl);
  void checkShape(const Op &op, const tdl::OpDecl &decl, bool opaque,
                  ArrayRef<int64_t> params);
  SMLoc outputShapeLoc(const Op &op) const {
    const Tensor &out = g.getTensor(op.getOutput());
    return out.shapeLoc.isValid() ? out.shapeLoc : op.loc;
  }
  /// An analysis error's message without its "operator 'NAME': " lead,
  /// which prefix() already says.
  std::string stripOperator(llvm::Error err, const tdl::OpDecl &decl) const {
    return stripOperator(llvm::toString(std::move(err)), decl);
  }
  std::string stripOperator(std::string msg, const tdl::OpDecl &decl) const {
    std::string lead = "operator '" + decl.getName().str() + "': ";
    if (StringRef(msg).startswith(lead))
      msg.erase(0, lead.size());
    return msg;
  }
  std::string prefix(const Op &op, const tdl::OpDecl &decl) const {
    return "op '" + op.name + "' (operator '" + decl.getName().str() + "')";
  }

  /// The key of an op's shape verdict: the operator, its params and the
  /// shapes of its inputs and output, as bytes.
  void makeShapeKey(const Op &op, const tdl::OpDecl &decl, bool opaque,
                    ArrayRef<int64_t> params);

  const Graph &g;
  SpecLibrary &specs;
  DiagnosticEngine &diags;
  /// Shape keys already judged valid: ops of repeated structure (layers,
  /// time steps) share one judgement.
  llvm::StringSet<> validShapes;
  std::string key;
};

} // namespace

bool SpecVerifier::checkInputs(const Op &op, const tdl::OpDecl &decl) {
  auto tensors = decl.getTensors();
  if (op.inputs.size() != tensors.size()) {
    std::string names;
    for (const auto &t : tensors)
      names += (names.empty() ? "" : ", ") + t->getName().str();
    diags.error(op.inputsLoc.isValid() ? op.inputsLoc : op.loc,
                prefix(op, decl) + ": has " + Twine(op.inputs.size()) +
                    (op.inputs.size() == 1 ? " input" : " inputs") +
                    ", but the operator takes " +
                    Twine(tensors.size()) + " (" + names + ")");
    return false;
  }
  bool ok = true;
  for (unsigned i = 0, e = tensors.size(); i != e; ++i) {
    int rank = tensors[i]->getRank();
    const Tensor &t = g.getTensor(op.inputs[i].index);
    if (rank >= 0 && unsigned(rank) != t.shape.size()) {
      diags.error(op.inputs[i].loc,
                  prefix(op, decl) + ": input " + Twine(i) + " '" + t.name +
                      "' has rank " + Twine(t.shape.size()) + " (shape " +
                      formatShape(t.shape) + "), but the operator reads '" +
                      tensors[i]->getName() + "' with rank " + Twine(rank));
      ok = false;
    }
  }
  return ok;
}

bool SpecVerifier::checkOutputRank(const Op &op, const tdl::OpDecl &decl) {
  const Tensor &out = g.getTensor(op.getOutput());
  if (out.shape.size() == decl.getOutputRank())
    return true;
  diags.error(op.outputs[0].loc,
              prefix(op, decl) + ": output '" + out.name + "' has rank " +
                  Twine(out.shape.size()) + " (shape " +
                  formatShape(out.shape) +
                  "), but the operator's output has rank " +
                  Twine(decl.getOutputRank()));
  return false;
}

bool SpecVerifier::checkParams(const Op &op, const tdl::OpDecl &decl) {
  SmallVector<bool, 4> seen(decl.getParams().size(), false);
  bool ok = true;
  for (unsigned i = 0, e = op.params.size(); i != e; ++i) {
    const auto &[name, value] = op.params[i];
    SMLoc loc = i < op.paramLocs.size() ? op.paramLocs[i] : op.loc;
    const tdl::ParamDecl *param = decl.lookupParam(name);
    if (!param) {
      diags.error(loc, prefix(op, decl) + ": the operator has no param '" +
                           name + "'");
      ok = false;
      continue;
    }
    seen[param->getPosition()] = true;
    if (!param->isReal() && !value.getAsInteger()) {
      diags.error(loc, prefix(op, decl) + ": int param '" + name +
                           "' must be an integer, not " + formatParam(value));
      ok = false;
    }
  }
  for (const auto &param : decl.getParams())
    if (!seen[param->getPosition()]) {
      diags.error(op.paramsLoc.isValid() ? op.paramsLoc : op.loc,
                  prefix(op, decl) + ": no value for param '" +
                      param->getName() + "'");
      ok = false;
    }
  return ok;
}

void SpecVerifier::makeShapeKey(const Op &op, const tdl::OpDecl &decl,
                                bool opaque, ArrayRef<int64_t> params) {
  key.clear();
  auto add = [&](int64_t value) {
    key.append(reinterpret_cast<const char *>(&value), sizeof(value));
  };
  auto addShape = [&](ArrayRef<int64_t> shape) {
    add(shape.size());
    for (int64_t extent : shape)
      add(extent);
  };
  add(reinterpret_cast<intptr_t>(&decl));
  add(opaque);
  addShape(params);
  for (const TensorRef &ref : op.inputs)
    addShape(g.getTensor(ref.index).shape);
  addShape(g.getTensor(op.getOutput()).shape);
}

void SpecVerifier::checkShape(const Op &op, const tdl::OpDecl &decl,
                              bool opaque,
                              ArrayRef<int64_t> params) {
  makeShapeKey(op, decl, opaque, params);
  if (validShapes.count(key))
    return;
  auto analysisOr = specs.getAnalysis(decl);
  if (!analysisOr) {
    diags.error(op.typeLoc.isValid() ? op.typeLoc : op.loc,
                prefix(op, decl) + ": " +
                    stripOperator(analysisOr.takeError(), decl));
    return;
  }
  const analysis::OperatorAnalysis &analysis = **analysisOr;
  SmallVector<Shape, 4> inputShapes = g.getInputShapes(op);
  const Tensor &out = g.getTensor(op.getOutput());

  using analysis::ShapeVerdict;
  ShapeVerdict verdict = analysis::judgeOutputShape(analysis, inputShapes,
                                                    params, out.shape, opaque);
  switch (verdict.kind) {
  case ShapeVerdict::Kind::Exact:
  case ShapeVerdict::Kind::Tolerated:
  case ShapeVerdict::Kind::Undetermined:
    validShapes.insert(key);
    return;
  case ShapeVerdict::Kind::Invalid:
    diags.error(op.loc, prefix(op, decl) + ": " +
                            stripOperator(verdict.detail, decl));
    return;
  case ShapeVerdict::Kind::Mismatch:
    diags.error(outputShapeLoc(op), prefix(op, decl) + ": output '" +
                                        out.name + "' has shape " +
                                        formatShape(out.shape) + ", but " +
                                        verdict.detail);
    diags.note(op.loc, "op '" + op.name + "' is here");
    return;
  }
}

const tdl::Instance *SpecVerifier::instantiate(const Op &op) {
  auto instance = specs.instantiate(g, op);
  if (!instance) {
    std::string msg = llvm::toString(instance.takeError());
    for (std::string lead : {"operator '" + op.type + "': ",
                             "operator '" + op.type + "' "})
      if (StringRef(msg).startswith(lead))
        msg.erase(0, lead.size());
    diags.error(op.typeLoc.isValid() ? op.typeLoc : op.loc,
                "op '" + op.name + "' (operator '" + op.type + "'): " + msg);
    return nullptr;
  }
  return *instance;
}

void SpecVerifier::checkIndexDTypes(const Op &op, const tdl::OpDecl &decl) {
  llvm::SmallBitVector reported(op.inputs.size());
  for (const tdl::TensorReadExpr *read : tdl::collectTensorReads(decl))
    for (unsigned i = 0, e = read->getNumIndices(); i != e; ++i) {
      if (read->getIndexKind(i) != tdl::IndexKind::DataDependent)
        continue;
      // Only an element taken as the index itself: one computed from
      // floats (grid_sampler's floor(grid[...] * scale)) is meant to be.
      const auto *index = dyn_cast<tdl::TensorReadExpr>(&read->getIndex(i));
      if (!index || !index->getTensor() ||
          index->getTensor()->getPosition() >= op.inputs.size())
        continue;
      unsigned position = index->getTensor()->getPosition();
      const TensorRef &ref = op.inputs[position];
      DType dtype = g.getTensor(ref.index).dtype;
      if (!isFloatingPoint(dtype) || reported.test(position))
        continue;
      reported.set(position);
      diags.error(ref.loc.isValid() ? ref.loc : op.loc,
                  prefix(op, decl) + ": input '" + ref.name + "' is " +
                      getDTypeName(dtype) + ", but the operator reads it " +
                      "as an index of '" + read->getTensorName() +
                      "'; an index tensor has an integer dtype");
    }
}

void SpecVerifier::checkOp(const Op &op) {
  ArrayRef<const tdl::OpDecl *> overloads = specs.lookup(op.type);
  if (overloads.empty()) {
    diags.error(op.typeLoc.isValid() ? op.typeLoc : op.loc,
                "op '" + op.name + "': unknown operator type '" + op.type +
                    "' (not defined in the loaded specs)");
    return;
  }
  // A plain operator: check what the instantiator would, with locations.
  if (overloads.size() == 1 && !overloads[0]->isGeneric()) {
    bool ok = checkInputs(op, *overloads[0]);
    ok &= checkOutputRank(op, *overloads[0]);
    ok &= checkParams(op, *overloads[0]);
    if (!ok)
      return;
  }
  const tdl::Instance *instance = instantiate(op);
  // The Instantiator only accepts an overload whose tensor count, input
  // ranks and output rank fit the op, so the instance needs no rank checks.
  if (!instance)
    return;
  checkIndexDTypes(op, *instance->op);
  checkShape(op, *instance->op, instance->op->isOpaque(), instance->intParams);
}

bool graph::verifySpecs(const Graph &g, SpecLibrary &specs,
                        DiagnosticEngine &diags) {
  unsigned before = diags.getNumErrors();
  SpecVerifier verifier(g, specs, diags);
  for (const Op &op : g.getOps()) {
    if (diags.shouldStop())
      break;
    verifier.checkOp(op);
  }
  return diags.getNumErrors() == before;
}

bool graph::verifyGraph(const Graph &g, SpecLibrary &specs,
                        DiagnosticEngine &diags) {
  return verifyStructure(g, diags) && verifySpecs(g, specs, diags);
}

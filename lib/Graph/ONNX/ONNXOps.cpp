//===- ONNXOps.cpp - Lower ONNX nodes to tofu operator types --------------===//
//
// This file implements the dispatch of each supported ONNX operator to its
// lowering (the mapping table is in docs/GraphFormat.md), the Lowering
// context, and the lowerings of arithmetic and shape operators: Gemm -> t +
// addmm, MatMul -> mm / bmm (with views for batched operands), Transpose ->
// a sequence of transpose_int swaps, Reshape/Flatten/Squeeze/Unsqueeze ->
// view, ... The other families are in ONNXSpatial.cpp,
// ONNXNormalization.cpp and ONNXActivations.cpp.
//
//===----------------------------------------------------------------------===//

#include "ONNXNodeLowering.h"

#include "tofu/Graph/GraphWriter.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>

using namespace tofu;
using namespace tofu::graph;
using namespace tofu::graph::onnximport;

double onnximport::widen(float f) {
  char buf[32];
  for (int precision = 1; precision <= 9; ++precision) {
    snprintf(buf, sizeof(buf), "%.*g", precision, double(f));
    if (std::strtof(buf, nullptr) == f)
      break;
  }
  return std::strtod(buf, nullptr);
}

//===----------------------------------------------------------------------===//
// Lowering
//===----------------------------------------------------------------------===//

std::string Lowering::use(StringRef name) const {
  auto it = aliases.find(name);
  return it == aliases.end() ? name.str() : it->second;
}

const ValueInfo *Lowering::getInfo(StringRef name) const {
  auto it = values.find(name);
  return it == values.end() || !it->second.known ? nullptr : &it->second;
}

bool Lowering::getConstant(StringRef name, ConstValue &out) const {
  auto it = constants.find(name);
  return it != constants.end() && readConstant(*it->second, out);
}

bool Lowering::getInts(StringRef name, std::vector<int64_t> &out) const {
  ConstValue c;
  if (!getConstant(name, c) || c.isReal())
    return false;
  out = c.ints;
  return true;
}

bool Lowering::getReal(StringRef name, double &out) const {
  ConstValue c;
  if (!getConstant(name, c) || c.size() != 1)
    return false;
  out = c.elemType == onnx::TensorProto::FLOAT ? widen(float(c.reals[0]))
                                                : c.getReal(0);
  return true;
}

std::string Lowering::temp(StringRef suffix) {
  std::string base = group + "." + suffix.str();
  std::string name = base;
  for (unsigned i = 1; g.lookupTensor(name) >= 0; ++i)
    name = base + "." + std::to_string(i);
  return name;
}

/// The values of constant `c` as tensor `t`'s "value" field (flattened,
/// row-major; reals as params are written, "inf", "-inf" and "nan" as
/// strings), up to 65536 elements.
static void addValue(Tensor &t, const onnx::TensorProto &c) {
  ConstValue v;
  if (!readConstant(c, v) || v.size() > 65536)
    return;
  std::string json;
  llvm::raw_string_ostream os(json);
  os << "[";
  for (size_t i = 0; i != v.size(); ++i) {
    if (i)
      os << ", ";
    writeParamValue(os, v.isReal() ? ParamValue::ofReal(v.getReal(i))
                                   : ParamValue::ofInt(v.getInt(i)));
  }
  os << "]";
  t.extras.push_back({"value", os.str(), SMLoc(), SMLoc()});
}

void Lowering::emit(StringRef type, ArrayRef<std::string> inputs,
                    Params params, StringRef output, const Shape &shape,
                    DType dtype) {
  Op op;
  op.name = output.str();
  op.type = type.str();
  for (const std::string &in : inputs) {
    if (g.lookupTensor(in) < 0) {
      // First use of a graph input or constant: it becomes a tensor.
      Tensor t;
      t.name = in;
      if (const ValueInfo *info = getInfo(in)) {
        t.shape = info->shape;
        t.dtype = info->dtype;
      }
      t.role = constants.count(in) ? Role::Param : Role::Input;
      t.roleName = getRoleName(t.role).str();
      if (nodeConstants.count(in))
        addValue(t, *constants.lookup(in));
      g.addTensor(std::move(t));
    }
    op.inputs.push_back({in, -1, SMLoc()});
  }
  op.outputs.push_back({output.str(), -1, SMLoc()});
  op.params = std::move(params);
  op.group = group;
  op.hasGroup = true;
  Tensor t;
  t.name = output.str();
  t.shape = shape;
  t.dtype = dtype;
  t.role = Role::Activation;
  t.roleName = "activation";
  g.addTensor(std::move(t));
  g.addOp(std::move(op));
}

//===----------------------------------------------------------------------===//
// Node lowerings
//===----------------------------------------------------------------------===//

int64_t onnximport::attrInt(const onnx::NodeProto &node, StringRef name,
                            int64_t dflt) {
  const auto *attr = findAttr(node, name);
  return attr ? attr->i() : dflt;
}

double onnximport::attrReal(const onnx::NodeProto &node, StringRef name,
                            double dflt) {
  const auto *attr = findAttr(node, name);
  return attr ? widen(attr->f()) : dflt;
}

std::vector<int64_t> onnximport::attrInts(const onnx::NodeProto &node,
                                          StringRef name,
                                          std::vector<int64_t> dflt) {
  const auto *attr = findAttr(node, name);
  return attr ? std::vector<int64_t>(attr->ints().begin(), attr->ints().end())
              : dflt;
}

std::string onnximport::attrString(const onnx::NodeProto &node,
                                   StringRef name, StringRef dflt) {
  const auto *attr = findAttr(node, name);
  return attr ? attr->s() : dflt.str();
}

bool NodeLowering::pow() {
  double exponent;
  if (!l.getReal(node.input(1), exponent))
    return fail("only a constant exponent is supported");
  if (exponent == 2) {
    l.emit("mul_Tensor", {in(0), in(0)}, {}, outName(), out().shape,
           out().dtype);
    return true;
  }
  if (exponent == 0.5)
    return unary("sqrt");
  return fail("only the exponents 2 and 0.5 are supported");
}

bool NodeLowering::binary(StringRef kind) {
  bool commutes = kind == "add" || kind == "mul";
  int tensor = 0, scalar = 1;
  double value;
  if (!l.getReal(node.input(1), value) && commutes &&
      l.getReal(node.input(0), value))
    std::swap(tensor, scalar);
  if (l.getReal(node.input(scalar), value) && !l.isConstant(node.input(tensor))) {
    Params params = {{"other", R(value)}};
    if (kind == "add" || kind == "sub")
      params.emplace_back("alpha", R(1));
    l.emit((kind + "_Scalar").str(), {in(tensor)}, params, outName(),
           out().shape, out().dtype);
    return true;
  }
  Params params;
  if (kind == "add" || kind == "sub")
    params.emplace_back("alpha", R(1));
  l.emit((kind + "_Tensor").str(), {in(0), in(1)}, params, outName(),
         out().shape, out().dtype);
  return true;
}

bool NodeLowering::gemm() {
  std::string a = in(0), b = in(1);
  const ValueInfo &ai = info(0), &bi = info(1);
  if (ai.shape.size() != 2 || bi.shape.size() != 2)
    return fail("operands must be matrices");
  if (attrInt(node, "transA", 0)) {
    l.emit("t", {a}, {}, l.temp("tA"), {ai.shape[1], ai.shape[0]}, ai.dtype);
    a = l.g.getTensors().back().name;
  }
  if (attrInt(node, "transB", 0)) {
    l.emit("t", {b}, {}, l.temp("t"), {bi.shape[1], bi.shape[0]}, bi.dtype);
    b = l.g.getTensors().back().name;
  }
  double alpha = attrReal(node, "alpha", 1), beta = attrReal(node, "beta", 1);
  if (hasInput(2)) {
    l.emit("addmm", {in(2), a, b}, {{"beta", R(beta)}, {"alpha", R(alpha)}},
           outName(), out().shape, out().dtype);
    return true;
  }
  if (alpha == 1) {
    l.emit("mm", {a, b}, {}, outName(), out().shape, out().dtype);
    return true;
  }
  std::string product = l.temp("mm");
  l.emit("mm", {a, b}, {}, product, out().shape, out().dtype);
  l.emit("mul_Scalar", {product}, {{"other", R(alpha)}}, outName(),
         out().shape, out().dtype);
  return true;
}

bool NodeLowering::matmul() {
  const Shape &as = info(0).shape, &bs = info(1).shape;
  DType dtype = out().dtype;
  if (as.size() == 2 && bs.size() == 2) {
    l.emit("mm", {in(0), in(1)}, {}, outName(), out().shape, dtype);
    return true;
  }
  if (as.size() >= 3 && bs.size() == 2) {
    // [..., K] x [K, N]: flatten the leading dimensions.
    int64_t rows = getNumElements(ArrayRef<int64_t>(as).drop_back());
    std::string a = view(in(0), as, {rows, as.back()}, info(0).dtype,
                         l.temp("flat"));
    std::string product = l.temp("mm");
    l.emit("mm", {a, in(1)}, {}, product, {rows, bs[1]}, dtype);
    view(product, {rows, bs[1]}, out().shape, dtype, outName());
    return true;
  }
  if (as.size() == bs.size() && as.size() >= 3 &&
      ArrayRef<int64_t>(as).drop_back(2) == ArrayRef<int64_t>(bs).drop_back(2)) {
    // Batched: fold the batch dimensions into one, bmm, unfold.
    int64_t batch = getNumElements(ArrayRef<int64_t>(as).drop_back(2));
    Shape a3 = {batch, as[as.size() - 2], as.back()};
    Shape b3 = {batch, bs[bs.size() - 2], bs.back()};
    Shape o3 = {batch, a3[1], b3[2]};
    std::string a = view(in(0), as, a3, info(0).dtype, l.temp("a3"));
    std::string b = view(in(1), bs, b3, info(1).dtype, l.temp("b3"));
    if (o3 == out().shape) {
      l.emit("bmm", {a, b}, {}, outName(), o3, dtype);
      return true;
    }
    std::string product = l.temp("bmm");
    l.emit("bmm", {a, b}, {}, product, o3, dtype);
    view(product, o3, out().shape, dtype, outName());
    return true;
  }
  return fail("operands of ranks " + Twine(as.size()) + " and " +
              Twine(bs.size()) + " are not supported");
}

bool NodeLowering::concat() {
  std::vector<std::string> inputs;
  for (int i = 0; i != node.input_size(); ++i)
    if (hasInput(i))
      inputs.push_back(in(i));
  int64_t axis;
  if (!resolveAxis(attrInt(node, "axis", 0), out().shape.size(), axis))
    return false;
  if (inputs.size() == 1) {
    l.alias(outName(), node.input(0));
    return true;
  }
  if (inputs.size() > 64)
    return fail("more than 64 inputs are not supported");
  l.emit("cat_n" + std::to_string(inputs.size()), inputs, {{"dim", I(axis)}},
         outName(), out().shape, out().dtype);
  return true;
}

/// Slices `x` (of `shape`) along `axis` from `start` to `end` by `step`,
/// clamped like ONNX Slice; the new extent goes into `shape`.
std::string NodeLowering::sliceAxis(const std::string &x, Shape &shape,
                                    int64_t axis, int64_t start, int64_t end,
                                    int64_t step, const std::string &name) {
  shape[axis] = (end - start + step - 1) / step;
  l.emit("slice_Tensor", {x},
         {{"dim", I(axis)}, {"start", I(start)}, {"end", I(end)},
          {"step", I(step)}},
         name, shape, out().dtype);
  return name;
}

bool NodeLowering::split() {
  // The part sizes: input 1 (opset 13 on), the `split` attribute (before),
  // or equal parts, one per output.
  Shape shape = info(0).shape;
  int64_t axis;
  if (!resolveAxis(attrInt(node, "axis", 0), shape.size(), axis))
    return false;
  std::vector<int64_t> sizes;
  if (findAttr(node, "split"))
    sizes = attrInts(node, "split", {});
  else if (hasInput(1) && !l.getInts(node.input(1), sizes))
    return fail("only constant split sizes are supported");
  int64_t parts = node.output_size();
  if (sizes.empty()) {
    if (shape[axis] % parts)
      return fail("the axis does not split into " + Twine(parts) +
                  " equal parts");
    sizes.assign(parts, shape[axis] / parts);
  }
  int64_t total = 0;
  for (int64_t v : sizes)
    total += v > 0 ? v : -1;
  if (int64_t(sizes.size()) != parts || total != shape[axis])
    return fail("the split sizes do not add up to the axis (" +
                Twine(shape[axis]) + ") over " + Twine(parts) + " outputs");
  int64_t start = 0;
  for (int64_t k = 0; k != parts; ++k) {
    int64_t end = start + sizes[k];
    if (node.output(k).empty()) {
      start = end;
      continue;
    }
    if (sizes[k] == shape[axis]) {
      l.alias(node.output(k), in(0));
    } else {
      Shape part = shape;
      sliceAxis(in(0), part, axis, start, end, 1, node.output(k));
    }
    start = end;
  }
  return true;
}

bool NodeLowering::slice() {
  std::vector<int64_t> starts, ends, axes, steps;
  auto ints = [&](int i, StringRef attr, std::vector<int64_t> &v) {
    if (findAttr(node, attr)) {
      v = attrInts(node, attr, {});
      return true;
    }
    return !hasInput(i) || l.getInts(node.input(i), v);
  };
  if (!ints(1, "starts", starts) || !ints(2, "ends", ends) ||
      !ints(3, "axes", axes) || !ints(4, "steps", steps))
    return fail("only constant starts, ends, axes and steps are supported");
  Shape shape = info(0).shape;
  int64_t rank = shape.size();
  if (axes.empty())
    for (size_t i = 0; i != starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return fail("starts, ends, axes and steps differ in length");
  std::vector<std::array<int64_t, 4>> cuts; // axis, start, end, step
  for (size_t k = 0; k != axes.size(); ++k) {
    int64_t axis;
    if (!resolveAxis(axes[k], rank, axis))
      return false;
    if (steps[k] <= 0)
      return fail("only positive steps are supported");
    int64_t extent = shape[axis];
    auto clamp = [&](int64_t v) {
      return std::clamp(v < 0 ? v + extent : v, int64_t(0), extent);
    };
    int64_t start = clamp(starts[k]), end = clamp(ends[k]);
    if (end <= start)
      return fail("empty slices are not supported");
    if (start != 0 || end != extent || steps[k] != 1)
      cuts.push_back({axis, start, end, steps[k]});
  }
  std::string x = in(0);
  for (size_t k = 0; k != cuts.size(); ++k)
    x = sliceAxis(x, shape, cuts[k][0], cuts[k][1], cuts[k][2], cuts[k][3],
                  k + 1 == cuts.size() ? outName() : l.temp("slice"));
  if (cuts.empty())
    l.alias(outName(), x);
  return true;
}

bool NodeLowering::gather() {
  Shape shape = info(0).shape;
  int64_t rank = shape.size();
  int64_t axis;
  if (!resolveAxis(attrInt(node, "axis", 0), rank, axis))
    return false;
  int64_t extent = shape[axis];
  std::vector<int64_t> idx;
  if (l.getInts(node.input(1), idx) && info(1).shape.size() <= 1 &&
      !idx.empty()) {
    for (int64_t &i : idx)
      i = i < 0 ? i + extent : i;
    if (llvm::any_of(idx, [&](int64_t i) { return i < 0 || i >= extent; }))
      return fail("an index is out of range");
    if (info(1).shape.empty()) {
      l.emit("select_int", {in(0)}, {{"dim", I(axis)}, {"index", I(idx[0])}},
             outName(), out().shape, out().dtype);
      return true;
    }
    int64_t step = idx.size() > 1 ? idx[1] - idx[0] : 1;
    bool evenlySpaced = step >= 1;
    for (size_t k = 1; k < idx.size(); ++k)
      evenlySpaced &= idx[k] - idx[k - 1] == step;
    if (evenlySpaced) {
      sliceAxis(in(0), shape, axis, idx[0], idx.back() + 1, step, outName());
      return true;
    }
  }
  if (axis == 0 && rank == 2) {
    l.emit("embedding", {in(0), in(1)},
           {{"padding_idx", I(-1)}, {"scale_grad_by_freq", I(0)},
            {"sparse", I(0)}},
           outName(), out().shape, out().dtype);
    return true;
  }
  return fail("only constant scalar or evenly spaced indices, or rows of a "
              "matrix, are supported");
}

bool NodeLowering::pad() {
  std::string mode = attrString(node, "mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    return fail("mode '" + mode + "' is not supported");
  std::vector<int64_t> pads = attrInts(node, "pads", {});
  if (hasInput(1) && !l.getInts(node.input(1), pads))
    return fail("only constant pads are supported");
  if (hasInput(3))
    return fail("the axes input is not supported");
  double value = attrReal(node, "value", 0);
  if (hasInput(2) && !l.getReal(node.input(2), value))
    return fail("only a constant padding value is supported");
  int64_t rank = info(0).shape.size();
  if (int64_t(pads.size()) != 2 * rank)
    return fail("pads do not match the input's rank");
  if (llvm::all_of(pads, [](int64_t p) { return p == 0; })) {
    l.alias(outName(), node.input(0));
    return true;
  }
  if (mode != "constant") {
    if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
      return fail("negative pads are only supported in mode 'constant'");
    return spatialPad(mode, pads);
  }
  // aten's pad lists (begin, end) pairs from the last dimension on.
  int64_t first = 0;
  while (pads[first] == 0 && pads[first + rank] == 0)
    ++first;
  Params params;
  unsigned k = 0;
  for (int64_t d = rank - 1; d >= first; --d) {
    params.emplace_back("pad_" + std::to_string(k++), I(pads[d]));
    params.emplace_back("pad_" + std::to_string(k++), I(pads[d + rank]));
  }
  params.emplace_back("value", R(value));
  l.emit("constant_pad_nd", {in(0)}, params, outName(), out().shape,
         out().dtype);
  return true;
}

bool NodeLowering::clip() {
  double lo = 0, hi = 0;
  bool hasLo = findAttr(node, "min"), hasHi = findAttr(node, "max");
  lo = attrReal(node, "min", 0);
  hi = attrReal(node, "max", 0);
  if ((hasInput(1) && !l.getReal(node.input(1), lo)) ||
      (hasInput(2) && !l.getReal(node.input(2), hi)))
    return fail("only constant bounds are supported");
  hasLo |= hasInput(1);
  hasHi |= hasInput(2);
  if (hasLo && hasHi) {
    l.emit("hardtanh", {in(0)}, {{"min_val", R(lo)}, {"max_val", R(hi)}},
           outName(), out().shape, out().dtype);
    return true;
  }
  if (hasLo && !hasHi && lo == 0)
    return unary("relu");
  if (!hasLo && !hasHi) {
    l.alias(outName(), node.input(0));
    return true;
  }
  l.emit("clamp", {in(0)}, {{hasLo ? "min" : "max", R(hasLo ? lo : hi)}},
         outName(), out().shape, out().dtype);
  return true;
}

bool NodeLowering::expand() {
  const Shape &to = out().shape;
  if (info(0).shape == to) {
    l.alias(outName(), node.input(0));
    return true;
  }
  Params params;
  for (size_t i = 0; i != to.size(); ++i)
    params.emplace_back("size_" + std::to_string(i), I(to[i]));
  l.emit("expand", {in(0)}, params, outName(), to, out().dtype);
  return true;
}

bool NodeLowering::constantOfShape() {
  ConstValue value;
  value.reals = {0.0};
  if (const auto *attr = findAttr(node, "value"))
    if (!readConstant(attr->t(), value) || value.size() != 1)
      return fail("the value is not a one-element tensor");
  l.emit("full", {}, {{"value", R(value.getReal(0))}}, outName(),
         out().shape, out().dtype);
  return true;
}

bool NodeLowering::softmax(StringRef type) {
  int64_t axis;
  if (!resolveAxis(attrInt(node, "axis", -1), info(0).shape.size(), axis))
    return false;
  l.emit(type, {in(0)}, {{"dim", I(axis)}, {"half_to_float", I(0)}},
         outName(), out().shape, out().dtype);
  return true;
}

bool NodeLowering::transpose() {
  Shape shape = info(0).shape;
  unsigned rank = shape.size();
  std::vector<int64_t> identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  auto perm = attrInts(node, "perm",
                       std::vector<int64_t>(identity.rbegin(), identity.rend()));
  if (perm.size() != rank)
    return fail("perm does not match the input's rank");
  // Reach `perm` by swaps: cur[i] is the input dimension now at position i.
  std::vector<std::pair<unsigned, unsigned>> swaps;
  std::vector<int64_t> cur = identity;
  for (unsigned i = 0; i != rank; ++i) {
    if (cur[i] == perm[i])
      continue;
    auto it = std::find(cur.begin() + i, cur.end(), perm[i]);
    if (it == cur.end())
      return fail("perm is not a permutation");
    unsigned j = it - cur.begin();
    std::swap(cur[i], cur[j]);
    swaps.emplace_back(i, j);
  }
  std::string x = in(0);
  for (size_t k = 0; k != swaps.size(); ++k) {
    auto [i, j] = swaps[k];
    std::swap(shape[i], shape[j]);
    std::string name = k + 1 == swaps.size() ? outName() : l.temp("transpose");
    if (rank == 2)
      l.emit("t", {x}, {}, name, shape, out().dtype);
    else
      l.emit("transpose_int", {x}, {{"dim0", I(i)}, {"dim1", I(j)}}, name,
             shape, out().dtype);
    x = name;
  }
  if (swaps.empty())
    l.alias(outName(), x);
  return true;
}

bool onnximport::lowerNode(const onnx::NodeProto &node, Lowering &l,
                           std::string &why) {
  NodeLowering n{node, l, why};
  int minInputs = llvm::StringSwitch<int>(node.op_type())
                      .Cases("Add", "Sub", "Mul", "Div", 2)
                      .Cases("Gemm", "MatMul", "Conv", "Gather", "Expand", 2)
                      .Cases("ConvTranspose", "PRelu", 2)
                      .Case("InstanceNormalization", 3)
                      .Cases("RNN", "GRU", "LSTM", 3)
                      .Case("BatchNormalization", 5)
                      .Default(1);
  if (node.input_size() < minInputs)
    return n.fail("it has " + Twine(node.input_size()) + " inputs, not " +
                  Twine(minInputs));
  for (int i = 0; i < minInputs; ++i)
    if (node.input(i).empty())
      return n.fail("input " + Twine(i) + " is missing");
  for (int i = 0; i != node.input_size(); ++i)
    if (!node.input(i).empty() && !l.getInfo(node.input(i)))
      return n.fail("the shape of input '" + node.input(i) + "' is unknown");
  if (node.op_type() == "RNN" || node.op_type() == "GRU" ||
      node.op_type() == "LSTM")
    return lowerRecurrent(node, l, why);
  if (node.output_size() < 1 || !l.getInfo(node.output(0)))
    return n.fail("the shape of its output is unknown");
  StringRef type = node.op_type();
  StringRef unary = llvm::StringSwitch<StringRef>(type)
                        .Case("Relu", "relu")
                        .Case("Sigmoid", "sigmoid")
                        .Case("Tanh", "tanh")
                        .Case("Neg", "neg")
                        .Case("Sqrt", "sqrt")
                        .Case("Exp", "exp")
                        .Case("Log", "log")
                        .Case("Abs", "abs")
                        .Case("Erf", "erf")
                        .Case("Reciprocal", "reciprocal")
                        .Case("HardSwish", "hardswish")
                        .Case("Mish", "mish")
                        .Default("");
  if (!unary.empty())
    return n.unary(unary);
  StringRef binary = llvm::StringSwitch<StringRef>(type)
                         .Case("Add", "add")
                         .Case("Sub", "sub")
                         .Case("Mul", "mul")
                         .Case("Div", "div")
                         .Default("");
  if (!binary.empty())
    return n.binary(binary);
  if (type == "Identity" || type == "Dropout") {
    if (node.output_size() > 1 && !node.output(1).empty())
      return n.fail("the mask output is not supported");
    l.alias(node.output(0), node.input(0));
    return true;
  }
  if (type == "Reshape" || type == "Flatten" || type == "Squeeze" ||
      type == "Unsqueeze") {
    n.finishView(n.in(0), n.info(0).shape);
    return true;
  }
  if (type == "GlobalAveragePool")
    return n.globalAveragePool();
  StringRef reduction = llvm::StringSwitch<StringRef>(type)
                            .Case("ReduceMean", "mean_dim")
                            .Case("ReduceSum", "sum_dim_IntList")
                            .Case("ReduceMax", "amax")
                            .Case("ReduceMin", "amin")
                            .Case("ReduceLogSumExp", "logsumexp")
                            .Default("");
  if (!reduction.empty())
    return n.reduce(reduction);
  if (type == "Pow")
    return n.pow();
  if (type == "Gemm")
    return n.gemm();
  if (type == "MatMul")
    return n.matmul();
  if (type == "Conv")
    return n.conv();
  if (type == "ConvTranspose")
    return n.convTranspose();
  if (type == "Resize")
    return n.resize();
  if (type == "DepthToSpace")
    return n.depthToSpace();
  if (type == "InstanceNormalization")
    return n.instanceNorm();
  if (type == "Elu")
    return n.elu(attrReal(node, "alpha", 1), 1);
  if (type == "Selu")
    return n.elu(attrReal(node, "alpha", 1.67326319217681884765625),
                 attrReal(node, "gamma", 1.05070102214813232421875));
  if (type == "Celu") {
    l.emit("celu", {n.in(0)}, {{"alpha", R(attrReal(node, "alpha", 1))}},
           n.outName(), n.out().shape, n.out().dtype);
    return true;
  }
  if (type == "LeakyRelu")
    return n.leakyRelu();
  if (type == "PRelu")
    return n.prelu();
  if (type == "Softplus")
    return n.softplus();
  if (type == "HardSigmoid")
    return n.hardSigmoid();
  if (type == "MaxPool")
    return n.maxPool();
  if (type == "Softmax")
    return n.softmax("_softmax");
  if (type == "LogSoftmax")
    return n.softmax("_log_softmax");
  if (type == "Transpose")
    return n.transpose();
  if (type == "BatchNormalization")
    return n.batchNorm();
  if (type == "AveragePool")
    return n.avgPool();
  if (type == "Concat")
    return n.concat();
  if (type == "Slice")
    return n.slice();
  if (type == "Split")
    return n.split();
  if (type == "Gather")
    return n.gather();
  if (type == "Pad")
    return n.pad();
  if (type == "Clip")
    return n.clip();
  if (type == "Expand")
    return n.expand();
  if (type == "ConstantOfShape")
    return n.constantOfShape();
  if (type == "LayerNormalization")
    return n.layerNorm();
  if (type == "Gelu") {
    const auto *approximate = findAttr(node, "approximate");
    return n.unary(approximate && approximate->s() == "tanh" ? "gelu_tanh"
                                                             : "gelu");
  }
  why.clear();
  return false;
}

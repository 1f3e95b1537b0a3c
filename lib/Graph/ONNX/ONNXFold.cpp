//===- ONNXFold.cpp - Fold the shape arithmetic of an ONNX model ----------===//
//
// This file implements the constant folding the importer runs before
// lowering. Exporters compute Reshape and Expand targets at run time from
// Shape (Shape -> Gather -> Unsqueeze -> Concat, or ConstantOfShape ->
// Equal -> Where for `expand(n, -1, -1)`); under static input shapes all
// of it is constant. Every node of a foldable type whose inputs are
// constants (or, for Shape, a value of static shape) is evaluated here and
// replaced by a Constant node holding its value; ONNX shape inference with
// data propagation then runs again, which resolves the shapes that
// depended on it, until nothing more folds.
//
//===----------------------------------------------------------------------===//

#include "ONNXConstant.h"

#include "onnx/shape_inference/implementation.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <functional>
#include <numeric>

using namespace tofu;
using namespace tofu::graph;
using namespace tofu::graph::onnximport;

namespace {

/// Folded values larger than this stay ops (they are data, not shapes).
constexpr int64_t kMaxFoldElements = 1 << 16;

/// Numpy broadcasting of `a` and `b` into `out`.
bool broadcastShapes(const Shape &a, const Shape &b, Shape &out) {
  size_t rank = std::max(a.size(), b.size());
  out.assign(rank, 1);
  for (size_t i = 0; i != rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return false;
    out[i] = da == 1 ? db : da;
  }
  return true;
}

/// The flat index into `in` (broadcast to `out`) of `out`'s flat index `i`.
size_t broadcastIndex(size_t i, const Shape &out, const Shape &in) {
  size_t result = 0, stride = 1;
  for (size_t k = out.size(); k-- > 0;) {
    size_t coord = i % out[k];
    i /= out[k];
    size_t inDim = k + in.size() >= out.size() ? k + in.size() - out.size()
                                                : size_t(-1);
    if (inDim == size_t(-1))
      continue;
    if (in[inDim] != 1)
      result += coord * stride;
    stride *= in[inDim];
  }
  return result;
}

/// Whether `shape` is a shape a fold may produce: no negative extent, at
/// most kMaxFoldElements elements.
bool isFoldableShape(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && count > kMaxFoldElements / d))
      return false;
    count *= d;
  }
  return count <= kMaxFoldElements;
}

void copyElement(ConstValue &out, size_t i, const ConstValue &in, size_t j) {
  out.set(i, in.isReal() ? in.reals[j] : double(in.ints[j]), in.getInt(j));
}

int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// One folding pass over a model.
class Folder {
public:
  explicit Folder(onnx::ModelProto &model) : graph(*model.mutable_graph()) {}

  /// Folds what it can; returns the number of nodes folded.
  unsigned run();

private:
  void recordShape(const onnx::ValueInfoProto &info);
  const ConstValue *get(const onnx::NodeProto &node, int i) const;
  bool fold(const onnx::NodeProto &node, ConstValue &out);
  bool elementwise(const onnx::NodeProto &node, ConstValue &out);
  bool gather(const ConstValue &data, const ConstValue &indices, int64_t axis,
              ConstValue &out);
  bool concat(const onnx::NodeProto &node, ConstValue &out);
  bool slice(const onnx::NodeProto &node, ConstValue &out);
  /// A Split of a constant: one value per output.
  bool split(const onnx::NodeProto &node, std::vector<ConstValue> &parts);
  /// Makes `node` a Constant node of `value` (its output `name`).
  void makeConstant(onnx::NodeProto &node, const std::string &name,
                    ConstValue value);
  bool reshape(const ConstValue &data, Shape shape, ConstValue &out);
  bool transpose(const onnx::NodeProto &node, const ConstValue &x,
                 ConstValue &out);
  bool axesOf(const onnx::NodeProto &node, std::vector<int64_t> &axes);

  onnx::GraphProto &graph;
  llvm::StringMap<ConstValue> consts;
  llvm::StringMap<Shape> shapes;
};

} // namespace

void Folder::recordShape(const onnx::ValueInfoProto &info) {
  if (!info.type().has_tensor_type() ||
      !info.type().tensor_type().has_shape())
    return;
  Shape shape;
  for (const auto &dim : info.type().tensor_type().shape().dim()) {
    if (!dim.has_dim_value())
      return;
    shape.push_back(dim.dim_value());
  }
  shapes[info.name()] = shape;
}

const ConstValue *Folder::get(const onnx::NodeProto &node, int i) const {
  if (i >= node.input_size() || node.input(i).empty())
    return nullptr;
  auto it = consts.find(node.input(i));
  return it == consts.end() ? nullptr : &it->second;
}

bool Folder::axesOf(const onnx::NodeProto &node, std::vector<int64_t> &axes) {
  if (const auto *attr = findAttr(node, "axes")) {
    axes.assign(attr->ints().begin(), attr->ints().end());
    return true;
  }
  if (const ConstValue *c = get(node, 1)) {
    axes.assign(c->ints.begin(), c->ints.end());
    return !c->isReal();
  }
  axes.clear();
  return node.input_size() < 2 || node.input(1).empty();
}

bool Folder::elementwise(const onnx::NodeProto &node, ConstValue &out) {
  StringRef type = node.op_type();
  bool where = type == "Where";
  int n = where ? 3 : type == "Neg" || type == "Not" ? 1 : 2;
  std::vector<const ConstValue *> in;
  Shape shape;
  for (int i = 0; i != n; ++i) {
    in.push_back(get(node, i));
    Shape previous = shape;
    if (!in.back() || !broadcastShapes(previous, in.back()->shape, shape))
      return false;
  }
  bool compare = type == "Equal" || type == "Less" || type == "Greater";
  bool logical = type == "And" || type == "Or" || type == "Not";
  out.elemType = compare || logical ? int(onnx::TensorProto::BOOL)
                                    : in[where ? 1 : 0]->elemType;
  out.shape = shape;
  int64_t count = getNumElements(shape);
  if (count > kMaxFoldElements)
    return false;
  out.resize(count);
  bool real = !where && in[0]->isReal();
  for (int64_t i = 0; i != count; ++i) {
    std::vector<size_t> at;
    for (const ConstValue *c : in)
      at.push_back(broadcastIndex(i, shape, c->shape));
    if (where) {
      copyElement(out, i, *in[in[0]->getInt(at[0]) ? 1 : 2],
                  at[in[0]->getInt(at[0]) ? 1 : 2]);
      continue;
    }
    double x = in[0]->getReal(at[0]), y = n > 1 ? in[1]->getReal(at[1]) : 0;
    int64_t a = in[0]->getInt(at[0]), b = n > 1 ? in[1]->getInt(at[1]) : 0;
    if (type == "Neg") {
      out.set(i, -x, -a);
    } else if (type == "Not") {
      out.set(i, 0, !a);
    } else if (type == "And" || type == "Or") {
      out.set(i, 0, type == "And" ? (a && b) : (a || b));
    } else if (compare) {
      bool r = type == "Equal" ? (real ? x == y : a == b)
               : type == "Less" ? (real ? x < y : a < b)
                                : (real ? x > y : a > b);
      out.set(i, 0, r);
    } else if (type == "Add") {
      out.set(i, x + y, a + b);
    } else if (type == "Sub") {
      out.set(i, x - y, a - b);
    } else if (type == "Mul") {
      out.set(i, x * y, a * b);
    } else { // Div
      if (!real && b == 0)
        return false;
      out.set(i, x / y, real ? 0 : a / b);
    }
  }
  return true;
}

bool Folder::gather(const ConstValue &data, const ConstValue &indices,
                    int64_t axis, ConstValue &out) {
  int64_t rank = data.shape.size();
  axis = normalizeAxis(axis, rank);
  if (axis < 0 || axis >= rank || indices.isReal())
    return false;
  out.elemType = data.elemType;
  out.shape.assign(data.shape.begin(), data.shape.begin() + axis);
  out.shape.append(indices.shape.begin(), indices.shape.end());
  out.shape.append(data.shape.begin() + axis + 1, data.shape.end());
  int64_t outer = getNumElements(ArrayRef<int64_t>(data.shape).take_front(axis));
  int64_t inner = getNumElements(ArrayRef<int64_t>(data.shape).drop_front(axis + 1));
  int64_t extent = data.shape[axis];
  if (getNumElements(out.shape) > kMaxFoldElements)
    return false;
  out.resize(getNumElements(out.shape));
  size_t o = 0;
  for (int64_t a = 0; a != outer; ++a)
    for (size_t k = 0; k != indices.size(); ++k) {
      int64_t idx = normalizeAxis(indices.ints[k], extent);
      if (idx < 0 || idx >= extent)
        return false;
      for (int64_t b = 0; b != inner; ++b)
        copyElement(out, o++, data, (a * extent + idx) * inner + b);
    }
  return true;
}

bool Folder::concat(const onnx::NodeProto &node, ConstValue &out) {
  std::vector<const ConstValue *> in;
  for (int i = 0; i != node.input_size(); ++i)
    if (!(in.emplace_back(get(node, i))))
      return false;
  if (in.empty())
    return false;
  const auto *axisAttr = findAttr(node, "axis");
  int64_t rank = in[0]->shape.size();
  int64_t axis = normalizeAxis(axisAttr ? axisAttr->i() : 0, rank);
  if (axis < 0 || axis >= rank)
    return false;
  out.elemType = in[0]->elemType;
  out.shape = in[0]->shape;
  out.shape[axis] = 0;
  for (const ConstValue *c : in) {
    if (int64_t(c->shape.size()) != rank || c->isReal() != out.isReal())
      return false;
    out.shape[axis] += c->shape[axis];
  }
  int64_t outer = getNumElements(ArrayRef<int64_t>(out.shape).take_front(axis));
  int64_t inner = getNumElements(ArrayRef<int64_t>(out.shape).drop_front(axis + 1));
  if (getNumElements(out.shape) > kMaxFoldElements)
    return false;
  out.resize(getNumElements(out.shape));
  size_t o = 0;
  for (int64_t a = 0; a != outer; ++a)
    for (const ConstValue *c : in) {
      int64_t block = c->shape[axis] * inner;
      for (int64_t b = 0; b != block; ++b)
        copyElement(out, o++, *c, a * block + b);
    }
  return true;
}

bool Folder::split(const onnx::NodeProto &node,
                   std::vector<ConstValue> &parts) {
  const ConstValue *x = get(node, 0);
  if (!x)
    return false;
  int64_t rank = x->shape.size();
  const auto *axisAttr = findAttr(node, "axis");
  int64_t axis = normalizeAxis(axisAttr ? axisAttr->i() : 0, rank);
  if (axis < 0 || axis >= rank)
    return false;
  int64_t n = node.output_size(), extent = x->shape[axis];
  std::vector<int64_t> sizes;
  if (const auto *splitAttr = findAttr(node, "split")) {
    sizes.assign(splitAttr->ints().begin(), splitAttr->ints().end());
  } else if (const ConstValue *c = get(node, 1)) {
    for (size_t i = 0; i != c->size(); ++i)
      sizes.push_back(c->getInt(i));
  } else if (n > 0 && extent % n == 0) {
    sizes.assign(n, extent / n);
  }
  if (int64_t(sizes.size()) != n ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != extent ||
      llvm::any_of(sizes, [](int64_t v) { return v < 0; }))
    return false;
  int64_t outer = getNumElements(ArrayRef<int64_t>(x->shape).take_front(axis));
  int64_t inner =
      getNumElements(ArrayRef<int64_t>(x->shape).drop_front(axis + 1));
  int64_t start = 0;
  for (int64_t k = 0; k != n; ++k) {
    ConstValue &part = parts.emplace_back();
    part.elemType = x->elemType;
    part.shape = x->shape;
    part.shape[axis] = sizes[k];
    part.resize(getNumElements(part.shape));
    size_t o = 0;
    for (int64_t a = 0; a != outer; ++a)
      for (int64_t b = 0; b != sizes[k] * inner; ++b)
        copyElement(part, o++, *x, (a * extent + start) * inner + b);
    start += sizes[k];
  }
  return true;
}

void Folder::makeConstant(onnx::NodeProto &node, const std::string &name,
                          ConstValue value) {
  shapes[name] = value.shape;
  node.set_op_type("Constant");
  node.clear_input();
  node.clear_output();
  node.add_output(name);
  node.clear_attribute();
  auto *attr = node.add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  *attr->mutable_t() = writeConstant(value, name);
  consts[name] = std::move(value);
}

bool Folder::slice(const onnx::NodeProto &node, ConstValue &out) {
  const ConstValue *data = get(node, 0);
  if (!data)
    return false;
  std::vector<int64_t> starts, ends, axes, steps;
  auto ints = [&](int i, StringRef attr, std::vector<int64_t> &v) {
    if (const auto *a = findAttr(node, attr)) {
      v.assign(a->ints().begin(), a->ints().end());
      return true;
    }
    const ConstValue *c = get(node, i);
    if (c && !c->isReal())
      v = c->ints;
    return c != nullptr || i >= node.input_size() || node.input(i).empty();
  };
  if (!ints(1, "starts", starts) || !ints(2, "ends", ends) ||
      !ints(3, "axes", axes) || !ints(4, "steps", steps) ||
      starts.size() != ends.size())
    return false;
  int64_t rank = data->shape.size();
  if (axes.empty())
    for (int64_t i = 0; i != int64_t(starts.size()); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    return false;
  std::vector<int64_t> first(rank, 0), step(rank, 1);
  out.elemType = data->elemType;
  out.shape = data->shape;
  for (size_t k = 0; k != axes.size(); ++k) {
    int64_t axis = normalizeAxis(axes[k], rank);
    if (axis < 0 || axis >= rank || steps[k] == 0)
      return false;
    int64_t extent = data->shape[axis];
    // ONNX clamps to [0, extent] going forward and to [-1, extent - 1]
    // going backward (torch.onnx reverses a list with step -1).
    bool forward = steps[k] > 0;
    int64_t lo = forward ? 0 : -1, hi = forward ? extent : extent - 1;
    int64_t s = std::clamp(normalizeAxis(starts[k], extent), int64_t(0), hi);
    int64_t e = std::clamp(normalizeAxis(ends[k], extent), lo, hi);
    int64_t span = forward ? e - s : s - e, stride = std::abs(steps[k]);
    first[axis] = s;
    step[axis] = steps[k];
    out.shape[axis] = span > 0 ? (span + stride - 1) / stride : 0;
  }
  int64_t count = getNumElements(out.shape);
  out.resize(count);
  for (int64_t i = 0; i != count; ++i) {
    int64_t rest = i, src = 0, stride = 1;
    for (int64_t d = rank; d-- > 0;) {
      int64_t coord = rest % out.shape[d];
      rest /= out.shape[d];
      src += (first[d] + coord * step[d]) * stride;
      stride *= data->shape[d];
    }
    copyElement(out, i, *data, src);
  }
  return true;
}

bool Folder::reshape(const ConstValue &data, Shape shape, ConstValue &out) {
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i != shape.size(); ++i) {
    if (shape[i] == 0 && i < data.shape.size())
      shape[i] = data.shape[i];
    if (shape[i] == -1) {
      if (inferred >= 0)
        return false;
      inferred = i;
    } else {
      known *= shape[i];
    }
  }
  if (inferred >= 0)
    shape[inferred] = known ? int64_t(data.size()) / known : 0;
  if (!isFoldableShape(shape) || getNumElements(shape) != int64_t(data.size()))
    return false;
  out = data;
  out.shape = shape;
  return true;
}

/// Transposes constant `x` by the node's `perm` (default: reversed axes).
/// torch.onnx computes the pads of a reflect / replicate F.pad this way.
bool Folder::transpose(const onnx::NodeProto &node, const ConstValue &x,
                       ConstValue &out) {
  size_t rank = x.shape.size();
  std::vector<int64_t> perm;
  if (const auto *attr = findAttr(node, "perm"))
    perm.assign(attr->ints().begin(), attr->ints().end());
  else
    for (size_t d = rank; d-- > 0;)
      perm.push_back(d);
  if (perm.size() != rank)
    return false;
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(rank) || seen[p])
      return false;
    seen[p] = true;
  }
  out.elemType = x.elemType;
  out.shape.clear();
  for (int64_t p : perm)
    out.shape.push_back(x.shape[p]);
  out.resize(x.size());
  // Row-major strides of the input, permuted to the output's axes.
  std::vector<size_t> inStride(rank, 1);
  for (size_t d = rank; d-- > 1;)
    inStride[d - 1] = inStride[d] * x.shape[d];
  for (size_t i = 0; i != out.size(); ++i) {
    size_t rest = i, j = 0;
    for (size_t d = rank; d-- > 0;) {
      j += (rest % out.shape[d]) * inStride[perm[d]];
      rest /= out.shape[d];
    }
    copyElement(out, i, x, j);
  }
  return true;
}

bool Folder::fold(const onnx::NodeProto &node, ConstValue &out) {
  StringRef type = node.op_type();
  if (node.input_size() == 0 || node.input(0).empty())
    return false;
  const ConstValue *x = get(node, 0);
  if (type == "Shape") {
    auto it = shapes.find(node.input(0));
    if (it == shapes.end())
      return false;
    const Shape &s = it->second;
    int64_t rank = s.size();
    const auto *startAttr = findAttr(node, "start");
    const auto *endAttr = findAttr(node, "end");
    int64_t start = std::clamp(
        normalizeAxis(startAttr ? startAttr->i() : 0, rank), int64_t(0), rank);
    int64_t end = std::clamp(
        normalizeAxis(endAttr ? endAttr->i() : rank, rank), int64_t(0), rank);
    out.elemType = onnx::TensorProto::INT64;
    out.ints.assign(s.begin() + start, s.begin() + std::max(start, end));
    out.shape = {int64_t(out.ints.size())};
    return true;
  }
  if (type == "Size") {
    auto it = shapes.find(node.input(0));
    if (it == shapes.end())
      return false;
    out.elemType = onnx::TensorProto::INT64;
    out.ints = {getNumElements(it->second)};
    return true;
  }
  if (type == "ConstantOfShape") {
    if (!x || x->isReal())
      return false;
    out = ConstValue();
    const auto *value = findAttr(node, "value");
    if (value && !readConstant(value->t(), out))
      return false;
    if (!value) {
      out.reals = {0.0};
    }
    if (out.size() != 1 || !isFoldableShape(x->ints))
      return false;
    ConstValue one = out;
    out.shape.assign(x->ints.begin(), x->ints.end());
    out.resize(getNumElements(out.shape));
    for (size_t i = 0; i != out.size(); ++i)
      copyElement(out, i, one, 0);
    return true;
  }
  if (type == "Range") {
    const ConstValue *limit = get(node, 1), *delta = get(node, 2);
    if (!x || !limit || !delta || x->size() != 1 || limit->size() != 1 ||
        delta->size() != 1 || delta->getReal(0) == 0)
      return false;
    double start = x->getReal(0), step = delta->getReal(0);
    double n = std::ceil((limit->getReal(0) - start) / step);
    if (!(n <= kMaxFoldElements))
      return false;
    out.elemType = x->elemType;
    out.shape = {std::max(int64_t(n), int64_t(0))};
    out.resize(out.shape[0]);
    for (int64_t i = 0; i != out.shape[0]; ++i)
      out.set(i, start + i * step, x->getInt(0) + i * delta->getInt(0));
    return true;
  }
  if (type == "Concat")
    return concat(node, out);
  if (type == "Slice")
    return slice(node, out);
  if (!x)
    return false;
  if (type == "Identity") {
    out = *x;
    return true;
  }
  if (type == "Cast") {
    const auto *to = findAttr(node, "to");
    if (!to)
      return false;
    out.elemType = to->i();
    if (!ConstValue::isRealType(out.elemType) &&
        out.elemType != onnx::TensorProto::INT64 &&
        out.elemType != onnx::TensorProto::INT32 &&
        out.elemType != onnx::TensorProto::BOOL)
      return false;
    out.shape = x->shape;
    out.resize(x->size());
    bool toBool = out.elemType == onnx::TensorProto::BOOL;
    for (size_t i = 0; i != x->size(); ++i)
      out.set(i, x->getReal(i),
              toBool ? int64_t(x->getReal(i) != 0) : x->getInt(i));
    return true;
  }
  if (type == "Transpose")
    return transpose(node, *x, out);
  if (type == "Gather") {
    const ConstValue *indices = get(node, 1);
    const auto *axis = findAttr(node, "axis");
    return indices && gather(*x, *indices, axis ? axis->i() : 0, out);
  }
  if (type == "Unsqueeze" || type == "Squeeze") {
    std::vector<int64_t> axes;
    if (!axesOf(node, axes))
      return false;
    Shape shape;
    if (type == "Unsqueeze") {
      int64_t rank = x->shape.size() + axes.size();
      std::vector<bool> added(rank, false);
      for (int64_t a : axes) {
        a = normalizeAxis(a, rank);
        if (a < 0 || a >= rank)
          return false;
        added[a] = true;
      }
      for (int64_t d = 0, k = 0; d != rank; ++d)
        shape.push_back(added[d] ? 1 : x->shape[k++]);
    } else {
      int64_t rank = x->shape.size();
      for (int64_t d = 0; d != rank; ++d) {
        bool named = llvm::any_of(
            axes, [&](int64_t a) { return normalizeAxis(a, rank) == d; });
        if (axes.empty() ? x->shape[d] != 1 : !named)
          shape.push_back(x->shape[d]);
      }
    }
    return reshape(*x, shape, out);
  }
  if (type == "Reshape" || type == "Expand") {
    const ConstValue *target = get(node, 1);
    if (!target || target->isReal())
      return false;
    if (type == "Reshape")
      return reshape(*x, Shape(target->ints.begin(), target->ints.end()), out);
    Shape shape;
    if (!broadcastShapes(x->shape,
                         Shape(target->ints.begin(), target->ints.end()),
                         shape) ||
        !isFoldableShape(shape))
      return false;
    out.elemType = x->elemType;
    out.shape = shape;
    out.resize(getNumElements(shape));
    for (size_t i = 0; i != out.size(); ++i)
      copyElement(out, i, *x, broadcastIndex(i, shape, x->shape));
    return true;
  }
  if (llvm::is_contained(std::initializer_list<StringRef>{
                             "Add", "Sub", "Mul", "Div", "Neg", "Equal", "Less",
                             "Greater", "Where", "And", "Or", "Not"},
                         type))
    return elementwise(node, out);
  return false;
}

unsigned Folder::run() {
  for (const auto &init : graph.initializer()) {
    shapes[init.name()] = Shape(init.dims().begin(), init.dims().end());
    // Real initializers are the model's parameters: what computes from
    // them stays ops (a folded copy would stand in for the parameter).
    ConstValue c;
    if (!ConstValue::isRealType(init.data_type()) &&
        getNumElements(shapes[init.name()]) <= kMaxFoldElements &&
        readConstant(init, c))
      consts[init.name()] = std::move(c);
  }
  for (const auto &info : graph.input())
    recordShape(info);
  for (const auto &info : graph.value_info())
    recordShape(info);
  for (const auto &info : graph.output())
    recordShape(info);
  unsigned folded = 0;
  auto &nodes = *graph.mutable_node();
  for (int i = 0; i != nodes.size(); ++i) {
    onnx::NodeProto &node = nodes[i];
    ConstValue value;
    std::vector<ConstValue> parts;
    if (node.op_type() == "Split" && node.domain().empty() &&
        split(node, parts)) {
      // One Constant node per output, in the Split's place.
      std::vector<std::string> names(node.output().begin(),
                                     node.output().end());
      std::string nodeName = node.name();
      makeConstant(node, names[0], std::move(parts[0]));
      for (size_t k = 1; k != names.size(); ++k) {
        onnx::NodeProto *extra = nodes.Add();
        extra->set_name(nodeName + "/" + std::to_string(k));
        makeConstant(*extra, names[k], std::move(parts[k]));
        for (int j = nodes.size() - 1; j > i + int(k); --j)
          nodes.SwapElements(j, j - 1);
      }
      i += names.size() - 1;
      ++folded;
      continue;
    }
    if (node.op_type() == "Constant") {
      if (node.output_size() == 1 && readConstantNode(node, value) &&
          int64_t(value.size()) <= kMaxFoldElements)
        consts[node.output(0)] = std::move(value);
      continue;
    }
    if (!node.domain().empty() || node.output_size() != 1 ||
        !fold(node, value))
      continue;
    if (node.op_type() == "Identity") {
      // Lowering aliases it: a copy would duplicate a parameter.
      consts[node.output(0)] = std::move(value);
      continue;
    }
    shapes[node.output(0)] = value.shape;
    node.set_op_type("Constant");
    node.clear_input();
    node.clear_attribute();
    auto *attr = node.add_attribute();
    attr->set_name("value");
    attr->set_type(onnx::AttributeProto::TENSOR);
    *attr->mutable_t() = writeConstant(value, node.output(0));
    consts[node.output(0)] = std::move(value);
    ++folded;
  }
  return folded;
}

namespace {

bool inferShapes(onnx::ModelProto &model, std::string &error) {
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false,
                                        /*error_mode=*/0,
                                        /*enable_data_propagation=*/true);
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
  return true;
}

/// Drops the value infos with a symbolic or unknown dimension, so that the
/// next shape inference computes them afresh.
void dropSymbolicValueInfo(onnx::GraphProto &graph) {
  auto *infos = graph.mutable_value_info();
  auto symbolic = [](const onnx::ValueInfoProto &info) {
    const auto &type = info.type().tensor_type();
    return !type.has_shape() ||
           llvm::any_of(type.shape().dim(),
                        [](const auto &dim) { return !dim.has_dim_value(); });
  };
  infos->erase(std::remove_if(infos->begin(), infos->end(), symbolic),
               infos->end());
}

} // namespace

bool onnximport::foldConstants(onnx::ModelProto &model, std::string &error) {
  if (!inferShapes(model, error))
    return false;
  for (unsigned round = 0; round != 16; ++round) {
    if (Folder(model).run() == 0)
      return true;
    dropSymbolicValueInfo(*model.mutable_graph());
    if (!inferShapes(model, error))
      return false;
  }
  return true;
}

//===- ONNXRecurrent.cpp - Unroll ONNX LSTM nodes -------------------------===//
//
// This file implements the lowering of the ONNX LSTM operator: the
// recurrence is unrolled over the (static) sequence length into the
// library's matrix and elementwise ops, per direction:
//
//   xw     = addmm(Wb + Rb, view(X, [T*B, I]), t(W))   (all steps at once)
//   gates  = addmm(select(xw, t), h, t(R))              [B, 4H]: i, o, f, c
//   c      = sigmoid(f) * c + sigmoid(i) * tanh(g)
//   h      = sigmoid(o) * tanh(c)
//
// Y stacks the steps' h (a cat along a unit dimension, then a transpose),
// Y_h and Y_c are the last h and c.
//
//===----------------------------------------------------------------------===//

#include "ONNXConstant.h"
#include "ONNXLowering.h"

#include "llvm/ADT/ArrayRef.h"

using namespace tofu;
using namespace tofu::graph;
using namespace tofu::graph::onnximport;

using Params = std::vector<std::pair<std::string, ParamValue>>;

namespace {

ParamValue I(int64_t v) { return ParamValue::ofInt(v); }

/// Emits the unrolled ops of one LSTM node.
class LSTMUnroller {
public:
  LSTMUnroller(const onnx::NodeProto &node, Lowering &l, std::string &why)
      : node(node), l(l), why(why) {}

  bool run();

private:
  bool fail(const Twine &reason) {
    why = reason.str();
    return false;
  }
  bool hasInput(int i) const {
    return node.input_size() > i && !node.input(i).empty();
  }
  bool hasOutput(int i) const {
    return node.output_size() > i && !node.output(i).empty();
  }
  /// Emits op `type` producing a new tensor (named `name`, or a fresh
  /// name from `suffix`) of `shape`; returns the tensor's name.
  std::string op(StringRef type, ArrayRef<std::string> inputs, Params params,
                 StringRef suffix, const Shape &shape, StringRef name = "") {
    std::string out = name.empty() ? l.temp(suffix) : name.str();
    l.emit(type, inputs, std::move(params), out, shape, dtype);
    return out;
  }
  std::string view(const std::string &x, const Shape &to, StringRef suffix,
                   StringRef name = "") {
    Params params;
    for (size_t i = 0; i != to.size(); ++i)
      params.emplace_back("size_" + std::to_string(i), I(to[i]));
    return op("view", {x}, params, suffix, to, name);
  }
  std::string slice(const std::string &x, Shape shape, int64_t dim,
                    int64_t start, int64_t end, StringRef suffix) {
    shape[dim] = end - start;
    return op("slice_Tensor", {x},
              {{"dim", I(dim)}, {"start", I(start)}, {"end", I(end)},
               {"step", I(1)}},
              suffix, shape);
  }
  /// Direction `d`'s part of a per-direction input (leading dimension
  /// numDirections), as `shape`.
  std::string direction(int input, int d, const Shape &shape,
                        StringRef suffix) {
    std::string x = l.use(node.input(input));
    if (numDirections == 1)
      return view(x, shape, suffix);
    return op("select_int", {x}, {{"dim", I(0)}, {"index", I(d)}}, suffix,
              shape);
  }
  /// `parts` concatenated along `dim` (at most 32 at a time).
  std::string cat(ArrayRef<std::string> parts, const Shape &partShape,
                  int64_t dim, StringRef suffix, StringRef name = "");
  /// Runs direction `d`; the step outputs go to hs, the last h and c to
  /// lastH, lastC.
  void runDirection(int d, const std::string &xFlat,
                    std::vector<std::string> &hs, std::string &lastH,
                    std::string &lastC);

  const onnx::NodeProto &node;
  Lowering &l;
  std::string &why;
  DType dtype = DType::F32;
  int numDirections = 1;
  bool reverse = false;
  int64_t steps = 0, batch = 0, inputSize = 0, hidden = 0;
};

} // namespace

std::string LSTMUnroller::cat(ArrayRef<std::string> parts,
                              const Shape &partShape, int64_t dim,
                              StringRef suffix, StringRef name) {
  if (parts.size() == 1) {
    if (!name.empty())
      l.alias(name, parts[0]);
    return parts[0];
  }
  Shape shape = partShape;
  if (parts.size() <= 32) {
    shape[dim] *= parts.size();
    return op("cat_n" + std::to_string(parts.size()), parts, {{"dim", I(dim)}},
              suffix, shape, name);
  }
  // The cat specs past 8 inputs need equal extents after the first: the
  // remainder goes first.
  std::vector<std::string> chunks;
  size_t first = parts.size() % 32 ? parts.size() % 32 : 32;
  for (size_t begin = 0; begin < parts.size();) {
    size_t n = begin == 0 ? first : 32;
    chunks.push_back(cat(parts.slice(begin, n), partShape, dim, suffix));
    begin += n;
  }
  shape[dim] *= parts.size();
  if (chunks.size() > 32)
    return "";
  return op("cat_n" + std::to_string(chunks.size()), chunks, {{"dim", I(dim)}},
            suffix, shape, name);
}

void LSTMUnroller::runDirection(int d, const std::string &xFlat,
                                std::vector<std::string> &hs,
                                std::string &lastH, std::string &lastC) {
  int64_t H = hidden, B = batch;
  std::string w = direction(1, d, {4 * H, inputSize}, "W");
  std::string wt = op("t", {w}, {}, "Wt", {inputSize, 4 * H});
  std::string r = direction(2, d, {4 * H, H}, "R");
  std::string rt = op("t", {r}, {}, "Rt", {H, 4 * H});
  std::string xw;
  if (hasInput(3)) {
    std::string b = direction(3, d, {8 * H}, "B");
    std::string wb = slice(b, {8 * H}, 0, 0, 4 * H, "Wb");
    std::string rb = slice(b, {8 * H}, 0, 4 * H, 8 * H, "Rb");
    std::string bias = op("add_Tensor", {wb, rb}, {{"alpha", ParamValue::ofReal(1)}}, "bias",
                          {4 * H});
    xw = op("addmm", {bias, xFlat, wt},
            {{"beta", ParamValue::ofReal(1)}, {"alpha", ParamValue::ofReal(1)}},
            "xw", {steps * B, 4 * H});
  } else {
    xw = op("mm", {xFlat, wt}, {}, "xw", {steps * B, 4 * H});
  }
  xw = view(xw, {steps, B, 4 * H}, "xw3");
  std::string h = hasInput(5) ? direction(5, d, {B, H}, "h0")
                              : op("full", {}, {{"value", ParamValue::ofReal(0)}},
                                   "h0", {B, H});
  std::string c = hasInput(6) ? direction(6, d, {B, H}, "c0")
                              : op("full", {}, {{"value", ParamValue::ofReal(0)}},
                                   "c0", {B, H});
  bool backwards = reverse || d == 1;
  hs.assign(steps, "");
  for (int64_t s = 0; s != steps; ++s) {
    int64_t t = backwards ? steps - 1 - s : s;
    std::string x = op("select_int", {xw}, {{"dim", I(0)}, {"index", I(t)}},
                       "x", {B, 4 * H});
    std::string gates =
        op("addmm", {x, h, rt},
           {{"beta", ParamValue::ofReal(1)}, {"alpha", ParamValue::ofReal(1)}},
           "gates", {B, 4 * H});
    auto gate = [&](int k, StringRef act, StringRef suffix) {
      std::string part = slice(gates, {B, 4 * H}, 1, k * H, (k + 1) * H, suffix);
      return op(act, {part}, {}, suffix, {B, H});
    };
    std::string i = gate(0, "sigmoid", "i"), o = gate(1, "sigmoid", "o"),
                f = gate(2, "sigmoid", "f"), g = gate(3, "tanh", "g");
    std::string fc = op("mul_Tensor", {f, c}, {}, "fc", {B, H});
    std::string ig = op("mul_Tensor", {i, g}, {}, "ig", {B, H});
    c = op("add_Tensor", {fc, ig}, {{"alpha", ParamValue::ofReal(1)}}, "c", {B, H});
    std::string tc = op("tanh", {c}, {}, "tanh_c", {B, H});
    h = op("mul_Tensor", {o, tc}, {}, "h", {B, H});
    hs[t] = h;
  }
  lastH = h;
  lastC = c;
}

bool LSTMUnroller::run() {
  const ValueInfo *x = l.getInfo(node.input(0));
  const ValueInfo *w = l.getInfo(node.input(1));
  if (x->shape.size() != 3 || w->shape.size() != 3)
    return fail("X and W must have rank 3");
  dtype = x->dtype;
  steps = x->shape[0];
  batch = x->shape[1];
  inputSize = x->shape[2];
  const auto *hiddenAttr = findAttr(node, "hidden_size");
  hidden = hiddenAttr ? hiddenAttr->i() : w->shape[1] / 4;
  const auto *dirAttr = findAttr(node, "direction");
  std::string dir = dirAttr ? dirAttr->s() : "forward";
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    return fail("direction '" + dir + "' is unknown");
  numDirections = dir == "bidirectional" ? 2 : 1;
  reverse = dir == "reverse";
  if (hidden <= 0)
    return fail("hidden_size must be positive");
  if (w->shape != Shape{numDirections, 4 * hidden, inputSize})
    return fail("W's shape does not match X and hidden_size");
  auto expect = [&](int input, const Shape &shape, StringRef what) {
    return !hasInput(input) || l.getInfo(node.input(input))->shape == shape ||
           fail(what + "'s shape is not " + formatShape(shape));
  };
  if (!expect(2, {numDirections, 4 * hidden, hidden}, "R") ||
      !expect(3, {numDirections, 8 * hidden}, "B") ||
      !expect(5, {numDirections, batch, hidden}, "initial_h") ||
      !expect(6, {numDirections, batch, hidden}, "initial_c"))
    return false;
  if (hasInput(4))
    return fail("sequence_lens is not supported");
  if (hasInput(7))
    return fail("peepholes (input P) are not supported");
  if (findAttr(node, "clip"))
    return fail("clip is not supported");
  if (const auto *a = findAttr(node, "input_forget"); a && a->i())
    return fail("input_forget is not supported");
  if (const auto *a = findAttr(node, "layout"); a && a->i())
    return fail("layout 1 (batch first) is not supported");
  if (const auto *a = findAttr(node, "activations")) {
    for (int k = 0; k != a->strings_size(); ++k)
      if (a->strings(k) != (k % 3 == 0 ? "Sigmoid" : "Tanh"))
        return fail("activations other than Sigmoid, Tanh, Tanh are not "
                    "supported");
  }
  if (steps > 32 * 32)
    return fail("sequences longer than 1024 steps are not supported");

  int64_t T = steps, B = batch, H = hidden;
  std::string xFlat = view(l.use(node.input(0)), {T * B, inputSize}, "X");
  std::vector<std::string> ys, lastHs, lastCs;
  for (int d = 0; d != numDirections; ++d) {
    std::vector<std::string> hs;
    std::string lastH, lastC;
    runDirection(d, xFlat, hs, lastH, lastC);
    // One direction: Y_h and Y_c are these views, under their ONNX names.
    auto last = [&](int output) {
      return numDirections == 1 ? StringRef(node.output(output)) : "";
    };
    if (hasOutput(1))
      lastHs.push_back(view(lastH, {1, B, H}, "Y_h", last(1)));
    if (hasOutput(2))
      lastCs.push_back(view(lastC, {1, B, H}, "Y_c", last(2)));
    if (!hasOutput(0))
      continue;
    // Y_d = [T, 1, B, H]: the steps stacked along a unit dimension.
    std::vector<std::string> units;
    for (const std::string &h : hs)
      units.push_back(view(h, {B, 1, H}, "step"));
    std::string stacked = cat(units, {B, 1, H}, 1, "Y_steps");
    if (stacked.empty())
      return fail("too many steps");
    std::string tbh = op("transpose_int", {stacked},
                         {{"dim0", I(0)}, {"dim1", I(1)}}, "Y_tbh", {T, B, H});
    ys.push_back(view(tbh, {T, 1, B, H}, "Y_dir",
                      numDirections == 1 ? StringRef(node.output(0)) : ""));
  }
  if (hasOutput(0) && numDirections == 2)
    cat(ys, {T, 1, B, H}, 1, "Y", node.output(0));
  if (hasOutput(1) && numDirections == 2)
    cat(lastHs, {1, B, H}, 0, "Y_h", node.output(1));
  if (hasOutput(2) && numDirections == 2)
    cat(lastCs, {1, B, H}, 0, "Y_c", node.output(2));
  return true;
}

bool onnximport::lowerLSTM(const onnx::NodeProto &node, Lowering &l,
                           std::string &why) {
  return LSTMUnroller(node, l, why).run();
}

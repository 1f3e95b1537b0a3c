//===- ONNXRecurrent.cpp - Unroll ONNX RNN, GRU and LSTM nodes ------------===//
//
// This file implements the lowering of the ONNX recurrent operators: the
// recurrence is unrolled over the (static) sequence length into the
// library's matrix and elementwise ops, per direction. The input
// projection of all steps is one matrix product:
//
//   xw = addmm(bias, view(X, [T*B, I]), t(W))        [T*B, G*H]
//
// (bias = Wb + Rb, except GRU's linear_before_reset: Wb), then per step t,
// with f, g, h the node's activations (default Sigmoid, Tanh, Tanh):
//
//   RNN   h = f(addmm(xw[t], h, t(R)))
//   LSTM  gates = addmm(xw[t], h, t(R))              [B, 4H]: i, o, f, c
//         c = f(f_) * c + f(i) * g(c_),  h = f(o) * h(c)
//   GRU   zr = f(xw[t][:, :2H] + h @ t(R[:2H]))       (z, r)
//         n  = g(xw[t][:, 2H:] + (r * h) @ t(R[2H:]))
//           or, linear_before_reset: hr = addmm(Rb, h, t(R)),
//              zr = f(xw[t][:, :2H] + hr[:, :2H]),
//              n  = g(xw[t][:, 2H:] + r * hr[:, 2H:])
//         h = n + z * (h - n)
//
// Y stacks the steps' h (a cat along a unit dimension, then a transpose),
// Y_h (and LSTM's Y_c) are the last h (and c).
//
//===----------------------------------------------------------------------===//

#include "ONNXConstant.h"
#include "ONNXLowering.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringSwitch.h"

using namespace tofu;
using namespace tofu::graph;
using namespace tofu::graph::onnximport;

using Params = std::vector<std::pair<std::string, ParamValue>>;

namespace {

ParamValue I(int64_t v) { return ParamValue::ofInt(v); }

enum class Cell { RNN, GRU, LSTM };

/// Emits the unrolled ops of one RNN, GRU or LSTM node.
class RecurrentUnroller {
public:
  RecurrentUnroller(const onnx::NodeProto &node, Lowering &l, std::string &why)
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
  /// lastH, lastC (LSTM).
  void runDirection(int d, const std::string &xFlat,
                    std::vector<std::string> &hs, std::string &lastH,
                    std::string &lastC);
  /// One step of a GRU from h; the new h.
  std::string gruStep(const std::string &x, const std::string &h,
                      const std::string &rt, const std::string &rb,
                      const std::string &rzrT, const std::string &rhT,
                      StringRef f, StringRef g);
  /// Checks the activations attribute; fills acts (tofu op names, per
  /// direction numActs of them).
  bool readActivations();
  std::string act(int d, int k) const { return acts[d * numActs + k]; }

  const onnx::NodeProto &node;
  Lowering &l;
  std::string &why;
  Cell cell = Cell::LSTM;
  int64_t gates = 4; // G: the rows of W per hidden unit
  int numActs = 3;
  bool linearBeforeReset = false;
  std::vector<std::string> acts;
  DType dtype = DType::F32;
  int numDirections = 1;
  bool reverse = false;
  int64_t steps = 0, batch = 0, inputSize = 0, hidden = 0;
};

} // namespace

std::string RecurrentUnroller::cat(ArrayRef<std::string> parts,
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

namespace {
ParamValue R(double v) { return ParamValue::ofReal(v); }
} // namespace

std::string RecurrentUnroller::gruStep(const std::string &x,
                                       const std::string &h,
                                       const std::string &rt,
                                       const std::string &rb,
                                       const std::string &rzrT,
                                       const std::string &rhT, StringRef f,
                                       StringRef g) {
  int64_t H = hidden, B = batch;
  std::string xzr = slice(x, {B, 3 * H}, 1, 0, 2 * H, "xzr");
  std::string xn = slice(x, {B, 3 * H}, 1, 2 * H, 3 * H, "xn");
  std::string zrPre, nPre;
  std::string z, r;
  auto gatesOf = [&](const std::string &pre) {
    std::string zr = op(f, {pre}, {}, "zr", {B, 2 * H});
    z = slice(zr, {B, 2 * H}, 1, 0, H, "z");
    r = slice(zr, {B, 2 * H}, 1, H, 2 * H, "r");
  };
  if (linearBeforeReset) {
    // hr = h R^T + Rb: the reset gate scales the recurrent product.
    std::string hr =
        rb.empty() ? op("mm", {h, rt}, {}, "hr", {B, 3 * H})
                   : op("addmm", {rb, h, rt}, {{"beta", R(1)}, {"alpha", R(1)}},
                        "hr", {B, 3 * H});
    std::string hzr = slice(hr, {B, 3 * H}, 1, 0, 2 * H, "hzr");
    gatesOf(op("add_Tensor", {xzr, hzr}, {{"alpha", R(1)}}, "zr_pre",
               {B, 2 * H}));
    std::string hn = slice(hr, {B, 3 * H}, 1, 2 * H, 3 * H, "hn");
    std::string rhn = op("mul_Tensor", {r, hn}, {}, "rhn", {B, H});
    nPre = op("add_Tensor", {xn, rhn}, {{"alpha", R(1)}}, "n_pre", {B, H});
  } else {
    // The reset gate scales h before the recurrent product.
    gatesOf(op("addmm", {xzr, h, rzrT}, {{"beta", R(1)}, {"alpha", R(1)}},
               "zr_pre", {B, 2 * H}));
    std::string rh = op("mul_Tensor", {r, h}, {}, "rh", {B, H});
    nPre = op("addmm", {xn, rh, rhT}, {{"beta", R(1)}, {"alpha", R(1)}},
              "n_pre", {B, H});
  }
  std::string n = op(g, {nPre}, {}, "n", {B, H});
  // h' = (1 - z) * n + z * h = n + z * (h - n)
  std::string diff = op("sub_Tensor", {h, n}, {{"alpha", R(1)}}, "h_n", {B, H});
  std::string zd = op("mul_Tensor", {z, diff}, {}, "z_h_n", {B, H});
  return op("add_Tensor", {n, zd}, {{"alpha", R(1)}}, "h", {B, H});
}

void RecurrentUnroller::runDirection(int d, const std::string &xFlat,
                                     std::vector<std::string> &hs,
                                     std::string &lastH, std::string &lastC) {
  int64_t H = hidden, B = batch, GH = gates * H;
  std::string w = direction(1, d, {GH, inputSize}, "W");
  std::string wt = op("t", {w}, {}, "Wt", {inputSize, GH});
  std::string r = direction(2, d, {GH, H}, "R");
  std::string rt = op("t", {r}, {}, "Rt", {H, GH});
  std::string xw, rb;
  if (hasInput(3)) {
    std::string b = direction(3, d, {2 * GH}, "B");
    std::string wb = slice(b, {2 * GH}, 0, 0, GH, "Wb");
    rb = slice(b, {2 * GH}, 0, GH, 2 * GH, "Rb");
    // GRU's linear_before_reset adds Rb inside the reset gate's product.
    std::string bias = cell == Cell::GRU && linearBeforeReset
                           ? wb
                           : op("add_Tensor", {wb, rb}, {{"alpha", R(1)}},
                                "bias", {GH});
    xw = op("addmm", {bias, xFlat, wt}, {{"beta", R(1)}, {"alpha", R(1)}},
            "xw", {steps * B, GH});
  } else {
    xw = op("mm", {xFlat, wt}, {}, "xw", {steps * B, GH});
  }
  xw = view(xw, {steps, B, GH}, "xw3");
  std::string rzrT, rhT;
  if (cell == Cell::GRU && !linearBeforeReset) {
    rzrT = op("t", {slice(r, {GH, H}, 0, 0, 2 * H, "Rzr")}, {}, "Rzr_t",
              {H, 2 * H});
    rhT = op("t", {slice(r, {GH, H}, 0, 2 * H, 3 * H, "Rh")}, {}, "Rh_t",
             {H, H});
  }
  std::string h = hasInput(5) ? direction(5, d, {B, H}, "h0")
                              : op("full", {}, {{"value", R(0)}}, "h0", {B, H});
  std::string c;
  if (cell == Cell::LSTM)
    c = hasInput(6) ? direction(6, d, {B, H}, "c0")
                    : op("full", {}, {{"value", R(0)}}, "c0", {B, H});
  bool backwards = reverse || d == 1;
  hs.assign(steps, "");
  for (int64_t s = 0; s != steps; ++s) {
    int64_t t = backwards ? steps - 1 - s : s;
    std::string x = op("select_int", {xw}, {{"dim", I(0)}, {"index", I(t)}},
                       "x", {B, GH});
    if (cell == Cell::GRU) {
      h = gruStep(x, h, rt, rb, rzrT, rhT, act(d, 0), act(d, 1));
      hs[t] = h;
      continue;
    }
    std::string pre = op("addmm", {x, h, rt},
                         {{"beta", R(1)}, {"alpha", R(1)}}, "gates", {B, GH});
    if (cell == Cell::RNN) {
      h = op(act(d, 0), {pre}, {}, "h", {B, H});
      hs[t] = h;
      continue;
    }
    auto gate = [&](int k, StringRef fn, StringRef suffix) {
      std::string part = slice(pre, {B, GH}, 1, k * H, (k + 1) * H, suffix);
      return op(fn, {part}, {}, suffix, {B, H});
    };
    std::string i = gate(0, act(d, 0), "i"), o = gate(1, act(d, 0), "o"),
                f = gate(2, act(d, 0), "f"), g = gate(3, act(d, 1), "g");
    std::string fc = op("mul_Tensor", {f, c}, {}, "fc", {B, H});
    std::string ig = op("mul_Tensor", {i, g}, {}, "ig", {B, H});
    c = op("add_Tensor", {fc, ig}, {{"alpha", R(1)}}, "c", {B, H});
    std::string tc = op(act(d, 2), {c}, {}, "act_c", {B, H});
    h = op("mul_Tensor", {o, tc}, {}, "h", {B, H});
    hs[t] = h;
  }
  lastH = h;
  lastC = c;
}

bool RecurrentUnroller::readActivations() {
  static const char *const defaults[3][3] = {
      {"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
  const char *const *def = defaults[static_cast<int>(cell)];
  const auto *a = findAttr(node, "activations");
  if (a && a->strings_size() != numActs * numDirections)
    return fail("activations lists " + Twine(a->strings_size()) +
                " functions, not " + Twine(numActs * numDirections));
  if (findAttr(node, "activation_alpha") || findAttr(node, "activation_beta"))
    return fail("activation_alpha and activation_beta are not supported");
  for (int k = 0; k != numActs * numDirections; ++k) {
    std::string name = a ? a->strings(k) : def[k % numActs];
    std::string fn = llvm::StringSwitch<std::string>(name)
                         .Case("Sigmoid", "sigmoid")
                         .Case("Tanh", "tanh")
                         .Case("Relu", "relu")
                         .Default("");
    if (fn.empty())
      return fail("activation '" + name +
                  "' is not supported (Sigmoid, Tanh and Relu are)");
    acts.push_back(fn);
  }
  return true;
}

bool RecurrentUnroller::run() {
  cell = node.op_type() == "RNN"   ? Cell::RNN
         : node.op_type() == "GRU" ? Cell::GRU
                                   : Cell::LSTM;
  gates = cell == Cell::RNN ? 1 : cell == Cell::GRU ? 3 : 4;
  numActs = cell == Cell::RNN ? 1 : cell == Cell::GRU ? 2 : 3;
  const ValueInfo *x = l.getInfo(node.input(0));
  const ValueInfo *w = l.getInfo(node.input(1));
  if (x->shape.size() != 3 || w->shape.size() != 3)
    return fail("X and W must have rank 3");
  dtype = x->dtype;
  steps = x->shape[0];
  batch = x->shape[1];
  inputSize = x->shape[2];
  const auto *hiddenAttr = findAttr(node, "hidden_size");
  hidden = hiddenAttr ? hiddenAttr->i() : w->shape[1] / gates;
  const auto *dirAttr = findAttr(node, "direction");
  std::string dir = dirAttr ? dirAttr->s() : "forward";
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    return fail("direction '" + dir + "' is unknown");
  numDirections = dir == "bidirectional" ? 2 : 1;
  reverse = dir == "reverse";
  if (hidden <= 0)
    return fail("hidden_size must be positive");
  if (w->shape != Shape{numDirections, gates * hidden, inputSize})
    return fail("W's shape does not match X and hidden_size");
  auto expect = [&](int input, const Shape &shape, StringRef what) {
    return !hasInput(input) || l.getInfo(node.input(input))->shape == shape ||
           fail(what + "'s shape is not " + formatShape(shape));
  };
  if (!expect(2, {numDirections, gates * hidden, hidden}, "R") ||
      !expect(3, {numDirections, 2 * gates * hidden}, "B") ||
      !expect(5, {numDirections, batch, hidden}, "initial_h") ||
      (cell == Cell::LSTM &&
       !expect(6, {numDirections, batch, hidden}, "initial_c")))
    return false;
  if (hasInput(4))
    return fail("sequence_lens is not supported");
  if (cell == Cell::LSTM && hasInput(7))
    return fail("peepholes (input P) are not supported");
  if (findAttr(node, "clip"))
    return fail("clip is not supported");
  if (const auto *a = findAttr(node, "input_forget"); a && a->i())
    return fail("input_forget is not supported");
  if (const auto *a = findAttr(node, "layout"); a && a->i())
    return fail("layout 1 (batch first) is not supported");
  if (const auto *a = findAttr(node, "linear_before_reset"))
    linearBeforeReset = a->i() != 0;
  if (!readActivations())
    return false;
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
    if (cell == Cell::LSTM && hasOutput(2))
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
  if (cell == Cell::LSTM && hasOutput(2) && numDirections == 2)
    cat(lastCs, {1, B, H}, 0, "Y_c", node.output(2));
  return true;
}

bool onnximport::lowerRecurrent(const onnx::NodeProto &node, Lowering &l,
                                std::string &why) {
  return RecurrentUnroller(node, l, why).run();
}

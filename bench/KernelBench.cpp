//===- KernelBench.cpp - Generated kernels against the evaluator ----------===//
//
// Times generated kernels (lib/CodeGen, compiled by KernelCompiler) on a
// 256^3 matmul (through BLAS and on the loop nest), a padded 3x3
// convolution and an elementwise op, against the TDL evaluator and naive
// hand-written loops compiled into this program, and prints a table of
// times (best of several runs) and ratios. Run build/bin/KernelBench; the
// numbers in docs/CodeGen.md come from it. Not a test.
//
//===----------------------------------------------------------------------===//

#include "tofu/CodeGen/KernelCompiler.h"
#include "tofu/CodeGen/KernelEmitter.h"
#include "tofu/Eval/Evaluator.h"
#include "tofu/Support/Diagnostics.h"
#include "tofu/TDL/Parser.h"
#include "tofu/TDL/Sema.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <functional>
#include <random>

using namespace tofu;
using namespace tofu::codegen;

namespace {

const char *const library = R"(
op matmul(A, B) = lambda i, j: Sum(lambda k: A[i, k] * B[k, j]);
op conv2d<stride, pad>(data, w) =
    lambda n, co, y, x: Sum(lambda ci, ky, kx:
        data[n, ci, y * stride + ky - pad, x * stride + kx - pad] * w[co, ci, ky, kx]);
op axpy(x, y) = lambda i: max(x[i], 0.0) + 2.0 * y[i];
)";

struct Case {
  const char *name;
  const char *op;
  std::vector<Shape> inputs;
  std::vector<double> params;
  Shape output;
  std::function<void(const std::vector<std::vector<float>> &, std::vector<float> &)> naive;
};

void naiveMatmul(const std::vector<std::vector<float>> &in, std::vector<float> &out) {
  const int n = 256;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      float s = 0;
      for (int k = 0; k < n; ++k)
        s += in[0][i * n + k] * in[1][k * n + j];
      out[i * n + j] = s;
    }
}

void naiveConv(const std::vector<std::vector<float>> &in, std::vector<float> &out) {
  const int N = 8, C = 16, H = 32, W = 32, O = 32;
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < O; ++o)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          float s = 0;
          for (int c = 0; c < C; ++c)
            for (int ky = 0; ky < 3; ++ky)
              for (int kx = 0; kx < 3; ++kx) {
                int iy = y + ky - 1, ix = x + kx - 1;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                  continue;
                s += in[0][((n * C + c) * H + iy) * W + ix] *
                     in[1][((o * C + c) * 3 + ky) * 3 + kx];
              }
          out[((n * O + o) * H + y) * W + x] = s;
        }
}

void naiveAxpy(const std::vector<std::vector<float>> &in, std::vector<float> &out) {
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = std::max(in[0][i], 0.0f) + 2.0f * in[1][i];
}

double bestOf(int runs, const std::function<void()> &fn) {
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count());
  }
  return best;
}

} // namespace

int main() {
  llvm::SourceMgr srcMgr;
  DiagnosticEngine diags(srcMgr);
  tdl::Module module;
  unsigned id = srcMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(library, "bench.tdl"), SMLoc());
  if (!tdl::parseBuffer(id, diags, module) || !tdl::checkModule(module, diags))
    return 1;
  std::vector<Case> cases = {
      {"matmul 256^3", "matmul", {{256, 256}, {256, 256}}, {}, {256, 256}, naiveMatmul},
      {"conv2d 8x16x32x32 * 32x16x3x3 pad 1", "conv2d", {{8, 16, 32, 32}, {32, 16, 3, 3}}, {1, 1}, {8, 32, 32, 32}, naiveConv},
      {"axpy-relu 1M", "axpy", {{1 << 20}, {1 << 20}}, {}, {1 << 20}, naiveAxpy},
  };
  // One unit: each case with BLAS routing (where it applies) and without.
  std::string source = getKernelPrelude();
  std::vector<std::pair<std::string, bool>> variants;
  for (unsigned c = 0; c != cases.size(); ++c)
    for (bool blas : {true, false}) {
      KernelInstance inst;
      inst.op = module.lookupOp(cases[c].op);
      inst.params.assign(cases[c].params.begin(), cases[c].params.end());
      inst.inputShapes.assign(cases[c].inputs.begin(), cases[c].inputs.end());
      inst.inputTypes.assign(inst.inputShapes.size(), DType::F32);
      inst.outputShape = cases[c].output;
      KernelOptions options;
      options.useBlas = blas;
      std::string name = "bench_" + std::to_string(c) + (blas ? "_blas" : "_loop");
      auto kernel = emitKernel(inst, name, options);
      if (!kernel) {
        llvm::errs() << llvm::toString(kernel.takeError()) << '\n';
        return 1;
      }
      source += kernel->source;
      variants.push_back({name, kernel->usesBlas});
    }
  // The table KernelCompiler looks up: the variants in order.
  source += "extern \"C\" const tofu::runtime::KernelInfo *tofu_graph_kernels(unsigned *count) {\n"
            "  static const tofu::runtime::KernelInfo table[] = {\n";
  for (auto &[name, blas] : variants)
    source += "    {\"" + name + "\", " + name + ", nullptr, 0},\n";
  source += "  };\n  *count = " + std::to_string(variants.size()) +
            ";\n  return table;\n}\n";
  KernelCompiler compiler;
  auto lib = compiler.compile(source);
  if (!lib) {
    llvm::errs() << llvm::toString(lib.takeError()) << '\n';
    return 1;
  }

  std::mt19937 rng(0);
  std::uniform_real_distribution<float> dist(-1, 1);
  llvm::outs() << "case                                     kernel s     loop s    naive s     eval s  eval/ker naive/ker\n";
  for (unsigned c = 0; c != cases.size(); ++c) {
    const Case &cs = cases[c];
    std::vector<std::vector<float>> in;
    std::vector<eval::Tensor> tensors;
    for (const Shape &s : cs.inputs) {
      eval::Tensor t(DType::F32, s);
      std::vector<float> v(t.getNumElements());
      for (size_t i = 0; i != v.size(); ++i)
        t.getData()[i] = v[i] = dist(rng);
      in.push_back(std::move(v));
      tensors.push_back(std::move(t));
    }
    std::vector<float> out(getNumElements(cs.output));
    // Whole-tensor boxes, the whole iteration box.
    std::vector<std::vector<int64_t>> zeros;
    std::vector<runtime::BoxView> views;
    for (unsigned t = 0; t != in.size(); ++t) {
      zeros.emplace_back(cs.inputs[t].size(), 0);
      views.push_back({runtime::ElementType::F32, unsigned(cs.inputs[t].size()),
                       in[t].data(), zeros.back().data(), cs.inputs[t].data()});
    }
    std::vector<int64_t> outLo(cs.output.size(), 0), lo, hi;
    const tdl::OpDecl *op = module.lookupOp(cs.op);
    for (const tdl::IndexVarDecl *var : op->getIndexVars()) {
      lo.push_back(0);
      hi.push_back(var->getId() < cs.output.size() ? cs.output[var->getId()] : 1 << 30);
    }
    runtime::KernelCall call{views.data(), unsigned(views.size()),
                             {runtime::ElementType::F32, unsigned(cs.output.size()),
                              out.data(), outLo.data(), cs.output.data()},
                             lo.data(), hi.data()};
    auto kernelTime = [&](unsigned v) {
      runtime::KernelFn fn = (*lib)->getKernel(v);
      return bestOf(5, [&] { fn(call); });
    };
    double blasT = kernelTime(2 * c), loopT = kernelTime(2 * c + 1);
    double naiveT = bestOf(3, [&] { cs.naive(in, out); });
    auto compiled = eval::CompiledOp::compile(*op, cs.inputs, cs.params, cs.output);
    if (!compiled)
      return 1;
    eval::Tensor result(DType::F32, cs.output);
    SmallVector<const eval::Tensor *, 2> ptrs;
    for (const eval::Tensor &t : tensors)
      ptrs.push_back(&t);
    double evalT = bestOf(1, [&] { compiled->run(ptrs, result); });
    double best = variants[2 * c].second ? blasT : loopT;
    llvm::outs() << llvm::format("%-38s %10.5f %10.5f %10.5f %10.5f %9.1f %9.2f\n",
                                 cs.name, best, loopT, naiveT, evalT,
                                 evalT / best, naiveT / best);
  }
  llvm::outs() << "kernel: the generated kernel (BLAS where routed); loop: "
                  "generated without BLAS; naive: hand-written float loops "
                  "(-O3 in this program); eval: the TDL evaluator\n";
  return 0;
}

//===- DeviceTestUtils.h - Boxes for the device call tests ------*- C++ -*-===//
//
// This file defines the fixture the device call tests (DeviceGemmTest.cpp,
// DeviceConvTest.cpp, DeviceBatchNormTest.cpp, DevicePoolingTest.cpp)
// share: a graph with the spec library, the random f32/f64 boxes they pass
// to generated kernels and to the host runs of the planned library calls,
// and the comparison of the two over one box; and the compilation of a
// few generated C++ kernels into one library.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_UNITTESTS_CODEGEN_DEVICETESTUTILS_H
#define TOFU_UNITTESTS_CODEGEN_DEVICETESTUTILS_H

#include "tofu/CodeGen/KernelCompiler.h"
#include "tofu/CodeGen/KernelEmitter.h"
#include "tofu/Graph/Graph.h"
#include "tofu/Graph/GraphReader.h"
#include "tofu/Graph/ModelFile.h"
#include "tofu/Graph/SpecLibrary.h"
#include "tofu/Runtime/Kernel.h"
#include "tofu/Support/DType.h"
#include "tofu/Support/Diagnostics.h"
#include "tofu/Support/Shape.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <sstream>
#include <vector>

namespace tofu {
namespace testing {
using runtime::BoxView;
using runtime::ElementType;

/// A dense box of doubles or floats over [lo, lo + extent).
struct TestBox {
  std::vector<std::int64_t> lo, extent;
  std::vector<double> f64;
  std::vector<float> f32;
  ElementType type;
  BoxView view() {
    void *data = type == ElementType::F32 ? static_cast<void *>(f32.data())
                                          : static_cast<void *>(f64.data());
    return BoxView{type, unsigned(lo.size()), data, lo.data(), extent.data()};
  }
  double at(std::size_t i) const {
    return type == ElementType::F32 ? f32[i] : f64[i];
  }
  std::size_t size() const {
    return type == ElementType::F32 ? f32.size() : f64.size();
  }
};

inline TestBox makeBox(ElementType type, std::vector<std::int64_t> lo,
                std::vector<std::int64_t> extent, std::mt19937_64 &rng) {
  TestBox box{std::move(lo), std::move(extent), {}, {}, type};
  std::size_t n = 1;
  for (std::int64_t e : box.extent)
    n *= std::size_t(e);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (std::size_t i = 0; i != n; ++i) {
    double v = dist(rng);
    if (type == ElementType::F32)
      box.f32.push_back(float(v));
    else
      box.f64.push_back(v);
  }
  return box;
}

inline ElementType elementTypeOf(DType t) {
  return t == DType::F64 ? ElementType::F64 : ElementType::F32;
}

/// A graph (a bundled model file or JSON text) and the standard spec
/// library; `graph` is null (and the test fails) if either does not load.
struct TestGraph {
  llvm::SourceMgr srcMgr;
  DiagnosticEngine diags{srcMgr};
  graph::SpecLibrary specs;
  std::unique_ptr<graph::Graph> graph;

  void loadFile(llvm::StringRef path) {
    graph = graph::readModelFile(path, diags);
    loadSpecs();
  }
  void loadText(llvm::StringRef json) {
    unsigned id = srcMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(json, "test.json"), llvm::SMLoc());
    graph = graph::readGraph(id, diags);
    loadSpecs();
  }

private:
  void loadSpecs() {
    if (!specs.load(TOFU_SOURCE_DIR "/specs", {}, diags))
      graph.reset();
    EXPECT_TRUE(graph) << "the graph or the specs did not load";
  }
};

/// Runs the generated `kernel` on `call` into `out` and `planned(call)` (a
/// host run of the library calls the device would make, false if it
/// makes none) on the same call into a copy of `out`; fails naming the
/// first element where the two differ by more than 1e-4 relative. Sets
/// `ran` to what `planned` returned (the result is then success).
template <typename Planned>
::testing::AssertionResult agreeOnBox(runtime::KernelFn kernel,
                                      runtime::KernelCall call, TestBox out,
                                      Planned planned, bool &ran) {
  TestBox actual = out;
  call.output = out.view();
  kernel(call);
  call.output = actual.view();
  ran = planned(call);
  if (!ran)
    return ::testing::AssertionSuccess();
  for (std::size_t e = 0; e != out.size(); ++e)
    if (!(std::abs(actual.at(e) - out.at(e)) <= 1e-4 * (1 + std::abs(out.at(e)))))
      return ::testing::AssertionFailure()
             << "element " << e << ": planned " << actual.at(e)
             << ", generated kernel " << out.at(e);
  return ::testing::AssertionSuccess();
}

/// A box of `type` around the iteration box [lo, hi) of the first `rank`
/// variables: one more element before it where there is room, one after
/// it, two after it in the last dimension (its rows are longer than the
/// kernel's).
inline TestBox makeOutputBox(ElementType type, const std::vector<std::int64_t> &lo,
                             const std::vector<std::int64_t> &hi, unsigned rank,
                             std::mt19937_64 &rng) {
  std::vector<std::int64_t> outLo, outExtent;
  for (unsigned d = 0; d != rank; ++d) {
    outLo.push_back(std::max<std::int64_t>(lo[d] - 1, 0));
    outExtent.push_back(hi[d] - outLo.back() + (d + 1 == rank ? 2 : 1));
  }
  return makeBox(type, outLo, outExtent, rng);
}

/// The options of the CUDA target.
inline codegen::KernelOptions cudaKernelOptions() {
  codegen::KernelOptions options;
  options.target = codegen::KernelTarget::Cuda;
  return options;
}

/// The C++ kernels `kernels` compiled into one library, kernel i of its
/// table being kernels[i].
inline llvm::Expected<std::unique_ptr<codegen::KernelLibrary>>
compileKernelUnit(const std::vector<codegen::GeneratedKernel> &kernels) {
  std::string source = codegen::getKernelPrelude();
  for (const codegen::GeneratedKernel &kernel : kernels)
    source += kernel.source;
  source += "extern \"C\" const tofu::runtime::KernelInfo *tofu_graph_kernels(unsigned *count) {\n"
            "  static const tofu::runtime::KernelInfo table[] = {\n";
  for (const codegen::GeneratedKernel &kernel : kernels)
    source += "    {\"" + kernel.name + "\", " + kernel.name + ", nullptr, 0},\n";
  source += "  };\n  *count = " + std::to_string(kernels.size()) +
            ";\n  return table;\n}\n";
  return codegen::KernelCompiler().compile(source);
}

} // namespace testing
} // namespace tofu

#endif // TOFU_UNITTESTS_CODEGEN_DEVICETESTUTILS_H

//===- DeviceTestUtils.h - Boxes for the device call tests ------*- C++ -*-===//
//
// This file defines the random f32/f64 boxes the device call tests
// (DeviceGemmTest.cpp, DeviceConvTest.cpp, DeviceBatchNormTest.cpp,
// DevicePoolingTest.cpp) pass to generated kernels and to the host runs of
// the planned library calls, and the compilation of a few generated C++
// kernels into one library.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_UNITTESTS_CODEGEN_DEVICETESTUTILS_H
#define TOFU_UNITTESTS_CODEGEN_DEVICETESTUTILS_H

#include "tofu/CodeGen/KernelCompiler.h"
#include "tofu/CodeGen/KernelEmitter.h"
#include "tofu/Runtime/Kernel.h"
#include "tofu/Support/DType.h"

#include <cstdint>
#include <random>
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

/// The C++ kernels `kernels` compiled into one library, kernel i of its
/// table being kernels[i].
inline llvm::Expected<std::unique_ptr<codegen::KernelLibrary>>
compileKernels(const std::vector<codegen::GeneratedKernel> &kernels) {
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

//===- LinkedKernels.cpp - A graph's kernels as part of a program ---------===//
//
// This file implements the internalizing of a graph unit's table functions
// and the source of a graph's CUDA kernels for a training program: the
// unit, then getGeneratedCudaKernels() filling runtime::GeneratedCudaKernels
// with the launch table and, per op, the cuBLAS and cuDNN plans the unit's
// kernels carry (the same ones tofu-run's cuda backend takes from them).
//
//===----------------------------------------------------------------------===//

#include "tofu/CodeGen/LinkedKernels.h"

#include "llvm/Support/Format.h"

using namespace tofu;
using namespace tofu::codegen;
using llvm::StringRef;

namespace {
/// A table function's extern "C" signature and its internal replacement.
struct TableFunction {
  const char *returns;
  const char *symbol;
  const char *internal;
};
} // namespace

static const TableFunction TableFunctions[] = {
    {"const tofu::runtime::KernelInfo *", GraphKernelsSymbol,
     "const tofu::runtime::KernelInfo *graphKernels"},
    {"const tofu_fused_fn *", GraphFusedSymbol,
     "[[maybe_unused]] const tofu_fused_fn *graphFused"},
    {"const tofu_launch_fn *", GraphCudaLaunchesSymbol,
     "[[maybe_unused]] const tofu_launch_fn *graphCudaLaunches"},
};

llvm::Expected<std::string> codegen::internalizeGraphUnit(StringRef source) {
  StringRef body;
  for (const std::string &prelude : {getCudaKernelPrelude(), getKernelPrelude()})
    if (source.startswith(prelude)) {
      body = source.drop_front(prelude.size());
      break;
    }
  std::string result = body.str();
  bool hasKernels = false;
  for (const TableFunction &table : TableFunctions) {
    std::string entry = std::string("extern \"C\" ") + table.returns +
                        table.symbol + "(unsigned *count)";
    size_t at = result.find(entry);
    if (at == std::string::npos)
      continue;
    hasKernels |= table.symbol == GraphKernelsSymbol;
    result.replace(at, entry.size(),
                   std::string(table.internal) + "(unsigned *count)");
  }
  if (body.empty() || !hasKernels)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the graph kernels' source lacks its prelude or its table function");
  return result;
}

namespace {
/// Writes the statements that set one library plan field by field.
class PlanWriter {
public:
  explicit PlanWriter(llvm::raw_ostream &os) : os(os) {}

  void field(StringRef name, int64_t value) {
    os << "    p." << name << " = " << value << ";\n";
  }
  void field(StringRef name, bool value) {
    os << "    p." << name << " = " << (value ? "true" : "false") << ";\n";
  }
  void field(StringRef name, double value) {
    os << "    p." << name << " = " << llvm::format("%.17g", value) << ";\n";
  }
  template <typename T> void array(StringRef name, const T *values, size_t n) {
    for (size_t i = 0; i != n; ++i)
      os << "    p." << name << "[" << i << "] = " << int64_t(values[i])
         << ";\n";
  }
  template <typename T>
  void vector(StringRef name, const std::vector<T> &values) {
    os << "    p." << name << " = {";
    for (size_t i = 0; i != values.size(); ++i)
      os << (i ? ", " : "") << int64_t(values[i]);
    os << "};\n";
  }

private:
  llvm::raw_ostream &os;
};

void writeGemm(PlanWriter &w, const runtime::DeviceGemm &g) {
  w.field("a", int64_t(g.a));
  w.field("b", int64_t(g.b));
  w.field("transA", g.transA);
  w.field("transB", g.transB);
  w.field("kVar", int64_t(g.kVar));
  w.field("kExtent", g.kExtent);
  w.vector("aVars", g.aVars);
  w.vector("bVars", g.bVars);
  w.field("alpha", g.alpha);
}

void writeConv(PlanWriter &w, const runtime::DeviceConv &c) {
  w.field("input", int64_t(c.input));
  w.field("weight", int64_t(c.weight));
  w.array("reduceVars", c.reduceVars, 3);
  w.array("stride", c.stride, 2);
  w.array("padding", c.padding, 2);
  w.array("dilation", c.dilation, 2);
  w.field("groups", c.groups);
  w.array("inputShape", c.inputShape, 4);
  w.array("weightShape", c.weightShape, 4);
  w.array("outputShape", c.outputShape, 4);
}

void writeBatchNorm(PlanWriter &w, const runtime::DeviceBatchNorm &b) {
  w.field("input", int64_t(b.input));
  w.field("weight", int64_t(b.weight));
  w.field("bias", int64_t(b.bias));
  w.field("rank", int64_t(b.rank));
  w.field("epsilon", b.epsilon);
  w.array("shape", b.shape, 4);
  w.vector("varExtents", b.varExtents);
}

void writePooling(PlanWriter &w, const runtime::DevicePooling &p) {
  w.field("input", int64_t(p.input));
  w.field("ky", int64_t(p.ky));
  w.field("kx", int64_t(p.kx));
  w.array("window", p.window, 2);
  w.array("stride", p.stride, 2);
  w.array("padding", p.padding, 2);
  w.array("inputShape", p.inputShape, 4);
  w.array("outputShape", p.outputShape, 4);
}

const char *getConvKindName(runtime::ConvKind kind) {
  switch (kind) {
  case runtime::ConvKind::Forward:
    return "Forward";
  case runtime::ConvKind::BackwardData:
    return "BackwardData";
  case runtime::ConvKind::BackwardFilter:
    return "BackwardFilter";
  }
  return "Forward";
}

} // namespace

void codegen::writeStringLiteral(llvm::raw_ostream &os, StringRef text) {
  os << '"';
  for (char c : text) {
    if (c == '"' || c == '\\')
      os << '\\';
    os << c;
  }
  os << '"';
}

llvm::Error codegen::writeLinkedCudaKernels(llvm::raw_ostream &os,
                                            const GraphKernels &kernels,
                                            StringRef graphName,
                                            StringRef cppNamespace) {
  auto body = internalizeGraphUnit(kernels.source);
  if (!body)
    return body.takeError();
  os << "// Generated by tofu-graph --emit=cuda-linked: the CUDA kernels of ";
  writeStringLiteral(os, graphName);
  os << " for a training program (docs/Linking.md, \"On GPUs\"); nvcc\n"
        "// compiles it. Do not edit.\n"
        "// The unit's helpers are __host__ __device__ here: a namespace of "
        "their own keeps\n// them apart from the C++ plans' (an ODR "
        "violation otherwise).\n#define tofu_kg tofu_kg_cuda_linked\n"
     << getCudaKernelPrelude()
     << "#include \"tofu/Runtime/GeneratedCudaKernels.h\"\n\nnamespace "
     << cppNamespace << " {\nnamespace {\n" << *body
     << "\n} // namespace\n\n"
        "const tofu::runtime::GeneratedCudaKernels "
        "&getGeneratedCudaKernels() {\n"
        "  using namespace tofu::runtime;\n"
        "  static const GeneratedCudaKernels theKernels = [] {\n"
        "    GeneratedCudaKernels k;\n    k.graphName = ";
  writeStringLiteral(os, graphName);
  os << ";\n    unsigned count = 0;\n"
        "    const tofu_launch_fn *launches = graphCudaLaunches(&count);\n"
        "    k.launches.assign(launches, launches + count);\n"
        "    k.gemms.assign(count, std::nullopt);\n"
        "    k.convs.assign(count, std::nullopt);\n"
        "    k.batchNorms.assign(count, std::nullopt);\n"
        "    k.poolings.assign(count, std::nullopt);\n"
        "    // The ops cuBLAS and cuDNN compute (DeviceGemm.h, DeviceConv.h,\n"
        "    // DeviceBatchNorm.h, DevicePooling.h), as tofu-run's cuda backend\n"
        "    // takes them from the same kernels.\n";
  PlanWriter w(os);
  for (unsigned op = 0, e = kernels.opKernel.size(); op != e; ++op) {
    int index = kernels.opKernel[op];
    if (index < 0)
      continue;
    const GeneratedKernel &kernel = kernels.kernels[index];
    if (kernel.gemm) {
      os << "    {\n    DeviceGemm p;\n";
      writeGemm(w, *kernel.gemm);
      if (kernel.gemm->bias) {
        os << "    p.bias = GemmBias{" << kernel.gemm->bias->input << ", "
           << llvm::format("%.17g", kernel.gemm->bias->scale) << ", {";
        for (size_t i = 0; i != kernel.gemm->bias->vars.size(); ++i)
          os << (i ? ", " : "") << kernel.gemm->bias->vars[i];
        os << "}};\n";
      }
      os << "    k.gemms[" << op << "] = p;\n    }\n";
    }
    if (kernel.conv) {
      os << "    {\n    DeviceConv p;\n    p.kind = ConvKind::"
         << getConvKindName(kernel.conv->kind) << ";\n";
      writeConv(w, *kernel.conv);
      os << "    k.convs[" << op << "] = p;\n    }\n";
    }
    if (kernel.batchNorm) {
      os << "    {\n    DeviceBatchNorm p;\n";
      writeBatchNorm(w, *kernel.batchNorm);
      os << "    k.batchNorms[" << op << "] = p;\n    }\n";
    }
    if (kernel.pooling) {
      os << "    {\n    DevicePooling p;\n    p.mode = PoolingMode::"
         << (kernel.pooling->mode == runtime::PoolingMode::Max ? "Max"
                                                                 : "Average")
         << ";\n";
      writePooling(w, *kernel.pooling);
      os << "    k.poolings[" << op << "] = p;\n    }\n";
    }
  }
  os << "    return k;\n  }();\n  return theKernels;\n}\n\n} // namespace "
     << cppNamespace << "\n";
  return llvm::Error::success();
}

//===- CppEmitter.cpp - Plans as C++ a training binary runs ---------------===//
//
// This file implements the C++ form of a plan: one source holding the op
// kernels of the graph (lib/CodeGen) and the plan as constant tables
// (runtime/include/tofu/Runtime/GeneratedPlan.h: per tensor its layout, per
// op class its rule, arrays shared where their contents are equal), all in
// an unnamed namespace inside the chosen namespace, which exports one
// function, getGeneratedPlan(). The source compiles with any C++17 compiler
// against the runtime's headers and links with the runtime library (and
// OpenBLAS, which the kernels' contractions call).
//
//===----------------------------------------------------------------------===//

#include "tofu/CodeGen/GraphKernels.h"
#include "tofu/PlanEmit/PlanEmitters.h"

#include "llvm/ADT/StringMap.h"

#include <limits>

using namespace tofu;
using namespace tofu::plan;

static void writeString(llvm::raw_ostream &os, StringRef text) {
  os << '"';
  for (char c : text) {
    if (c == '"' || c == '\\')
      os << '\\';
    os << c;
  }
  os << '"';
}

static const char *getElementTypeEnum(runtime::ElementType type) {
  switch (type) {
  case runtime::ElementType::F32: return "F32";
  case runtime::ElementType::F64: return "F64";
  case runtime::ElementType::I64: return "I64";
  case runtime::ElementType::I32: return "I32";
  case runtime::ElementType::I8: return "I8";
  case runtime::ElementType::Bool: return "Bool";
  case runtime::ElementType::F16: return "F16";
  case runtime::ElementType::BF16: return "BF16";
  }
  return "F32";
}

static const char *getReducerEnum(runtime::Reducer reducer) {
  switch (reducer) {
  case runtime::Reducer::Sum: return "Sum";
  case runtime::Reducer::Prod: return "Prod";
  case runtime::Reducer::Max: return "Max";
  case runtime::Reducer::Min: return "Min";
  }
  return "Sum";
}

bool plan::isCppNamespaceName(StringRef name) {
  if (name.empty())
    return false;
  SmallVector<StringRef, 4> parts;
  name.split(parts, "::");
  for (StringRef part : parts)
    if (part.empty() || isdigit(part[0]) ||
        !llvm::all_of(part, [](char c) { return isalnum(c) || c == '_'; }))
      return false;
  return true;
}

/// `v` as a C++ constant of type std::int64_t.
static std::string formatInt64(int64_t v) {
  return v == std::numeric_limits<int64_t>::min()
             ? "(-9223372036854775807 - 1)"
             : std::to_string(v);
}

namespace {
/// Writes constant arrays, one per distinct content: boxes, shapes,
/// layouts, op rules.
class ArrayTable {
public:
  ArrayTable(llvm::raw_ostream &os, StringRef type, StringRef prefix)
      : os(os), type(type.str()), prefix(prefix.str()) {}
  /// The name of the array holding `values` (at least one element is
  /// written: a C++ array has one).
  template <typename Range> std::string get(const Range &values) {
    std::string text;
    for (auto v : values)
      text += (text.empty() ? "" : ", ") + formatInt64(int64_t(v));
    if (text.empty())
      text = "0";
    auto [it, added] =
        names.try_emplace(text, prefix + std::to_string(names.size()));
    if (added)
      os << "const " << type << " " << it->second << "[] = {" << text
         << "};\n";
    return it->second;
  }

private:
  llvm::raw_ostream &os;
  std::string type, prefix;
  llvm::StringMap<std::string> names;
};
} // namespace

/// A box as GeneratedBox holds it: {rank, lo..., hi...}.
static std::vector<int64_t> getBoxRow(const runtime::Box &box) {
  std::vector<int64_t> row{int64_t(box.getRank())};
  row.insert(row.end(), box.lo.begin(), box.lo.end());
  row.insert(row.end(), box.hi.begin(), box.hi.end());
  return row;
}

/// The kernels' source with its table function made internal and renamed
/// `graphKernels`.
static llvm::Expected<std::string> internalizeKernels(StringRef source) {
  std::string prelude = codegen::getKernelPrelude();
  std::string entry = std::string("extern \"C\" const tofu::runtime::KernelInfo *") +
                      codegen::GraphKernelsSymbol + "(unsigned *count)";
  size_t at = source.find(entry);
  if (!source.startswith(prelude) || at == StringRef::npos)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the graph kernels' source lacks its prelude or its table function");
  std::string internal =
      source.substr(prelude.size(), at - prelude.size()).str() +
      "const tofu::runtime::KernelInfo *graphKernels(unsigned *count)" +
      source.substr(at + entry.size()).str();
  // The fused kernels' table (tofu-run's, not the compiled plan's) would
  // clash between two plans linked into one program: made internal too.
  std::string fused = std::string("extern \"C\" const tofu_fused_fn *") +
                      codegen::GraphFusedSymbol + "(unsigned *count)";
  size_t fusedAt = internal.find(fused);
  if (fusedAt != std::string::npos)
    internal.replace(fusedAt, fused.size(),
                     "[[maybe_unused]] const tofu_fused_fn *graphFused(unsigned *count)");
  return internal;
}

llvm::Error plan::writePlanCpp(llvm::raw_ostream &os, const graph::Graph &g,
                               const CppPlanInput &input) {
  const runtime::CompactPlan &compact = *input.plan;
  const runtime::ExecutablePlan &p = compact.plan;
  auto kernels = internalizeKernels(input.kernelsSource);
  if (!kernels)
    return kernels.takeError();
  os << "// Generated by tofu-plan --emit=cpp: the plan of ";
  writeString(os, input.graphName);
  os << " for " << p.workers
     << " workers and its op kernels (docs/PlanFormat.md). Do not edit.\n"
        "#include \"tofu/Runtime/GeneratedPlan.h\"\n\n"
     << codegen::getKernelPrelude() << "namespace " << input.cppNamespace
     << " {\nnamespace {\n\n// The op kernels (docs/CodeGen.md).\n"
     << *kernels << "\n// The plan (tofu/Runtime/GeneratedPlan.h).\n"
     << "using namespace tofu::runtime;\n";
  ArrayTable boxes(os, "std::int64_t", "box"), shapes(os, "std::int64_t", "shape");
  ArrayTable layouts(os, "std::uint8_t", "layout");
  ArrayTable inputs(os, "unsigned", "inputs");
  // A C++ array has at least one element: one worker's has an unused one.
  os << "const unsigned levels[] = {";
  for (unsigned l = 0; l != compact.levels.size(); ++l)
    os << (l ? ", " : "") << compact.levels[l];
  os << (compact.levels.empty() ? "0" : "") << "};\n";
  for (unsigned t = 0, e = p.tensors.size(); t != e; ++t) {
    const runtime::TensorInfo &tensor = p.tensors[t];
    if (compact.layouts[t])
      continue;
    std::vector<std::string> stored;
    for (const auto &box : tensor.stored)
      stored.push_back(box ? boxes.get(getBoxRow(*box)) : "nullptr");
    os << "const GeneratedBox stored" << t << "[] = {";
    for (unsigned w = 0; w != stored.size(); ++w)
      os << (w ? ", " : "") << stored[w];
    os << "};\n";
  }
  std::vector<std::string> rows;
  for (unsigned t = 0, e = p.tensors.size(); t != e; ++t) {
    const runtime::TensorInfo &tensor = p.tensors[t];
    std::string row;
    llvm::raw_string_ostream line(row);
    line << "    {";
    writeString(line, tensor.name);
    line << ", ";
    writeString(line, compact.roles[t]);
    line << ", ElementType::" << getElementTypeEnum(tensor.type) << ", "
         << tensor.shape.size() << ", " << shapes.get(tensor.shape) << ", "
         << (tensor.graphInput ? "true" : "false") << ", "
         << (tensor.persistent ? "true" : "false") << ", " << tensor.updates
         << ", ";
    if (compact.layouts[t])
      line << "nullptr, " << layouts.get(*compact.layouts[t]) << "},\n";
    else
      line << "stored" << t << "},\n";
    rows.push_back(std::move(line.str()));
  }
  os << "// The op rules (runtime::encodeOpRule), one per op class.\n";
  ArrayTable ruleTable(os, "std::int64_t", "rule");
  std::vector<std::string> rules;
  for (const std::vector<int64_t> &rule : compact.rules)
    rules.push_back(ruleTable.get(rule));
  ArrayTable flags(os, "bool", "pointwise");
  for (unsigned i = 0, e = p.ops.size(); i != e; ++i) {
    const runtime::OpInfo &op = p.ops[i];
    std::string row;
    llvm::raw_string_ostream line(row);
    line << "    {";
    writeString(line, op.name);
    line << ", ";
    writeString(line, op.type);
    line << ", " << op.inputs.size() << ", " << inputs.get(op.inputs) << ", "
         << op.output << ", " << op.kernel << ", "
         << (op.partial ? "true" : "false") << ", Reducer::"
         << getReducerEnum(op.reducer) << ", nullptr, "
         << (op.pointwise.empty() ? "nullptr" : flags.get(op.pointwise))
         << ", " << rules[compact.opRules[i]] << "},\n";
    rows.push_back(std::move(line.str()));
  }
  os << "const GeneratedTensor tensors[] = {\n";
  for (unsigned t = 0, e = p.tensors.size(); t != e; ++t)
    os << rows[t];
  os << "};\nconst GeneratedOp ops[] = {\n";
  for (unsigned i = 0, e = p.ops.size(); i != e; ++i)
    os << rows[p.tensors.size() + i];
  if (p.ops.empty())
    os << "    {\"\", \"\", 0, nullptr, 0, 0, false, Reducer::Sum, nullptr, "
          "nullptr, nullptr},\n";
  os << "};\nconst std::int64_t peakBytes[] = {";
  for (unsigned w = 0; w != p.workers; ++w)
    os << (w ? ", " : "")
       << (w < p.peakBytesPerWorker.size() ? p.peakBytesPerWorker[w] : 0);
  os << "};\n\n} // namespace\n\n"
     << "const tofu::runtime::GeneratedPlan &getGeneratedPlan() {\n"
     << "  static const tofu::runtime::GeneratedPlan thePlan = [] {\n"
     << "    unsigned numKernels = 0;\n"
     << "    const KernelInfo *kernels = graphKernels(&numKernels);\n"
     << "    return GeneratedPlan{";
  writeString(os, input.graphName);
  os << ", " << p.workers << ", " << p.tensors.size() << ", tensors, "
     << p.ops.size() << ", ops, " << p.commBytes
     << ", peakBytes, numKernels, kernels, " << compact.levels.size()
     << ", levels"
     << "};\n  }();\n  return thePlan;\n}\n\n"
     << "} // namespace " << input.cppNamespace << "\n";
  return llvm::Error::success();
}

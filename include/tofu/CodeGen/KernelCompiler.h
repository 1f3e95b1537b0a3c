//===- KernelCompiler.h - Compile and load generated kernels ----*- C++ -*-===//
//
// This file declares KernelCompiler, which turns a translation unit of
// generated kernels (emitGraphKernels) into loaded code: the source is
// written to a cache directory under a name keyed by a hash of the source
// and the compile command, compiled there once with the system C++ compiler
// into a shared object (`c++ -std=c++17 -O3 -shared -fPIC -I<runtime
// include> ... -lopenblas`) stored with its size and hash, and dlopen'ed
// once it matches them (docs/CodeGen.md, "The kernel cache"); the
// KernelLibrary it returns holds the table of tofu_graph_kernels() for as
// long as it lives.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_CODEGEN_KERNELCOMPILER_H
#define TOFU_CODEGEN_KERNELCOMPILER_H

#include "tofu/Support/LLVM.h"
#include "tofu/Runtime/Kernel.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tofu {
namespace codegen {

/// A loaded shared object of kernels; unloads it when destroyed.
class KernelLibrary {
public:
  KernelLibrary(void *handle, const runtime::KernelInfo *table, unsigned count,
                std::string path)
      : handle(handle), table(table), count(count), path(std::move(path)) {}
  KernelLibrary(const KernelLibrary &) = delete;
  KernelLibrary &operator=(const KernelLibrary &) = delete;
  ~KernelLibrary();

  /// One entry per op of the graph, in graph order.
  ArrayRef<runtime::KernelInfo> getKernels() const { return {table, count}; }
  /// The kernel of op `i` (null if the op has none).
  runtime::KernelFn getKernel(unsigned i) const { return table[i].fn; }
  /// The shared object's path.
  StringRef getPath() const { return path; }
  /// The address of `symbol` in the shared object, or null.
  void *getSymbol(const char *symbol) const;

private:
  void *handle;
  const runtime::KernelInfo *table;
  unsigned count;
  std::string path;
};

/// Compiles translation units of kernels, caching the shared objects.
class KernelCompiler {
public:
  struct Options {
    /// Where sources and shared objects are kept; empty: $TOFU_KERNEL_CACHE,
    /// else `tofu-kernels` in the system's temporary directory.
    std::string cacheDir;
    /// The compiler; empty: $CXX, else `c++` (looked up on PATH).
    std::string compiler;
    /// Flags before the source (the include path of runtime/include is
    /// added). -fno-math-errno lets sqrt compile to the vector instruction
    /// (the same correctly rounded result; with errno to set, every call
    /// stayed a library call and an Adam step's sqrt ran 5x slower).
    /// -fno-trapping-math lets the loops over the prelude's exp and erf,
    /// whose selects compare possible NaNs, vectorize (no value changes:
    /// only floating-point exception flags, which no kernel reads).
    std::vector<std::string> flags = {"-std=c++17", "-O3", "-fno-math-errno",
                                      "-fno-trapping-math", "-shared",
                                      "-fPIC"};
    /// Libraries after it.
    std::vector<std::string> libs = {"-lopenblas"};
    /// Called with each warning (a damaged cache entry, rebuilt); unset,
    /// the warning is printed on stderr.
    std::function<void(StringRef)> warn;
  };

  KernelCompiler();
  explicit KernelCompiler(Options options);

  /// Compiles `source` (or reuses the cached object of the same source and
  /// command) and loads it. Fails with the compiler's messages.
  llvm::Expected<std::unique_ptr<KernelLibrary>> compile(StringRef source);

  /// True if the last compile() found its shared object in the cache.
  bool lastWasCached() const { return cached; }
  const Options &getOptions() const { return options; }

private:
  Options options;
  bool cached = false;
};

} // namespace codegen
} // namespace tofu

#endif // TOFU_CODEGEN_KERNELCOMPILER_H

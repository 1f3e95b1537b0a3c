//===- KernelCompiler.cpp - Compile and load generated kernels ------------===//
//
// This file implements KernelCompiler: hash, write, compile into a
// temporary object renamed into place (so concurrent compilers of the same
// source never load a half-written file), dlopen, look up the table.
//
//===----------------------------------------------------------------------===//

#include "tofu/CodeGen/KernelCompiler.h"

#include "tofu/CodeGen/GraphKernels.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/raw_ostream.h"

#include <dlfcn.h>
#include <unistd.h>

using namespace tofu;
using namespace tofu::codegen;

#ifndef TOFU_RUNTIME_INCLUDE_DIR
#error "TOFU_RUNTIME_INCLUDE_DIR must name runtime/include"
#endif

KernelLibrary::~KernelLibrary() {
  if (handle)
    dlclose(handle);
}

void *KernelLibrary::getSymbol(const char *symbol) const {
  return handle ? dlsym(handle, symbol) : nullptr;
}

KernelCompiler::KernelCompiler() : KernelCompiler(Options()) {}

KernelCompiler::KernelCompiler(Options opts) : options(std::move(opts)) {
  if (options.cacheDir.empty()) {
    if (llvm::Optional<std::string> env =
            llvm::sys::Process::GetEnv("TOFU_KERNEL_CACHE")) {
      options.cacheDir = *env;
    } else {
      llvm::SmallString<128> dir;
      llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, dir);
      llvm::sys::path::append(dir, "tofu-kernels-" + std::to_string(getuid()));
      options.cacheDir = std::string(dir);
    }
  }
  if (options.compiler.empty()) {
    llvm::Optional<std::string> env = llvm::sys::Process::GetEnv("CXX");
    options.compiler = env && !env->empty() ? *env : "c++";
  }
}

namespace {
llvm::Error makeError(const Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}
} // namespace

llvm::Expected<std::unique_ptr<KernelLibrary>>
KernelCompiler::compile(StringRef source) {
  llvm::ErrorOr<std::string> compiler =
      llvm::sys::findProgramByName(options.compiler);
  if (!compiler)
    return makeError("kernel compiler '" + options.compiler +
                     "' not found: " + compiler.getError().message());
  std::vector<std::string> args = {*compiler};
  args.insert(args.end(), options.flags.begin(), options.flags.end());
  args.push_back("-I" TOFU_RUNTIME_INCLUDE_DIR);

  std::string key = source.str();
  for (const std::string &a : args)
    key += "\n" + a;
  for (const std::string &l : options.libs)
    key += "\n" + l;
  std::string hash = llvm::utohexstr(llvm::xxHash64(key), /*LowerCase=*/true);
  if (std::error_code ec = llvm::sys::fs::create_directories(options.cacheDir))
    return makeError("cannot create the kernel cache '" + options.cacheDir +
                     "': " + ec.message());
  llvm::SmallString<128> base(options.cacheDir);
  llvm::sys::path::append(base, "k-" + hash);
  std::string src = (base + ".cpp").str(), obj = (base + ".so").str(),
              log = (base + ".log").str();

  cached = llvm::sys::fs::exists(obj);
  if (!cached) {
    // Several processes (MPI ranks) may compile the same kernels at once:
    // each writes and compiles its own copy of the source (a compiler
    // reading a source another process is still writing could build a
    // library without its table) and renames its results into place.
    std::string pid = std::to_string(getpid());
    std::string mySrc = (base + ".tmp" + pid + ".cpp").str();
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(mySrc, ec);
      if (ec)
        return makeError("cannot write '" + mySrc + "': " + ec.message());
      os << source;
    }
    std::string tmp = obj + ".tmp" + pid;
    std::string myLog = (base + ".tmp" + pid + ".log").str();
    args.push_back("-o");
    args.push_back(tmp);
    args.push_back(mySrc);
    args.insert(args.end(), options.libs.begin(), options.libs.end());
    SmallVector<StringRef, 16> argRefs(args.begin(), args.end());
    llvm::Optional<StringRef> redirects[] = {llvm::None, StringRef(myLog),
                                             StringRef(myLog)};
    std::string message;
    int rc = llvm::sys::ExecuteAndWait(*compiler, argRefs, llvm::None,
                                       redirects, 0, 0, &message);
    if (rc != 0) {
      std::string output;
      if (auto buf = llvm::MemoryBuffer::getFile(myLog))
        output = (*buf)->getBuffer().take_back(4000).str();
      return makeError("compiling the kernels '" + mySrc + "' failed" +
                       (message.empty() ? "" : ": " + message) + "\n" + output);
    }
    for (const auto &[from, to] : {std::make_pair(mySrc, src),
                                   std::make_pair(myLog, log)})
      if (std::error_code ec = llvm::sys::fs::rename(from, to))
        return makeError("cannot rename '" + from + "': " + ec.message());
    if (std::error_code ec = llvm::sys::fs::rename(tmp, obj))
      return makeError("cannot rename '" + tmp + "': " + ec.message());
  }

  void *handle = dlopen(obj.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return makeError("cannot load '" + obj + "': " + dlerror());
  using TableFn = const runtime::KernelInfo *(*)(unsigned *);
  auto fn = reinterpret_cast<TableFn>(dlsym(handle, GraphKernelsSymbol));
  if (!fn) {
    dlclose(handle);
    return makeError("'" + obj + "' has no " + GraphKernelsSymbol);
  }
  unsigned count = 0;
  const runtime::KernelInfo *table = fn(&count);
  return std::make_unique<KernelLibrary>(handle, table, count, obj);
}

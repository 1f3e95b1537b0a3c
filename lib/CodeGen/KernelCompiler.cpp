//===- KernelCompiler.cpp - Compile and load generated kernels ------------===//
//
// This file implements KernelCompiler: hash, write, compile into a
// temporary object renamed into place (so concurrent compilers of the same
// source never load a half-written file) beside its checksum (size and
// xxHash64, `k-HASH.so.sum`), verify, dlopen, look up the table. An entry
// that fails the check (truncated, empty, changed) is rebuilt with a
// warning instead of crashing dlopen with SIGBUS; temporaries left by a
// compile that was killed are removed once they are an hour old.
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
#include "llvm/Support/WithColor.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
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

/// An entry's checksum: "SIZE HASH" (decimal bytes, xxHash64 in hex).
std::string getChecksum(StringRef bytes) {
  return std::to_string(bytes.size()) + " " +
         llvm::utohexstr(llvm::xxHash64(bytes), /*LowerCase=*/true);
}

/// True if `bytes` holds every part its ELF headers point at: a shared
/// object cut short (a compile or copy killed midway) fails this. For
/// entries cached before checksums were stored.
bool isWholeELF(StringRef bytes) {
  Elf64_Ehdr header;
  if (bytes.size() < sizeof(header))
    return false;
  std::memcpy(&header, bytes.data(), sizeof(header));
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64)
    return false;
  auto within = [&](uint64_t offset, uint64_t size) {
    return offset <= bytes.size() && size <= bytes.size() - offset;
  };
  if (!within(header.e_shoff, uint64_t(header.e_shnum) * header.e_shentsize) ||
      !within(header.e_phoff, uint64_t(header.e_phnum) * sizeof(Elf64_Phdr)))
    return false;
  for (unsigned i = 0; i != header.e_phnum; ++i) {
    Elf64_Phdr segment;
    std::memcpy(&segment, bytes.data() + header.e_phoff + i * sizeof(segment),
                sizeof(segment));
    if (!within(segment.p_offset, segment.p_filesz))
      return false;
  }
  return true;
}

/// Writes `text` to `path` through a temporary renamed into place.
llvm::Error writeAtomically(const std::string &path, StringRef text) {
  std::string tmp = path + ".tmp" + std::to_string(getpid());
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec);
    if (ec)
      return makeError("cannot write '" + tmp + "': " + ec.message());
    os << text;
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path))
    return makeError("cannot rename '" + tmp + "': " + ec.message());
  return llvm::Error::success();
}

/// Why the cached object `obj` cannot be loaded ("" if it can): checked
/// against its checksum, or, for an entry from before checksums, against
/// its ELF headers (and then given its checksum).
std::string checkEntry(const std::string &obj) {
  auto buffer = llvm::MemoryBuffer::getFile(obj, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return "cannot be read: " + buffer.getError().message();
  StringRef bytes = (*buffer)->getBuffer();
  if (bytes.empty())
    return "is empty";
  std::string actual = getChecksum(bytes);
  if (auto stored = llvm::MemoryBuffer::getFile(obj + ".sum")) {
    StringRef expected = (*stored)->getBuffer().trim();
    if (expected == actual)
      return "";
    return "does not match its checksum (" + actual + ", stored " +
           expected.str() + ")";
  }
  if (!isWholeELF(bytes))
    return "is not a whole shared object (" + std::to_string(bytes.size()) +
           " bytes) and has no checksum";
  llvm::consumeError(writeAtomically(obj + ".sum", actual + "\n"));
  return "";
}

/// Removes the temporaries (`*.tmpPID*`) of `dir` older than an hour: what
/// a compile killed midway left (a compile in progress is younger).
void removeStaleTemporaries(StringRef dir) {
  auto now = std::chrono::system_clock::now();
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef name = llvm::sys::path::filename(it->path());
    llvm::sys::fs::file_status status;
    if (!name.startswith("k-") || !name.contains(".tmp") ||
        llvm::sys::fs::status(it->path(), status))
      continue;
    if (now - status.getLastModificationTime() > std::chrono::hours(1))
      llvm::sys::fs::remove(it->path());
  }
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
  if (cached) {
    std::string damage = checkEntry(obj);
    if (!damage.empty()) {
      std::string msg =
          "the kernel cache entry '" + obj + "' " + damage + "; rebuilding it";
      if (options.warn)
        options.warn(msg);
      else
        llvm::WithColor::warning() << msg << "\n";
      cached = false;
    }
  }
  if (!cached) {
    removeStaleTemporaries(options.cacheDir);
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
    // The checksum first: a reader that finds the new object finds its
    // checksum (a reader between two writers' renames sees a mismatch and
    // rebuilds; it never loads a damaged object).
    auto built = llvm::MemoryBuffer::getFile(tmp, /*IsText=*/false,
                                             /*RequiresNullTerminator=*/false);
    if (!built)
      return makeError("cannot read '" + tmp + "': " +
                       built.getError().message());
    if (llvm::Error err = writeAtomically(
            obj + ".sum", getChecksum((*built)->getBuffer()) + "\n"))
      return err;
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

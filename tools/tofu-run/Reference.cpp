//===- Reference.cpp - Saved values of an unpartitioned run ---------------===//
//
// This file implements writing and reading tofu-run's reference files.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace tofu;

static const char Magic[] = "tofu-run reference 1\n";

static llvm::Error makeError(const Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

llvm::Error tofu::writeReference(StringRef path, const graph::Graph &g,
                                 const Reference &ref) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return makeError("cannot write '" + path + "': " + ec.message());
  os << Magic << ref.key << "\n";
  for (unsigned t = 0, e = ref.values.size(); t != e; ++t) {
    if (!ref.values[t])
      continue;
    const runtime::HostTensor &value = *ref.values[t];
    uint64_t size = value.data.size();
    os << g.getTensor(t).name << "\n" << char(value.type);
    os.write(reinterpret_cast<const char *>(&size), sizeof(size));
    os.write(reinterpret_cast<const char *>(value.data.data()), size);
  }
  os.close();
  if (os.has_error())
    return makeError("cannot write '" + path + "': " + os.error().message());
  return llvm::Error::success();
}

llvm::Expected<Reference> tofu::readReference(StringRef path,
                                              const graph::Graph &g) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError("cannot read '" + path +
                     "': " + buffer.getError().message());
  StringRef rest = (*buffer)->getBuffer();
  auto malformed = [&](const Twine &what) {
    return makeError(path + ": not a tofu-run reference of this graph: " +
                     what);
  };
  if (!rest.consume_front(Magic))
    return malformed("no 'tofu-run reference 1' header");
  Reference ref;
  std::tie(ref.key, rest) = [&] {
    auto [key, tail] = rest.split('\n');
    return std::make_pair(key.str(), tail);
  }();
  ref.values.resize(g.getNumTensors());
  while (!rest.empty()) {
    auto [name, tail] = rest.split('\n');
    int t = g.lookupTensor(name);
    if (t < 0)
      return malformed("the graph has no tensor '" + name + "'");
    uint64_t size;
    if (tail.size() < 1 + sizeof(size))
      return malformed("truncated at '" + name + "'");
    if (uint8_t(tail[0]) > uint8_t(runtime::ElementType::BF16))
      return malformed("'" + name + "' has no element type");
    runtime::HostTensor value;
    value.type = runtime::ElementType(tail[0]);
    std::memcpy(&size, tail.data() + 1, sizeof(size));
    tail = tail.drop_front(1 + sizeof(size));
    const graph::Tensor &tensor = g.getTensor(t);
    int64_t elements = 1;
    for (int64_t extent : tensor.shape)
      elements *= extent;
    if (size > tail.size() ||
        size != uint64_t(elements) * runtime::getElementSize(value.type))
      return malformed("'" + name + "' has " + Twine(size) +
                       " bytes, not its shape's");
    value.shape.assign(tensor.shape.begin(), tensor.shape.end());
    value.data.resize(size);
    std::memcpy(value.data.data(), tail.data(), size);
    ref.values[t] = std::move(value);
    rest = tail.drop_front(size);
  }
  return ref;
}

//===- Npy.cpp - NumPy .npy tensor files ----------------------------------===//
//
// This file implements the .npy reader and writer declared in Npy.h. The
// header dict is parsed by finding its three keys; the data is converted
// element by element to and from the Tensor's double storage.
//
//===----------------------------------------------------------------------===//

#include "tofu/Eval/Npy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace tofu;
using namespace tofu::eval;
namespace endian = llvm::support::endian;

namespace {

constexpr StringRef Magic("\x93NUMPY", 6);

llvm::Error npyError(StringRef name, const Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + name + "': " + msg);
}

/// The quoted value after `'key':` in the header dict, or the raw text up to
/// the next `,` or `)` group for unquoted values.
llvm::Optional<StringRef> dictValue(StringRef header, StringRef key) {
  size_t at = header.find(("'" + key + "'").str());
  if (at == StringRef::npos)
    return llvm::None;
  StringRef rest = header.drop_front(at + key.size() + 2).ltrim();
  if (!rest.consume_front(":"))
    return llvm::None;
  rest = rest.ltrim();
  if (rest.consume_front("'"))
    return rest.take_until([](char c) { return c == '\''; });
  if (rest.startswith("("))
    return rest.take_until([](char c) { return c == ')'; }).drop_front();
  return rest.take_until([](char c) { return c == ',' || c == '}'; }).trim();
}

struct Descr {
  DType dtype;
  unsigned size;
};

llvm::Optional<Descr> parseDescr(StringRef descr) {
  if (descr == "<f4") return Descr{DType::F32, 4};
  if (descr == "<f8") return Descr{DType::F64, 8};
  if (descr == "<i8") return Descr{DType::I64, 8};
  if (descr == "<i4") return Descr{DType::I32, 4};
  if (descr == "|i1") return Descr{DType::I8, 1};
  if (descr == "|b1") return Descr{DType::Bool, 1};
  return llvm::None;
}

/// .npy has no bf16, and f16 tensors are computed in double anyway: both
/// are stored as f32.
StringRef getDescr(DType dtype) {
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
  case DType::F32: return "<f4";
  case DType::F64: return "<f8";
  case DType::I64: return "<i8";
  case DType::I32: return "<i4";
  case DType::I8: return "|i1";
  case DType::Bool: return "|b1";
  }
  return "<f8";
}

bool parseShapeTuple(StringRef text, Shape &shape) {
  SmallVector<StringRef, 4> parts;
  text.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef part : parts) {
    part = part.trim();
    if (part.empty())
      continue;
    int64_t extent;
    if (part.getAsInteger(10, extent) || extent < 0)
      return false;
    shape.push_back(extent);
  }
  return true;
}

double decodeElement(const char *p, DType dtype) {
  switch (dtype) {
  case DType::F16:
  case DType::BF16: // parseDescr never gives these
  case DType::F32: {
    uint32_t bits = endian::read32le(p);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case DType::F64: {
    uint64_t bits = endian::read64le(p);
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  case DType::I64: return double(int64_t(endian::read64le(p)));
  case DType::I32: return double(int32_t(endian::read32le(p)));
  case DType::I8: return double(int8_t(*p));
  case DType::Bool: return *p ? 1.0 : 0.0;
  }
  return 0;
}

/// Converts to an integer, saturating and mapping NaN to 0.
int64_t toInteger(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= 9.2e18)
    return INT64_MAX;
  if (v <= -9.2e18)
    return INT64_MIN;
  return int64_t(v);
}

void encodeElement(std::string &out, double v, DType dtype) {
  char buf[8];
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
  case DType::F32: {
    float f = float(v);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    endian::write32le(buf, bits);
    out.append(buf, 4);
    return;
  }
  case DType::F64: {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    endian::write64le(buf, bits);
    out.append(buf, 8);
    return;
  }
  case DType::I64:
    endian::write64le(buf, uint64_t(toInteger(v)));
    out.append(buf, 8);
    return;
  case DType::I32:
    endian::write32le(buf, uint32_t(int32_t(toInteger(v))));
    out.append(buf, 4);
    return;
  case DType::I8:
    out.push_back(char(int8_t(std::max<int64_t>(-128, std::min<int64_t>(127, toInteger(v))))));
    return;
  case DType::Bool:
    out.push_back(v != 0 ? 1 : 0);
    return;
  }
}

} // namespace

llvm::Expected<Tensor> eval::parseNpy(StringRef bytes, StringRef name) {
  if (!bytes.startswith(Magic) || bytes.size() < 10)
    return npyError(name, "not a .npy file (bad magic)");
  unsigned major = uint8_t(bytes[6]);
  size_t headerLen, dataStart;
  if (major == 1) {
    headerLen = endian::read16le(bytes.data() + 8);
    dataStart = 10 + headerLen;
  } else if (major == 2 && bytes.size() >= 12) {
    headerLen = endian::read32le(bytes.data() + 8);
    dataStart = 12 + headerLen;
  } else {
    return npyError(name, "unsupported .npy version " + Twine(major));
  }
  if (dataStart > bytes.size())
    return npyError(name, "truncated .npy header");
  StringRef header = bytes.slice(dataStart - headerLen, dataStart);
  llvm::Optional<StringRef> descrText = dictValue(header, "descr");
  llvm::Optional<StringRef> order = dictValue(header, "fortran_order");
  llvm::Optional<StringRef> shapeText = dictValue(header, "shape");
  if (!descrText || !order || !shapeText)
    return npyError(name, "malformed .npy header '" + header.trim() + "'");
  llvm::Optional<Descr> descr = parseDescr(*descrText);
  if (!descr)
    return npyError(name, "unsupported dtype '" + *descrText +
                              "' (f32, f64, i64, i32, i8 and bool are)");
  if (*order != "False")
    return npyError(name, "Fortran-order arrays are not supported");
  Shape shape;
  if (!parseShapeTuple(*shapeText, shape))
    return npyError(name, "malformed shape '(" + *shapeText + ")'");
  // Check the size before allocating: a corrupt shape must not exhaust
  // memory.
  StringRef data = bytes.drop_front(dataStart);
  uint64_t count = 1;
  for (int64_t extent : shape)
    if (extent != 0 && count > data.size() / uint64_t(extent))
      count = UINT64_MAX;
    else
      count *= uint64_t(extent);
  if (count == UINT64_MAX || data.size() != count * descr->size)
    return npyError(name, "shape (" + *shapeText + ") needs " +
                              (count == UINT64_MAX ? std::string("more")
                                                   : std::to_string(count *
                                                                    descr->size)) +
                              " bytes of data, found " + Twine(data.size()));
  Tensor tensor(descr->dtype, shape);
  llvm::MutableArrayRef<double> values = tensor.getData();
  for (size_t i = 0, e = values.size(); i != e; ++i)
    values[i] = decodeElement(data.data() + i * descr->size, descr->dtype);
  return tensor;
}

llvm::Expected<Tensor> eval::readNpy(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/false);
  if (!buffer)
    return npyError(path, "cannot read: " + buffer.getError().message());
  return parseNpy((*buffer)->getBuffer(), path);
}

std::string eval::formatNpy(const Tensor &tensor) {
  std::string header = "{'descr': '" + getDescr(tensor.getDType()).str() +
                       "', 'fortran_order': False, 'shape': (";
  ArrayRef<int64_t> shape = tensor.getShape();
  for (size_t d = 0; d != shape.size(); ++d)
    header += (d ? ", " : "") + std::to_string(shape[d]);
  if (shape.size() == 1)
    header += ",";
  header += "), }";
  // Pad with spaces so that magic + version + length + header + '\n' is a
  // multiple of 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(Magic.str());
  out += '\x01';
  out += '\x00';
  char len[2];
  endian::write16le(len, uint16_t(header.size()));
  out.append(len, 2);
  out += header;
  for (double v : tensor.getData())
    encodeElement(out, v, tensor.getDType());
  return out;
}

llvm::Error eval::writeNpy(StringRef path, const Tensor &tensor) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return npyError(path, "cannot write: " + ec.message());
  os << formatNpy(tensor);
  return llvm::Error::success();
}

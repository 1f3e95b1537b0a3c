//===- Npz.cpp - NumPy arrays and archives --------------------------------===//
//
// This file implements .npy encoding and decoding and the ZIP container of
// .npz archives: members stored (method 0), CRC-32 checked on read, ZIP64
// sizes and offsets read from the central directory's extra fields (numpy
// writes them), plain 32-bit records written (a member over 4 GiB is an
// error).
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Npz.h"

#include "tofu/Runtime/Error.h"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

using namespace tofu::runtime;
using std::int64_t;
using std::uint16_t;
using std::uint32_t;
using std::uint64_t;

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

namespace {
struct DtypeName {
  ElementType type;
  const char *descr;
};
} // namespace

/// numpy's descr of each element type; bf16, which numpy lacks, is none.
static const DtypeName Dtypes[] = {
    {ElementType::F32, "<f4"}, {ElementType::F64, "<f8"},
    {ElementType::I64, "<i8"}, {ElementType::I32, "<i4"},
    {ElementType::I8, "|i1"},  {ElementType::Bool, "|b1"},
    {ElementType::F16, "<f2"},
};

Bytes tofu::runtime::encodeNpy(const HostTensor &array) {
  const char *descr = nullptr;
  for (const DtypeName &d : Dtypes)
    if (d.type == array.type)
      descr = d.descr;
  if (!descr)
    throw RuntimeError(fmt::format("an array of {} has no NumPy dtype",
                                   getElementTypeName(array.type)));
  std::string shape;
  for (int64_t extent : array.shape)
    shape += (shape.empty() ? "" : ", ") + std::to_string(extent);
  if (array.shape.size() == 1)
    shape += ",";
  std::string header = fmt::format(
      "{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr,
      shape);
  // Magic, version and length take 10 bytes; the whole header ends in a
  // newline at a multiple of 64.
  std::size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  Bytes result = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  result.push_back(header.size() & 0xff);
  result.push_back(header.size() >> 8);
  result.insert(result.end(), header.begin(), header.end());
  result.insert(result.end(), array.data.begin(), array.data.end());
  return result;
}

/// The text after `key` in `header` (a Python dict literal), up to `end`.
static std::string findValue(const std::string &header, const char *key,
                             char end, const std::string &what) {
  std::size_t at = header.find(std::string("'") + key + "'");
  if (at == std::string::npos)
    throw RuntimeError(what + ": the .npy header has no '" + key + "'");
  at = header.find(':', at);
  std::size_t stop = header.find(end, at + 1);
  if (at == std::string::npos || stop == std::string::npos)
    throw RuntimeError(what + ": malformed .npy header");
  return header.substr(at + 1, stop - at - 1);
}

HostTensor tofu::runtime::decodeNpy(const unsigned char *data,
                                    std::size_t size,
                                    const std::string &what) {
  static const unsigned char Magic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (size < 10 || std::memcmp(data, Magic, sizeof Magic) != 0)
    throw RuntimeError(what + ": not a .npy array");
  unsigned major = data[6];
  std::size_t headerLength, start;
  if (major == 1) {
    headerLength = data[8] | data[9] << 8;
    start = 10;
  } else if ((major == 2 || major == 3) && size >= 12) {
    headerLength = uint32_t(data[8]) | uint32_t(data[9]) << 8 |
                   uint32_t(data[10]) << 16 | uint32_t(data[11]) << 24;
    start = 12;
  } else {
    throw RuntimeError(fmt::format("{}: .npy version {} is not supported",
                                   what, major));
  }
  if (headerLength > size - start)
    throw RuntimeError(what + ": the .npy header is cut short");
  std::string header(reinterpret_cast<const char *>(data) + start,
                     headerLength);
  std::string descr = findValue(header, "descr", ',', what);
  std::string order = findValue(header, "fortran_order", ',', what);
  std::string shapeText = findValue(header, "shape", ')', what);
  HostTensor result;
  bool known = false;
  for (const DtypeName &d : Dtypes)
    if (descr.find(std::string("'") + d.descr + "'") != std::string::npos ||
        (d.descr[0] == '|' &&
         descr.find(std::string("'<") + (d.descr + 1) + "'") !=
             std::string::npos)) {
      result.type = d.type;
      known = true;
    }
  if (!known)
    throw RuntimeError(what + ": dtype " + descr +
                       " is none of the runtime's element types");
  if (order.find("True") != std::string::npos)
    throw RuntimeError(what + ": Fortran-ordered arrays are not supported");
  std::size_t open = shapeText.find('(');
  if (open == std::string::npos)
    throw RuntimeError(what + ": malformed shape in the .npy header");
  const char *p = shapeText.c_str() + open + 1;
  int64_t elements = 1;
  while (*p) {
    if (*p == ' ' || *p == ',') {
      ++p;
      continue;
    }
    char *end;
    long long extent = std::strtoll(p, &end, 10);
    if (end == p || extent < 0 ||
        (extent && elements > (int64_t(1) << 50) / extent))
      throw RuntimeError(what + ": malformed shape in the .npy header");
    result.shape.push_back(extent);
    elements *= extent;
    p = end;
  }
  std::size_t bytes = elements * getElementSize(result.type);
  if (size - start - headerLength != bytes)
    throw RuntimeError(fmt::format("{}: {} holds {} bytes of data, not {}",
                                   what, Box::whole(result.shape).format(),
                                   size - start - headerLength, bytes));
  result.data.assign(data + start + headerLength, data + size);
  return result;
}

//===----------------------------------------------------------------------===//
// ZIP
//===----------------------------------------------------------------------===//

static uint32_t crc32(const unsigned char *data, std::size_t size) {
  static const std::array<uint32_t, 256> Table = [] {
    std::array<uint32_t, 256> table{};
    for (uint32_t i = 0; i != 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k != 8; ++k)
        c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    return table;
  }();
  uint32_t c = 0xffffffffu;
  for (std::size_t i = 0; i != size; ++i)
    c = Table[(c ^ data[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

namespace {
/// Little-endian fields of a ZIP record.
class Reader {
public:
  Reader(const Bytes &file, std::size_t at, const std::string &path)
      : file(file), at(at), path(path) {}
  uint64_t take(unsigned bytes) {
    if (at + bytes > file.size())
      throw RuntimeError(path + ": the archive is cut short");
    uint64_t value = 0;
    for (unsigned i = 0; i != bytes; ++i)
      value |= uint64_t(file[at + i]) << (8 * i);
    at += bytes;
    return value;
  }
  void skip(std::size_t bytes) {
    if (at + bytes > file.size())
      throw RuntimeError(path + ": the archive is cut short");
    at += bytes;
  }
  std::size_t getOffset() const { return at; }
  void seek(std::size_t offset) { at = offset; }

private:
  const Bytes &file;
  std::size_t at;
  const std::string &path;
};

void put(Bytes &out, uint64_t value, unsigned bytes) {
  for (unsigned i = 0; i != bytes; ++i)
    out.push_back((value >> (8 * i)) & 0xff);
}
} // namespace

static Bytes readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw RuntimeError("cannot open '" + path + "': " + std::strerror(errno));
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

std::vector<NamedArray> tofu::runtime::readNpz(const std::string &path) {
  Bytes file = readFile(path);
  // The end of central directory record: the last signature within the
  // last 22 bytes and the most comment (64 KiB) before them.
  std::size_t eocd = std::string::npos;
  if (file.size() >= 22) {
    std::size_t lowest =
        file.size() > 22 + 65535 ? file.size() - 22 - 65535 : 0;
    for (std::size_t i = file.size() - 22;; --i) {
      if (file[i] == 0x50 && file[i + 1] == 0x4b && file[i + 2] == 5 &&
          file[i + 3] == 6) {
        eocd = i;
        break;
      }
      if (i == lowest)
        break;
    }
  }
  if (eocd == std::string::npos)
    throw RuntimeError(path + ": not a .npz (ZIP) archive");
  Reader end(file, eocd + 10, path);
  uint64_t entries = end.take(2);
  end.take(4);
  uint64_t directory = end.take(4);
  if (entries == 0xffff || directory == 0xffffffffu) {
    // ZIP64: the locator just before points at the ZIP64 record.
    if (eocd < 20)
      throw RuntimeError(path + ": malformed ZIP64 archive");
    Reader locator(file, eocd - 20, path);
    if (locator.take(4) != 0x07064b50)
      throw RuntimeError(path + ": malformed ZIP64 archive");
    locator.take(4);
    Reader record(file, locator.take(8), path);
    if (record.take(4) != 0x06064b50)
      throw RuntimeError(path + ": malformed ZIP64 archive");
    record.skip(8 + 2 + 2 + 4 + 4 + 8);
    entries = record.take(8);
    record.take(8);
    directory = record.take(8);
  }
  std::vector<NamedArray> arrays;
  Reader entry(file, directory, path);
  for (uint64_t n = 0; n != entries; ++n) {
    if (entry.take(4) != 0x02014b50)
      throw RuntimeError(path + ": malformed central directory");
    entry.skip(2 + 2);
    uint64_t flags = entry.take(2), method = entry.take(2);
    entry.skip(4);
    uint32_t crc = entry.take(4);
    uint64_t packed = entry.take(4), size = entry.take(4);
    uint64_t nameLength = entry.take(2), extraLength = entry.take(2),
             commentLength = entry.take(2);
    entry.skip(2 + 2 + 4);
    uint64_t local = entry.take(4);
    std::string name(file.begin() + entry.getOffset(),
                     file.begin() + entry.getOffset() + nameLength);
    entry.skip(nameLength);
    std::size_t extraEnd = entry.getOffset() + extraLength;
    while (entry.getOffset() + 4 <= extraEnd) {
      uint64_t id = entry.take(2), length = entry.take(2);
      std::size_t next = entry.getOffset() + length;
      if (id == 1) {
        if (size == 0xffffffffu)
          size = entry.take(8);
        if (packed == 0xffffffffu)
          packed = entry.take(8);
        if (local == 0xffffffffu)
          local = entry.take(8);
      }
      entry.seek(next);
    }
    entry.seek(extraEnd + commentLength);
    std::string what = path + ": '" + name + "'";
    if (method != 0 || (flags & 1))
      throw RuntimeError(what + " is compressed or encrypted; write the "
                                "archive with numpy.savez, not savez_compressed");
    Reader header(file, local, path);
    if (header.take(4) != 0x04034b50)
      throw RuntimeError(what + ": malformed local header");
    header.skip(22);
    uint64_t localName = header.take(2), localExtra = header.take(2);
    header.skip(localName + localExtra);
    std::size_t start = header.getOffset();
    if (packed != size || start + size > file.size())
      throw RuntimeError(what + ": the archive is cut short");
    if (crc32(file.data() + start, size) != crc)
      throw RuntimeError(what + ": CRC mismatch (a damaged archive)");
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0)
      name.resize(name.size() - 4);
    arrays.emplace_back(name, decodeNpy(file.data() + start, size, what));
  }
  return arrays;
}

void tofu::runtime::writeNpz(const std::string &path,
                             const std::vector<NamedArray> &arrays) {
  Bytes out, directory;
  for (const NamedArray &array : arrays) {
    Bytes npy = encodeNpy(array.second);
    std::string name = array.first + ".npy";
    if (npy.size() >= 0xffffffffu || out.size() >= 0xffffffffu)
      throw RuntimeError(path + ": '" + array.first +
                         "' is too large for a 32-bit ZIP record");
    uint32_t crc = crc32(npy.data(), npy.size());
    uint64_t offset = out.size();
    // Version 2.0, no flags, stored, time and date 1980-01-01 00:00.
    auto common = [&](Bytes &record) {
      put(record, 20, 2);
      put(record, 0, 2);
      put(record, 0, 2);
      put(record, 0, 2);
      put(record, 0x21, 2);
      put(record, crc, 4);
      put(record, npy.size(), 4);
      put(record, npy.size(), 4);
      put(record, name.size(), 2);
      put(record, 0, 2);
    };
    put(out, 0x04034b50, 4);
    common(out);
    out.insert(out.end(), name.begin(), name.end());
    out.insert(out.end(), npy.begin(), npy.end());
    put(directory, 0x02014b50, 4);
    put(directory, 20, 2);
    common(directory);
    put(directory, 0, 2 + 2 + 2);
    put(directory, 0, 4);
    put(directory, offset, 4);
    directory.insert(directory.end(), name.begin(), name.end());
  }
  if (arrays.size() >= 0xffff || out.size() >= 0xffffffffu)
    throw RuntimeError(path + ": too many or too large arrays for a 32-bit "
                              "ZIP archive");
  uint64_t directoryOffset = out.size();
  out.insert(out.end(), directory.begin(), directory.end());
  put(out, 0x06054b50, 4);
  put(out, 0, 2 + 2);
  put(out, arrays.size(), 2);
  put(out, arrays.size(), 2);
  put(out, directory.size(), 4);
  put(out, directoryOffset, 4);
  put(out, 0, 2);
  std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char *>(out.data()), out.size());
    file.flush();
    if (!file)
      throw RuntimeError("cannot write '" + temporary + "'");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0)
    throw RuntimeError("cannot rename '" + temporary + "' to '" + path + "'");
}

//===- JSONLocations.h - Where the values of a JSON text are ----*- C++ -*-===//
//
// This file declares JSONLocations, a light scan of a JSON text that
// llvm::json::parse has accepted, recording where every value (and every
// object member's key) starts and ends, in document order, and the checks
// every JSON reader (graphs, plans, machine files) runs first
// (scanJSONText). llvm::json keeps no locations, so the graph reader walks
// this tree (llvm::json::parse only
// validates the text and locates syntax errors), and every diagnostic can
// point at the exact line:column of the offending value. The scan also keeps the raw text of
// each value, which tells an integer literal (`1`) from a real (`1.0`).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_SUPPORT_JSONLOCATIONS_H
#define TOFU_SUPPORT_JSONLOCATIONS_H

#include "tofu/Support/LLVM.h"

#include "llvm/ADT/Optional.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tofu {

class DiagnosticEngine;

/// The location tree of one JSON document.
class JSONLocations {
public:
  struct Node {
    enum class Kind : uint8_t { Object, Array, String, Number, Literal };
    Kind kind;
    /// The value's text is [begin, end) of the scanned text.
    uint32_t begin = 0, end = 0;
    /// For members of an object: the key's opening quote and its decoded
    /// text.
    uint32_t keyBegin = 0;
    std::string key;
    /// Members or elements, in document order (node indices).
    std::vector<uint32_t> children;
  };

  /// Scans `text`, which must be a valid JSON document (as accepted by
  /// llvm::json::parse) nested at most `MaxDepth` deep.
  static JSONLocations scan(StringRef text);

  const Node &getRoot() const { return nodes[0]; }
  const Node &getNode(uint32_t i) const { return nodes[i]; }
  /// The member of object `obj` named `key`, or null.
  const Node *getMember(const Node &obj, StringRef key) const;
  /// Element `i` of array `arr`, or null.
  const Node *getElement(const Node &arr, unsigned i) const;
  /// The first object member (in document order) whose key an earlier
  /// member of the same object has, or null. llvm::json keeps one of them
  /// silently; the reader reports it.
  const Node *findDuplicateKey() const;
  /// The value's text.
  StringRef getText(const Node &node) const {
    return text.slice(node.begin, node.end);
  }
  /// A pointer into the scanned text at the value's start / key's start.
  const char *getPointer(const Node &node) const {
    return text.data() + node.begin;
  }
  const char *getKeyPointer(const Node &node) const {
    return text.data() + node.keyBegin;
  }

private:
  uint32_t scanValue(size_t &pos);
  void skipSpace(size_t &pos);
  std::string scanString(size_t &pos);
  /// Moves past the string at `pos` as scanString does, building nothing
  /// (string values are located, not decoded).
  void skipString(size_t &pos);

  StringRef text;
  std::vector<Node> nodes;
};

/// Deepest nesting of arrays and objects the reader accepts.
constexpr unsigned MaxJSONDepth = 64;

/// The offset of the first `[` or `{` nested deeper than `maxDepth` in
/// `text` (outside strings), or None. llvm::json::parse recurses once per
/// level; this check keeps a hostile file from exhausting the stack.
llvm::Optional<size_t> findExcessiveNesting(StringRef text, unsigned maxDepth);

/// The offset of the first place where `text` is not strict JSON
/// (RFC 8259, UTF-8), or None. It builds nothing, so it is the cheap check
/// before a scan; whatever it accepts llvm::json::parse accepts too (the
/// reverse need not hold: llvm::json reads numbers more leniently, so
/// readers ask llvm::json::parse for the message when this finds an
/// error).
llvm::Optional<size_t> findJSONSyntaxError(StringRef text);

/// The first problem found in a JSON text: where it is and what.
struct JSONProblem {
  /// A byte offset into the text.
  size_t offset = 0;
  std::string message;
};

/// The location tree of `text`, checked as every JSON reader (graphs, plans,
/// machine files) checks a document before reading it: nested at most
/// MaxJSONDepth levels (`JSON nested deeper than 64 levels`), valid JSON
/// (llvm::json's message at its byte offset, `invalid JSON: ...`), no
/// duplicate key (`invalid JSON: duplicate key 'k'`, at the second). None
/// with the first problem in `problem`. Once it has accepted a text,
/// llvm::json::parse of it recurses at most MaxJSONDepth levels.
llvm::Optional<JSONLocations> scanJSONText(StringRef text,
                                           JSONProblem &problem);

/// scanJSONText of `text` (a buffer of `diags`' SourceMgr), its problem
/// reported where it is.
llvm::Optional<JSONLocations> scanJSONDocument(StringRef text,
                                               DiagnosticEngine &diags);

/// "LINE:COLUMN" (1-based) of byte `offset` of `text`, for readers that
/// report without a SourceMgr.
std::string getLineAndColumn(StringRef text, size_t offset);

/// `json` (valid JSON text) without insignificant whitespace, with `", "`
/// and `": "` separators: the form in which unknown fields are kept.
std::string compactJSON(StringRef json);

} // namespace tofu

#endif // TOFU_SUPPORT_JSONLOCATIONS_H

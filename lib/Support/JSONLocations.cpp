//===- JSONLocations.cpp - Where the values of a JSON text are ------------===//
//
// This file implements the location scan of a JSON text and the strict
// syntax check that precedes it. The scanned text has already been
// accepted by the check or by llvm::json::parse, so the scan only has to
// find token boundaries: it never reports errors, and it stays in bounds
// even if handed something else. scanJSONText is the one front end of
// every JSON reader (graphs, plans, machine files): depth, syntax,
// duplicate keys.
//
//===----------------------------------------------------------------------===//

#include "tofu/Support/JSONLocations.h"
#include "tofu/Support/Diagnostics.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ConvertUTF.h"

using namespace tofu;

namespace {
bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

unsigned hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return 0;
}

void appendUTF8(std::string &out, uint32_t cp) {
  char buf[4];
  char *ptr = buf;
  if (llvm::ConvertCodePointToUTF8(cp, ptr))
    out.append(buf, ptr);
}
} // namespace

void JSONLocations::skipSpace(size_t &pos) {
  while (pos < text.size() && isSpace(text[pos]))
    ++pos;
}

std::string JSONLocations::scanString(size_t &pos) {
  // At the opening quote; decodes escapes (keys are compared decoded).
  std::string out;
  ++pos;
  while (pos < text.size() && text[pos] != '"') {
    char c = text[pos++];
    if (c != '\\' || pos >= text.size()) {
      out.push_back(c);
      continue;
    }
    char e = text[pos++];
    switch (e) {
    case 'n': out.push_back('\n'); break;
    case 't': out.push_back('\t'); break;
    case 'r': out.push_back('\r'); break;
    case 'b': out.push_back('\b'); break;
    case 'f': out.push_back('\f'); break;
    case 'u': {
      auto hex4 = [&](uint32_t &v) {
        if (pos + 4 > text.size())
          return false;
        v = 0;
        for (int i = 0; i < 4; ++i)
          v = v << 4 | hexValue(text[pos + i]);
        pos += 4;
        return true;
      };
      uint32_t cp;
      if (!hex4(cp))
        break;
      if (cp >= 0xD800 && cp < 0xDC00 && text.substr(pos).startswith("\\u")) {
        size_t save = pos;
        pos += 2;
        uint32_t low;
        if (hex4(low) && low >= 0xDC00 && low < 0xE000)
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        else
          pos = save;
      }
      appendUTF8(out, cp);
      break;
    }
    default: out.push_back(e); break;
    }
  }
  if (pos < text.size())
    ++pos; // closing quote
  return out;
}

void JSONLocations::skipString(size_t &pos) {
  // At the opening quote. The character after a backslash is escaped (it
  // may be a quote); the rest of a \uXXXX escape holds no quote in valid
  // JSON.
  ++pos;
  while (pos < text.size() && text[pos] != '"')
    if (text[pos++] == '\\' && pos < text.size())
      ++pos;
  if (pos < text.size())
    ++pos; // closing quote
}

uint32_t JSONLocations::scanValue(size_t &pos) {
  skipSpace(pos);
  uint32_t index = nodes.size();
  nodes.emplace_back();
  nodes[index].begin = pos;
  if (pos >= text.size()) {
    nodes[index].kind = Node::Kind::Literal;
    nodes[index].end = pos;
    return index;
  }
  char c = text[pos];
  if (c == '{' || c == '[') {
    bool isObject = c == '{';
    nodes[index].kind = isObject ? Node::Kind::Object : Node::Kind::Array;
    char close = isObject ? '}' : ']';
    ++pos;
    skipSpace(pos);
    while (pos < text.size() && text[pos] != close) {
      uint32_t keyBegin = pos;
      std::string key;
      if (isObject) {
        if (text[pos] != '"')
          break;
        key = scanString(pos);
        skipSpace(pos);
        if (pos < text.size() && text[pos] == ':')
          ++pos;
      }
      uint32_t child = scanValue(pos);
      nodes[child].keyBegin = keyBegin;
      nodes[child].key = std::move(key);
      nodes[index].children.push_back(child);
      skipSpace(pos);
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        skipSpace(pos);
      } else {
        break;
      }
    }
    skipSpace(pos);
    if (pos < text.size() && text[pos] == close)
      ++pos;
  } else if (c == '"') {
    nodes[index].kind = Node::Kind::String;
    skipString(pos);
  } else {
    nodes[index].kind = (c == '-' || (c >= '0' && c <= '9'))
                            ? Node::Kind::Number
                            : Node::Kind::Literal;
    while (pos < text.size() && !isSpace(text[pos]) && text[pos] != ',' &&
           text[pos] != ']' && text[pos] != '}')
      ++pos;
  }
  nodes[index].end = pos;
  return index;
}

JSONLocations JSONLocations::scan(StringRef text) {
  JSONLocations locs;
  locs.text = text;
  // Every value but the document follows a '[', ',' or ':' (some of these
  // are inside strings or between members): room for all of them, so that
  // the nodes are never moved while scanning.
  size_t bound = 1;
  for (char c : text)
    bound += c == ',' || c == ':' || c == '[';
  locs.nodes.reserve(bound);
  size_t pos = 0;
  locs.scanValue(pos);
  return locs;
}

const JSONLocations::Node *JSONLocations::getMember(const Node &obj,
                                                   StringRef key) const {
  if (obj.kind != Node::Kind::Object)
    return nullptr;
  for (uint32_t child : obj.children)
    if (nodes[child].key == key)
      return &nodes[child];
  return nullptr;
}

const JSONLocations::Node *JSONLocations::getElement(const Node &arr,
                                                    unsigned i) const {
  if (arr.kind != Node::Kind::Array || i >= arr.children.size())
    return nullptr;
  return &nodes[arr.children[i]];
}

const JSONLocations::Node *JSONLocations::findDuplicateKey() const {
  const Node *first = nullptr;
  for (const Node &node : nodes) {
    if (node.kind != Node::Kind::Object || node.children.size() < 2)
      continue;
    llvm::StringSet<> keys;
    for (uint32_t child : node.children)
      if (!keys.insert(nodes[child].key).second &&
          (!first || nodes[child].keyBegin < first->keyBegin)) {
        first = &nodes[child];
        break;
      }
  }
  return first;
}

llvm::Optional<size_t> tofu::findExcessiveNesting(StringRef text,
                                                   unsigned maxDepth) {
  unsigned depth = 0;
  bool inString = false;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth)
        return i;
    } else if ((c == ']' || c == '}') && depth) {
      --depth;
    }
  }
  return llvm::None;
}

namespace {
/// The strict JSON grammar over a text, one token at a time; the open
/// containers are a stack, so no input recurses.
class SyntaxChecker {
public:
  explicit SyntaxChecker(StringRef text) : text(text), n(text.size()) {}

  /// The offset of the first error, or None.
  llvm::Optional<size_t> check();

private:
  bool at(char c) const { return pos < n && text[pos] == c; }
  bool atDigit() const { return pos < n && text[pos] >= '0' && text[pos] <= '9'; }
  void space() {
    while (pos < n && isSpace(text[pos]))
      ++pos;
  }
  bool digits() {
    if (!atDigit())
      return false;
    while (atDigit())
      ++pos;
    return true;
  }
  bool string();
  bool number();
  bool scalar();

  StringRef text;
  size_t n, pos = 0;
};
} // namespace

bool SyntaxChecker::string() {
  // On an error `pos` is at the offending character.
  ++pos; // the opening quote
  while (pos < n) {
    unsigned char c = text[pos];
    if (c < 0x20)
      return false;
    ++pos;
    if (c == '"')
      return true;
    if (c != '\\')
      continue;
    if (pos >= n)
      return false;
    char e = text[pos];
    if (e == 'u') {
      ++pos;
      for (int i = 0; i != 4; ++i, ++pos)
        if (pos >= n || !llvm::isHexDigit(text[pos]))
          return false;
    } else if (llvm::is_contained(StringRef("\"\\/bfnrt"), e)) {
      ++pos;
    } else {
      return false;
    }
  }
  return false;
}

bool SyntaxChecker::number() {
  if (at('-'))
    ++pos;
  if (at('0'))
    ++pos;
  else if (!digits())
    return false;
  if (at('.')) {
    ++pos;
    if (!digits())
      return false;
  }
  if (at('e') || at('E')) {
    ++pos;
    if (at('+') || at('-'))
      ++pos;
    if (!digits())
      return false;
  }
  return true;
}

bool SyntaxChecker::scalar() {
  char c = text[pos];
  if (c == '"')
    return string();
  if (c == '-' || (c >= '0' && c <= '9'))
    return number();
  for (StringRef literal : {"true", "false", "null"})
    if (text.substr(pos).startswith(literal)) {
      pos += literal.size();
      return true;
    }
  return false;
}

llvm::Optional<size_t> SyntaxChecker::check() {
  size_t bad = 0;
  if (!llvm::json::isUTF8(text, &bad))
    return bad;
  llvm::SmallVector<char, 64> open; // '{' or '[' per open container
  enum { Value, Key, After } state = Value;
  while (true) {
    space();
    if (state == Key) {
      // After '{' or ',' in an object: a key, ':' and a value.
      if (!at('"') || !string())
        return pos;
      space();
      if (!at(':'))
        return pos;
      ++pos;
      state = Value;
      continue;
    }
    if (state == Value) {
      if (pos >= n)
        return pos;
      char c = text[pos];
      if (c == '{' || c == '[') {
        open.push_back(c);
        ++pos;
        space();
        if (at(c == '{' ? '}' : ']')) {
          ++pos;
          open.pop_back();
          state = After;
        } else {
          state = c == '{' ? Key : Value;
        }
        continue;
      }
      if (!scalar())
        return pos;
      state = After;
      continue;
    }
    // After a value: the end of the text, ',' or the container's close.
    if (open.empty())
      return pos == n ? llvm::None : llvm::Optional<size_t>(pos);
    bool inObject = open.back() == '{';
    if (at(',')) {
      ++pos;
      state = inObject ? Key : Value;
    } else if (at(inObject ? '}' : ']')) {
      ++pos;
      open.pop_back();
    } else {
      return pos;
    }
  }
}

llvm::Optional<size_t> tofu::findJSONSyntaxError(StringRef text) {
  return SyntaxChecker(text).check();
}

std::string tofu::compactJSON(StringRef json) {
  std::string out;
  out.reserve(json.size());
  bool inString = false;
  for (size_t i = 0, e = json.size(); i < e; ++i) {
    char c = json[i];
    if (inString) {
      out.push_back(c);
      if (c == '\\' && i + 1 != e)
        out.push_back(json[++i]);
      else if (c == '"')
        inString = false;
      continue;
    }
    if (isSpace(c))
      continue;
    out.push_back(c);
    if (c == '"')
      inString = true;
    else if (c == ',' || c == ':')
      out.push_back(' ');
  }
  return out;
}

/// Turns llvm::json's "[L:C, byte=N]: message" into a located problem.
static JSONProblem getParseProblem(llvm::Error err, StringRef text) {
  std::string message = llvm::toString(std::move(err));
  StringRef msg = message;
  size_t offset = 0;
  size_t bytePos = msg.find("byte=");
  size_t close = msg.find("]: ");
  if (bytePos != StringRef::npos && close != StringRef::npos &&
      !msg.slice(bytePos + 5, close).getAsInteger(10, offset))
    msg = msg.drop_front(close + 3);
  return {std::min(offset, text.size()), ("invalid JSON: " + msg).str()};
}

llvm::Optional<JSONLocations> tofu::scanJSONText(StringRef text,
                                                 JSONProblem &problem) {
  if (auto deep = findExcessiveNesting(text, MaxJSONDepth)) {
    problem = {*deep, "JSON nested deeper than " +
                          std::to_string(MaxJSONDepth) + " levels"};
    return llvm::None;
  }
  // Strict JSON needs no document built; otherwise llvm::json::parse
  // decides (it reads some numbers more leniently) and words the error.
  if (findJSONSyntaxError(text)) {
    llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
    if (!value) {
      problem = getParseProblem(value.takeError(), text);
      return llvm::None;
    }
  }
  JSONLocations locs = JSONLocations::scan(text);
  if (const JSONLocations::Node *dup = locs.findDuplicateKey()) {
    problem = {size_t(dup->keyBegin),
               "invalid JSON: duplicate key '" + dup->key + "'"};
    return llvm::None;
  }
  return locs;
}

llvm::Optional<JSONLocations>
tofu::scanJSONDocument(StringRef text, DiagnosticEngine &diags) {
  JSONProblem problem;
  llvm::Optional<JSONLocations> locs = scanJSONText(text, problem);
  if (!locs)
    diags.error(SMLoc::getFromPointer(text.data() + problem.offset),
                problem.message);
  return locs;
}

std::string tofu::getLineAndColumn(StringRef text, size_t offset) {
  StringRef before = text.take_front(offset);
  size_t lineStart = before.rfind('\n');
  size_t column = lineStart == StringRef::npos ? offset + 1
                                               : offset - lineStart;
  return std::to_string(before.count('\n') + 1) + ":" +
         std::to_string(column);
}

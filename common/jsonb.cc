#include "common/jsonb.h"

#include <algorithm>
#include <charconv>
#include "common/json_string.h"

#include "common/sql_error.h"
#include "common/utf8.h"

namespace stave::jsonb {

Node::Node() = default;
Node::Node(const Node&) = default;
Node::Node(Node&&) noexcept = default;
Node& Node::operator=(const Node&) = default;
Node& Node::operator=(Node&&) noexcept = default;
Node::~Node() = default;
namespace {

// Deeper documents are refused rather than risking the stack, as PostgreSQL's
// max_stack_depth does.
constexpr int kMaxDepth = 1000;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Node ParseDocument() {
    Node node = ParseValue(0);
    SkipSpace();
    if (pos_ != text_.size()) Fail();
    return node;
  }

 private:
  [[noreturn]] void Fail() const {
    throw SqlError(sqlstate::kInvalidTextRepresentation, "invalid input syntax for type json")
        .WithDetail("The input string ended unexpectedly or contains an invalid token.");
  }

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool Consume(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  Node ParseValue(int depth) {
    if (depth > kMaxDepth) {
      throw SqlError("54001", "stack depth limit exceeded");
    }
    SkipSpace();
    if (pos_ >= text_.size()) Fail();
    Node node;
    char c = text_[pos_];
    if (c == '{') {
      ++pos_;
      node.kind = Node::Kind::kObject;
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return node;
      }
      while (true) {
        SkipSpace();
        if (pos_ >= text_.size() || text_[pos_] != '"') Fail();
        std::string key = ParseString();
        SkipSpace();
        if (!Consume(":")) Fail();
        node.members.emplace_back(std::move(key), ParseValue(depth + 1));
        SkipSpace();
        if (Consume(",")) continue;
        if (Consume("}")) break;
        Fail();
      }
      SortMembers(&node.members);
      return node;
    }
    if (c == '[') {
      ++pos_;
      node.kind = Node::Kind::kArray;
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return node;
      }
      while (true) {
        node.elements.push_back(ParseValue(depth + 1));
        SkipSpace();
        if (Consume(",")) continue;
        if (Consume("]")) break;
        Fail();
      }
      return node;
    }
    if (c == '"') {
      node.kind = Node::Kind::kString;
      node.scalar = ParseString();
      return node;
    }
    if (Consume("true") || Consume("false")) {
      node.kind = Node::Kind::kBoolean;
      node.scalar = text_[pos_ - 1] == 'e' && text_[pos_ - 2] == 'u' ? "true" : "false";
      return node;
    }
    if (Consume("null")) return node;
    if (c == '-' || (c >= '0' && c <= '9')) {
      node.kind = Node::Kind::kNumber;
      node.scalar = ParseNumber();
      return node;
    }
    Fail();
  }

  // Keys sorted by (length, bytes), as jsonb stores them; of equal keys the last one wins.
  static void SortMembers(std::vector<std::pair<std::string, Node>>* members) {
    std::stable_sort(members->begin(), members->end(), [](const auto& a, const auto& b) {
      if (a.first.size() != b.first.size()) return a.first.size() < b.first.size();
      return a.first < b.first;
    });
    std::vector<std::pair<std::string, Node>> unique;
    unique.reserve(members->size());
    for (auto& member : *members) {
      if (!unique.empty() && unique.back().first == member.first) {
        unique.back() = std::move(member);
      } else {
        unique.push_back(std::move(member));
      }
    }
    *members = std::move(unique);
  }

  int ParseHex4() {
    if (pos_ + 4 > text_.size()) Fail();
    int value = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_++];
      int digit = (c >= '0' && c <= '9')   ? c - '0'
                  : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                  : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                           : -1;
      if (digit < 0) Fail();
      value = value * 16 + digit;
    }
    return value;
  }

  [[noreturn]] static void FailUnicode(std::string message) {
    throw SqlError(sqlstate::kInvalidTextRepresentation, "invalid input syntax for type json")
        .WithDetail(std::move(message));
  }

  std::string ParseString() {
    ++pos_;  // The opening quote.
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) Fail();
      char c = text_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) Fail();  // Control characters must be escaped.
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) Fail();
      char escape = text_[pos_++];
      switch (escape) {
        case '"':
        case '\\':
        case '/':
          out.push_back(escape);
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u': {
          uint32_t code = static_cast<uint32_t>(ParseHex4());
          if (code >= 0xD800 && code <= 0xDBFF) {
            if (!Consume("\\u"))
              FailUnicode("Unicode high surrogate must not follow a high surrogate.");
            uint32_t low = static_cast<uint32_t>(ParseHex4());
            if (low < 0xDC00 || low > 0xDFFF) {
              FailUnicode("Unicode low surrogate must follow a high surrogate.");
            }
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          } else if (code >= 0xDC00 && code <= 0xDFFF) {
            FailUnicode("Unicode low surrogate must follow a high surrogate.");
          } else if (code == 0) {
            throw SqlError("22P05", "unsupported Unicode escape sequence")
                .WithDetail("\\u0000 cannot be converted to text.");
          }
          AppendUtf8(code, &out);
          break;
        }
        default:
          Fail();
      }
    }
  }

  // A JSON number, rewritten as PostgreSQL's numeric prints it: no exponent, the scale
  // (digits after the point) max(0, fraction digits - exponent).
  std::string ParseNumber() {
    bool negative = Consume("-");
    std::string digits;
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    std::string_view integer = text_.substr(start, pos_ - start);
    if (integer.empty() || (integer.size() > 1 && integer[0] == '0')) Fail();
    digits.append(integer);
    int64_t fraction_digits = 0;
    if (Consume(".")) {
      start = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      if (pos_ == start) Fail();
      digits.append(text_.substr(start, pos_ - start));
      fraction_digits = static_cast<int64_t>(pos_ - start);
    }
    int64_t exponent = 0;
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      bool exponent_negative = false;
      if (Consume("-")) {
        exponent_negative = true;
      } else {
        Consume("+");
      }
      start = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      if (pos_ == start) Fail();
      std::string_view exponent_text = text_.substr(start, pos_ - start);
      auto [end, error] = std::from_chars(exponent_text.data(),
                                          exponent_text.data() + exponent_text.size(), exponent);
      // numeric's own limit on exponents.
      if (error != std::errc() || exponent > 1000) {
        throw SqlError(sqlstate::kNumericValueOutOfRange, "value overflows numeric format");
      }
      if (exponent_negative) exponent = -exponent;
    }
    int64_t shift = exponent - fraction_digits;  // value = digits * 10^shift
    std::string integer_part, fraction_part;
    if (shift >= 0) {
      integer_part = digits + std::string(static_cast<size_t>(shift), '0');
    } else {
      size_t scale = static_cast<size_t>(-shift);
      if (digits.size() <= scale) digits.insert(0, scale - digits.size() + 1, '0');
      integer_part = digits.substr(0, digits.size() - scale);
      fraction_part = digits.substr(digits.size() - scale);
    }
    size_t first = integer_part.find_first_not_of('0');
    integer_part = first == std::string::npos ? "0" : integer_part.substr(first);
    bool zero = integer_part == "0" && fraction_part.find_first_not_of('0') == std::string::npos;
    std::string out = negative && !zero ? "-" : "";
    out += integer_part;
    if (!fraction_part.empty()) out += "." + fraction_part;
    return out;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

void AppendNode(const Node& node, std::string* out) {
  switch (node.kind) {
    case Node::Kind::kNull:
      *out += "null";
      return;
    case Node::Kind::kString:
      AppendJsonString(node.scalar, out);
      return;
    case Node::Kind::kNumber:
    case Node::Kind::kBoolean:
      *out += node.scalar;
      return;
    case Node::Kind::kArray:
      out->push_back('[');
      for (size_t i = 0; i < node.elements.size(); ++i) {
        if (i > 0) *out += ", ";
        AppendNode(node.elements[i], out);
      }
      out->push_back(']');
      return;
    case Node::Kind::kObject:
      out->push_back('{');
      for (size_t i = 0; i < node.members.size(); ++i) {
        if (i > 0) *out += ", ";
        AppendJsonString(node.members[i].first, out);
        *out += ": ";
        AppendNode(node.members[i].second, out);
      }
      out->push_back('}');
      return;
  }
}

const Node* FindMember(const Node& node, std::string_view key) {
  if (node.kind != Node::Kind::kObject) return nullptr;
  for (const auto& [name, value] : node.members) {
    if (name == key) return &value;
  }
  return nullptr;
}

const Node* FindElement(const Node& node, int64_t index) {
  if (node.kind != Node::Kind::kArray) return nullptr;
  auto size = static_cast<int64_t>(node.elements.size());
  if (index < 0) index += size;
  if (index < 0 || index >= size) return nullptr;
  return &node.elements[static_cast<size_t>(index)];
}

// Numbers equal in value compare equal whatever their scale (1.0 and 1).
std::string_view WithoutTrailingZeros(std::string_view number) {
  if (number.find('.') == std::string_view::npos) return number;
  while (number.back() == '0') number.remove_suffix(1);
  if (number.back() == '.') number.remove_suffix(1);
  return number;
}

bool ScalarsEqual(const Node& a, const Node& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == Node::Kind::kNumber) {
    return WithoutTrailingZeros(a.scalar) == WithoutTrailingZeros(b.scalar);
  }
  return a.scalar == b.scalar;
}

bool IsContainer(const Node& node) {
  return node.kind == Node::Kind::kArray || node.kind == Node::Kind::kObject;
}

// PostgreSQL's JsonbDeepContains.
bool DeepContains(const Node& container, const Node& contained) {
  if (container.kind != contained.kind) return false;
  if (container.kind == Node::Kind::kObject) {
    if (contained.members.size() > container.members.size()) return false;
    for (const auto& [key, value] : contained.members) {
      const Node* have = FindMember(container, key);
      if (have == nullptr) return false;
      if (!IsContainer(value)) {
        if (!ScalarsEqual(*have, value)) return false;
      } else if (!DeepContains(*have, value)) {
        return false;
      }
    }
    return true;
  }
  if (container.kind == Node::Kind::kArray) {
    for (const Node& want : contained.elements) {
      bool found = false;
      for (const Node& have : container.elements) {
        if (!IsContainer(want) ? ScalarsEqual(have, want) : DeepContains(have, want)) {
          found = true;
          break;
        }
      }
      if (!found) return false;
    }
    return true;
  }
  return ScalarsEqual(container, contained);
}

}  // namespace

Node Parse(std::string_view text) { return Parser(text).ParseDocument(); }

std::string Format(const Node& node) {
  std::string out;
  AppendNode(node, &out);
  return out;
}

std::string Normalize(std::string_view text) { return Format(Parse(text)); }

std::optional<std::string> Field(std::string_view doc, std::string_view key) {
  Node node = Parse(doc);
  const Node* member = FindMember(node, key);
  if (member == nullptr) return std::nullopt;
  return Format(*member);
}

std::optional<std::string> Element(std::string_view doc, int64_t index) {
  Node node = Parse(doc);
  const Node* element = FindElement(node, index);
  if (element == nullptr) return std::nullopt;
  return Format(*element);
}

std::optional<std::string> Path(std::string_view doc,
                                const std::vector<std::optional<std::string>>& path) {
  Node root = Parse(doc);
  const Node* node = &root;
  for (const auto& step : path) {
    if (!step) return std::nullopt;
    if (node->kind == Node::Kind::kObject) {
      node = FindMember(*node, *step);
    } else if (node->kind == Node::Kind::kArray) {
      int64_t index = 0;
      auto [end, error] = std::from_chars(step->data(), step->data() + step->size(), index);
      if (error != std::errc() || end != step->data() + step->size()) return std::nullopt;
      node = FindElement(*node, index);
    } else {
      return std::nullopt;
    }
    if (node == nullptr) return std::nullopt;
  }
  return Format(*node);
}

std::optional<std::string> AsText(std::string_view doc) {
  if (doc == "null") return std::nullopt;
  if (!doc.empty() && doc.front() == '"') return Parse(doc).scalar;
  return std::string(doc);
}

std::string TypeOf(std::string_view doc) {
  switch (doc.empty() ? 'n' : doc.front()) {
    case '{':
      return "object";
    case '[':
      return "array";
    case '"':
      return "string";
    case 't':
    case 'f':
      return "boolean";
    case 'n':
      return "null";
    default:
      return "number";
  }
}

int64_t ArrayLength(std::string_view doc) {
  Node node = Parse(doc);
  if (node.kind == Node::Kind::kObject) {
    throw SqlError(sqlstate::kInvalidParameterValue, "cannot get array length of a non-array");
  }
  if (node.kind != Node::Kind::kArray) {
    throw SqlError(sqlstate::kInvalidParameterValue, "cannot get array length of a scalar");
  }
  return static_cast<int64_t>(node.elements.size());
}

std::string Concat(std::string_view left, std::string_view right) {
  Node a = Parse(left);
  Node b = Parse(right);
  Node result;
  if (a.kind == Node::Kind::kObject && b.kind == Node::Kind::kObject) {
    result = std::move(a);
    for (auto& member : b.members) result.members.push_back(std::move(member));
    // Parsing the text again sorts the keys and keeps a duplicate key's last value.
    return Normalize(Format(result));
  }
  result.kind = Node::Kind::kArray;
  for (Node* side : {&a, &b}) {
    if (side->kind == Node::Kind::kArray) {
      for (auto& element : side->elements) result.elements.push_back(std::move(element));
    } else {
      result.elements.push_back(std::move(*side));
    }
  }
  return Format(result);
}

bool Contains(std::string_view container, std::string_view contained) {
  Node have = Parse(container);
  Node want = Parse(contained);
  // An array contains a scalar it holds at its top level: '[1, 2]' @> '1'.
  if (have.kind == Node::Kind::kArray && !IsContainer(want)) {
    return std::any_of(have.elements.begin(), have.elements.end(),
                       [&](const Node& element) { return ScalarsEqual(element, want); });
  }
  return DeepContains(have, want);
}

}  // namespace stave::jsonb

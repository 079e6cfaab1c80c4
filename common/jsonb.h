#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

/// PostgreSQL's jsonb: input, its canonical output, and the operations on documents. A jsonb
/// value is held as its canonical text (see data_type.h), the text PostgreSQL prints for it:
/// object keys sorted by length, then bytes, a duplicate key's last value kept, numbers in
/// numeric's plain notation (`1e2` is `100`, `1.50` stays `1.50`), `{"a": 1, "b": [1, 2]}`
/// spacing. Equal documents therefore have equal text (save numbers equal in value but not in
/// scale, such as 1 and 1.0, which PostgreSQL calls equal), so equality, hashing and grouping
/// work on the text.
namespace stave::jsonb {

/// A parsed document.
struct Node {
  // Declared here and defaulted in the .cc: a vector of pairs holding the still incomplete
  // Node cannot be instantiated inside its definition (clang refuses what GCC accepts).
  Node();
  Node(const Node&);
  Node(Node&&) noexcept;
  Node& operator=(const Node&);
  Node& operator=(Node&&) noexcept;
  ~Node();

  enum class Kind { kNull, kString, kNumber, kBoolean, kArray, kObject };
  Kind kind = Kind::kNull;
  /// kString: the unescaped contents; kNumber: the canonical digits; kBoolean: "true"/"false".
  std::string scalar;
  std::vector<Node> elements;                         ///< kArray.
  std::vector<std::pair<std::string, Node>> members;  ///< kObject: in canonical key order.
};

/// Parses JSON text. Throws SqlError 22P02 for invalid JSON, 22P05 for `\u0000`.
Node Parse(std::string_view text);
/// The canonical text of a document.
std::string Format(const Node& node);
/// Parse then Format: the value a text → jsonb cast stores.
std::string Normalize(std::string_view text);

/// `doc -> 'key'`: the member's value, nullopt if `doc` is no object or lacks the key.
std::optional<std::string> Field(std::string_view doc, std::string_view key);
/// `doc -> index`: an array element counted from 0 (negative: from the end), nullopt if
/// `doc` is no array or the index is out of range.
std::optional<std::string> Element(std::string_view doc, int64_t index);
/// `doc #> path`: keys for objects, integers (as text) for arrays; nullopt where a step does
/// not exist or a path element is NULL (nullopt).
std::optional<std::string> Path(std::string_view doc,
                                const std::vector<std::optional<std::string>>& path);
/// The text `->>` and `#>>` give for a canonical document: a string's contents unescaped,
/// nullopt for JSON null, the canonical text otherwise.
std::optional<std::string> AsText(std::string_view doc);
/// jsonb_typeof: "object", "array", "string", "number", "boolean" or "null".
std::string TypeOf(std::string_view doc);
/// jsonb_array_length. Throws SqlError 22023 for a scalar or an object.
int64_t ArrayLength(std::string_view doc);
/// `left || right`, as PostgreSQL: two objects merge (the right one's value wins for a key
/// both have); otherwise both sides become arrays (a scalar or an object is a one-element
/// array) and are concatenated.
std::string Concat(std::string_view left, std::string_view right);
/// `container @> contained`, with PostgreSQL's rules (an array contains a scalar it holds).
bool Contains(std::string_view container, std::string_view contained);

}  // namespace stave::jsonb

#pragma once

#include <string>
#include <string_view>

#include "common/sql_error.h"

namespace stave::parser {

/// One token of a statement read without the grammar (COPY, the cursor statements).
struct SqlToken {
  enum class Kind { kWord, kQuotedName, kString, kNumber, kSymbol, kEnd } kind = Kind::kEnd;
  std::string text;  // Words lower-cased; quoted names and strings without their quotes.
  size_t begin = 0;  // Byte offsets in the statement text.
  size_t end = 0;

  bool IsWord(std::string_view word) const { return kind == Kind::kWord && text == word; }
  bool IsSymbol(std::string_view symbol) const { return kind == Kind::kSymbol && text == symbol; }
  bool IsName() const { return kind == Kind::kWord || kind == Kind::kQuotedName; }
  /// 1-based, as SqlError positions are.
  int position() const { return static_cast<int>(begin) + 1; }
};

/// Splits SQL text into SqlTokens as PostgreSQL's lexer would for the few statements read
/// without the grammar: words, "quoted names", 'strings' (and E'...' with backslash
/// escapes), numbers and one-character symbols; white space and comments are skipped.
class SqlTokenizer {
 public:
  /// `sql` must outlive the tokenizer.
  explicit SqlTokenizer(std::string_view sql) : sql_(sql) {}

  /// The next token; kEnd at the end of the text. Throws SqlError 42601 for an unterminated
  /// quoted name or string.
  SqlToken Next();

  /// Skips to the ')' that closes a '(' just read and returns it. Throws 42601 at the end.
  SqlToken SkipParenthesized();

  std::string_view text() const { return sql_; }
  /// The text of `token` as written.
  std::string_view TextOf(const SqlToken& token) const {
    return sql_.substr(token.begin, token.end - token.begin);
  }
  /// PostgreSQL's "syntax error at or near ..." (or "at end of input") for `token`.
  SqlError SyntaxError(const SqlToken& token) const;

 private:
  std::string Quoted(char quote, bool backslashes);
  void SkipSpaceAndComments();

  std::string_view sql_;
  size_t pos_ = 0;
};

}  // namespace stave::parser

#include "parser/sql_tokenizer.h"

#include <fmt/format.h>

#include <cctype>

namespace stave::parser {
namespace {

bool IsWordStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

bool IsWordPart(char c) {
  return IsWordStart(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '$';
}

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

}  // namespace

SqlToken SqlTokenizer::Next() {
  SkipSpaceAndComments();
  SqlToken token;
  token.begin = pos_;
  if (pos_ >= sql_.size()) {
    token.kind = SqlToken::Kind::kEnd;
  } else if (char c = sql_[pos_]; IsWordStart(c)) {
    token.kind = SqlToken::Kind::kWord;
    while (pos_ < sql_.size() && IsWordPart(sql_[pos_])) ++pos_;
    token.text = Lower(sql_.substr(token.begin, pos_ - token.begin));
    if (token.text == "e" && pos_ < sql_.size() && sql_[pos_] == '\'') {
      token.kind = SqlToken::Kind::kString;
      token.text = Quoted('\'', true);
    }
  } else if (c == '"' || c == '\'') {
    token.kind = c == '"' ? SqlToken::Kind::kQuotedName : SqlToken::Kind::kString;
    token.text = Quoted(c, false);
  } else if (std::isdigit(static_cast<unsigned char>(c))) {
    token.kind = SqlToken::Kind::kNumber;
    while (pos_ < sql_.size() &&
           (std::isalnum(static_cast<unsigned char>(sql_[pos_])) || sql_[pos_] == '.')) {
      ++pos_;
    }
    token.text = std::string(sql_.substr(token.begin, pos_ - token.begin));
  } else {
    token.kind = SqlToken::Kind::kSymbol;
    token.text = std::string(1, c);
    ++pos_;
  }
  token.end = pos_;
  return token;
}

SqlToken SqlTokenizer::SkipParenthesized() {
  int depth = 1;
  while (true) {
    SqlToken token = Next();
    if (token.kind == SqlToken::Kind::kEnd) throw SyntaxError(token);
    if (token.IsSymbol("(")) ++depth;
    if (token.IsSymbol(")") && --depth == 0) return token;
  }
}

SqlError SqlTokenizer::SyntaxError(const SqlToken& token) const {
  if (token.kind == SqlToken::Kind::kEnd) {
    return SqlError(sqlstate::kSyntaxError, "syntax error at end of input", token.position());
  }
  return SqlError(sqlstate::kSyntaxError,
                  fmt::format("syntax error at or near \"{}\"", TextOf(token)), token.position());
}

std::string SqlTokenizer::Quoted(char quote, bool backslashes) {
  size_t begin = pos_;
  ++pos_;
  std::string text;
  while (true) {
    if (pos_ >= sql_.size()) {
      throw SqlError(sqlstate::kSyntaxError,
                     quote == '"' ? "unterminated quoted identifier" : "unterminated quoted string",
                     static_cast<int>(begin) + 1);
    }
    char c = sql_[pos_++];
    if (c == quote) {
      if (pos_ < sql_.size() && sql_[pos_] == quote) {
        text += quote;
        ++pos_;
        continue;
      }
      return text;
    }
    if (backslashes && c == '\\' && pos_ < sql_.size()) {
      char escaped = sql_[pos_++];
      switch (escaped) {
        case 't':
          text += '\t';
          break;
        case 'n':
          text += '\n';
          break;
        case 'r':
          text += '\r';
          break;
        case 'b':
          text += '\b';
          break;
        case 'f':
          text += '\f';
          break;
        default:
          text += escaped;
          break;
      }
      continue;
    }
    text += c;
  }
}

void SqlTokenizer::SkipSpaceAndComments() {
  while (pos_ < sql_.size()) {
    if (std::isspace(static_cast<unsigned char>(sql_[pos_]))) {
      ++pos_;
    } else if (sql_.substr(pos_, 2) == "--") {
      while (pos_ < sql_.size() && sql_[pos_] != '\n') ++pos_;
    } else if (sql_.substr(pos_, 2) == "/*") {
      size_t close = sql_.find("*/", pos_ + 2);
      pos_ = close == std::string_view::npos ? sql_.size() : close + 2;
    } else {
      return;
    }
  }
}

}  // namespace stave::parser

#include "parser/copy_statement.h"

#include <fmt/format.h>

#include <cctype>
#include <vector>

#include "common/sql_error.h"
#include "parser/sql_tokenizer.h"

namespace stave::parser {
namespace {

using Token = SqlToken;

class CopyParser {
 public:
  explicit CopyParser(std::string_view sql) : sql_(sql), tokens_(sql) {}

  std::optional<CopyStatement> Parse() {
    Token first = Next();
    if (first.kind != Token::Kind::kWord || first.text != "copy") return std::nullopt;
    CopyStatement copy;
    Token token = Next();
    if (IsSymbol(token, "(")) {
      size_t begin = token.end;
      Token close = tokens_.SkipParenthesized();
      copy.query = std::string(sql_.substr(begin, close.begin - begin));
      copy.query_position = static_cast<int>(begin) + 1;
      token = Next();
    } else if (token.IsName()) {
      size_t name_begin = token.begin;
      size_t name_end = token.end;
      copy.table.push_back(token.text);
      copy.table_position = Position(token);
      token = Next();
      while (IsSymbol(token, ".")) {
        Token part = Next();
        if (!part.IsName()) throw SyntaxError(part);
        copy.table.push_back(part.text);
        name_end = part.end;
        token = Next();
      }
      std::string columns = "*";
      if (IsSymbol(token, "(")) {
        size_t begin = token.end;
        Token close = ParseColumnList(&copy);
        columns = std::string(sql_.substr(begin, close.begin - begin));
        token = Next();
      }
      std::string select = "SELECT " + columns + " FROM ";
      copy.query_position = static_cast<int>(name_begin) + 1 - static_cast<int>(select.size());
      copy.query = select + std::string(sql_.substr(name_begin, name_end - name_begin));
    } else {
      throw SyntaxError(token);
    }
    if (IsWord(token, "from") && !copy.table.empty()) {
      copy.from_stdin = true;
      copy.query.clear();
    } else if (!IsWord(token, "to")) {
      throw SyntaxError(token);
    }
    token = Next();
    if (token.kind == Token::Kind::kString || IsWord(token, "program")) {
      throw Unsupported(fmt::format("COPY {} a file or a program is not supported",
                                    copy.from_stdin ? "from" : "to"),
                        token)
          .WithHint(copy.from_stdin ? "Use COPY ... FROM STDIN, as psql's \\copy does."
                                    : "Use COPY ... TO STDOUT, as psql's \\copy does.");
    }
    if (!IsWord(token, copy.from_stdin ? "stdin" : "stdout")) throw SyntaxError(token);
    token = Next();
    if (IsWord(token, "with")) token = Next();
    if (IsSymbol(token, "(")) {
      ParseOptionList(&copy.format);
      token = Next();
    } else {
      token = ParseLegacyOptions(token, &copy.format);
    }
    if (IsSymbol(token, ";")) {
      token = Next();
      if (token.kind != Token::Kind::kEnd) {
        throw Unsupported("COPY must be the only statement of its query string", token);
      }
    }
    if (token.kind != Token::Kind::kEnd) throw SyntaxError(token);
    Check(&copy.format);
    return copy;
  }

 private:
  // The column list after the table's name, up to its ')', which it returns.
  Token ParseColumnList(CopyStatement* copy) {
    while (true) {
      Token column = Next();
      if (!column.IsName()) throw SyntaxError(column);
      copy->columns.push_back(column.text);
      copy->column_positions.push_back(Position(column));
      Token next = Next();
      if (IsSymbol(next, ")")) return next;
      if (!IsSymbol(next, ",")) throw SyntaxError(next);
    }
  }

  // PostgreSQL's option list: name [value] [, ...].
  void ParseOptionList(CopyFormat* format) {
    while (true) {
      Token name = Next();
      if (name.kind != Token::Kind::kWord) throw SyntaxError(name);
      Token value = Next();
      bool has_value = !IsSymbol(value, ",") && !IsSymbol(value, ")");
      if (has_value) {
        if (IsSymbol(value, "(") || value.kind == Token::Kind::kSymbol ||
            value.kind == Token::Kind::kEnd) {
          throw SyntaxError(value);
        }
        Option(name, &value, format);
        value = Next();
      } else {
        Option(name, nullptr, format);
      }
      if (IsSymbol(value, ")")) return;
      if (!IsSymbol(value, ",")) throw SyntaxError(value);
    }
  }

  void Option(const Token& name, const Token* value, CopyFormat* format) {
    auto require_value = [&] {
      if (value == nullptr) {
        throw SqlError(sqlstate::kSyntaxError, fmt::format("{} requires a parameter", name.text),
                       Position(name));
      }
      return value->text;
    };
    if (name.text == "format") {
      std::string kind = Lower(require_value());
      if (kind == "binary") throw Unsupported("COPY BINARY is not supported", *value);
      if (kind != "text" && kind != "csv") {
        throw SqlError(sqlstate::kInvalidParameterValue,
                       fmt::format("COPY format \"{}\" not recognized", value->text),
                       Position(*value));
      }
      format->csv = kind == "csv";
    } else if (name.text == "header") {
      std::string flag = value ? Lower(value->text) : "true";
      if (flag == "true" || flag == "on" || flag == "1") {
        format->header = true;
      } else if (flag == "false" || flag == "off" || flag == "0") {
        format->header = false;
      } else {
        throw SqlError(sqlstate::kSyntaxError,
                       fmt::format("{} requires a Boolean value", name.text), Position(*value));
      }
    } else if (name.text == "delimiter") {
      delimiter_ = require_value();
    } else if (name.text == "null") {
      null_string_ = require_value();
    } else if (name.text == "quote") {
      quote_ = require_value();
    } else if (name.text == "escape") {
      escape_ = require_value();
    } else if (name.text == "encoding") {
      std::string encoding = Lower(require_value());
      if (encoding != "utf8" && encoding != "utf-8" && encoding != "unicode") {
        throw Unsupported(
            fmt::format("COPY encoding \"{}\" is not supported; Stave speaks UTF8", value->text),
            *value);
      }
    } else {
      throw SqlError(sqlstate::kSyntaxError, fmt::format("option \"{}\" not recognized", name.text),
                     Position(name));
    }
  }

  // The options before PostgreSQL 9.0, which psql's \copy passes on as written:
  // [BINARY] [DELIMITER [AS] 'c'] [NULL [AS] 's'] [CSV [HEADER] [QUOTE [AS] 'q'] [ESCAPE [AS]
  // 'e']].
  Token ParseLegacyOptions(Token token, CopyFormat* format) {
    while (token.kind == Token::Kind::kWord) {
      auto string_argument = [&] {
        Token value = Next();
        if (IsWord(value, "as")) value = Next();
        if (value.kind != Token::Kind::kString) throw SyntaxError(value);
        return value.text;
      };
      if (token.text == "binary") {
        throw Unsupported("COPY BINARY is not supported", token);
      } else if (token.text == "csv") {
        format->csv = true;
      } else if (token.text == "header") {
        format->header = true;
      } else if (token.text == "delimiter") {
        delimiter_ = string_argument();
      } else if (token.text == "null") {
        null_string_ = string_argument();
      } else if (token.text == "quote") {
        quote_ = string_argument();
      } else if (token.text == "escape") {
        escape_ = string_argument();
      } else {
        throw SyntaxError(token);
      }
      token = Next();
    }
    return token;
  }

  // PostgreSQL's checks of the options together (ProcessCopyOptions).
  void Check(CopyFormat* format) {
    auto unsupported = [](const std::string& message) {
      return SqlError(sqlstate::kFeatureNotSupported, message);
    };
    if (format->csv) {
      format->delimiter = ',';
      format->null_string = "";
    }
    if (delimiter_) {
      if (delimiter_->size() != 1) {
        throw unsupported("COPY delimiter must be a single one-byte character");
      }
      format->delimiter = (*delimiter_)[0];
    }
    if (format->delimiter == '\n' || format->delimiter == '\r') {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "COPY delimiter cannot be newline or carriage return");
    }
    if (null_string_) format->null_string = *null_string_;
    if (format->null_string.find_first_of("\r\n") != std::string::npos) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "COPY null representation cannot use newline or carriage return");
    }
    if (!format->csv &&
        std::string_view("\\.abcdefghijklmnopqrstuvwxyz0123456789").find(format->delimiter) !=
            std::string_view::npos) {
      throw unsupported(fmt::format("COPY delimiter cannot be \"{}\"", format->delimiter));
    }
    if (quote_ && !format->csv) throw unsupported("COPY quote available only in CSV mode");
    if (escape_ && !format->csv) throw unsupported("COPY escape available only in CSV mode");
    if (quote_) {
      if (quote_->size() != 1) throw unsupported("COPY quote must be a single one-byte character");
      format->quote = (*quote_)[0];
    }
    format->escape = format->quote;
    if (escape_) {
      if (escape_->size() != 1) {
        throw unsupported("COPY escape must be a single one-byte character");
      }
      format->escape = (*escape_)[0];
    }
    if (format->csv && format->delimiter == format->quote) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "COPY delimiter and quote must be different");
    }
    if (format->csv && format->null_string.find(format->delimiter) != std::string::npos) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "COPY delimiter must not appear in the NULL specification");
    }
  }

  static std::string Lower(std::string_view text) {
    std::string lower(text);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lower;
  }
  static int Position(const Token& token) { return token.position(); }
  static bool IsSymbol(const Token& token, std::string_view symbol) {
    return token.IsSymbol(symbol);
  }
  static bool IsWord(const Token& token, std::string_view word) { return token.IsWord(word); }
  SqlError SyntaxError(const Token& token) const { return tokens_.SyntaxError(token); }
  Token Next() { return tokens_.Next(); }
  static SqlError Unsupported(const std::string& message, const Token& token) {
    return SqlError(sqlstate::kFeatureNotSupported, message, Position(token));
  }

  std::string_view sql_;
  SqlTokenizer tokens_;
  std::optional<std::string> delimiter_;
  std::optional<std::string> null_string_;
  std::optional<std::string> quote_;
  std::optional<std::string> escape_;
};

}  // namespace

std::optional<CopyStatement> ParseCopy(std::string_view sql) { return CopyParser(sql).Parse(); }

}  // namespace stave::parser

#include "parser/cursor_statement.h"

#include <charconv>

#include "common/sql_error.h"
#include "parser/sql_tokenizer.h"

namespace stave::parser {
namespace {

class CursorParser {
 public:
  explicit CursorParser(std::string_view sql) : tokens_(sql) {}

  std::optional<CursorStatement> Parse() {
    SqlToken first = tokens_.Next();
    CursorStatement statement;
    if (first.IsWord("declare")) {
      statement.kind = CursorStatement::Kind::kDeclare;
      ParseDeclare(&statement);
    } else if (first.IsWord("fetch") || first.IsWord("move")) {
      statement.kind =
          first.IsWord("fetch") ? CursorStatement::Kind::kFetch : CursorStatement::Kind::kMove;
      ParseFetch(&statement);
    } else if (first.IsWord("close")) {
      statement.kind = CursorStatement::Kind::kClose;
      SqlToken name = tokens_.Next();
      if (!name.IsWord("all")) SetName(name, &statement);
      ExpectEnd(tokens_.Next());
    } else {
      return std::nullopt;
    }
    return statement;
  }

 private:
  // DECLARE name [BINARY] [ASENSITIVE | INSENSITIVE] [[NO] SCROLL] CURSOR
  //   [{WITH | WITHOUT} HOLD] FOR query
  void ParseDeclare(CursorStatement* statement) {
    SetName(tokens_.Next(), statement);
    SqlToken token = tokens_.Next();
    while (!token.IsWord("cursor")) {
      if (token.IsWord("binary")) {
        throw SqlError(sqlstate::kFeatureNotSupported, "binary cursors are not supported",
                       token.position())
            .WithHint("Declare the cursor without BINARY; FETCH returns text.");
      }
      if (token.IsWord("no")) {
        token = tokens_.Next();
        if (!token.IsWord("scroll")) throw tokens_.SyntaxError(token);
        statement->scroll = false;
      } else if (token.IsWord("scroll")) {
        statement->scroll = true;
      } else if (!token.IsWord("insensitive") && !token.IsWord("asensitive")) {
        throw tokens_.SyntaxError(token);
      }
      token = tokens_.Next();
    }
    token = tokens_.Next();
    if (token.IsWord("with") || token.IsWord("without")) {
      statement->hold = token.IsWord("with");
      token = tokens_.Next();
      if (!token.IsWord("hold")) throw tokens_.SyntaxError(token);
      token = tokens_.Next();
    }
    if (!token.IsWord("for")) throw tokens_.SyntaxError(token);
    SqlToken query = tokens_.Next();
    if (query.kind == SqlToken::Kind::kEnd) throw tokens_.SyntaxError(query);
    statement->query = std::string(tokens_.text().substr(query.begin));
    statement->query_position = query.position();
  }

  // FETCH [NEXT | PRIOR | FIRST | LAST | ABSOLUTE n | RELATIVE n | n | ALL | FORWARD [n | ALL]
  //   | BACKWARD [n | ALL]] [FROM | IN] name, n signed.
  void ParseFetch(CursorStatement* statement) {
    using Direction = CursorStatement::Direction;
    SqlToken token = tokens_.Next();
    auto set = [&](Direction direction, std::optional<int64_t> count) {
      statement->direction = direction;
      statement->count = count;
      token = tokens_.Next();
    };
    if (token.IsWord("next")) {
      set(Direction::kForward, 1);
    } else if (token.IsWord("prior")) {
      set(Direction::kBackward, 1);
    } else if (token.IsWord("first")) {
      set(Direction::kAbsolute, 1);
    } else if (token.IsWord("last")) {
      set(Direction::kAbsolute, -1);
    } else if (token.IsWord("all")) {
      set(Direction::kForward, std::nullopt);
    } else if (token.IsWord("absolute") || token.IsWord("relative")) {
      Direction direction = token.IsWord("absolute") ? Direction::kAbsolute : Direction::kRelative;
      token = tokens_.Next();
      set(direction, SignedCount(&token));
    } else if (token.IsWord("forward") || token.IsWord("backward")) {
      Direction direction = token.IsWord("forward") ? Direction::kForward : Direction::kBackward;
      set(direction, 1);
      if (token.IsWord("all")) {
        set(direction, std::nullopt);
      } else if (token.kind == SqlToken::Kind::kNumber || token.IsSymbol("-") ||
                 token.IsSymbol("+")) {
        set(direction, SignedCount(&token));
      }
    } else if (token.kind == SqlToken::Kind::kNumber || token.IsSymbol("-") ||
               token.IsSymbol("+")) {
      set(Direction::kForward, SignedCount(&token));
    }
    // FORWARD -n is BACKWARD n and the other way round, as in PostgreSQL.
    if ((statement->direction == Direction::kForward ||
         statement->direction == Direction::kBackward) &&
        statement->count && *statement->count < 0) {
      statement->direction =
          statement->direction == Direction::kForward ? Direction::kBackward : Direction::kForward;
      statement->count = -*statement->count;
    }
    if (token.IsWord("from") || token.IsWord("in")) token = tokens_.Next();
    SetName(token, statement);
    ExpectEnd(tokens_.Next());
  }

  // A count with an optional sign, starting at `*token` (which is left on its last part).
  int64_t SignedCount(SqlToken* token) {
    bool negative = false;
    if (token->IsSymbol("-") || token->IsSymbol("+")) {
      negative = token->IsSymbol("-");
      *token = tokens_.Next();
    }
    if (token->kind != SqlToken::Kind::kNumber) throw tokens_.SyntaxError(*token);
    int64_t count = Count(*token);
    return negative ? -count : count;
  }

  int64_t Count(const SqlToken& token) {
    int64_t count = 0;
    auto [end, error] =
        std::from_chars(token.text.data(), token.text.data() + token.text.size(), count);
    if (error != std::errc() || end != token.text.data() + token.text.size()) {
      throw tokens_.SyntaxError(token);
    }
    return count;
  }

  void SetName(const SqlToken& token, CursorStatement* statement) {
    if (!token.IsName()) throw tokens_.SyntaxError(token);
    statement->name = token.text;
    statement->name_position = token.position();
  }

  void ExpectEnd(SqlToken token) {
    if (token.IsSymbol(";")) token = tokens_.Next();
    if (token.kind != SqlToken::Kind::kEnd) throw tokens_.SyntaxError(token);
  }

  SqlTokenizer tokens_;
};

}  // namespace

std::optional<CursorStatement> ParseCursorStatement(std::string_view sql) {
  return CursorParser(sql).Parse();
}

}  // namespace stave::parser

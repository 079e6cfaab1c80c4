#include "parser/parser.h"

#include <antlr4-runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "StaveSqlLexer.h"
#include "StaveSqlParser.h"
#include "common/sql_error.h"
#include "common/utf8.h"
#include "parser/ast_builder.h"
#include "parser/stack_limit.h"

namespace stave::parser {
namespace {

using grammar::StaveSqlLexer;
using grammar::StaveSqlParser;

// PostgreSQL's SQLSTATE for bytes that are not valid in the encoding
// (character_not_in_repertoire).
constexpr std::string_view kOutOfMemory = "53200";

// How much stack one parse may use: about a thousand levels of parentheses in an optimized
// build, far beyond any real query, and well inside the 8 MiB default thread stack.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// Sanitizers make every frame several times larger; connection threads have 8 MiB stacks.
constexpr size_t kMaxParseStackBytes = 4 * 1024 * 1024;
#else
constexpr size_t kMaxParseStackBytes = 1024 * 1024;
#endif

// The ANTLR 4.9 runtime shares its prediction caches between parser instances without
// synchronization (antlr/antlr4 issue 3332), so only one parse may run at a time.
std::mutex& ParseMutex() {
  static std::mutex mutex;
  return mutex;
}

// Turns the first syntax error into a SqlError worded and positioned as PostgreSQL does. It
// throws from inside the ANTLR parser, which unwinds without recovering: there is never a
// second error to report.
class ThrowingErrorListener : public antlr4::BaseErrorListener {
 public:
  explicit ThrowingErrorListener(size_t input_length) : input_length_(input_length) {}

  void syntaxError(antlr4::Recognizer* recognizer, antlr4::Token* offending_symbol, size_t /*line*/,
                   size_t /*char_position_in_line*/, const std::string& /*msg*/,
                   std::exception_ptr /*e*/) override {
    if (offending_symbol == nullptr) {
      // A lexer error. The grammar's ERROR_CHARACTER rule matches anything, so this should
      // not happen; it is handled anyway so that no input can escape as another error.
      auto* lexer = dynamic_cast<antlr4::Lexer*>(recognizer);
      size_t start = lexer != nullptr ? lexer->tokenStartCharIndex : input_length_;
      if (start >= input_length_) {
        throw SqlError(sqlstate::kSyntaxError, "syntax error at end of input", EndPosition());
      }
      std::string text = lexer->getInputStream()->getText(antlr4::misc::Interval(start, start));
      throw SqlError(sqlstate::kSyntaxError, "syntax error at or near \"" + text + "\"",
                     static_cast<int>(start) + 1);
    }
    if (offending_symbol->getType() == antlr4::Token::EOF) {
      throw SqlError(sqlstate::kSyntaxError, "syntax error at end of input", EndPosition());
    }
    // ANTLRInputStream indexes code points, which is what PostgreSQL counts too.
    int position = static_cast<int>(offending_symbol->getStartIndex()) + 1;
    std::string near = " at or near \"" + offending_symbol->getText() + "\"";
    switch (offending_symbol->getType()) {
      case StaveSqlLexer::UNTERMINATED_STRING:
        throw SqlError(sqlstate::kSyntaxError, "unterminated quoted string" + near, position);
      case StaveSqlLexer::UNTERMINATED_QUOTED_IDENTIFIER:
        throw SqlError(sqlstate::kSyntaxError, "unterminated quoted identifier" + near, position);
      case StaveSqlLexer::UNTERMINATED_BLOCK_COMMENT:
        throw SqlError(sqlstate::kSyntaxError, "unterminated /* comment" + near, position);
      default:
        throw SqlError(sqlstate::kSyntaxError, "syntax error" + near, position);
    }
  }

 private:
  int EndPosition() const { return static_cast<int>(input_length_) + 1; }

  size_t input_length_;  // In code points.
};

// Checks the stack on every rule the parser enters; see StackLimit.
class StackCheckingListener : public antlr4::tree::ParseTreeListener {
 public:
  explicit StackCheckingListener(const StackLimit& limit) : limit_(limit) {}

  void enterEveryRule(antlr4::ParserRuleContext* /*ctx*/) override { limit_.Check(); }
  void exitEveryRule(antlr4::ParserRuleContext* /*ctx*/) override {}
  void visitTerminal(antlr4::tree::TerminalNode* /*node*/) override {}
  void visitErrorNode(antlr4::tree::ErrorNode* /*node*/) override {}

 private:
  const StackLimit& limit_;
};

// How deep parentheses may nest. ANTLR's adaptive prediction recurses through every open
// parenthesis when it must tell `( query )` from `( expression )`, and that recursion is not
// a rule entry the StackCheckingListener sees; bounding the nesting in the tokens first keeps
// it far from the stack's end (and from its quadratic time). Real queries nest a few levels.
constexpr int kMaxParenthesisDepth = 200;

void RefuseDeepParentheses(antlr4::CommonTokenStream* tokens) {
  tokens->fill();
  int depth = 0;
  for (antlr4::Token* token : tokens->getTokens()) {
    if (token->getType() == StaveSqlLexer::LPAREN) {
      if (++depth > kMaxParenthesisDepth) {
        throw SqlError(std::string(StackLimit::kStatementTooComplex), "stack depth limit exceeded",
                       static_cast<int>(token->getStartIndex()) + 1)
            .WithHint(
                fmt::format("Parentheses nest at most {} levels deep.", kMaxParenthesisDepth));
      }
    } else if (token->getType() == StaveSqlLexer::RPAREN) {
      depth = std::max(depth - 1, 0);
    }
  }
}

std::vector<StatementPtr> ParseLocked(std::string_view sql) {
  StackLimit stack_limit(kMaxParseStackBytes);
  // Note that ANTLRInputStream drops a leading UTF-8 byte order mark, so positions then count
  // from the character after it.
  antlr4::ANTLRInputStream input(sql.data(), sql.size());
  ThrowingErrorListener error_listener(input.size());

  StaveSqlLexer lexer(&input);
  lexer.removeErrorListeners();  // The default one prints to stderr.
  lexer.addErrorListener(&error_listener);
  antlr4::CommonTokenStream tokens(&lexer);
  RefuseDeepParentheses(&tokens);

  StaveSqlParser parser(&tokens);
  parser.removeErrorListeners();
  StackCheckingListener stack_checker(stack_limit);
  parser.addParseListener(&stack_checker);

  // Two-stage parsing, as the ANTLR documentation recommends: the fast SLL prediction suffices
  // for almost every input, and only when it fails (a real syntax error, or a rare input that
  // needs full context) is the input parsed again with full LL prediction, which then also
  // reports the error.
  auto* interpreter = parser.getInterpreter<antlr4::atn::ParserATNSimulator>();
  interpreter->setPredictionMode(antlr4::atn::PredictionMode::SLL);
  parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
  StaveSqlParser::MultiStatementContext* tree = nullptr;
  try {
    tree = parser.multiStatement();
  } catch (const antlr4::ParseCancellationException&) {
    parser.reset();  // Also rewinds the token stream.
    interpreter->setPredictionMode(antlr4::atn::PredictionMode::LL);
    parser.setErrorHandler(std::make_shared<antlr4::DefaultErrorStrategy>());
    parser.addErrorListener(&error_listener);
    tree = parser.multiStatement();
  }
  if (parser.getNumberOfSyntaxErrors() > 0) {
    // The listener throws on the first error, so the parser never gets to recover.
    throw SqlError(sqlstate::kInternalError, "parser recovered from a syntax error");
  }
  return BuildAst(tree, &input, stack_limit);
}

}  // namespace

std::vector<StatementPtr> Parse(std::string_view sql) {
  // The ANTLR input stream decodes UTF-8 with std::codecvt, which throws an unhelpful
  // std::range_error on bad input; checking first gives PostgreSQL's error instead.
  CheckUtf8(sql);
  std::lock_guard<std::mutex> lock(ParseMutex());
  // No input may end in anything but a SqlError: the ANTLR runtime's own exceptions (and
  // whatever else a runtime bug might throw) become internal errors.
  try {
    return ParseLocked(sql);
  } catch (const SqlError&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw SqlError(kOutOfMemory, "out of memory while parsing");
  } catch (const std::exception& e) {
    throw SqlError(sqlstate::kInternalError, std::string("parser failure: ") + e.what());
  } catch (...) {
    throw SqlError(sqlstate::kInternalError, "parser failure");
  }
}

}  // namespace stave::parser

#pragma once

#include <vector>

#include "StaveSqlParser.h"
#include "parser/ast.h"
#include "parser/stack_limit.h"

namespace stave::parser {

/// Turns the parse tree of a whole query string into AST statements, one per non-empty
/// statement. `input` is the character stream the tree was parsed from: statement texts are cut
/// from it. Throws SqlError for the few errors the grammar cannot express (an empty quoted
/// identifier, conflicting column constraints, a second primary key or a column named twice in
/// one) and when the tree is nested too deeply for the stack (`stack_limit`). Internal to
/// parser/.
std::vector<StatementPtr> BuildAst(grammar::StaveSqlParser::MultiStatementContext* tree,
                                   antlr4::CharStream* input, const StackLimit& stack_limit);

}  // namespace stave::parser

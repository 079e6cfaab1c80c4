// libFuzzer target: the SQL parser and the planner. The input is a query string as a client
// sends it (several statements, any bytes); every SELECT in it, and the query of every
// CREATE MATERIALIZED VIEW, INSERT ... SELECT and EXPLAIN, is bound against a small catalog
// (a stream with a watermark, a keyed table, a keyless table, a view and a system table) for
// an ad-hoc query and for a view, and its plan is printed as EXPLAIN prints it.
//
// Properties: no crash, no sanitizer report, no leak; errors are SqlError (a SQLSTATE for
// the user) and nothing else: any other exception escapes and libFuzzer reports it.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "common/sql_error.h"
#include "parser/parser.h"
#include "planner/catalog.h"
#include "planner/plan_printer.h"
#include "planner/query_binder.h"
#include "planner/view_row_key.h"

namespace stave::planner {
namespace {

const Catalog& FuzzCatalog() {
  static const Catalog* catalog = [] {
    auto* catalog = new Catalog();
    auto stream = std::make_shared<CatalogObject>();
    stream->id = 1;
    stream->type = ObjectType::kStream;
    stream->name = "s";
    stream->connector = "datagen";
    stream->columns = {{"id", TypeId::kInt64},
                       {"name", TypeId::kVarchar},
                       {"price", TypeId::kFloat64},
                       {"ts", TypeId::kTimestamp},
                       {"tags", DataType::ArrayOf(TypeId::kVarchar)},
                       {"doc", TypeId::kJsonb}};
    stream->watermark_column = 3;
    catalog->Add(stream);
    auto table = std::make_shared<CatalogObject>();
    table->id = 2;
    table->type = ObjectType::kTable;
    table->name = "t";
    table->columns = {{"k", TypeId::kInt32, true},
                      {"amount", DataType::Numeric(10, 2)},
                      {"day", TypeId::kDate},
                      {"data", TypeId::kBytea}};
    table->primary_key = {0};
    catalog->Add(table);
    auto log = std::make_shared<CatalogObject>();
    log->id = 3;
    log->type = ObjectType::kTable;
    log->name = "log";
    log->columns = {{"k", TypeId::kInt32}, {"at", TypeId::kTimestampTz}, {"n", TypeId::kInt16}};
    catalog->Add(log);
    auto view = std::make_shared<CatalogObject>();
    view->id = 4;
    view->type = ObjectType::kMaterializedView;
    view->name = "v";
    view->columns = {{"parity", TypeId::kInt64}, {"count", TypeId::kInt64}};
    view->depends_on = {1};
    catalog->Add(view);
    SystemTable system;
    system.name = "checkpoints";
    system.columns = {{"epoch", TypeId::kInt64}, {"at", TypeId::kTimestampTz}};
    system.rows = [] { return std::vector<std::vector<Value>>{}; };
    catalog->RegisterSystemTable(std::move(system));
    return catalog;
  }();
  return *catalog;
}

void Plan(const parser::SelectStatement& select) {
  for (QueryPurpose purpose : {QueryPurpose::kBatch, QueryPurpose::kMaterializedView}) {
    try {
      BoundQuery query = BindQuery(select, FuzzCatalog(), purpose);
      ExplainPlan(*query.root);
      if (purpose == QueryPurpose::kMaterializedView) VisibleRowKeyColumns(query);
    } catch (const SqlError&) {
      // A user error with its SQLSTATE: the expected outcome of most inputs.
    }
  }
}

void PlanStatement(const parser::Statement& statement) {
  switch (statement.kind) {
    case parser::StatementKind::kSelect:
      Plan(static_cast<const parser::SelectStatement&>(statement));
      break;
    case parser::StatementKind::kCreateMaterializedView:
      Plan(*static_cast<const parser::CreateMaterializedViewStatement&>(statement).query);
      break;
    case parser::StatementKind::kInsert: {
      const auto& insert = static_cast<const parser::InsertStatement&>(statement);
      if (insert.query) Plan(*insert.query);
      break;
    }
    case parser::StatementKind::kExplain: {
      const auto& explain = static_cast<const parser::ExplainStatement&>(statement);
      if (explain.statement) PlanStatement(*explain.statement);
      break;
    }
    default:
      break;
  }
}

}  // namespace
}  // namespace stave::planner

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stave;
  std::string_view sql(reinterpret_cast<const char*>(data), size);
  std::vector<parser::StatementPtr> statements;
  try {
    statements = parser::Parse(sql);
  } catch (const SqlError&) {
    return 0;
  }
  for (const parser::StatementPtr& statement : statements) planner::PlanStatement(*statement);
  return 0;
}

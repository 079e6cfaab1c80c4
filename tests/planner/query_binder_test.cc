#include "planner/query_binder.h"

#include <gtest/gtest.h>

#include "common/sql_error.h"
#include "parser/parser.h"

namespace stave::planner {
namespace {

class QueryBinderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto stream = std::make_shared<CatalogObject>();
    stream->id = 1;
    stream->type = ObjectType::kStream;
    stream->name = "s";
    stream->columns = {
        {"id", TypeId::kInt64}, {"name", TypeId::kVarchar}, {"price", TypeId::kFloat64}};
    catalog_.Add(stream);
    auto view = std::make_shared<CatalogObject>();
    view->id = 2;
    view->type = ObjectType::kMaterializedView;
    view->name = "v";
    view->columns = {{"parity", TypeId::kInt64}, {"count", TypeId::kInt64}};
    view->depends_on = {1};
    catalog_.Add(view);
  }

  BoundQuery Bind(const std::string& sql, QueryPurpose purpose,
                  uint32_t plan_version = kPlanVersion) {
    statements_ = parser::Parse(sql);
    return BindQuery(static_cast<const parser::SelectStatement&>(*statements_.at(0)), catalog_,
                     purpose, plan_version);
  }

  // The SQLSTATE and position of the error binding `sql` raises.
  std::pair<std::string, int> Error(const std::string& sql, QueryPurpose purpose) {
    try {
      Bind(sql, purpose);
    } catch (const SqlError& error) {
      return {error.sqlstate(), error.position()};
    }
    return {"none", 0};
  }

  Catalog catalog_;
  std::vector<parser::StatementPtr> statements_;
};

TEST_F(QueryBinderTest, GroupedViewKeysByGroupExpression) {
  BoundQuery query = Bind("SELECT id % 2 AS parity, count(*), sum(id) FROM s GROUP BY id % 2",
                          QueryPurpose::kMaterializedView);
  EXPECT_EQ(query.visible_columns, 3u);
  ASSERT_EQ(query.key_columns.size(), 1u);
  EXPECT_EQ(query.key_columns[0], 3u);  // A hidden group key after the visible columns.
  EXPECT_EQ(query.root->output[0].name, "parity");
  EXPECT_EQ(query.root->output[1].name, "count");
  EXPECT_EQ(query.root->output[2].name, "sum");
  EXPECT_EQ(query.root->output[2].type, DataType(TypeId::kNumeric));  // sum(bigint), as PostgreSQL
  ASSERT_EQ(query.root->kind, PlanNodeKind::kProject);
  EXPECT_EQ(query.root->input->kind, PlanNodeKind::kAggregate);
}

TEST_F(QueryBinderTest, UngroupedViewHasNoKey) {
  BoundQuery query =
      Bind("SELECT id, price * 2 FROM s WHERE name <> 'x'", QueryPurpose::kMaterializedView);
  EXPECT_TRUE(query.key_columns.empty());
  EXPECT_EQ(query.root->output[1].name, "?column?");
  EXPECT_EQ(query.root->input->kind, PlanNodeKind::kFilter);
}

TEST_F(QueryBinderTest, ErrorsCarrySqlstateAndPosition) {
  EXPECT_EQ(Error("SELECT nope FROM s", QueryPurpose::kMaterializedView),
            std::make_pair(std::string("42703"), 8));
  EXPECT_EQ(Error("SELECT * FROM missing", QueryPurpose::kBatch),
            std::make_pair(std::string("42P01"), 15));
  EXPECT_EQ(Error("SELECT name, count(*) FROM s", QueryPurpose::kMaterializedView).first, "42803");
  EXPECT_EQ(Error("SELECT id FROM s WHERE id", QueryPurpose::kMaterializedView),
            std::make_pair(std::string("42804"), 24));
  EXPECT_EQ(Error("SELECT id + name FROM s", QueryPurpose::kMaterializedView).first, "42883");
  EXPECT_EQ(Error("SELECT * FROM s", QueryPurpose::kBatch).first, "0A000");
  EXPECT_EQ(Error("SELECT id FROM s WHERE sum(id) > 1", QueryPurpose::kMaterializedView).first,
            "42803");
  EXPECT_EQ(Error("SELECT count(*), count(*) FROM s", QueryPurpose::kMaterializedView).first,
            "42701");
  EXPECT_EQ(Error("SELECT id FROM s WHERE id = 'abc'", QueryPurpose::kMaterializedView).first,
            "22P02");
}

TEST_F(QueryBinderTest, BatchOrderByAliasOrdinalAndHiddenExpression) {
  BoundQuery query =
      Bind("SELECT parity FROM v ORDER BY count DESC, 1 LIMIT 5", QueryPurpose::kBatch);
  EXPECT_EQ(query.visible_columns, 1u);
  ASSERT_EQ(query.root->kind, PlanNodeKind::kLimit);
  const auto& sort = static_cast<const SortNode&>(*query.root->input);
  ASSERT_EQ(sort.keys.size(), 2u);
  EXPECT_EQ(sort.keys[0].column, 1u);  // `count` is not selected: a hidden sort column.
  EXPECT_TRUE(sort.keys[0].descending);
  EXPECT_EQ(sort.keys[1].column, 0u);
}

TEST_F(QueryBinderTest, SelectWithoutFrom) {
  BoundQuery query = Bind("SELECT 1, version(), 'a' || 2", QueryPurpose::kBatch);
  EXPECT_EQ(query.visible_columns, 3u);
  EXPECT_EQ(query.root->output[0].type, DataType(TypeId::kInt32));
  EXPECT_EQ(query.root->output[1].name, "version");
}

std::vector<std::string> OutputNames(const BoundQuery& query) {
  std::vector<std::string> names;
  for (size_t i = 0; i < query.visible_columns; ++i) names.push_back(query.root->output[i].name);
  return names;
}

// Output names follow PostgreSQL's FigureColname: a cast takes its operand's name when it has
// one, a subscript its array's.
TEST_F(QueryBinderTest, CastsAndSubscriptsAreNamedAfterTheirOperands) {
  BoundQuery query = Bind(
      "SELECT (ARRAY[10, 20])[2], ARRAY['a']::varchar[], 1::int, CASE WHEN true THEN 1 END::text, "
      "version()::text, ('{1}'::int[])[1]",
      QueryPurpose::kBatch);
  EXPECT_EQ(OutputNames(query),
            (std::vector<std::string>{"array", "array", "int4", "text", "version", "int4"}));
}

// The SQL standard's keyword forms are named as PostgreSQL names them; operators are not named.
TEST_F(QueryBinderTest, KeywordFunctionsAndOperatorsAreNamedAsInPostgres) {
  BoundQuery query = Bind(
      "SELECT position('b' IN 'abc'), substring('abc' FROM 2), substr('abc', 2), "
      "trim(' a '), extract(year FROM date '2024-01-01'), 2 ^ 3",
      QueryPurpose::kBatch);
  EXPECT_EQ(OutputNames(query), (std::vector<std::string>{"position", "substring", "substr",
                                                          "btrim", "extract", "?column?"}));
}

// The join's sides carry only what is read above (x.id, y.price) and its keys; the strings
// nothing reads stay out of its state. A view planned by revision 1 keeps its whole rows.
TEST_F(QueryBinderTest, JoinInputsCarryOnlyReadColumnsFromPlanVersion2) {
  const std::string sql =
      "SELECT x.id, max(y.price) FROM s x JOIN s y ON x.id = y.id GROUP BY x.id";
  auto join_of = [](const BoundQuery& query) {
    const PlanNode* node = query.root.get();
    while (node->kind != PlanNodeKind::kJoin) node = node->input.get();
    return static_cast<const JoinNode*>(node);
  };
  BoundQuery current = Bind(sql, QueryPurpose::kMaterializedView);
  const JoinNode* pruned = join_of(current);
  ASSERT_EQ(pruned->input->kind, PlanNodeKind::kProject);
  ASSERT_EQ(pruned->input->output.size(), 1u);
  EXPECT_EQ(pruned->input->output[0].name, "id");
  ASSERT_EQ(pruned->right->output.size(), 2u);
  EXPECT_EQ(pruned->right->output[0].name, "id");
  EXPECT_EQ(pruned->right->output[1].name, "price");
  ASSERT_EQ(pruned->output.size(), 3u);
  EXPECT_EQ(pruned->right_keys[0]->column, 0u);

  BoundQuery first = Bind(sql, QueryPurpose::kMaterializedView, 1);
  const JoinNode* whole = join_of(first);
  EXPECT_EQ(whole->input->kind, PlanNodeKind::kScan);
  EXPECT_EQ(whole->output.size(), 6u);

  // The revision is stored with a view; an entry written before it was recorded is revision
  // 1, and a revision newer than this planner's is refused.
  CatalogObject view;
  view.id = 7;
  view.type = ObjectType::kMaterializedView;
  view.name = "m";
  view.definition = "CREATE MATERIALIZED VIEW m AS " + sql;
  EXPECT_EQ(DeserializeCatalogEntry(SerializeCatalogEntry(view))->plan_version, kPlanVersion);
  EXPECT_EQ(
      DeserializeCatalogEntry(R"({"id":7,"type":"materialized_view","name":"m","definition":"x"})")
          ->plan_version,
      1u);
  EXPECT_THROW(Bind(sql, QueryPurpose::kMaterializedView, kPlanVersion + 1), SqlError);
}

// A join side over a stream only grows; one over a grouped view of it, or over an outer
// join, is updated. Revision 4 marks no side.
TEST_F(QueryBinderTest, JoinSidesThatOnlyGrowAreMarkedFromPlanVersion5) {
  auto join_of = [](const BoundQuery& query) {
    const PlanNode* node = query.root.get();
    while (node->kind != PlanNodeKind::kJoin) node = node->input.get();
    return static_cast<const JoinNode*>(node);
  };
  auto sides = [&](const std::string& sql, uint32_t plan_version = kPlanVersion) {
    BoundQuery query = Bind(sql, QueryPurpose::kMaterializedView, plan_version);
    const JoinNode* join = join_of(query);
    return std::make_pair(join->appends[0], join->appends[1]);
  };
  const std::string streams = "SELECT x.id, y.price FROM s x JOIN s y ON x.id = y.id";
  EXPECT_EQ(sides(streams), std::make_pair(true, true));
  EXPECT_EQ(sides(streams, 4), std::make_pair(false, false));
  EXPECT_EQ(sides("SELECT x.id, v.count FROM s x JOIN v ON x.id = v.parity"),
            std::make_pair(true, false));
  EXPECT_EQ(sides("SELECT x.id, c.n FROM s x JOIN (SELECT id, count(*) AS n FROM s GROUP BY id) "
                  "c ON x.id = c.id"),
            std::make_pair(true, false));
  // The outer join below retracts its padded rows; the inner one above it reads them.
  EXPECT_EQ(sides("SELECT z.id FROM s z JOIN (SELECT x.id FROM s x LEFT JOIN s y ON x.id = y.id) "
                  "w ON z.id = w.id"),
            std::make_pair(true, false));
}

TEST_F(QueryBinderTest, AScanKnowsWhichOfItsColumnsNothingReads) {
  auto scan_of = [](const BoundQuery& query) {
    const PlanNode* node = query.root.get();
    while (node->kind != PlanNodeKind::kScan) node = node->input.get();
    return static_cast<const ScanNode*>(node);
  };
  // `name` is read by nothing: the source may skip it. The filter's column is read.
  BoundQuery grouped = Bind("SELECT id, count(*) FROM s WHERE price > 1 GROUP BY id",
                            QueryPurpose::kMaterializedView);
  const ScanNode* scan = scan_of(grouped);
  EXPECT_EQ(scan->read_columns, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(scan->output.size(), 3u);  // The scan's shape stays.
  // Every column shown: no mark.
  EXPECT_TRUE(
      scan_of(Bind("SELECT * FROM s", QueryPurpose::kMaterializedView))->read_columns.empty());
}

TEST_F(QueryBinderTest, TimeWindowInputsCarryOnlyReadColumnsFromPlanVersion3) {
  // HOP copies each row into every window it falls in: the string column nothing reads
  // stays behind.
  const std::string sql =
      "SELECT window_start, max(price) FROM HOP(s, id, 2, 10) WHERE id > 0 GROUP BY window_start";
  auto window_of = [](const BoundQuery& query) {
    const PlanNode* node = query.root.get();
    while (node->kind != PlanNodeKind::kTimeWindow) node = node->input.get();
    return static_cast<const TimeWindowNode*>(node);
  };
  BoundQuery current = Bind(sql, QueryPurpose::kMaterializedView);
  const TimeWindowNode* narrow = window_of(current);
  ASSERT_EQ(narrow->input->kind, PlanNodeKind::kProject);
  ASSERT_EQ(narrow->input->output.size(), 2u);
  EXPECT_EQ(narrow->input->output[0].name, "id");
  EXPECT_EQ(narrow->input->output[1].name, "price");
  EXPECT_EQ(narrow->time_column, 0u);
  EXPECT_EQ(narrow->visible_columns, 2u);
  ASSERT_EQ(narrow->output.size(), 4u);
  EXPECT_EQ(narrow->output[2].name, "window_start");
  EXPECT_EQ(narrow->output[3].name, "window_end");
  // The aggregate above reads the window's columns where they now are.
  const PlanNode* above = current.root.get();
  while (above->kind != PlanNodeKind::kAggregate) above = above->input.get();
  const auto* aggregate = static_cast<const AggregateNode*>(above);
  EXPECT_EQ(aggregate->group_keys[0]->column, 2u);
  EXPECT_EQ(aggregate->aggregates[0].arg->column, 1u);

  BoundQuery second = Bind(sql, QueryPurpose::kMaterializedView, 2);
  const TimeWindowNode* whole = window_of(second);
  EXPECT_EQ(whole->input->kind, PlanNodeKind::kScan);
  EXPECT_EQ(whole->output.size(), 5u);
}

}  // namespace
}  // namespace stave::planner

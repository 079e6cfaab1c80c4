#include "planner/top_n_rewrite.h"

#include <gtest/gtest.h>

#include "common/sql_error.h"
#include "parser/parser.h"
#include "planner/query_binder.h"

namespace stave::planner {
namespace {

// Views are bound through BindQuery, which rewrites their plans with RewriteTopN.
class TopNRewriteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto stream = std::make_shared<CatalogObject>();
    stream->id = 1;
    stream->type = ObjectType::kStream;
    stream->name = "bids";
    stream->columns = {
        {"auction", TypeId::kInt64}, {"bidder", TypeId::kVarchar}, {"price", TypeId::kInt64}};
    catalog_.Add(stream);
  }

  BoundQuery BindView(const std::string& sql) {
    statements_ = parser::Parse(sql);
    return BindQuery(static_cast<const parser::SelectStatement&>(*statements_.at(0)), catalog_,
                     QueryPurpose::kMaterializedView);
  }

  // The first node of `kind` under `node`, or null.
  static const PlanNode* Find(const PlanNode* node, PlanNodeKind kind) {
    for (; node != nullptr; node = node->input.get()) {
      if (node->kind == kind) return node;
    }
    return nullptr;
  }

  Catalog catalog_;
  std::vector<parser::StatementPtr> statements_;
};

TEST_F(TopNRewriteTest, BoundedRankingBecomesTopN) {
  const char* inner =
      "(SELECT *, row_number() OVER (PARTITION BY auction ORDER BY price DESC) AS rn FROM bids) t";
  for (auto [where, limit] : std::vector<std::pair<std::string, int64_t>>{
           {"rn <= 3", 3}, {"rn < 3", 2}, {"rn = 1", 1}, {"3 >= rn AND price > 5", 3}}) {
    BoundQuery query =
        BindView(std::string("SELECT auction, price FROM ") + inner + " WHERE " + where);
    const auto* top = static_cast<const TopNNode*>(Find(query.root.get(), PlanNodeKind::kTopN));
    ASSERT_NE(top, nullptr) << where;
    EXPECT_EQ(top->limit, limit) << where;
    EXPECT_EQ(top->function.kind, WindowFunctionKind::kRowNumber);
    EXPECT_EQ(Find(query.root.get(), PlanNodeKind::kWindow), nullptr);
    // The filter stays above: it may say more than the bound.
    EXPECT_NE(Find(query.root.get(), PlanNodeKind::kFilter), nullptr);
    // Rows come and go as ranks change: a retracting multiset.
    EXPECT_FALSE(query.append_only);
    EXPECT_FALSE(query.keyed);
  }
}

TEST_F(TopNRewriteTest, DistinctOnIsKeyedTopOne) {
  BoundQuery query = BindView(
      "SELECT DISTINCT ON (auction) auction, bidder FROM bids ORDER BY auction, price DESC");
  ASSERT_EQ(query.root->kind, PlanNodeKind::kTopN);
  EXPECT_EQ(static_cast<const TopNNode&>(*query.root).limit, 1);
  EXPECT_TRUE(query.keyed);
  EXPECT_EQ(query.key_columns, std::vector<size_t>{0});
}

TEST_F(TopNRewriteTest, OtherWindowFunctionsAreRefused) {
  for (const char* sql : {
           "SELECT auction, row_number() OVER (ORDER BY price) FROM bids",
           "SELECT auction FROM (SELECT auction, rank() OVER (ORDER BY price) AS r FROM bids) t "
           "WHERE r > 2",
           "SELECT auction FROM (SELECT auction, sum(price) OVER (PARTITION BY auction) AS s "
           "FROM bids) t WHERE s <= 2",
       }) {
    try {
      BindView(sql);
      ADD_FAILURE() << "bound: " << sql;
    } catch (const SqlError& error) {
      EXPECT_EQ(error.sqlstate(), "0A000") << sql;
    }
  }
}

}  // namespace
}  // namespace stave::planner

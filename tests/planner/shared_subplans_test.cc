#include "planner/shared_subplans.h"

#include <gtest/gtest.h>

#include <set>

#include "parser/parser.h"
#include "planner/query_binder.h"

namespace stave::planner {
namespace {

// Views are bound through BindQuery, which shares their identical subplans (revision 4 on).
class SharedSubplansTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto stream = std::make_shared<CatalogObject>();
    stream->id = 1;
    stream->type = ObjectType::kStream;
    stream->name = "bids";
    stream->columns = {
        {"auction", TypeId::kInt64}, {"price", TypeId::kInt64}, {"date_time", TypeId::kTimestamp}};
    catalog_.Add(stream);
  }

  BoundQuery BindView(const std::string& sql, uint32_t plan_version = kPlanVersion) {
    statements_ = parser::Parse(sql);
    return BindQuery(static_cast<const parser::SelectStatement&>(*statements_.at(0)), catalog_,
                     QueryPurpose::kMaterializedView, plan_version);
  }

  // The distinct nodes of `kind` in the plan, and how many times a walk of it as a tree
  // meets them.
  static void Collect(const PlanNode* node, PlanNodeKind kind, std::set<const PlanNode*>* nodes,
                      size_t* met) {
    if (!node) return;
    if (node->kind == kind) {
      nodes->insert(node);
      ++*met;
    }
    Collect(node->input.get(), kind, nodes, met);
    if (const PlanNodePtr* second = SecondInput(*node)) Collect(second->get(), kind, nodes, met);
  }
  static std::pair<size_t, size_t> Count(const BoundQuery& query, PlanNodeKind kind) {
    std::set<const PlanNode*> nodes;
    size_t met = 0;
    Collect(query.root.get(), kind, &nodes, &met);
    return {nodes.size(), met};
  }

  Catalog catalog_;
  std::vector<parser::StatementPtr> statements_;
};

// Nexmark's q5: the same windowed count in two subqueries, one of them aggregated again.
constexpr const char* kHotItems =
    "SELECT a.auction, a.num FROM ("
    "  SELECT auction, count(*) AS num, window_start AS starttime "
    "  FROM HOP(bids, date_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND) "
    "  GROUP BY auction, window_start, window_end) AS a "
    "JOIN ("
    "  SELECT max(c.num) AS maxn, c.starttime FROM ("
    "    SELECT count(*) AS num, window_start AS starttime "
    "    FROM HOP(bids, date_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND) "
    "    GROUP BY auction, window_start, window_end) AS c "
    "  GROUP BY c.starttime) AS m "
    "ON a.starttime = m.starttime AND a.num >= m.maxn";

TEST_F(SharedSubplansTest, TheSameAggregationTwiceIsComputedOnce) {
  BoundQuery query = BindView(kHotItems);
  // The windowed count, its window and its scan: one node each, met twice.
  EXPECT_EQ(Count(query, PlanNodeKind::kScan), std::make_pair(size_t{1}, size_t{2}));
  EXPECT_EQ(Count(query, PlanNodeKind::kTimeWindow), std::make_pair(size_t{1}, size_t{2}));
  // Three aggregations as written: the count (shared) and the max over it.
  EXPECT_EQ(Count(query, PlanNodeKind::kAggregate), std::make_pair(size_t{2}, size_t{3}));
  // The projections above the count differ (each subquery keeps its own columns).
  EXPECT_EQ(Count(query, PlanNodeKind::kProject).first,
            Count(query, PlanNodeKind::kProject).second);
}

TEST_F(SharedSubplansTest, EarlierRevisionsKeepTheirShape) {
  BoundQuery query = BindView(kHotItems, 3);
  EXPECT_EQ(Count(query, PlanNodeKind::kAggregate), std::make_pair(size_t{3}, size_t{3}));
  EXPECT_EQ(Count(query, PlanNodeKind::kScan), std::make_pair(size_t{2}, size_t{2}));
}

TEST_F(SharedSubplansTest, DifferentAggregationsAreNotShared) {
  for (const char* other : {"SELECT auction, sum(price) AS n FROM bids GROUP BY auction",
                            "SELECT auction, count(*) AS n FROM bids WHERE price > 5 "
                            "GROUP BY auction",
                            "SELECT price AS auction, count(*) AS n FROM bids GROUP BY price"}) {
    BoundQuery query = BindView(
        std::string(
            "SELECT a.auction, a.n, b.n AS other_n FROM (SELECT auction, count(*) AS n FROM bids "
            "GROUP BY auction) a JOIN (") +
        other + ") b ON a.auction = b.auction");
    EXPECT_EQ(Count(query, PlanNodeKind::kAggregate), std::make_pair(size_t{2}, size_t{2}))
        << other;
  }
}

TEST_F(SharedSubplansTest, StatelessSubplansAreNotShared) {
  // Computing a projection twice costs less than one more exchange.
  BoundQuery query = BindView(
      "SELECT a.auction, b.price FROM (SELECT auction, price FROM bids) a "
      "JOIN (SELECT auction, price FROM bids) b ON a.auction = b.price");
  EXPECT_EQ(Count(query, PlanNodeKind::kScan), std::make_pair(size_t{2}, size_t{2}));
}

TEST_F(SharedSubplansTest, ASelfJoinOfAnAggregationReadsItOnce) {
  BoundQuery query = BindView(
      "SELECT a.auction, a.n, b.n AS next_n FROM (SELECT auction, count(*) AS n FROM bids GROUP BY "
      "auction) a "
      "JOIN (SELECT auction, count(*) AS n FROM bids GROUP BY auction) b "
      "ON a.auction = b.auction + 1");
  EXPECT_EQ(Count(query, PlanNodeKind::kAggregate), std::make_pair(size_t{1}, size_t{2}));
}

}  // namespace
}  // namespace stave::planner

#include "planner/delivery.h"

#include <gtest/gtest.h>

#include "common/sql_error.h"
#include "planner/connector_spec.h"

namespace stave::planner {
namespace {

class DeliveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ConnectorSpec replayable;
    replayable.name = "datagen";
    replayable.replayable_source = true;
    connectors_.Register(replayable);
    ConnectorSpec socket;
    socket.name = "socket";
    socket.source_reason = "a socket cannot rewind";
    connectors_.Register(socket);
    Add(1, ObjectType::kStream, "gen", "datagen", {});
    Add(2, ObjectType::kStream, "lines", "socket", {});
    Add(3, ObjectType::kTable, "nums", "", {});
    Add(4, ObjectType::kMaterializedView, "over_lines", "", {2});
    Add(5, ObjectType::kMaterializedView, "over_both", "", {3, 4});
  }

  CatalogObjectPtr Add(uint32_t id, ObjectType type, std::string name, std::string connector,
                       std::vector<uint32_t> depends_on) {
    auto object = std::make_shared<CatalogObject>();
    object->id = id;
    object->type = type;
    object->name = std::move(name);
    object->connector = std::move(connector);
    object->depends_on = std::move(depends_on);
    catalog_.Add(object);
    return object;
  }

  DeliveryChain Chain(std::vector<uint32_t> inputs, Delivery sink = Delivery::kExactlyOnce) {
    std::vector<CatalogObjectPtr> objects;
    for (uint32_t id : inputs) objects.push_back(catalog_.FindById(id));
    return AnalyzeDelivery(objects, catalog_, connectors_,
                           {"sink \"s\" (test)", sink, "the test says so"});
  }

  Catalog catalog_;
  ConnectorRegistry connectors_;
};

TEST_F(DeliveryTest, NamesRoundTrip) {
  for (Delivery delivery :
       {Delivery::kAtMostOnce, Delivery::kAtLeastOnce, Delivery::kExactlyOnce}) {
    EXPECT_EQ(ParseDelivery(DeliveryName(delivery)), delivery);
  }
  EXPECT_EQ(ParseDelivery("exactly-once"), std::nullopt);
  EXPECT_EQ(ParseDelivery(""), std::nullopt);
}

TEST_F(DeliveryTest, ReplayableChainKeepsExactlyOnce) {
  DeliveryChain chain = Chain({1});
  ASSERT_EQ(chain.staves.size(), 3u);  // Source, engine, sink.
  EXPECT_EQ(chain.staves[0].name, "source \"gen\" (datagen)");
  EXPECT_EQ(chain.guarantee(), Delivery::kExactlyOnce);
  EXPECT_NO_THROW(CheckDelivery(chain, Delivery::kExactlyOnce, "s"));
  EXPECT_EQ(chain.Describe(Delivery::kExactlyOnce).back(),
            "result: exactly_once; requested exactly_once: kept");
}

TEST_F(DeliveryTest, SocketThroughViewsIsTheWeakestStave) {
  DeliveryChain chain = Chain({5});
  // Both sources are found through the views, each once.
  ASSERT_EQ(chain.staves.size(), 4u);
  EXPECT_EQ(chain.staves[0].name, "source \"nums\" (table)");
  EXPECT_EQ(chain.staves[1].name, "source \"lines\" (socket)");
  EXPECT_EQ(chain.guarantee(), Delivery::kAtMostOnce);
  EXPECT_EQ(chain.weakest().name, "source \"lines\" (socket)");
  EXPECT_NO_THROW(CheckDelivery(chain, Delivery::kAtMostOnce, "s"));
  for (Delivery refused : {Delivery::kAtLeastOnce, Delivery::kExactlyOnce}) {
    try {
      CheckDelivery(chain, refused, "s");
      FAIL() << "not refused";
    } catch (const SqlError& error) {
      EXPECT_EQ(error.sqlstate(), "0A000");
      EXPECT_NE(std::string(error.what()).find("source \"lines\" (socket)"), std::string::npos);
      EXPECT_NE(std::string(error.what()).find("a socket cannot rewind"), std::string::npos);
      EXPECT_NE(error.hint().find("delivery = 'at_most_once'"), std::string::npos);
    }
  }
  EXPECT_NE(chain.Describe(Delivery::kExactlyOnce).back().find("refused"), std::string::npos);
}

TEST_F(DeliveryTest, WeakSinkDecides) {
  DeliveryChain chain = Chain({3}, Delivery::kAtLeastOnce);
  EXPECT_EQ(chain.guarantee(), Delivery::kAtLeastOnce);
  EXPECT_EQ(chain.weakest().name, "sink \"s\" (test)");
  EXPECT_THROW(CheckDelivery(chain, Delivery::kExactlyOnce, "s"), SqlError);
  EXPECT_NO_THROW(CheckDelivery(chain, Delivery::kAtLeastOnce, "s"));
}

}  // namespace
}  // namespace stave::planner

#include "executor/connectors/view/view_watermark.h"

#include <gtest/gtest.h>

#include "storage/row_codec.h"

namespace stave::executor {
namespace {

InstanceWatermark Published(uint32_t parallelism, int64_t watermark) {
  return InstanceWatermark{parallelism, watermark};
}

TEST(ViewWatermarkTest, IsTheLowestOnceEveryInstanceOfTheRunPublished) {
  ViewWatermark view;
  view.Note(0, Published(3, 100));
  view.Note(2, Published(3, 90));
  EXPECT_EQ(view.value(), INT64_MIN);  // Instance 1 may still send anything.
  view.Note(1, Published(3, 120));
  EXPECT_EQ(view.value(), 90);
  view.Note(2, Published(3, 130));
  EXPECT_EQ(view.value(), 100);
}

TEST(ViewWatermarkTest, NeverGoesBack) {
  ViewWatermark view;
  view.Note(0, Published(1, 100));
  EXPECT_EQ(view.value(), 100);
  // A restarted run publishes what its sources resumed at, perhaps below.
  view.Note(0, Published(1, 40));
  EXPECT_EQ(view.value(), 100);
  view.Note(0, Published(1, 140));
  EXPECT_EQ(view.value(), 140);
}

TEST(ViewWatermarkTest, FollowsAChangeOfParallelism) {
  ViewWatermark view;
  for (uint32_t i = 0; i < 4; ++i) view.Note(i, Published(4, 100 + i));
  EXPECT_EQ(view.value(), 100);

  // Restarted with two instances: 2 and 3 are gone. Instance 0 of the old run stands in
  // for instance 0 of the new one until it publishes, but a run of four is still on record
  // and its instances 2 and 3 are not: nothing moves.
  view.Note(1, Published(2, 200));
  EXPECT_EQ(view.value(), 100);
  view.Note(0, Published(2, 180));
  EXPECT_EQ(view.value(), 180);

  // Restarted with three: instance 2 of the new run has not published yet.
  view.Note(0, Published(3, 300));
  view.Note(1, Published(3, 300));
  EXPECT_EQ(view.value(), 180);
  view.Note(2, Published(3, 250));
  EXPECT_EQ(view.value(), 250);
}

TEST(ViewWatermarkTest, IgnoresAnInstanceOutsideItsRun) {
  ViewWatermark view;
  view.Note(1, Published(1, 100));
  EXPECT_EQ(view.value(), INT64_MIN);
}

TEST(ViewWatermarkTest, RoundTripsThroughItsEncoding) {
  ViewWatermark view;
  view.Note(0, Published(2, 70));
  view.Note(1, Published(2, -5));
  std::optional<ViewWatermark> decoded = ViewWatermark::Decode(view.Encode());
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->value(), -5);
  decoded->Note(1, Published(2, 80));
  EXPECT_EQ(decoded->value(), 70);

  ViewWatermark partial;
  partial.Note(1, Published(2, 50));
  decoded = ViewWatermark::Decode(partial.Encode());
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->value(), INT64_MIN);
  decoded->Note(0, Published(2, 60));
  EXPECT_EQ(decoded->value(), 50);

  EXPECT_FALSE(ViewWatermark::Decode("short"));
  EXPECT_FALSE(ViewWatermark::Decode(view.Encode() + "x"));
}

TEST(ChangeRecordTest, CarriesAnInstanceWatermark) {
  storage::RowTypes types{TypeId::kInt64};
  std::vector<RowChange> changes{{RowOp::kInsert, "k", {Value::Int(7)}}};
  Chunk chunk = Chunk::WithTypes(types);
  std::optional<InstanceWatermark> watermark;
  ASSERT_TRUE(DecodeChangeRecord(EncodeChangeRecord(changes, types), types, &chunk, &watermark));
  EXPECT_FALSE(watermark);
  EXPECT_EQ(chunk.size(), 1u);

  std::string record = EncodeChangeRecord(changes, types, Published(3, -42));
  ASSERT_TRUE(DecodeChangeRecord(record, types, &chunk, &watermark));
  ASSERT_TRUE(watermark);
  EXPECT_EQ(watermark->parallelism, 3u);
  EXPECT_EQ(watermark->watermark, -42);
  EXPECT_EQ(chunk.size(), 2u);
  // Readers that do not ask for it still read the rows.
  EXPECT_TRUE(DecodeChangeRecord(record, types, &chunk));

  // A watermark alone.
  watermark.reset();
  ASSERT_TRUE(DecodeChangeRecord(EncodeChangeRecord({}, types, Published(1, 9)), types, &chunk,
                                 &watermark));
  EXPECT_EQ(watermark->watermark, 9);
  EXPECT_EQ(chunk.size(), 3u);

  EXPECT_FALSE(DecodeChangeRecord(record + "x", types, &chunk));
  EXPECT_FALSE(DecodeChangeRecord(record.substr(0, record.size() - 1), types, &chunk));
}

}  // namespace
}  // namespace stave::executor

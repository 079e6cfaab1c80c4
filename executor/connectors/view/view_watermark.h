#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "executor/change_record.h"

namespace stave::executor {

/// What a reader of a materialized view's changes knows of the view's watermark. Each
/// parallel instance of the view's materialization publishes its own (in its change log
/// records, and in the view's state for a backfill); the view's is the minimum over the
/// instances of a run, once every one of them has published, and never goes back.
///
/// Why a minimum over one run's instances holds: an instance's later changes are never
/// below its own watermark (plus the column's delta), and rows reach the instances from the
/// same sources. Values left by an earlier run (before a restart, perhaps with another
/// parallelism) hold too: a restarted job resumes at the source positions of its last
/// checkpoint, whose watermarks were at least every value published before it, so they
/// stand in for the instances of the new run that have not published yet.
class ViewWatermark {
 public:
  /// Instance `instance` published `published`. A run of `published.parallelism` instances
  /// has no instance at or past that number: their values go.
  void Note(uint32_t instance, InstanceWatermark published);

  /// The view's watermark so far (INT64_MIN before it has one).
  int64_t value() const { return watermark_; }

  /// Bytes for a reader's checkpointed position.
  std::string Encode() const;
  /// Nullopt if `bytes` is not what Encode returned.
  static std::optional<ViewWatermark> Decode(std::string_view bytes);

 private:
  /// Raises the watermark to the minimum over the instances, once they are all known.
  void Update();

  std::map<uint32_t, InstanceWatermark> instances_;
  int64_t watermark_ = INT64_MIN;
};

}  // namespace stave::executor

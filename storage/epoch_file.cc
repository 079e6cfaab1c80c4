#include "storage/epoch_file.h"

#include <algorithm>
#include <vector>

#include <rocksdb/sst_file_writer.h>

namespace stave::storage {
namespace {

// How many entries ahead reads of scattered keys and values are prefetched.
constexpr size_t kPrefetchDistance = 8;

// The records of a batch, its state runs' entries included, in batch order. The slices point
// into the batch, into the runs' memory, and into the full keys of the runs' entries, which
// the collector builds.
class RecordCollector : public rocksdb::WriteBatch::Handler {
 public:
  /// Collects the records of `batch`.
  rocksdb::Status Collect(const WriteBatch& batch) {
    // Room for every run's full keys at once: the slices into it must not move.
    size_t key_bytes = 0;
    for (const auto& placed : batch.state_runs()) {
      for (const auto& entry : placed.run->entries) {
        key_bytes += StateRun::kPrefixBytes + entry.key.size();
      }
    }
    run_keys_.reserve(key_bytes);
    return batch.ForEachChange(this, [this](const StateRun& run) { AddRun(run); });
  }

  struct Point {
    rocksdb::Slice key;
    rocksdb::Slice value;
    bool is_delete;
    size_t order;
  };
  struct Range {
    rocksdb::Slice begin;
    rocksdb::Slice end;
    size_t order;
  };

  rocksdb::Status PutCF(uint32_t family, const rocksdb::Slice& key,
                        const rocksdb::Slice& value) override {
    if (family != 0) return NotInDefaultFamily();
    points.push_back({key, value, false, order_++});
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteCF(uint32_t family, const rocksdb::Slice& key) override {
    if (family != 0) return NotInDefaultFamily();
    points.push_back({key, rocksdb::Slice(), true, order_++});
    return rocksdb::Status::OK();
  }
  rocksdb::Status SingleDeleteCF(uint32_t family, const rocksdb::Slice& key) override {
    return DeleteCF(family, key);
  }
  rocksdb::Status DeleteRangeCF(uint32_t family, const rocksdb::Slice& begin,
                                const rocksdb::Slice& end) override {
    if (family != 0) return NotInDefaultFamily();
    ranges.push_back({begin, end, order_++});
    return rocksdb::Status::OK();
  }
  rocksdb::Status MergeCF(uint32_t, const rocksdb::Slice&, const rocksdb::Slice&) override {
    return rocksdb::Status::NotSupported("an epoch file holds no merge records");
  }

  /// Forgets the records, keeping the memory for the next epoch, which likely writes about
  /// as much, unless the last one used less than a quarter of it (an unusual epoch made it
  /// large, or the writes have calmed down).
  void Clear() {
    if (points.size() < points.capacity() / 4) std::vector<Point>().swap(points);
    if (run_keys_.size() < run_keys_.capacity() / 4) std::string().swap(run_keys_);
    points.clear();
    ranges.clear();
    run_keys_.clear();
    order_ = 0;
  }

  std::vector<Point> points;
  std::vector<Range> ranges;

 private:
  static rocksdb::Status NotInDefaultFamily() {
    return rocksdb::Status::NotSupported("an epoch file holds the default column family only");
  }
  void AddRun(const StateRun& run) {
    const std::vector<StateRun::Entry>& entries = run.entries;
    for (size_t i = 0; i < entries.size(); ++i) {
      // A run's keys lie in its table's memory in the order they were first written, not in
      // key order: each is a cache miss, fetched a few entries ahead.
      if (i + kPrefetchDistance < entries.size()) {
        __builtin_prefetch(entries[i + kPrefetchDistance].key.data());
      }
      const StateRun::Entry& entry = entries[i];
      size_t at = run_keys_.size();
      run.AppendFullKey(entry, &run_keys_);
      rocksdb::Slice key(run_keys_.data() + at, run_keys_.size() - at);
      points.push_back(
          {key, rocksdb::Slice(entry.value.data(), entry.value.size()), entry.deleted, order_++});
    }
  }

  std::string run_keys_;
  size_t order_ = 0;  // Of the points and ranges.
};

// Sorts the points by key, keeping the batch order of equal keys. State tables flush in
// sorted runs, a few per epoch: the runs are found and merged, a pass over the points per
// doubling of the runs merged, where a sort from scratch compares each point ~log2(n) times.
void SortStably(std::vector<RecordCollector::Point>* points) {
  auto less = [](const RecordCollector::Point& a, const RecordCollector::Point& b) {
    return a.key.compare(b.key) < 0;
  };
  std::vector<size_t> bounds{0};  // Where each run starts, then the end.
  for (size_t i = 1; i < points->size(); ++i) {
    if (less((*points)[i], (*points)[i - 1])) bounds.push_back(i);
  }
  bounds.push_back(points->size());
  auto at = [points](size_t i) { return points->begin() + static_cast<std::ptrdiff_t>(i); };
  while (bounds.size() > 2) {
    std::vector<size_t> merged{0};
    size_t run = 0;
    for (; run + 2 < bounds.size(); run += 2) {
      // Stable: the earlier run's points come first among equal keys.
      std::inplace_merge(at(bounds[run]), at(bounds[run + 1]), at(bounds[run + 2]), less);
      merged.push_back(bounds[run + 2]);
    }
    if (run + 1 < bounds.size() && merged.back() != bounds.back()) {
      merged.push_back(bounds.back());  // An odd run out, merged on the next pass.
    }
    bounds = std::move(merged);
  }
}

}  // namespace

rocksdb::Status WriteEpochFile(const WriteBatch& batch, const rocksdb::Options& options,
                               const std::string& path) {
  // Epochs are committed one after another from one thread, so its collector serves each:
  // fresh vectors of an epoch's size would have their pages zeroed anew every epoch.
  thread_local RecordCollector records;
  records.Clear();
  rocksdb::Status status = records.Collect(batch);
  if (!status.ok()) return status;
  std::vector<RecordCollector::Point>& points = records.points;
  SortStably(&points);

  // Every record of the file gets the same sequence number at ingestion, and a range
  // deletion hides only older records: so the file keeps the writes that come after a range
  // deletion in the batch, and drops those that come before it.
  auto hidden_by_later_range = [&](const RecordCollector::Point& point) {
    for (const auto& range : records.ranges) {
      if (range.order > point.order && point.key.compare(range.begin) >= 0 &&
          point.key.compare(range.end) < 0) {
        return true;
      }
    }
    return false;
  };

  rocksdb::Options file_options = options;
  // The file lands in level 0; compactions compress it as they move it down. SstFileWriter
  // takes the last level's compression when levels have their own (as the database's do),
  // and the bottommost one before either: all three must say none.
  file_options.compression = rocksdb::kNoCompression;
  file_options.compression_per_level.clear();
  file_options.bottommost_compression = rocksdb::kDisableCompressionOption;
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(file_options), file_options);
  status = writer.Open(path);
  for (size_t i = 0; i < points.size() && status.ok(); ++i) {
    if (i + kPrefetchDistance < points.size()) {
      __builtin_prefetch(points[i + kPrefetchDistance].value.data());  // As keys, below.
    }
    const auto& point = points[i];
    // Stable: of several writes of a key, the last in the batch comes last.
    if (i + 1 < points.size() && points[i + 1].key == point.key) continue;
    if (!records.ranges.empty() && hidden_by_later_range(point)) continue;
    status = point.is_delete ? writer.Delete(point.key) : writer.Put(point.key, point.value);
  }
  for (const auto& range : records.ranges) {
    if (!status.ok()) break;
    status = writer.DeleteRange(range.begin, range.end);
  }
  if (status.ok()) status = writer.Finish();  // Syncs the file.
  return status;
}

}  // namespace stave::storage

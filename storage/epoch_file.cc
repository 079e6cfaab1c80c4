#include "storage/epoch_file.h"

#include <algorithm>
#include <vector>

#include <rocksdb/sst_file_writer.h>

namespace stave::storage {
namespace {

// How many entries ahead reads of scattered keys and values are prefetched.
constexpr size_t kPrefetchDistance = 8;

// The batch's own records, and its state runs with their places among them. A record's or a
// run's order is its place in the batch: of two writes of a key the later wins, and a range
// deletion drops only what comes before it.
class RecordCollector : public rocksdb::WriteBatch::Handler {
 public:
  /// Collects the records of `batch` and places its runs.
  rocksdb::Status Collect(const WriteBatch& batch) {
    return batch.ForEachChange(this, [this](const StateRun& run) {
      runs.push_back({&run, order_++});
    });
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
  struct Run {
    const StateRun* run;
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
    points.clear();
    ranges.clear();
    runs.clear();
    order_ = 0;
  }

  std::vector<Point> points;
  std::vector<Range> ranges;
  std::vector<Run> runs;

 private:
  static rocksdb::Status NotInDefaultFamily() {
    return rocksdb::Status::NotSupported("an epoch file holds the default column family only");
  }

  size_t order_ = 0;  // Of the points, ranges and runs.
};

// Sorts the points by key, keeping the batch order of equal keys. Tables that append their
// writes put them in the batch in sorted runs, a few per epoch: the runs are found and
// merged, a pass over the points per doubling of the runs merged, where a sort from scratch
// compares each point ~log2(n) times.
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

// The first 7 bytes of `key` (a state key's section, table id and virtual node) as an integer
// that orders as the bytes do, padded with zeros past a shorter key: where two keys' integers
// differ, so do the keys, the same way.
uint64_t KeyPrefix(rocksdb::Slice key) {
  uint64_t prefix = 0;
  for (size_t i = 0; i < StateRun::kPrefixBytes; ++i) {
    prefix = (prefix << 8) | (i < key.size() ? static_cast<uint8_t>(key[i]) : 0);
  }
  return prefix;
}

// One of the sorted sequences the file is merged from, read one record at a time: a state
// run, whose full keys it builds as it goes, or the batch's records, sorted. Its head is the
// record it is at.
class Cursor {
 public:
  explicit Cursor(const RecordCollector::Run& run) : run_(run.run), order_(run.order) { Load(); }
  explicit Cursor(const std::vector<RecordCollector::Point>* points) : points_(points) { Load(); }

  bool valid() const { return next_ <= size(); }
  rocksdb::Slice key() const { return run_ ? rocksdb::Slice(key_) : head_.key; }
  /// The head, its key valid until the cursor moves.
  RecordCollector::Point head() const {
    RecordCollector::Point head = head_;
    head.key = key();
    return head;
  }
  /// Compares the heads' keys: mostly by their prefixes, as an epoch's runs are of different
  /// tables or virtual nodes wherever they meet.
  int Compare(const Cursor& other) const { return Compare(other.prefix_, other.key()); }
  int Compare(uint64_t prefix, rocksdb::Slice key) const {
    if (prefix_ != prefix) return prefix_ < prefix ? -1 : 1;
    return this->key().compare(key);
  }
  uint64_t prefix() const { return prefix_; }
  /// Whether its keys are distinct (a run's are).
  bool distinct() const { return run_ != nullptr; }
  void Next() { Load(); }

 private:
  size_t size() const { return run_ ? run_->entries.size() : points_->size(); }
  // Makes the record at next_ the head and moves past it.
  void Load() {
    if (next_ >= size()) {
      next_ = size() + 1;  // Past the end.
      return;
    }
    size_t at = next_++;
    if (!run_) {
      head_ = (*points_)[at];
      prefix_ = KeyPrefix(head_.key);
      return;
    }
    // A run's keys and values lie in its table's memory in the order they were first
    // written, not in key order: each is a cache miss, fetched a few entries ahead.
    const std::vector<StateRun::Entry>& entries = run_->entries;
    if (at + kPrefetchDistance < entries.size()) {
      __builtin_prefetch(entries[at + kPrefetchDistance].key.data());
      __builtin_prefetch(entries[at + kPrefetchDistance].value.data());
    }
    const StateRun::Entry& entry = entries[at];
    key_.clear();
    run_->AppendFullKey(entry, &key_);
    prefix_ = (uint64_t{static_cast<uint8_t>(key_section::kState)} << 48) |
              (uint64_t{run_->table_id} << 16) | entry.virtual_node;
    head_ = {rocksdb::Slice(), rocksdb::Slice(entry.value.data(), entry.value.size()),
             entry.deleted, order_};
  }

  const StateRun* run_ = nullptr;
  const std::vector<RecordCollector::Point>* points_ = nullptr;
  size_t order_ = 0;  // A run's: its entries' keys are distinct.
  size_t next_ = 0;
  std::string key_;      // A run's head's full key.
  uint64_t prefix_ = 0;  // KeyPrefix(key()).
  RecordCollector::Point head_{};
};

}  // namespace

rocksdb::Status WriteEpochFile(const WriteBatch& batch, const rocksdb::Options& options,
                               const std::string& path) {
  // Epochs are committed one after another from one thread, so its collector serves each:
  // fresh vectors of an epoch's size would have their pages zeroed anew every epoch.
  thread_local RecordCollector records;
  records.Clear();
  rocksdb::Status status = records.Collect(batch);
  if (!status.ok()) return status;
  SortStably(&records.points);

  // The runs and the records, merged by key as the file takes them: a heap of cursors by
  // their heads' keys. The runs are not copied into one sorted sequence first: each key is
  // built once, as the file takes it (with 1M keys an epoch, building every full key first
  // and merging them cost a sixth of the commit's write).
  std::vector<Cursor> cursors;
  cursors.reserve(records.runs.size() + 1);
  for (const auto& run : records.runs) cursors.emplace_back(run);
  cursors.emplace_back(&records.points);
  std::vector<Cursor*> heap;
  for (Cursor& cursor : cursors) {
    if (cursor.valid()) heap.push_back(&cursor);
  }
  auto later = [](const Cursor* a, const Cursor* b) { return a->Compare(*b) > 0; };
  std::make_heap(heap.begin(), heap.end(), later);

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
  std::string key;
  while (!heap.empty() && status.ok()) {
    // The smallest key, and of its writes in the batch the last: every head of that key is
    // taken, in turn, and the one placed latest kept.
    const Cursor& first = *heap.front();
    uint64_t prefix = first.prefix();
    key.assign(first.key().data(), first.key().size());  // The cursor's own moves on.
    RecordCollector::Point last = first.head();
    Cursor* cursor = nullptr;
    do {
      std::pop_heap(heap.begin(), heap.end(), later);
      cursor = heap.back();
      if (cursor->head().order >= last.order) last = cursor->head();
      cursor->Next();
      if (cursor->valid()) {
        std::push_heap(heap.begin(), heap.end(), later);
      } else {
        heap.pop_back();
      }
      // A run's keys are distinct: the same run next is the next key.
    } while (!heap.empty() && (heap.front() != cursor || !cursor->distinct()) &&
             heap.front()->Compare(prefix, key) == 0);
    last.key = rocksdb::Slice(key);
    if (!records.ranges.empty() && hidden_by_later_range(last)) continue;
    status = last.is_delete ? writer.Delete(last.key) : writer.Put(last.key, last.value);
  }
  for (const auto& range : records.ranges) {
    if (!status.ok()) break;
    status = writer.DeleteRange(range.begin, range.end);
  }
  if (status.ok()) status = writer.Finish();  // Syncs the file.
  return status;
}

}  // namespace stave::storage

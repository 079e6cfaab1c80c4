#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/container/node_hash_map.h>
#include <absl/hash/hash.h>

#include "executor/operators/stream_operator.h"
#include "planner/logical_plan.h"
#include "storage/row_codec.h"
#include "storage/state_table.h"

namespace stave::executor {

/// A symmetric hash join of two changelogs (inner, left, right or full outer, semi or
/// anti), for streaming. Each side's rows live in a state table of their own, one entry per
/// row, keyed by the join key and then the encoded row (a group of the state table: one prefix
/// scan reads a key's rows), holding the row's multiplicity and, for a side an outer join
/// preserves, its match count (how many rows of the other side it meets). A change on one side
/// is applied to its own rows of the key and probes the other side's rows of the same key:
///
/// - an insert emits one joined row per matching row (times its multiplicity); a delete
///   emits the same rows as retractions;
/// - for an outer join, a preserved row with no match is emitted padded with NULLs; the
///   padded row is retracted when its match count goes from 0 to 1 and emitted again when
///   it drops back to 0 (so the state must keep the count: it cannot be recomputed without
///   reading the whole other side's entry for every change);
/// - a semi (anti) join keeps the left rows' match counts the same way and emits a left row
///   alone while its count is above 0 (is 0): inserted when the count crosses 0 one way,
///   retracted when it crosses back;
/// - rows whose key holds a NULL never match: they are not stored, and an outer join
///   passes them on padded (and their deletes as retractions) at once.
///
/// Both inputs arrive by hash exchanges on the join key, with the same encoding as the
/// state keys, so each instance sees all rows of its keys' virtual nodes, from both sides.
/// The task aligns barriers across both inputs; OnBarrier flushes both state tables into
/// the epoch's batch, so recovery restarts from exactly the checkpointed state.
///
/// The keys an epoch touches are worked on in memory (KeyRows): a change costs a
/// hash lookup of its row, and at the barrier only the rows that changed are written, so a
/// hot key holding thousands of rows costs what changed in it, not its size, every epoch.
/// Past the barrier, keys stay cached up to a memory budget, so a hot key is not
/// read again every epoch; a key is evicted only once the epochs that wrote it have
/// committed, so a key read from the store is always read whole. A row inserted under a key
/// not cached reads only its own stored copy, by a point lookup the store's Bloom filters
/// answer: the key is cached partial, its new rows only, until something needs its rows
/// whole (a probe from the other side, a retraction, an expiry) and reads the others. So the
/// inserts of a side of many keys (q7's bids, by price) cost no scan each once its state
/// has outgrown the cache. The cache holds exactly
/// what the state table would answer, and a new instance starts with it empty, so recovery
/// reads the checkpointed state as before.
///
/// A side whose input only grows (JoinNode::appends: a stream's bids, say) never sends a
/// delete, nor a row it must count as a copy of one it holds: it stores each row under its
/// encoding and a suffix of its own. Inserting one reads nothing, not even a point lookup.
/// Where the other side's rows never change its stored rows either (no outer join keeps
/// them, no semi or anti join filters them), and seldom probe them, a row whose key is not
/// cached stays out of the cache: it is appended to the epoch's log of such rows
/// (AppendedRows), written from there at the barrier, and kept until its epoch commits, so
/// that whatever needs its key's rows before then takes them into the cache (TakeAppended).
/// q7's bids, one per price mostly and probed only by the windows' maxima, each cost a copy
/// and a hash slot, where a cache entry of their own cost several allocations, its
/// bookkeeping, and its memory's pages.
///
/// State written before this layout held a key's rows in one entry (the join key alone, the
/// rows in EncodeEntries' form). Such an entry is still read, and rewritten in the new
/// layout at the next barrier.
///
/// State cleaning by watermark: where the plan gives a side expiry terms (`node->expiry`,
/// from time bounds between the two sides: an interval join, a join of windows on their
/// bounds), a stored row of that side is dropped once the other side's watermark reaches
/// its expiry: no row still to come can meet it. Its joined rows stay in the result, and so
/// does an outer join's NULL-padded row of a row that never met anything, as in PostgreSQL's
/// answer over all the data. A row that expires on arrival probes the other side but is not
/// stored; a row whose time is NULL meets nothing. The keys holding expiring rows are
/// indexed in memory by expiry time; Start rebuilds the index from the state this instance
/// owns, so the state stays bounded across restarts.
class HashJoinOperator : public StreamOperator {
 public:
  /// `left_state` and `right_state`: each side's rows (separate slots of the view).
  /// `instance` of `parallelism`: whose virtual nodes' keys this instance holds.
  /// `cache_bytes`: about how much memory the keys cached past a barrier may take.
  HashJoinOperator(std::shared_ptr<const planner::JoinNode> node, storage::StateTable left_state,
                   storage::StateTable right_state, size_t instance = 0, size_t parallelism = 1,
                   size_t cache_bytes = size_t{64} << 20);

  void Start() override;
  void OnChunk(Chunk chunk) override { OnInputChunk(0, std::move(chunk)); }
  void OnInputChunk(size_t side, Chunk chunk) override;
  void OnInputWatermark(size_t side, int64_t watermark) override;
  void OnBarrier(storage::EpochBatch* batch) override;

  /// Keys of `side` indexed for expiry (for tests: the state a watermark will clean).
  size_t indexed_expiries(size_t side) const;
  /// Keys of `side` cached in memory (for tests).
  size_t cached_keys(size_t side) const { return cache_[side].size(); }
  /// Keys read from the state table since the operator started (cache misses it could not
  /// answer itself).
  size_t store_reads() const { return store_reads_; }
  /// Rows appended to the logs of appended rows since the operator started (for tests).
  size_t appended_uncached() const { return appended_uncached_; }
  size_t BufferedBytes() const override {
    // The changed keys are written to the epoch's batch at the barrier.
    return states_[0].buffered_bytes() + states_[1].buffered_bytes() + dirty_bytes_ +
           appended_bytes_;
  }

  /// One stored row of a side: its encoded values, how many copies of it there are (may
  /// go below zero for a moment when a retraction overtakes its insert through two
  /// upstream instances), and how many rows of the other side match it.
  struct Entry {
    std::string row;
    int64_t count = 0;
    int64_t matches = 0;
    /// For a side cleaned by watermark, when the row expires, once known (kExpiryUnknown
    /// before): a key's rows are checked at every expiry time of one of them, and decoding
    /// each again every time made a hot key's cleaning quadratic in decodes.
    int64_t expiry = kExpiryUnknown;
    bool dirty = false;  // Changed since the last barrier.
    /// RowHash(row) once the key's index has hashed it (0 before): the index rehashes every
    /// row each time it grows, and a hot key's rows number hundreds of thousands (q5's
    /// windows). In the padding after `dirty`: it costs no memory.
    uint32_t row_hash = 0;
  };
  static constexpr int64_t kExpiryUnknown = INT64_MIN;
  /// How finely a side whose rows expire by timestamps indexes their expiry times: 100 ms
  /// (in microseconds). Rows expiring by other times (bigints, in units of the user's) are
  /// indexed exactly.
  static constexpr int64_t kTimestampExpiryGranularity = 100'000;
  /// A row's stored value, its count and matches, written into `out`: no allocation (16
  /// bytes is past a string's own room).
  static std::string_view EncodeCounts(int64_t count, int64_t matches, char (&out)[16]);
  /// Throws XX001 on corrupt bytes.
  static Entry DecodeCounts(std::string_view row, std::string_view bytes);
  /// A key's rows in one entry, as state written before the one-entry-per-row layout holds
  /// them (read, never written, but by tests).
  static std::string EncodeEntries(const std::vector<Entry>& entries);
  /// Throws XX001 on corrupt bytes.
  static std::vector<Entry> DecodeEntries(std::string_view bytes);

 private:
  struct KeyRows;
  /// A row of an input chunk, with what OnInputChunk found for it before applying the chunk:
  /// its join key, its expiry (a side cleaned by watermark), the other side's rows of its
  /// key, and where its candidates for the residual condition begin.
  struct RowProbe {
    std::vector<Value> row;
    std::string key;
    bool null_key = false;  // A NULL in the key, or in a time it expires by.
    std::optional<int64_t> expiry;
    KeyRows* others = nullptr;
    size_t first_candidate = 0;
  };
  void ApplyRow(size_t side, const RowProbe& probe, int sign);
  void EmitRow(const std::vector<Value>& left, const std::vector<Value>& right, int64_t times);
  /// A semi or anti join's stored left row (`times` copies) whose match count went from
  /// `before_matches` to `after_matches`: inserted or retracted if that changes whether it
  /// is shown.
  void EmitFilteredLeft(const std::vector<Value>& left, int64_t before_matches,
                        int64_t after_matches, int64_t times);
  /// A row encoding's hash for the index: 32 bits (ample for millions of rows a key; past
  /// 2^25 slots lookups would only probe longer) and never 0, which Entry::row_hash keeps
  /// for "not hashed yet".
  static uint32_t RowHash(std::string_view row) {
    auto hash = static_cast<uint32_t>(absl::Hash<std::string_view>()(row));
    return hash == 0 ? 1 : hash;
  }
  /// Positions in a key's entries, hashed and compared by their rows' encodings (or found
  /// by an encoding itself): the index of a key's rows holds no copy of them.
  struct RowPositionHash {
    using is_transparent = void;
    std::vector<Entry>* entries = nullptr;
    size_t operator()(std::string_view row) const { return RowHash(row); }
    size_t operator()(uint32_t position) const {
      Entry& entry = (*entries)[position];
      if (entry.row_hash == 0) entry.row_hash = RowHash(entry.row);
      return entry.row_hash;
    }
  };
  struct RowPositionEq {
    using is_transparent = void;
    const std::vector<Entry>* entries = nullptr;
    std::string_view RowOf(uint32_t position) const { return (*entries)[position].row; }
    std::string_view RowOf(std::string_view row) const { return row; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return RowOf(a) == RowOf(b);
    }
  };
  using RowPositions = absl::flat_hash_set<uint32_t, RowPositionHash, RowPositionEq>;
  /// The rows of one key of one side. Once the other side has probed a key of a few rows,
  /// `rows[i]` is `entries[i].row` decoded (`decoded`), kept in step with `entries` from
  /// then on; a key of more rows, or one only ever written (the many prices of q7's bids,
  /// say), costs no decoded copy.
  /// Never copied or moved (it lives in the cache's nodes): `positions` points at `entries`.
  struct KeyRows {
    KeyRows() = default;
    KeyRows(const KeyRows&) = delete;
    KeyRows& operator=(const KeyRows&) = delete;

    std::vector<Entry> entries;
    std::vector<std::vector<Value>> rows;
    bool decoded = false;
    /// The positions of `entries`, by row, built once the key has many rows (a scan is
    /// cheaper for a few), then kept up to date.
    RowPositions positions;
    /// Rows removed since the last barrier, which the state table may hold.
    std::vector<std::string> removed;
    size_t bytes = 0;     // Of the encoded rows, roughly what the key costs in memory.
    bool dirty = false;   // Changed since the last barrier.
    bool legacy = false;  // Read from a one-entry key, to be rewritten a row each.
    // Holds only the rows inserted since the key was cached, and their stored copies; the
    // store holds the others, as of its last commit (Complete reads them). Never removes a
    // row while partial: what the store holds of it would come back.
    bool partial = false;
    uint8_t point_reads = 0;     // Point lookups for its inserts while partial.
    uint64_t written_epoch = 0;  // The last epoch whose batch it was written into.
  };
  using Cache = absl::node_hash_map<std::string, KeyRows>;
  /// The key's entry in the cache, after taking its rows from the logs of appended rows if
  /// it has some there; end() if not cached.
  Cache::iterator FindCached(size_t side, const std::string& key);
  /// The key's rows: from the cache, else read from the state table and cached.
  KeyRows& Load(size_t side, const std::string& key);
  /// As Load, but null (and nothing cached) for a key the side does not hold.
  KeyRows* Probe(size_t side, const std::string& key);
  /// The key's rows for an insert of `encoded`: as Load for a cached key; for one not cached
  /// (and maybe stored), a partial key holding that row's stored copy, if any.
  KeyRows& LoadToInsert(size_t side, const std::string& key, const std::string& encoded);
  /// The key's rows for a new row of a growing side (JoinNode::appends), which no stored row
  /// can be: as cached, else a new key, partial unless the store is known to hold none of it.
  KeyRows& LoadToAppend(size_t side, const std::string& key);
  /// Whether a new row of `side` under a key not cached goes to the log of appended rows
  /// (AppendUncached): the side grows, the other side's rows never change its stored ones
  /// (an appended row is written once, as it came), and the other side probes it seldom,
  /// less than once per 8 rows it adds. A key probed after its log has committed is read
  /// from the store, which a side probed by nearly every row of the other (q4's auctions, by
  /// their bids) would pay for each of its keys.
  bool KeepsAppendsUncached(size_t side) const;
  /// Appends a new row of such a side, under a key the cache lacks, to this epoch's log of
  /// appended rows.
  void AppendUncached(size_t side, const std::string& key, std::string_view encoded,
                      int64_t matches, int64_t expiry);
  /// Moves the key's rows from the logs of appended rows into the cache, where it is
  /// not cached; returns whether there were any (the key is cached then).
  bool TakeAppended(size_t side, const std::string& key);
  /// Writes this epoch's appended rows of `side` into its state table (at the barrier), and
  /// keeps them, until `epoch` commits, for TakeAppended.
  void WriteAppended(size_t side, uint64_t epoch);
  /// Drops the logs of appended rows whose epochs have committed: the store holds their
  /// rows, and lists their keys.
  void DropCommittedAppended(size_t side);
  /// Appends to a growing side's encoded row the suffix that makes it a row of its own.
  void AppendRowSuffix(std::string* encoded);
  /// A stored row's encoding: without its suffix, on a growing side.
  std::string_view RowEncoding(size_t side, std::string_view stored) const;
  /// Reads the rows a partial key lacks from the state table.
  void Complete(size_t side, const std::string& key, KeyRows& rows);
  /// Whether caching a key of `side` partial pays: not where most such keys are read whole
  /// soon after anyway (probed by every row of the other side, as q4's auctions are), which
  /// costs their point lookups on top of the read. A few keys still go partial then, so that
  /// the side can tell when it pays again.
  bool PartialPays(size_t side);
  /// A join key's hash, as stored_keys_ and the logs of appended rows list it.
  static uint64_t KeyHash(std::string_view key) { return absl::Hash<std::string_view>()(key); }
  /// Whether the state table may hold rows of `key` (committed ones, which a key cached
  /// partial lacks).
  bool MayBeStored(size_t side, const std::string& key) const {
    return !stored_keys_listed_[side] || stored_keys_[side].contains(KeyHash(key));
  }
  /// Records that the state table holds rows of the key of hash `hash` (a key leaving the
  /// cache, or a log of appended rows committed).
  void ListStored(size_t side, uint64_t hash);
  /// The entry of expiry_index_[side] that indexes a row expiring at `expiry`: `expiry`
  /// rounded up to the side's granularity.
  int64_t ExpiryBucket(size_t side, int64_t expiry) const;
  /// The join key of a key scanned from `side`'s state table, and its virtual node.
  std::string_view JoinKeyOf(size_t side, std::string_view stored, uint16_t* virtual_node) const;
  /// Reads the key's rows from the state table into the cache; null if it holds none and
  /// `keep_empty` is false.
  KeyRows* Read(size_t side, const std::string& key, bool keep_empty);
  /// The position of `encoded` among the key's rows, or entries.size().
  size_t FindRow(KeyRows& rows, const std::string& encoded) const;
  /// Appends a row with no copies yet (`row` is `encoded` decoded).
  void AddRow(size_t side, KeyRows& rows, std::string encoded, const std::vector<Value>& row,
              int64_t matches);
  void RemoveRow(size_t side, KeyRows& rows, size_t position);
  /// Records that the key changes in this epoch: it is written at the barrier.
  void MarkDirty(size_t side, const std::string& key, KeyRows& rows);
  /// Records that a row of the key changes in this epoch.
  void MarkDirty(size_t side, const std::string& key, KeyRows& rows, Entry& entry);
  /// Writes the changed rows of a dirty key into the state table.
  void WriteKey(size_t side, const std::string& key, KeyRows& rows);
  /// A stored row of `side` decoded. Throws XX001 on corrupt bytes.
  std::vector<Value> DecodeStoredRow(size_t side, std::string_view row) const;
  /// The key's rows decoded, kept so from now on, if the key has a few rows; null for a
  /// larger key, whose rows are decoded one at a time where needed.
  const std::vector<std::vector<Value>>* Decoded(size_t side, KeyRows& rows);
  /// Appends to candidates_ a candidate pair for the residual condition of `row` (of `side`)
  /// with each of `others`' rows (of the other side).
  void AddCandidates(size_t side, const std::vector<Value>& row, KeyRows& others);
  /// What a cached key takes in memory, roughly.
  size_t KeyMemory(size_t side, const KeyRows& rows) const;

  /// When a row of `side` expires: the earliest of its terms; nullopt if a term's column is
  /// NULL (the row meets nothing). REQUIRES: the side has expiry terms.
  std::optional<int64_t> RowExpiry(size_t side, const std::vector<Value>& row) const;
  /// Indexes the expiring rows of the keys in `side`'s state that this instance owns.
  void LoadExpiryIndex(size_t side, const storage::Snapshot& snapshot);
  /// Drops the rows of `side` whose expiry is at or below `watermark`.
  void ExpireRows(size_t side, int64_t watermark);

  std::shared_ptr<const planner::JoinNode> node_;
  storage::StateTable states_[2];
  storage::RowTypes types_[2];
  std::vector<DataType> output_types_;
  // The residual condition over only the columns of a pair (the left's, then the right's)
  // it reads, `residual_columns_`, of `residual_types_`: a key's candidates are tested
  // without copying the columns the condition does not look at (long strings, often).
  planner::BoundExprPtr residual_;
  std::vector<size_t> residual_columns_;
  std::vector<DataType> residual_types_;
  // Per side: where each of its columns goes among the residual's (-1: not read).
  std::vector<int> residual_positions_[2];
  // OnInputChunk's, kept with their memory: its rows' probes, their candidate pairs for the
  // residual condition, and which pairs meet it.
  std::vector<RowProbe> probes_;
  Chunk candidates_;
  std::vector<uint8_t> matching_;
  Chunk output_;
  std::vector<Value> probe_row_;     // A row of a large key, decoded for a probe.
  std::string encode_scratch_;       // ApplyRow's: a row encoded, before its exact-size copy.
  std::vector<Value> null_rows_[2];  // A side's row of NULLs, for padding.
  size_t instance_;
  size_t parallelism_;
  // Each side's watermark: rows of the other side expire against it.
  int64_t watermarks_[2] = {INT64_MIN, INT64_MIN};
  // Per side with expiry terms: expiry time, rounded up to the side's granularity
  // (ExpiryBucket) → keys holding a row that expires by then. Exact, each bid of a stream
  // took an entry of its own (q4's and q7's bids expire by their own microsecond): rounded,
  // a bucket lists each key once for all its rows, and the index shrinks to a few entries
  // per key. A row is then dropped up to one granularity later than it could be, never
  // earlier. A bucket's keys are hashed, not ordered: a bucket of q7's holds most prices
  // bid in its 100 ms, and the order in which its keys are cleaned changes no result.
  std::map<int64_t, absl::flat_hash_set<std::string>> expiry_index_[2];
  int64_t expiry_granularity_[2] = {1, 1};
  // Per side: join key → its rows; the keys changed in this epoch; bytes cached. A node
  // map: KeyRows stay where they are (dirty_ and their own index point at them).
  Cache cache_[2];
  std::vector<std::pair<const std::string*, KeyRows*>> dirty_[2];
  // Per side (KeepsAppendsUncached): the rows appended under keys not cached, in a log per
  // epoch, the oldest first, until their epoch commits; the last is this epoch's (`epoch`
  // 0) once this epoch has appended one. A key's rows are chained from its last, found by the key's
  // hash (another key of the same hash may share the chain: its rows are told apart by
  // their key).
  struct AppendedRow {
    uint32_t key_offset;  // In `bytes`: the join key, then the encoded row.
    uint32_t key_size;
    uint32_t row_size;
    uint32_t previous;  // The key's previous row in the log, or kNoRow.
    int64_t matches;
    int64_t expiry;
    bool taken = false;  // Moved into the cache.
  };
  static constexpr uint32_t kNoRow = UINT32_MAX;
  struct AppendedRows {
    uint64_t epoch = 0;  // The epoch whose batch holds its rows; 0 for this epoch's.
    std::string bytes;
    std::vector<AppendedRow> rows;
    absl::flat_hash_map<uint64_t, uint32_t> last_row;  // Key hash → its last row.
    size_t keys_before = 0;  // Keys of the log whose memory it reuses: room for as many.
  };
  std::deque<AppendedRows> appended_[2];
  AppendedRows spare_appended_[2];  // A dropped log's memory, emptied, for the next.
  size_t appended_bytes_ = 0;       // Of this epoch's logs, as the state table will hold them.
  // Per side: the hashes of the keys that may have rows in the side's state, while they
  // are few enough to list (`stored_keys_listed_`): a key not cached and not listed has
  // no rows, so a probe of it need not read the store (q4's auctions probing for bids that
  // come after them, q7's window maxima probing every price). Listed from Start's scan of a
  // small state (at most kListedKeys rows), then as keys leave the cache and as logs of
  // appended rows commit (this operator is its state's only writer), until the list
  // outgrows listed_keys_, a budget of 16 bytes a key within an eighth of the cache's. A
  // key is never unlisted: one listed without rows any more (or sharing a hash) costs a
  // read, no more.
  static constexpr size_t kListedKeys = size_t{1} << 16;
  absl::flat_hash_set<uint64_t> stored_keys_[2];
  bool stored_keys_listed_[2] = {false, false};
  size_t listed_keys_;
  size_t store_reads_ = 0;
  size_t appended_uncached_ = 0;
  // Per side: probes of its keys by the other side's rows, and rows added to it, halved at
  // each trim of the cache. A trim evicts first from the side probed less per row it
  // stores: q4's bids (an auction probes its key once) before the auctions every bid probes,
  // even where the auctions' source runs ahead and their keys wait long for their bids.
  double probes_of_[2] = {0, 0};
  double rows_added_[2] = {0, 0};
  // Per side: the keys cached partial lately, and how many of them had to be read whole
  // after all (PartialPays).
  struct PartialStats {
    uint32_t keys = 0;
    uint32_t completed = 0;
    uint32_t declined = 0;
  };
  PartialStats partial_stats_[2];
  // What a growing side's row suffixes are made of: the run (Start), unique among all the
  // runs whose rows the state may hold, and the row's number in it.
  uint64_t run_epoch_ = 0;
  uint64_t run_number_ = 0;
  uint64_t next_row_ = 0;
  size_t cached_bytes_ = 0;
  size_t dirty_bytes_ = 0;
  size_t cache_bytes_;
};

}  // namespace stave::executor

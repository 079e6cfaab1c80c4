#include "executor/operators/hash_join_operator.h"

#include <algorithm>
#include <atomic>

#include "common/sql_error.h"
#include "executor/expression_evaluator.h"
#include "executor/runtime/partitioner.h"
#include "storage/key_codec.h"
#include "storage/varint.h"

namespace stave::executor {

namespace {

// How many join operators this process has made or started: with the epoch committed at
// the start, what tells one run's rows from another's (AppendRowSuffix).
std::atomic<uint64_t> join_runs{0};

/// `expr` over the columns it reads only, renumbered in `positions` (old → new, in order of
/// first use); null if it holds something other than constants, columns and functions.
planner::BoundExprPtr CompactColumns(const planner::BoundExprPtr& expr,
                                     std::map<size_t, size_t>* positions) {
  using planner::BoundExpr;
  switch (expr->kind) {
    case BoundExpr::Kind::kConstant:
      return expr;
    case BoundExpr::Kind::kColumn: {
      size_t position = positions->emplace(expr->column, positions->size()).first->second;
      return BoundExpr::MakeColumn(position, expr->type);
    }
    case BoundExpr::Kind::kFunction: {
      std::vector<planner::BoundExprPtr> args;
      for (const auto& arg : expr->args) {
        args.push_back(CompactColumns(arg, positions));
        if (!args.back()) return nullptr;
      }
      return BoundExpr::MakeFunction(expr->function, expr->type, std::move(args));
    }
    default:
      return nullptr;
  }
}

}  // namespace

HashJoinOperator::HashJoinOperator(std::shared_ptr<const planner::JoinNode> node,
                                   storage::StateTable left_state, storage::StateTable right_state,
                                   size_t instance, size_t parallelism, size_t cache_bytes)
    : node_(std::move(node)),
      states_{std::move(left_state), std::move(right_state)},
      instance_(instance),
      parallelism_(parallelism),
      listed_keys_(std::max(kListedKeys, cache_bytes / 8 / 16)),
      run_epoch_(states_[0].store()->committed_epoch()),
      run_number_(join_runs.fetch_add(1)),
      cache_bytes_(cache_bytes) {
  for (const auto& column : node_->input->output) types_[0].push_back(column.type);
  for (const auto& column : node_->right->output) types_[1].push_back(column.type);
  for (const auto& column : node_->output) output_types_.push_back(column.type);
  for (size_t side = 0; side < 2; ++side) {
    bool timestamps = !node_->expiry[side].empty();
    for (const planner::JoinNode::Expiry& term : node_->expiry[side]) {
      timestamps = timestamps && types_[side][term.column].IsTimestamp();
    }
    if (timestamps) expiry_granularity_[side] = kTimestampExpiryGranularity;
  }
  if (node_->residual) {
    std::vector<DataType> joined_types = types_[0];
    joined_types.insert(joined_types.end(), types_[1].begin(), types_[1].end());
    std::map<size_t, size_t> positions;
    residual_ = CompactColumns(node_->residual, &positions);
    if (!residual_) {
      // An expression this does not know how to rewrite: tested over whole pairs.
      residual_ = node_->residual;
      positions.clear();
      for (size_t c = 0; c < joined_types.size(); ++c) positions.emplace(c, c);
    }
    residual_columns_.resize(positions.size());
    residual_types_.resize(positions.size());
    residual_positions_[0].assign(types_[0].size(), -1);
    residual_positions_[1].assign(types_[1].size(), -1);
    size_t left_width = types_[0].size();
    for (const auto& [column, position] : positions) {
      residual_columns_[position] = column;
      residual_types_[position] = joined_types[column];
      if (column < left_width) {
        residual_positions_[0][column] = static_cast<int>(position);
      } else {
        residual_positions_[1][column - left_width] = static_cast<int>(position);
      }
    }
    candidates_ = Chunk::WithTypes(residual_types_);
  }
  null_rows_[0].resize(types_[0].size());
  null_rows_[1].resize(types_[1].size());
  output_ = Chunk::WithTypes(output_types_);
}

std::string_view HashJoinOperator::EncodeCounts(int64_t count, int64_t matches, char (&out)[16]) {
  auto put = [&out](size_t at, int64_t value) {  // Big-endian, as AppendBigEndian64.
    auto bits = static_cast<uint64_t>(value);
    for (size_t i = 0; i < 8; ++i) out[at + i] = static_cast<char>(bits >> (56 - 8 * i));
  };
  put(0, count);
  put(8, matches);
  return {out, sizeof(out)};
}

HashJoinOperator::Entry HashJoinOperator::DecodeCounts(std::string_view row,
                                                       std::string_view bytes) {
  if (bytes.size() != 16) throw SqlError("XX001", "corrupt join state");
  Entry entry;
  entry.row = std::string(row);
  entry.count = static_cast<int64_t>(storage::ReadBigEndian64(bytes));
  entry.matches = static_cast<int64_t>(storage::ReadBigEndian64(bytes.substr(8)));
  return entry;
}

std::string HashJoinOperator::EncodeEntries(const std::vector<Entry>& entries) {
  std::string bytes;
  for (const Entry& entry : entries) {
    storage::AppendBigEndian32(static_cast<uint32_t>(entry.row.size()), &bytes);
    bytes += entry.row;
    storage::AppendBigEndian64(static_cast<uint64_t>(entry.count), &bytes);
    storage::AppendBigEndian64(static_cast<uint64_t>(entry.matches), &bytes);
  }
  return bytes;
}

std::vector<HashJoinOperator::Entry> HashJoinOperator::DecodeEntries(std::string_view bytes) {
  std::vector<Entry> entries;
  while (!bytes.empty()) {
    if (bytes.size() < 4) throw SqlError("XX001", "corrupt join state");
    uint32_t size = storage::ReadBigEndian32(bytes);
    bytes.remove_prefix(4);
    if (bytes.size() < size + 16u) throw SqlError("XX001", "corrupt join state");
    Entry entry;
    entry.row = std::string(bytes.substr(0, size));
    bytes.remove_prefix(size);
    entry.count = static_cast<int64_t>(storage::ReadBigEndian64(bytes));
    entry.matches = static_cast<int64_t>(storage::ReadBigEndian64(bytes.substr(8)));
    bytes.remove_prefix(16);
    entries.push_back(std::move(entry));
  }
  return entries;
}

namespace {

/// What a row costs in the state table: its key's row part and its counts.
size_t EncodedSize(std::string_view row) { return 4 + row.size() + 16; }

/// Keys with at most this many rows are searched by a scan, not indexed.
constexpr size_t kIndexedRows = 16;

/// Keys with at most this many rows keep them decoded once probed; larger keys decode them
/// for each probe. A decoded row takes several times its encoding (a Value per column), and
/// memory allocated afresh costs more than decoding again: q5's windows, each holding a row
/// per auction and probed once an epoch, ran 5–15 % faster without keeping them.
constexpr size_t kDecodedRows = 16;

}  // namespace

size_t HashJoinOperator::KeyMemory(size_t side, const KeyRows& rows) const {
  // The encoded rows, their entries and index slots, the decoded values if any.
  size_t decoded = rows.decoded ? sizeof(Value) * types_[side].size() : 0;
  return 128 + rows.bytes + rows.entries.size() * (sizeof(Entry) + 16 + decoded);
}

std::vector<Value> HashJoinOperator::DecodeStoredRow(size_t side, std::string_view row) const {
  std::optional<std::vector<Value>> decoded =
      storage::DecodeRow(RowEncoding(side, row), types_[side]);
  if (!decoded) throw SqlError("XX001", "corrupt join state");
  return std::move(*decoded);
}

const std::vector<std::vector<Value>>* HashJoinOperator::Decoded(size_t side, KeyRows& rows) {
  if (rows.decoded) return &rows.rows;
  if (rows.entries.size() > kDecodedRows) return nullptr;
  size_t before = KeyMemory(side, rows);
  rows.rows.resize(rows.entries.size());
  for (size_t i = 0; i < rows.entries.size(); ++i) {
    rows.rows[i] = DecodeStoredRow(side, rows.entries[i].row);
  }
  rows.decoded = true;
  cached_bytes_ = cached_bytes_ - before + KeyMemory(side, rows);
  return &rows.rows;
}

namespace {

/// Appends the columns of an encoded row that a residual condition reads to the candidates'
/// columns (`positions[c]`: where column c goes, or -1), skipping the others.
struct ResidualColumns {
  const std::vector<int>& positions;
  Chunk& candidates;
  Column* To(size_t i) {
    return positions[i] < 0 ? nullptr : &candidates.columns[static_cast<size_t>(positions[i])];
  }
  void Null(size_t i) {
    if (Column* column = To(i)) column->AppendNull();
  }
  void Int(size_t i, int64_t value) {
    if (Column* column = To(i)) column->AppendInt(value);
  }
  void Double(size_t i, double value) {
    if (Column* column = To(i)) column->AppendDouble(value);
  }
  void String(size_t i, std::string_view value) {
    if (Column* column = To(i)) column->AppendString(std::string(value));
  }
  void Numeric(size_t i, const Decimal& value) {
    if (Column* column = To(i)) column->AppendDecimal(value);
  }
};

}  // namespace

void HashJoinOperator::AddCandidates(size_t side, const std::vector<Value>& row, KeyRows& others) {
  size_t other = 1 - side;
  // One candidate per row of the other side, of the columns the condition reads: this
  // row's (the same in each) and the other row's, read from its encoding where the key
  // keeps no decoded copy.
  const std::vector<std::vector<Value>>* other_rows = Decoded(other, others);
  size_t left_width = types_[0].size();
  ResidualColumns from_encoded{residual_positions_[other], candidates_};
  for (size_t r = 0; r < others.entries.size(); ++r) {
    for (size_t i = 0; i < residual_columns_.size(); ++i) {
      size_t column = residual_columns_[i];
      bool mine = (column < left_width) == (side == 0);
      size_t in_side = column < left_width ? column : column - left_width;
      if (mine) {
        candidates_.columns[i].AppendValue(row[in_side]);
      } else if (other_rows) {
        candidates_.columns[i].AppendValue((*other_rows)[r][in_side]);
      }
    }
    if (!other_rows && !storage::VisitRow(RowEncoding(other, others.entries[r].row), types_[other],
                                          from_encoded)) {
      throw SqlError("XX001", "corrupt join state");
    }
    candidates_.ops.push_back(RowOp::kInsert);
  }
}

HashJoinOperator::KeyRows& HashJoinOperator::Load(size_t side, const std::string& key) {
  auto it = FindCached(side, key);
  if (it != cache_[side].end()) {
    if (it->second.partial) Complete(side, key, it->second);
    return it->second;
  }
  if (!MayBeStored(side, key)) {
    KeyRows& rows = cache_[side][key];  // A new key: nothing to read.
    cached_bytes_ += KeyMemory(side, rows);
    return rows;
  }
  return *Read(side, key, /*keep_empty=*/true);
}

HashJoinOperator::KeyRows* HashJoinOperator::Probe(size_t side, const std::string& key) {
  auto it = FindCached(side, key);
  if (it != cache_[side].end()) {
    if (it->second.partial) Complete(side, key, it->second);
    return &it->second;
  }
  if (!MayBeStored(side, key)) return nullptr;
  return Read(side, key, /*keep_empty=*/false);
}

HashJoinOperator::KeyRows* HashJoinOperator::Read(size_t side, const std::string& key,
                                                  bool keep_empty) {
  // Not cached, so not written since its epochs committed: the store holds it whole.
  ++store_reads_;
  std::vector<Entry> entries;
  bool legacy = false;
  Status status =
      states_[side].ScanCommittedGroup(key, [&](std::string_view row, std::string_view value) {
        if (!row.empty()) {
          entries.push_back(DecodeCounts(row, value));
          return true;
        }
        // The key's one entry of all its rows, as written before a row had its own.
        for (Entry& entry : DecodeEntries(value)) {
          entry.dirty = true;
          entries.push_back(std::move(entry));
        }
        legacy = true;
        return true;
      });
  if (!status.ok()) throw SqlError(sqlstate::kIoError, status.message());
  if (entries.empty() && !keep_empty) return nullptr;
  KeyRows& rows = cache_[side][key];
  rows.entries = std::move(entries);
  for (const Entry& entry : rows.entries) rows.bytes += EncodedSize(entry.row);
  cached_bytes_ += KeyMemory(side, rows);
  if (legacy) {
    rows.legacy = true;
    MarkDirty(side, key, rows);
    dirty_bytes_ += rows.bytes;
  }
  return &rows;
}

HashJoinOperator::KeyRows& HashJoinOperator::LoadToInsert(size_t side, const std::string& key,
                                                          const std::string& encoded) {
  auto it = FindCached(side, key);
  if (it == cache_[side].end() && !MayBeStored(side, key)) return Load(side, key);
  if (it != cache_[side].end() && !it->second.partial) return it->second;
  if (it == cache_[side].end() && !PartialPays(side)) return Load(side, key);
  KeyRows& rows = it != cache_[side].end() ? it->second : cache_[side][key];
  if (it == cache_[side].end()) {
    rows.partial = true;
    ++partial_stats_[side].keys;
    cached_bytes_ += KeyMemory(side, rows);
  }
  size_t position = FindRow(rows, encoded);
  // A key that takes many inserts (a hot auction's bids) is read whole once instead.
  constexpr uint8_t kPointReadsBeforeRead = 1;
  if (position == rows.entries.size() && rows.point_reads >= kPointReadsBeforeRead) {
    Complete(side, key, rows);
    return rows;
  }
  if (position == rows.entries.size()) {
    ++rows.point_reads;
    storage::StateTable& state = states_[side];
    if (state.GetInGroup(key, "").ValueOrThrow()) {
      Complete(side, key, rows);  // A key in the one-entry form of old: read whole.
      return rows;
    }
    if (std::optional<std::string> stored = state.GetInGroup(key, encoded).ValueOrThrow()) {
      Entry entry = DecodeCounts(encoded, *stored);
      size_t before = KeyMemory(side, rows);
      rows.bytes += EncodedSize(entry.row);
      rows.entries.push_back(std::move(entry));
      if (!rows.positions.empty()) rows.positions.insert(rows.entries.size() - 1);
      cached_bytes_ = cached_bytes_ - before + KeyMemory(side, rows);
      position = rows.entries.size() - 1;
    }
  }
  // An insert that takes a row's count to zero removes it: that needs the key whole.
  if (position < rows.entries.size() && rows.entries[position].count == -1) {
    Complete(side, key, rows);
  }
  return rows;
}

HashJoinOperator::KeyRows& HashJoinOperator::LoadToAppend(size_t side, const std::string& key) {
  auto it = FindCached(side, key);
  if (it != cache_[side].end()) return it->second;  // Partial or not, the row joins it.
  KeyRows& rows = cache_[side][key];
  // The store may hold rows of the key: they are read once something needs them all.
  rows.partial = MayBeStored(side, key);
  cached_bytes_ += KeyMemory(side, rows);
  return rows;
}

HashJoinOperator::Cache::iterator HashJoinOperator::FindCached(size_t side,
                                                               const std::string& key) {
  auto it = cache_[side].find(key);
  if (it == cache_[side].end() && TakeAppended(side, key)) it = cache_[side].find(key);
  return it;
}

bool HashJoinOperator::KeepsAppendsUncached(size_t side) const {
  // The other side's rows change a stored row's match count where the row is shown padded
  // while it has no match (an outer join keeping this side), or filtered by its matches
  // (the left side of a semi or anti join).
  bool counted = side == 0 ? node_->PadsLeft() || node_->FiltersLeft() : node_->PadsRight();
  constexpr double kRowsPerProbe = 8;
  return node_->appends[side] && !counted && probes_of_[side] * kRowsPerProbe < rows_added_[side];
}

void HashJoinOperator::AppendUncached(size_t side, const std::string& key, std::string_view encoded,
                                      int64_t matches, int64_t expiry) {
  std::deque<AppendedRows>& logs = appended_[side];
  // A log's offsets are 32 bits: an epoch appending more takes another log.
  if (logs.empty() || logs.back().epoch != 0 || logs.back().rows.size() >= kNoRow - 1 ||
      logs.back().bytes.size() + key.size() + encoded.size() > UINT32_MAX) {
    // The memory of a log dropped since, which an epoch likely fills as much again: grown
    // afresh, an epoch's log had its pages zeroed anew.
    logs.push_back(std::move(spare_appended_[side]));
    spare_appended_[side] = AppendedRows();
    logs.back().last_row.reserve(logs.back().keys_before);
  }
  AppendedRows& log = logs.back();
  auto last = log.last_row.try_emplace(KeyHash(key), kNoRow).first;
  log.rows.push_back({static_cast<uint32_t>(log.bytes.size()), static_cast<uint32_t>(key.size()),
                      static_cast<uint32_t>(encoded.size()), last->second, matches, expiry});
  last->second = static_cast<uint32_t>(log.rows.size() - 1);
  log.bytes.append(key);
  log.bytes.append(encoded);
  appended_bytes_ += key.size() + EncodedSize(encoded);
  ++appended_uncached_;
}

void HashJoinOperator::DropCommittedAppended(size_t side) {
  std::deque<AppendedRows>& logs = appended_[side];
  while (!logs.empty() && logs.front().epoch != 0 && states_[side].Committed(logs.front().epoch)) {
    // Listed only now: until its epoch committed, a key's rows were the log's alone, and a
    // new key taken from it into the cache is whole.
    AppendedRows& log = logs.front();
    for (const auto& [hash, last] : log.last_row) ListStored(side, hash);
    if (spare_appended_[side].bytes.capacity() < log.bytes.capacity()) {
      log.epoch = 0;
      log.keys_before = log.last_row.size();
      log.bytes.clear();
      log.rows.clear();
      log.last_row.clear();  // Its memory is not kept past a small size.
      spare_appended_[side] = std::move(log);
    }
    logs.pop_front();
  }
}

bool HashJoinOperator::TakeAppended(size_t side, const std::string& key) {
  DropCommittedAppended(side);
  std::deque<AppendedRows>& logs = appended_[side];
  if (logs.empty()) return false;
  uint64_t hash = KeyHash(key);
  KeyRows* rows = nullptr;
  for (AppendedRows& log : logs) {
    auto last = log.last_row.find(hash);
    if (last == log.last_row.end()) continue;
    bool all_taken = true;
    for (uint32_t i = last->second; i != kNoRow; i = log.rows[i].previous) {
      AppendedRow& appended = log.rows[i];
      std::string_view bytes(log.bytes.data() + appended.key_offset,
                             appended.key_size + appended.row_size);
      if (appended.taken || bytes.substr(0, appended.key_size) != key) {
        all_taken = all_taken && appended.taken;
        continue;
      }
      appended.taken = true;
      if (!rows) {
        rows = &cache_[side][key];
        rows->partial = MayBeStored(side, key);  // Rows of it from before, committed.
        cached_bytes_ += KeyMemory(side, *rows);
      }
      size_t before = KeyMemory(side, *rows);
      Entry entry;
      entry.row = std::string(bytes.substr(appended.key_size));
      entry.count = 1;
      entry.matches = appended.matches;
      entry.expiry = appended.expiry;
      rows->bytes += EncodedSize(entry.row);
      rows->entries.push_back(std::move(entry));
      if (!rows->positions.empty()) rows->positions.insert(rows->entries.size() - 1);
      cached_bytes_ = cached_bytes_ - before + KeyMemory(side, *rows);
      if (log.epoch == 0) {
        // Not written yet: the cache writes it at this barrier instead of the log.
        appended_bytes_ -= appended.key_size + EncodedSize(rows->entries.back().row);
        MarkDirty(side, key, *rows, rows->entries.back());
      } else {
        // Written into an epoch not committed yet: the key stays cached until it is.
        rows->written_epoch = std::max(rows->written_epoch, log.epoch);
      }
    }
    if (all_taken) log.last_row.erase(last);
  }
  return rows != nullptr;
}

void HashJoinOperator::WriteAppended(size_t side, uint64_t epoch) {
  DropCommittedAppended(side);
  std::deque<AppendedRows>& logs = appended_[side];
  char counts[16];
  for (AppendedRows& log : logs) {
    if (log.epoch != 0) continue;
    for (const AppendedRow& row : log.rows) {
      if (row.taken) continue;
      std::string_view bytes(log.bytes.data() + row.key_offset, row.key_size + row.row_size);
      states_[side].WriteOnceInGroup(bytes.substr(0, row.key_size), bytes.substr(row.key_size),
                                     EncodeCounts(1, row.matches, counts));
    }
    log.epoch = epoch;
  }
}

void HashJoinOperator::AppendRowSuffix(std::string* encoded) {
  // Unique among the rows of the key: a run's rows are flushed in epochs after the one
  // committed when it started, so a run of another process that started at the same
  // committed epoch committed none of its rows, and runs of this process differ by number.
  size_t start = encoded->size();
  storage::AppendVarint(run_epoch_, encoded);
  storage::AppendVarint(run_number_, encoded);
  storage::AppendVarint(next_row_++, encoded);
  // Its length last, so that the encoding before it is found again.
  encoded->push_back(static_cast<char>(encoded->size() - start));
}

std::string_view HashJoinOperator::RowEncoding(size_t side, std::string_view stored) const {
  if (!node_->appends[side]) return stored;
  if (stored.empty() || static_cast<uint8_t>(stored.back()) >= stored.size()) {
    throw SqlError("XX001", "corrupt join state");
  }
  return stored.substr(0, stored.size() - 1 - static_cast<uint8_t>(stored.back()));
}

void HashJoinOperator::Complete(size_t side, const std::string& key, KeyRows& rows) {
  // The store holds the key as of its last commit. Every row written since is in `rows`
  // (a partial key never removes one, and stays cached until its writes commit), newer
  // than the store's copy: the store's other rows are what the key lacks.
  ++store_reads_;
  size_t before = KeyMemory(side, rows);
  bool legacy = false;
  Status status =
      states_[side].ScanCommittedGroup(key, [&](std::string_view row, std::string_view value) {
        std::vector<Entry> entries;
        if (!row.empty()) {
          entries.push_back(DecodeCounts(row, value));
        } else {
          entries = DecodeEntries(value);  // The key's one entry of all its rows, of old.
          for (Entry& entry : entries) entry.dirty = true;
          legacy = true;
        }
        for (Entry& entry : entries) {
          if (FindRow(rows, entry.row) < rows.entries.size()) continue;
          rows.bytes += EncodedSize(entry.row);
          rows.entries.push_back(std::move(entry));
          if (!rows.positions.empty()) rows.positions.insert(rows.entries.size() - 1);
        }
        return true;
      });
  if (!status.ok()) throw SqlError(sqlstate::kIoError, status.message());
  if (rows.partial) ++partial_stats_[side].completed;
  rows.partial = false;
  if (rows.decoded) {  // Decoded again when probed.
    std::vector<std::vector<Value>>().swap(rows.rows);
    rows.decoded = false;
  }
  cached_bytes_ = cached_bytes_ - before + KeyMemory(side, rows);
  if (legacy) {
    rows.legacy = true;
    MarkDirty(side, key, rows);
    dirty_bytes_ += rows.bytes;
  }
}

bool HashJoinOperator::PartialPays(size_t side) {
  PartialStats& stats = partial_stats_[side];
  constexpr uint32_t kWindow = 1 << 14;  // Keys judged on, the older ones weighing half.
  if (stats.keys >= kWindow) {
    stats.keys /= 2;
    stats.completed /= 2;
  }
  constexpr uint32_t kFirstKeys = 64;
  constexpr uint32_t kSampleOneIn = 16;
  if (stats.keys < kFirstKeys || stats.completed * 2 < stats.keys) return true;
  return ++stats.declined % kSampleOneIn == 0;
}

size_t HashJoinOperator::FindRow(KeyRows& rows, const std::string& encoded) const {
  if (rows.entries.size() <= kIndexedRows && rows.positions.empty()) {
    for (size_t i = 0; i < rows.entries.size(); ++i) {
      if (rows.entries[i].row == encoded) return i;
    }
    return rows.entries.size();
  }
  if (rows.positions.empty()) {
    rows.positions = RowPositions(rows.entries.size() * 2, RowPositionHash{&rows.entries},
                                  RowPositionEq{&rows.entries});
    for (size_t i = 0; i < rows.entries.size(); ++i) rows.positions.insert(i);
  }
  auto found = rows.positions.find(std::string_view(encoded));
  return found == rows.positions.end() ? rows.entries.size() : *found;
}

void HashJoinOperator::AddRow(size_t side, KeyRows& rows, std::string encoded,
                              const std::vector<Value>& row, int64_t matches) {
  size_t before = KeyMemory(side, rows);
  ++rows_added_[side];
  rows.bytes += EncodedSize(encoded);
  rows.entries.push_back(Entry{std::move(encoded), 0, matches});
  if (!rows.positions.empty()) rows.positions.insert(rows.entries.size() - 1);
  if (rows.decoded && rows.entries.size() > kDecodedRows) {
    // Grown past what is kept decoded: from now on decoded at each probe.
    std::vector<std::vector<Value>>().swap(rows.rows);
    rows.decoded = false;
  } else if (rows.decoded) {
    rows.rows.push_back(row);
  }
  cached_bytes_ = cached_bytes_ - before + KeyMemory(side, rows);
}

void HashJoinOperator::RemoveRow(size_t side, KeyRows& rows, size_t position) {
  size_t before = KeyMemory(side, rows);
  rows.bytes -= EncodedSize(rows.entries[position].row);
  dirty_bytes_ += EncodedSize(rows.entries[position].row);  // Its delete.
  // The last row takes its place: rows are a multiset, their order means nothing. The
  // index forgets both positions while their rows are still where it hashed them.
  size_t last = rows.entries.size() - 1;
  bool indexed = !rows.positions.empty();
  if (indexed) {
    rows.positions.erase(static_cast<uint32_t>(position));
    if (position != last) rows.positions.erase(static_cast<uint32_t>(last));
  }
  rows.removed.push_back(std::move(rows.entries[position].row));
  if (position != last) {
    rows.entries[position] = std::move(rows.entries[last]);
    if (rows.decoded) rows.rows[position] = std::move(rows.rows[last]);
  }
  rows.entries.pop_back();
  if (rows.decoded) rows.rows.pop_back();
  if (indexed && position != last) rows.positions.insert(static_cast<uint32_t>(position));
  cached_bytes_ -= before - KeyMemory(side, rows);
}

void HashJoinOperator::MarkDirty(size_t side, const std::string& key, KeyRows& rows) {
  if (rows.dirty) return;
  rows.dirty = true;
  // Map nodes stay put until the barrier trims the cache, after writing every dirty key.
  dirty_[side].emplace_back(&cache_[side].find(key)->first, &rows);
}

void HashJoinOperator::MarkDirty(size_t side, const std::string& key, KeyRows& rows, Entry& entry) {
  MarkDirty(side, key, rows);
  if (entry.dirty) return;
  entry.dirty = true;
  dirty_bytes_ += EncodedSize(entry.row);
}

void HashJoinOperator::WriteKey(size_t side, const std::string& key, KeyRows& rows) {
  // Each of the key's state keys is written once (WriteOnceInGroup: appended to the epoch's
  // run, no map insert): a row removed and added back within the epoch is written as it
  // stands, and one removed twice is deleted once.
  storage::StateTable& state = states_[side];
  char counts[16];
  if (rows.legacy) {
    state.WriteOnceInGroup(key, "", std::nullopt);  // The one entry of all its rows.
    rows.legacy = false;
  }
  if (!rows.removed.empty()) {
    std::sort(rows.removed.begin(), rows.removed.end());
    rows.removed.erase(std::unique(rows.removed.begin(), rows.removed.end()), rows.removed.end());
    for (const std::string& row : rows.removed) {
      if (FindRow(rows, row) == rows.entries.size()) state.WriteOnceInGroup(key, row, std::nullopt);
    }
    rows.removed.clear();
  }
  for (Entry& entry : rows.entries) {
    if (!entry.dirty) continue;
    state.WriteOnceInGroup(key, entry.row, EncodeCounts(entry.count, entry.matches, counts));
    entry.dirty = false;
  }
  rows.dirty = false;
}

void HashJoinOperator::EmitRow(const std::vector<Value>& left, const std::vector<Value>& right,
                               int64_t times) {
  RowOp op = times > 0 ? RowOp::kInsert : RowOp::kDelete;
  for (int64_t i = 0; i < (times > 0 ? times : -times); ++i) {
    size_t c = 0;
    for (const Value& value : left) output_.columns[c++].AppendValue(value);
    if (!node_->FiltersLeft()) {
      for (const Value& value : right) output_.columns[c++].AppendValue(value);
    }
    output_.ops.push_back(op);
  }
}

void HashJoinOperator::EmitFilteredLeft(const std::vector<Value>& left, int64_t before_matches,
                                        int64_t after_matches, int64_t times) {
  // A semi join shows a left row while it has a match, an anti join while it has none.
  bool semi = node_->join_type == planner::JoinType::kSemi;
  bool shown_before = (before_matches > 0) == semi;
  bool shown_after = (after_matches > 0) == semi;
  if (shown_before && !shown_after) EmitRow(left, {}, -times);
  if (!shown_before && shown_after) EmitRow(left, {}, times);
}

void HashJoinOperator::OnInputChunk(size_t side, Chunk chunk) {
  size_t other = 1 - side;
  const auto& keys = side == 0 ? node_->left_keys : node_->right_keys;
  std::vector<Column> key_columns;
  for (const auto& key : keys) key_columns.push_back(Evaluate(*key, chunk));
  bool cleaned = !node_->expiry[side].empty();
  // First each row's key and the other side's rows under it, and which of those meet the
  // residual condition: one evaluation for all the chunk's candidates, where one a row cost
  // more in allocations than the test itself (each of q4's bids meets one auction). The
  // chunk's rows change only this side's rows (and the other's match counts), so what they
  // meet does not depend on their order.
  probes_.resize(chunk.size());
  candidates_.Truncate(0);
  for (size_t r = 0; r < chunk.size(); ++r) {
    RowProbe& probe = probes_[r];
    probe.key.clear();
    probe.null_key = false;
    for (size_t k = 0; k < keys.size(); ++k) {
      if (key_columns[k].IsNull(r)) probe.null_key = true;
      key_columns[k].AppendKey(r, &probe.key);
    }
    probe.row = chunk.GetRow(r);
    probe.expiry.reset();
    if (cleaned && !probe.null_key) {
      probe.expiry = RowExpiry(side, probe.row);
      probe.null_key = !probe.expiry;  // A NULL time meets nothing either.
    }
    // A probe of a key the other side does not hold caches nothing: keys of many distinct
    // values (prices, say) mostly miss.
    probe.others = probe.null_key ? nullptr : Probe(other, probe.key);
    if (!probe.null_key) ++probes_of_[other];
    probe.first_candidate = candidates_.size();
    if (residual_ && probe.others) AddCandidates(side, probe.row, *probe.others);
  }
  if (residual_ && !candidates_.empty()) matching_ = EvaluatePredicate(*residual_, candidates_);
  for (size_t r = 0; r < chunk.size(); ++r) ApplyRow(side, probes_[r], RowSign(chunk.ops[r]));
  if (!output_.empty()) {
    Chunk out = std::move(output_);
    output_ = Chunk::WithTypes(output_types_);
    Emit(std::move(out));
  }
}

void HashJoinOperator::ApplyRow(size_t side, const RowProbe& probe, int sign) {
  const std::vector<Value>& row = probe.row;
  const std::string& key = probe.key;
  size_t other = 1 - side;
  bool pads_self = side == 0 ? node_->PadsLeft() : node_->PadsRight();
  bool pads_other = side == 0 ? node_->PadsRight() : node_->PadsLeft();
  // A semi or anti join keeps the left rows' match counts as a left join does, but emits
  // only the left rows, by whether they have a match (EmitFilteredLeft).
  bool filters_self = side == 0 && node_->FiltersLeft();
  bool filters_other = side == 1 && node_->FiltersLeft();
  auto emit = [&](const std::vector<Value>& mine, const std::vector<Value>& theirs, int64_t times) {
    if (side == 0) {
      EmitRow(mine, theirs, times);
    } else {
      EmitRow(theirs, mine, times);
    }
  };
  // Rows of a side cleaned by watermark: when this one expires (it is stored only until).
  const std::optional<int64_t>& expiry = probe.expiry;
  bool cleaned = !node_->expiry[side].empty();
  if (probe.null_key) {
    // NULL equals nothing: the row never matches and is not kept.
    if (pads_self) emit(row, null_rows_[other], sign);
    if (filters_self && node_->join_type == planner::JoinType::kAnti) EmitRow(row, {}, sign);
    return;
  }
  KeyRows* others = probe.others;
  size_t other_count = others ? others->entries.size() : 0;
  // A key of a few rows keeps them decoded; a larger one's rows are decoded one at a time,
  // and only those that meet the residual condition (often a few of a window's thousands).
  const std::vector<std::vector<Value>>* other_rows =
      other_count > 0 ? Decoded(other, *others) : nullptr;
  // Which of the other side's rows under this key meet the residual condition too (null:
  // all of them).
  const uint8_t* matching =
      residual_ && other_count > 0 ? matching_.data() + probe.first_candidate : nullptr;
  int64_t matches = 0;
  for (size_t i = 0; i < other_count; ++i) {
    if (matching && !matching[i]) continue;
    Entry& entry = others->entries[i];
    if (!other_rows) probe_row_ = DecodeStoredRow(other, entry.row);
    const std::vector<Value>& other_row = other_rows ? (*other_rows)[i] : probe_row_;
    matches += entry.count;
    if (filters_other) {
      int64_t before = entry.matches;
      entry.matches += sign;
      MarkDirty(other, key, *others, entry);
      EmitFilteredLeft(other_row, before, entry.matches, entry.count);
      continue;
    }
    if (pads_other) {
      // The other row's padded form exists exactly while it has no match.
      int64_t before = entry.matches;
      entry.matches += sign;
      MarkDirty(other, key, *others, entry);
      if (before == 0 && entry.matches > 0) emit(null_rows_[side], other_row, -entry.count);
      if (before > 0 && entry.matches == 0) emit(null_rows_[side], other_row, entry.count);
    }
    if (filters_self) continue;
    emit(row, other_row, sign * entry.count);
  }

  if (cleaned && *expiry <= watermarks_[other]) {
    // Expired on arrival: it met what the other side still holds, and nothing to come.
    if (pads_self && matches == 0) emit(row, null_rows_[other], sign);
    return;
  }
  if (cleaned) expiry_index_[side][ExpiryBucket(side, *expiry)].insert(key);
  // Encoded in a scratch that keeps its room, and copied once at its exact size only if
  // the row is new to the key (AddRow): encoded afresh, a row's string grew by doubling, a
  // reallocation a column, and kept up to twice its size for as long as it stayed cached.
  encode_scratch_.clear();
  storage::EncodeRow(row, types_[side], &encode_scratch_);
  bool appended = node_->appends[side] && sign > 0;
  if (appended) AppendRowSuffix(&encode_scratch_);  // A row of its own: none stored can be it.
  const std::string& encoded = encode_scratch_;
  KeyRows* found = nullptr;
  size_t position = 0;
  if (appended) {
    if (KeepsAppendsUncached(side) && !cache_[side].contains(key)) {
      // Kept out of the cache until something needs its key's rows (TakeAppended).
      ++rows_added_[side];
      AppendUncached(side, key, encoded, matches, cleaned ? *expiry : kExpiryUnknown);
      return;
    }
    found = &LoadToAppend(side, key);
    position = found->entries.size();
  } else if (node_->appends[side]) {
    // A side that only grows is sent no delete. Were one sent, it removes a copy.
    found = &Load(side, key);
    position = found->entries.size();
    for (size_t i = 0; i < found->entries.size() && position == found->entries.size(); ++i) {
      if (RowEncoding(side, found->entries[i].row) == encoded) position = i;
    }
    if (position == found->entries.size()) {
      throw SqlError("XX000", "a join input that only grows deleted a row it never sent");
    }
  } else {
    found = sign > 0 ? &LoadToInsert(side, key, encoded) : &Load(side, key);
    position = FindRow(*found, encoded);
  }
  KeyRows& mine = *found;
  MarkDirty(side, key, mine);
  if (position == mine.entries.size()) AddRow(side, mine, std::string(encoded), row, matches);
  Entry& entry = mine.entries[position];
  entry.count += sign;
  entry.matches = matches;
  if (cleaned) entry.expiry = *expiry;
  MarkDirty(side, key, mine, entry);
  if (entry.count == 0) RemoveRow(side, mine, position);
  if (pads_self && matches == 0) emit(row, null_rows_[other], sign);
  // An arriving (leaving) left row is shown (retracted) if its matches say it is shown.
  if (filters_self && (matches > 0) == (node_->join_type == planner::JoinType::kSemi)) {
    EmitRow(row, {}, sign);
  }
}

void HashJoinOperator::OnBarrier(storage::EpochBatch* batch) {
  for (size_t side = 0; side < 2; ++side) {
    // Each changed row is written once per epoch, however often it changed.
    for (auto& [key, rows] : dirty_[side]) {
      WriteKey(side, *key, *rows);
      rows->written_epoch = batch->epoch();
    }
    dirty_[side].clear();
    WriteAppended(side, batch->epoch());
    states_[side].FlushTo(batch);
  }
  dirty_bytes_ = 0;
  appended_bytes_ = 0;
  if (cached_bytes_ > cache_bytes_) {
    // Trim, not clear: every key kept spares a read and a decode when it is touched again.
    // The side probed less per row goes first (probes_of_). After the barrier all keys are
    // clean; those written in epochs not committed yet stay, as the store does not hold
    // their rows yet (Read).
    size_t first = probes_of_[0] * rows_added_[1] <= probes_of_[1] * rows_added_[0] ? 0 : 1;
    for (size_t side : {first, 1 - first}) {
      for (auto it = cache_[side].begin();
           it != cache_[side].end() && cached_bytes_ > cache_bytes_ / 4 * 3;) {
        if (!states_[side].Committed(it->second.written_epoch)) {
          ++it;
          continue;
        }
        cached_bytes_ -= KeyMemory(side, it->second);
        if (!it->second.entries.empty() || it->second.partial) {
          ListStored(side, KeyHash(it->first));
        }
        cache_[side].erase(it++);
      }
    }
    for (size_t side = 0; side < 2; ++side) {
      probes_of_[side] /= 2;
      rows_added_[side] /= 2;
    }
  }
  StreamOperator::OnBarrier(batch);
}

// State cleaning by watermark.

void HashJoinOperator::Start() {
  for (size_t side = 0; side < 2; ++side) {
    cache_[side].clear();
    dirty_[side].clear();
    appended_[side].clear();
  }
  cached_bytes_ = 0;
  dirty_bytes_ = 0;
  appended_bytes_ = 0;
  run_epoch_ = states_[0].store()->committed_epoch();
  run_number_ = join_runs.fetch_add(1);
  next_row_ = 0;
  // Both sides' state tables live in one store: one snapshot reads them.
  std::shared_ptr<const storage::Snapshot> snapshot =
      states_[0].store()->NewSnapshot().ValueOrThrow();
  for (size_t side = 0; side < 2; ++side) {
    // The keys of a small state (none, for a new view) are listed; a larger one's are not.
    stored_keys_[side].clear();
    stored_keys_listed_[side] = true;
    size_t rows = 0;
    Status status = snapshot->ScanStateTable(
        states_[side].table_id(), [&](std::string_view stored, std::string_view) {
          if (++rows > kListedKeys) {
            stored_keys_listed_[side] = false;
            stored_keys_[side].clear();
            return false;
          }
          uint16_t virtual_node = 0;
          std::string_view join_key = JoinKeyOf(side, stored, &virtual_node);
          if (InstanceOfVirtualNode(virtual_node, parallelism_) == instance_) {
            stored_keys_[side].insert(KeyHash(join_key));
          }
          return true;
        });
    if (!status.ok()) throw SqlError(sqlstate::kIoError, status.message());
    if (!node_->expiry[side].empty()) LoadExpiryIndex(side, *snapshot);
  }
}

void HashJoinOperator::ListStored(size_t side, uint64_t hash) {
  if (!stored_keys_listed_[side]) return;
  stored_keys_[side].insert(hash);
  if (stored_keys_[side].size() > listed_keys_) {
    stored_keys_listed_[side] = false;  // Too many to list: a probe reads the store.
    absl::flat_hash_set<uint64_t>().swap(stored_keys_[side]);
  }
}

std::string_view HashJoinOperator::JoinKeyOf(size_t side, std::string_view stored,
                                             uint16_t* virtual_node) const {
  // Scanned keys start with their virtual node (big-endian), then the join key, then the row
  // (nothing: a key's one entry of all its rows, from before).
  if (stored.size() < 2) throw SqlError("XX001", "corrupt join state");
  *virtual_node = static_cast<uint16_t>((static_cast<uint8_t>(stored[0]) << 8) |
                                        static_cast<uint8_t>(stored[1]));
  stored.remove_prefix(2);
  std::string_view row = stored;
  Value ignored;
  for (const auto& term : side == 0 ? node_->left_keys : node_->right_keys) {
    if (!storage::DecodeKeyValue(&row, term->type, &ignored)) {
      throw SqlError("XX001", "corrupt join state");
    }
  }
  return stored.substr(0, stored.size() - row.size());
}

size_t HashJoinOperator::indexed_expiries(size_t side) const {
  size_t keys = 0;
  for (const auto& [expiry, indexed] : expiry_index_[side]) keys += indexed.size();
  return keys;
}

std::optional<int64_t> HashJoinOperator::RowExpiry(size_t side,
                                                   const std::vector<Value>& row) const {
  int64_t earliest = INT64_MAX;
  for (const planner::JoinNode::Expiry& term : node_->expiry[side]) {
    const Value& time = row[term.column];
    if (time.is_null()) return std::nullopt;
    int64_t expiry = 0;
    if (__builtin_add_overflow(time.int_value(), term.offset, &expiry)) {
      // Past either end of time: never, or at once.
      expiry = term.offset > 0 ? INT64_MAX : INT64_MIN;
    }
    earliest = std::min(earliest, expiry);
  }
  return earliest;
}

int64_t HashJoinOperator::ExpiryBucket(size_t side, int64_t expiry) const {
  int64_t granularity = expiry_granularity_[side];
  int64_t past = expiry % granularity;  // Negative below zero: rounds towards zero, up.
  int64_t bucket = expiry - past;
  if (past > 0 && __builtin_add_overflow(bucket, granularity, &bucket)) return INT64_MAX;
  return bucket;
}

void HashJoinOperator::LoadExpiryIndex(size_t side, const storage::Snapshot& snapshot) {
  Status status = snapshot.ScanStateTable(
      states_[side].table_id(), [&](std::string_view key, std::string_view value) {
        uint16_t virtual_node = 0;
        std::string_view join_key = JoinKeyOf(side, key, &virtual_node);
        if (InstanceOfVirtualNode(virtual_node, parallelism_) != instance_) return true;
        std::string_view row = key.substr(2 + join_key.size());
        auto index = [&](std::string_view encoded) {
          if (std::optional<int64_t> expiry = RowExpiry(side, DecodeStoredRow(side, encoded))) {
            expiry_index_[side][ExpiryBucket(side, *expiry)].emplace(join_key);
          }
        };
        if (!row.empty()) {
          index(row);
        } else {
          for (const Entry& entry : DecodeEntries(value)) index(entry.row);
        }
        return true;
      });
  if (!status.ok()) throw SqlError(sqlstate::kIoError, status.message());
}

void HashJoinOperator::OnInputWatermark(size_t side, int64_t watermark) {
  if (side > 1 || watermark <= watermarks_[side]) return;
  watermarks_[side] = watermark;
  // The other side's rows are the ones this side's rows to come can no longer meet.
  if (!node_->expiry[1 - side].empty()) ExpireRows(1 - side, watermark);
}

void HashJoinOperator::ExpireRows(size_t side, int64_t watermark) {
  std::map<int64_t, absl::flat_hash_set<std::string>>& index = expiry_index_[side];
  while (!index.empty() && index.begin()->first <= watermark) {
    for (const std::string& key : index.begin()->second) {
      KeyRows& rows = Load(side, key);
      // A key indexed under several expiries may have lost its rows already.
      for (size_t i = rows.entries.size(); i-- > 0;) {
        std::optional<int64_t> expiry;
        if (rows.entries[i].expiry != kExpiryUnknown) {
          expiry = rows.entries[i].expiry;
        } else if (rows.decoded) {
          expiry = RowExpiry(side, rows.rows[i]);
        } else {
          expiry = RowExpiry(side, DecodeStoredRow(side, rows.entries[i].row));
        }
        if (expiry) rows.entries[i].expiry = *expiry;
        if (expiry && *expiry > watermark) continue;
        MarkDirty(side, key, rows);
        RemoveRow(side, rows, i);
      }
    }
    index.erase(index.begin());
  }
}

}  // namespace stave::executor

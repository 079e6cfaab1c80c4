#include "storage/state_table.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "storage/key_codec.h"

namespace stave::storage {

uint16_t VirtualNodeOf(std::string_view key) {
  uint64_t hash = 14695981039346656037ULL;
  for (char c : key) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 1099511628211ULL;
  }
  return static_cast<uint16_t>(hash % kVirtualNodeCount);
}

std::string StateTable::FullKey(std::string_view key) const { return std::string(ScratchKey(key)); }

std::string_view StateTable::ScratchKey(std::string_view key) const {
  return ScratchKey(key, VirtualNodeOf(key));
}

std::string_view StateTable::ScratchKey(std::string_view key, uint16_t virtual_node) const {
  key_scratch_.assign(1, key_section::kState);
  AppendBigEndian32(table_id_, &key_scratch_);
  AppendBigEndian16(virtual_node, &key_scratch_);
  key_scratch_.append(key);
  return key_scratch_;
}

namespace {

// The arenas' 64 KB blocks, kept for the next arenas of any table once an arena is done with
// them: fresh memory would have its pages zeroed by the kernel at their first write, every
// epoch. Up to 64 MB; thread-safe, as an epoch's arena may be let go by the engine's commit.
class BlockPool {
 public:
  static BlockPool& Instance() {
    static auto* pool = new BlockPool;  // Never destroyed: arenas may outlive static objects.
    return *pool;
  }
  std::unique_ptr<char[]> Take(size_t bytes) {
    {
      std::lock_guard lock(mutex_);
      if (!free_.empty()) {
        std::unique_ptr<char[]> block = std::move(free_.back());
        free_.pop_back();
        return block;
      }
    }
    return std::make_unique_for_overwrite<char[]>(bytes);
  }
  void GiveBack(std::vector<std::unique_ptr<char[]>>* blocks) {
    std::lock_guard lock(mutex_);
    for (auto& block : *blocks) {
      if (free_.size() >= kKeptBlocks) break;
      free_.push_back(std::move(block));
    }
  }

 private:
  static constexpr size_t kKeptBlocks = 1024;
  std::mutex mutex_;
  std::vector<std::unique_ptr<char[]>> free_;  // GUARDED_BY(mutex_)
};

}  // namespace

StateTable::Arena::~Arena() { BlockPool::Instance().GiveBack(&blocks_); }

std::string_view StateTable::Arena::Copy(std::string_view bytes) {
  char* copy = Allocate(bytes.size());
  if (!bytes.empty()) std::memcpy(copy, bytes.data(), bytes.size());
  return {copy, bytes.size()};
}

char* StateTable::Arena::Allocate(size_t size) {
  if (size > kLargeBytes) {
    large_.push_back(std::make_unique_for_overwrite<char[]>(size));
    return large_.back().get();
  }
  if (blocks_.empty() || kBlockBytes - used_ < size) {
    blocks_.push_back(BlockPool::Instance().Take(kBlockBytes));
    used_ = 0;
  }
  char* at = blocks_.back().get() + used_;
  used_ += size;
  return at;
}

Result<std::optional<std::string>> StateTable::Get(std::string_view key) const {
  return Lookup(key, VirtualNodeOf(key));
}

Result<std::optional<std::string>> StateTable::GetInGroup(std::string_view group,
                                                          std::string_view suffix) const {
  std::string key(group);
  key.append(suffix);
  return Lookup(key, VirtualNodeOf(group));
}

Result<std::optional<std::string>> StateTable::Lookup(std::string_view key,
                                                      uint16_t virtual_node) const {
  auto it = buffer_.find(key);
  if (it != buffer_.end()) return it->second.Stored();
  ReleaseCommitted();
  if (!sealed_.empty()) {
    it = sealed_.find(key);
    if (it != sealed_.end()) return it->second.Stored();
  } else if (sealed_run_) {
    const std::vector<StateRun::Entry>& entries = sealed_run_->entries;
    auto found = std::lower_bound(entries.begin(), entries.end(), std::pair{virtual_node, key},
                                  [](const StateRun::Entry& entry, const auto& wanted) {
                                    return std::pair{entry.virtual_node, entry.key} < wanted;
                                  });
    if (found != entries.end() && found->virtual_node == virtual_node && found->key == key) {
      return ChangeOf(*found).Stored();
    }
  }
  return store_->GetState(ScratchKey(key, virtual_node));
}

void StateTable::PutInGroup(std::string_view group, std::string_view suffix,
                            std::string_view value) {
  std::string key(group);
  key.append(suffix);
  Write(key, value, VirtualNodeOf(group));
}

void StateTable::DeleteInGroup(std::string_view group, std::string_view suffix) {
  std::string key(group);
  key.append(suffix);
  Write(key, std::nullopt, VirtualNodeOf(group));
}

void StateTable::AppendInGroup(std::string_view group, std::string_view suffix,
                               std::string_view value) {
  std::string_view full = ScratchKey(group, VirtualNodeOf(group));
  size_t size = full.size() + suffix.size();
  AppendBigEndian32(static_cast<uint32_t>(size), &appended_);
  appended_.append(full);
  appended_.append(suffix);
  AppendBigEndian32(static_cast<uint32_t>(value.size()), &appended_);
  appended_.append(value);
  buffered_bytes_ += size + value.size();
}

Status StateTable::ScanCommittedGroup(
    std::string_view group,
    const std::function<bool(std::string_view suffix, std::string_view value)>& visit) const {
  return store_->ScanState(ScratchKey(group), visit);
}

void StateTable::ReleaseCommitted() const {
  // The commit is one atomic write, and the committed epoch advances after it: once it
  // covers the sealed epoch, RocksDB answers every read the sealed buffer would.
  if ((!sealed_.empty() || sealed_run_) && store_->committed_epoch() >= sealed_epoch_) {
    Buffer().swap(sealed_);
    sealed_run_.reset();
    sealed_arenas_.clear();
  }
}

void StateTable::Put(std::string_view key, std::string_view value) {
  Write(key, value, VirtualNodeOf(key));
}

void StateTable::Delete(std::string_view key) { Write(key, std::nullopt, VirtualNodeOf(key)); }

void StateTable::WriteOnce(std::string_view key, std::optional<std::string_view> value) {
  AppendOnce(key, {}, value, VirtualNodeOf(key));
}

void StateTable::WriteOnceInGroup(std::string_view group, std::string_view suffix,
                                  std::optional<std::string_view> value) {
  AppendOnce(group, suffix, value, VirtualNodeOf(group));
}

void StateTable::AppendOnce(std::string_view group, std::string_view suffix,
                            std::optional<std::string_view> value, uint16_t virtual_node) {
  if (value && value->size() > UINT32_MAX) {
    throw std::length_error("a state value of more than 4 GB");
  }
  if (!arena_) arena_ = std::make_shared<Arena>();
  if (!once_run_) once_run_ = TakeRun();
  size_t key_size = group.size() + suffix.size();
  char* key = arena_->Allocate(key_size);
  if (!group.empty()) std::memcpy(key, group.data(), group.size());
  if (!suffix.empty()) std::memcpy(key + group.size(), suffix.data(), suffix.size());
  std::string_view stored_value = value ? arena_->Copy(*value) : std::string_view();
  once_run_->entries.push_back({{key, key_size}, stored_value, virtual_node, !value});
  buffered_bytes_ += kKeyPrefixBytes + key_size + stored_value.size();
}

std::shared_ptr<StateRun> StateTable::TakeRun() {
  if (last_run_ && Committed(sealed_epoch_)) {
    ReleaseCommitted();  // The sealed run may be this one: no one reads it any more.
    std::shared_ptr<StateRun> run = std::move(last_run_);
    run->entries.clear();
    return run;
  }
  return std::make_shared<StateRun>();
}

void StateTable::SortEntries(StateRun* run) {
  // In RocksDB key order, (virtual node, key): RocksDB then inserts each entry next to the
  // previous one in its memtable (see Store::Open's insert hints), which costs a fraction
  // of a search from the top.
  // The entries are first placed by virtual node (a counting sort: one pass), then each
  // node's entries sorted by comparison: a node's share fits in cache, where one sort of a
  // million entries misses it at every level. The sort compares two integers holding 16 of
  // the key's bytes, and reads the keys themselves (scattered over the arena or the buffer's
  // slots: a cache miss each) only on a tie. The 16 bytes start past what all keys of the node
  // share: a join's rows all begin with their key (q5's window bounds, 18 bytes), an
  // aggregate's groups often with the high zero bytes of an id, and bytes every key holds
  // tell none apart.
  auto bytes_at = [](std::string_view key, size_t from, size_t count) {
    uint64_t bytes = 0;
    for (size_t i = 0; i < count; ++i) {
      bytes = bytes << 8 | (from + i < key.size() ? static_cast<uint8_t>(key[from + i]) : 0);
    }
    return bytes;
  };
  unsorted_.swap(run->entries);
  run->entries.clear();
  // Per node: where its entries start, and how many leading bytes all its keys share (with
  // its first key, which `shared` views).
  std::array<uint32_t, kVirtualNodeCount + 1> node_starts{};
  std::array<std::string_view, kVirtualNodeCount> shared{};
  std::array<uint32_t, kVirtualNodeCount> shared_bytes{};
  for (const StateRun::Entry& entry : unsorted_) {
    uint16_t node = entry.virtual_node;
    if (node_starts[node + 1]++ == 0) {
      shared[node] = entry.key;
      shared_bytes[node] = static_cast<uint32_t>(entry.key.size());
      continue;
    }
    size_t same = 0;
    size_t most = std::min<size_t>(shared_bytes[node], entry.key.size());
    while (same < most && shared[node][same] == entry.key[same]) ++same;
    shared_bytes[node] = static_cast<uint32_t>(same);
  }
  for (size_t node = 0; node < kVirtualNodeCount; ++node) {
    node_starts[node + 1] += node_starts[node];
  }
  std::array<uint32_t, kVirtualNodeCount> node_next;
  std::copy_n(node_starts.begin(), kVirtualNodeCount, node_next.begin());
  sort_keys_.resize(unsorted_.size());
  for (size_t i = 0; i < unsorted_.size(); ++i) {
    std::string_view key = unsorted_[i].key;
    uint16_t node = unsorted_[i].virtual_node;
    size_t from = shared_bytes[node];
    sort_keys_[node_next[node]++] = {bytes_at(key, from, 8), bytes_at(key, from + 8, 8),
                                     static_cast<uint32_t>(i)};
  }
  auto less = [this](const SortKey& a, const SortKey& b) {
    if (a.high != b.high) return a.high < b.high;
    if (a.low != b.low) return a.low < b.low;
    return unsorted_[a.index].key < unsorted_[b.index].key;
  };
  for (size_t node = 0; node < kVirtualNodeCount; ++node) {
    std::sort(sort_keys_.begin() + node_starts[node], sort_keys_.begin() + node_starts[node + 1],
              less);
  }
  run->entries.reserve(unsorted_.size());
  for (const SortKey& each : sort_keys_) run->entries.push_back(unsorted_[each.index]);
  unsorted_.clear();
}

void StateTable::Write(std::string_view key, std::optional<std::string_view> value,
                       uint16_t virtual_node) {
  // Counts what the buffer holds, not what was written to it: a key rewritten a thousand
  // times in an epoch is one entry of the checkpoint. (A value that outgrows its room takes
  // new room in the arena; the room grows by half each time, so the arena holds at most a
  // few times what is counted.)
  if (value && value->size() > UINT32_MAX) {
    // RocksDB refuses such a value too; no state codec comes near it.
    throw std::length_error("a state value of more than 4 GB");
  }
  auto [it, inserted] = buffer_.try_emplace(key);
  Change& change = it->second;
  if (inserted) {
    // The key went in as the caller's view: it now views the arena's copy, the same bytes
    // (so the same hash and slot).
    if (!arena_) arena_ = std::make_shared<Arena>();
    const_cast<std::string_view&>(it->first) = arena_->Copy(key);
    buffered_bytes_ += kKeyPrefixBytes + key.size();
  } else {
    buffered_bytes_ -= change.size;
  }
  change.virtual_node = virtual_node;
  change.deleted = !value;
  change.size = 0;
  if (!value) return;
  if (value->size() > change.capacity) {
    size_t room = std::max(value->size(), size_t{change.capacity} * 3 / 2);
    change.capacity = static_cast<uint32_t>(std::min(room, size_t{UINT32_MAX}));
    change.value = arena_->Allocate(change.capacity);
  }
  if (!value->empty()) std::memcpy(const_cast<char*>(change.value), value->data(), value->size());
  change.size = static_cast<uint32_t>(value->size());
  buffered_bytes_ += change.size;
}

void StateTable::FlushTo(EpochBatch* batch) {
  // The epoch's changes, sorted, in a run that reads them where they lie, in this epoch's
  // arena, which it shares. A key also written through the map takes its WriteOnce change,
  // the later one.
  if (once_run_ && !buffer_.empty()) {
    InsertRun(*once_run_, &buffer_);
    once_run_->entries.clear();
  }
  bool once_only = buffer_.empty() && once_run_;
  std::shared_ptr<StateRun> run = once_run_ ? std::move(once_run_) : TakeRun();
  for (const auto& [key, change] : buffer_) {
    run->entries.push_back({key, change.view(), change.virtual_node, change.deleted});
  }
  SortEntries(run.get());
  run->table_id = table_id_;
  run->bytes = 0;
  for (const StateRun::Entry& entry : run->entries) {
    run->bytes += kKeyPrefixBytes + entry.key.size() + entry.value.size();
  }
  run->memory = arena_;
  last_run_ = run;
  batch->AddStateRun(run);
  std::string_view appended = appended_;
  auto take = [&appended] {
    size_t size = ReadBigEndian32(appended.substr(0, 4));
    std::string_view bytes = appended.substr(4, size);
    appended.remove_prefix(4 + size);
    return bytes;
  };
  while (!appended.empty()) {
    std::string_view key = take();
    batch->PutState(key, take());
  }
  // Keeps the memory for the next epoch, unless an unusual epoch made it large.
  constexpr size_t kKeptAppendBytes = size_t{64} << 20;
  if (appended_.capacity() > kKeptAppendBytes) {
    std::string().swap(appended_);
  } else {
    appended_.clear();
  }
  ReleaseCommitted();
  size_t entries_this_epoch = buffer_.size();
  if (sealed_.empty() && !sealed_run_) {
    if (once_only) {
      sealed_run_ = run;
    } else {
      sealed_.swap(buffer_);
    }
  } else {
    // An earlier epoch is still being committed: the newer changes win, in the map.
    if (sealed_run_) {
      InsertRun(*sealed_run_, &sealed_);
      sealed_run_.reset();
    }
    if (once_only) InsertRun(*run, &sealed_);
    for (const auto& [key, change] : buffer_) sealed_.insert_or_assign(key, change);
  }
  if (arena_) sealed_arenas_.push_back(std::move(arena_));
  arena_.reset();
  Buffer().swap(buffer_);
  buffer_.reserve(entries_this_epoch);  // The next epoch likely touches as many keys.
  sealed_epoch_ = batch->epoch();
  buffered_bytes_ = 0;
}

}  // namespace stave::storage

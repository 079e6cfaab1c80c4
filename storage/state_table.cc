#include "storage/state_table.h"

#include <algorithm>
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
  if (!sealed_.empty() && store_->committed_epoch() >= sealed_epoch_) {
    Buffer().swap(sealed_);
    sealed_arenas_.clear();
  }
}

void StateTable::Put(std::string_view key, std::string_view value) {
  Write(key, value, VirtualNodeOf(key));
}

void StateTable::Delete(std::string_view key) { Write(key, std::nullopt, VirtualNodeOf(key)); }

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
  // In RocksDB key order, (virtual node, key): RocksDB then inserts each entry next to the
  // previous one in its memtable (see Store::Open's insert hints), which costs a fraction
  // of a search from the top. The sort compares two integers holding the virtual node and
  // the key's first 14 bytes, and reads the keys themselves (scattered over the buffer's
  // slots: a cache miss each) only on a tie; 14 bytes hold most keys whole.
  struct Entry {
    uint64_t high;  // Virtual node, then the key's bytes 0-5, big-endian.
    uint64_t low;   // The key's bytes 6-13.
    const Buffer::value_type* entry;
  };
  auto bytes_at = [](std::string_view key, size_t from, size_t count) {
    uint64_t bytes = 0;
    for (size_t i = 0; i < count; ++i) {
      bytes = bytes << 8 | (from + i < key.size() ? static_cast<uint8_t>(key[from + i]) : 0);
    }
    return bytes;
  };
  std::vector<Entry> sorted;
  sorted.reserve(buffer_.size());
  for (const auto& entry : buffer_) {
    std::string_view key = entry.first;
    sorted.push_back({uint64_t{entry.second.virtual_node} << 48 | bytes_at(key, 0, 6),
                      bytes_at(key, 6, 8), &entry});
  }
  std::sort(sorted.begin(), sorted.end(), [](const Entry& a, const Entry& b) {
    if (a.high != b.high) return a.high < b.high;
    if (a.low != b.low) return a.low < b.low;
    return a.entry->first < b.entry->first;
  });
  // The run reads the keys and values where they lie, in this epoch's arena, which it shares.
  std::shared_ptr<StateRun> run;
  if (last_run_ && Committed(sealed_epoch_)) {
    run = std::move(last_run_);  // Its epoch has committed: no one reads it any more.
    run->entries.clear();
  } else {
    run = std::make_shared<StateRun>();
  }
  run->table_id = table_id_;
  run->bytes = 0;
  run->entries.reserve(sorted.size());
  for (const Entry& each : sorted) {
    const auto& [key, change] = *each.entry;
    run->entries.push_back({key, change.view(), change.virtual_node, change.deleted});
    run->bytes += kKeyPrefixBytes + key.size() + change.size;
  }
  run->memory = arena_;
  last_run_ = run;
  batch->AddStateRun(std::move(run));
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
  if (sealed_.empty()) {
    sealed_.swap(buffer_);
  } else {
    // An earlier epoch is still being committed: the newer changes win.
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

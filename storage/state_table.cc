#include "storage/state_table.h"

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

std::string StateTable::FullKey(std::string_view key) const {
  std::string full(1, key_section::kState);
  full.reserve(7 + key.size());
  AppendBigEndian32(table_id_, &full);
  AppendBigEndian16(VirtualNodeOf(key), &full);
  full.append(key);
  return full;
}

Result<std::optional<std::string>> StateTable::Get(std::string_view key) const {
  std::string full = FullKey(key);
  auto it = buffer_.find(full);
  if (it != buffer_.end()) return it->second;
  return store_->GetState(full);
}

void StateTable::Put(std::string_view key, std::string value) {
  std::string full = FullKey(key);
  buffered_bytes_ += full.size() + value.size();
  buffer_[std::move(full)] = std::move(value);
}

void StateTable::Delete(std::string_view key) {
  std::string full = FullKey(key);
  buffered_bytes_ += full.size();
  buffer_[std::move(full)] = std::nullopt;
}

void StateTable::FlushTo(EpochBatch* batch) {
  for (auto& [key, value] : buffer_) {
    if (value) {
      batch->PutState(key, *value);
    } else {
      batch->DeleteState(key);
    }
  }
  buffer_.clear();
  buffered_bytes_ = 0;
}

}  // namespace stave::storage

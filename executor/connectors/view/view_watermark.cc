#include "executor/connectors/view/view_watermark.h"

#include <algorithm>

#include "storage/key_codec.h"

namespace stave::executor {

void ViewWatermark::Note(uint32_t instance, InstanceWatermark published) {
  if (instance >= published.parallelism) return;  // Not an instance of its own run.
  instances_.erase(instances_.lower_bound(published.parallelism), instances_.end());
  instances_[instance] = published;
  Update();
}

void ViewWatermark::Update() {
  // Every instance of the widest run still on record must be known: each entry below the
  // width stands for its instance, whichever run left it.
  uint32_t width = 0;
  int64_t lowest = INT64_MAX;
  for (const auto& [instance, published] : instances_) {
    width = std::max(width, published.parallelism);
    lowest = std::min(lowest, published.watermark);
  }
  if (width == 0 || instances_.size() != width || instances_.rbegin()->first >= width) return;
  watermark_ = std::max(watermark_, lowest);
}

std::string ViewWatermark::Encode() const {
  std::string bytes;
  storage::AppendBigEndian64(static_cast<uint64_t>(watermark_), &bytes);
  for (const auto& [instance, published] : instances_) {
    storage::AppendBigEndian32(instance, &bytes);
    bytes.append(published.Encode());
  }
  return bytes;
}

std::optional<ViewWatermark> ViewWatermark::Decode(std::string_view bytes) {
  constexpr size_t kEntryBytes = 4 + InstanceWatermark::kEncodedBytes;
  if (bytes.size() < 8 || (bytes.size() - 8) % kEntryBytes != 0) return std::nullopt;
  ViewWatermark decoded;
  decoded.watermark_ = static_cast<int64_t>(storage::ReadBigEndian64(bytes));
  for (size_t at = 8; at < bytes.size(); at += kEntryBytes) {
    uint32_t instance = storage::ReadBigEndian32(bytes.substr(at));
    std::optional<InstanceWatermark> published =
        InstanceWatermark::Decode(bytes.substr(at + 4, InstanceWatermark::kEncodedBytes));
    if (!published || instance >= published->parallelism) return std::nullopt;
    decoded.instances_[instance] = *published;
  }
  return decoded;
}

}  // namespace stave::executor

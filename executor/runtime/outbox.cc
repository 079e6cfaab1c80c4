#include "executor/runtime/outbox.h"

namespace stave::executor {

Outbox::Outbox(Partitioner partitioner, std::vector<std::shared_ptr<Channel>> channels)
    : partitioner_(std::move(partitioner)),
      channels_(std::move(channels)),
      pending_(channels_.size()) {}

void Outbox::Send(Chunk chunk) {
  if (chunk.empty()) return;
  rows_sent_.fetch_add(chunk.size(), std::memory_order_relaxed);
  bytes_sent_.fetch_add(chunk.EstimatedBytes(), std::memory_order_relaxed);
  std::vector<Chunk> parts = partitioner_.Split(std::move(chunk));
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!parts[i].empty()) pending_[i].push_back(Message::Rows(std::move(parts[i])));
  }
}

void Outbox::Broadcast(const Message& message) {
  for (auto& queue : pending_) queue.push_back(message);
}

bool Outbox::Flush() {
  bool flushed = true;
  for (size_t i = 0; i < channels_.size(); ++i) {
    auto& queue = pending_[i];
    while (!queue.empty() && channels_[i]->TryPush(&queue.front())) queue.pop_front();
    flushed &= queue.empty();
  }
  blocked_.store(!flushed, std::memory_order_relaxed);
  return flushed;
}

}  // namespace stave::executor

#include "executor/runtime/outbox.h"

namespace stave::executor {

namespace {

std::vector<Outbox::Route> OneRoute(Partitioner partitioner,
                                    std::vector<std::shared_ptr<Channel>> channels) {
  std::vector<Outbox::Route> routes;
  routes.push_back({std::move(partitioner), std::move(channels)});
  return routes;
}

}  // namespace

Outbox::Outbox(Partitioner partitioner, std::vector<std::shared_ptr<Channel>> channels)
    : Outbox(OneRoute(std::move(partitioner), std::move(channels))) {}

Outbox::Outbox(std::vector<Route> routes) {
  for (Route& route : routes) {
    partitioners_.push_back(std::move(route.partitioner));
    first_channel_.push_back(channels_.size());
    for (auto& channel : route.channels) channels_.push_back(std::move(channel));
  }
  pending_.resize(channels_.size());
}

void Outbox::Send(Chunk chunk, size_t route) {
  if (chunk.empty()) return;
  rows_sent_.fetch_add(chunk.size(), std::memory_order_relaxed);
  bytes_sent_.fetch_add(chunk.EstimatedBytes(), std::memory_order_relaxed);
  std::vector<Chunk> parts = partitioners_[route].Split(std::move(chunk));
  size_t first = first_channel_[route];
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!parts[i].empty()) pending_[first + i].push_back(Message::Rows(std::move(parts[i])));
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

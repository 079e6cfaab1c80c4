#include "executor/runtime/channel.h"

namespace stave::executor {

void Channel::WakeTask(const std::weak_ptr<Task>& task) {
  if (std::shared_ptr<Task> locked = task.lock()) locked->Wake();
}

bool Channel::TryPush(Message* message) {
  bool was_empty;
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= capacity_) {
      producer_waiting_ = true;
      return false;
    }
    was_empty = queue_.empty();
    queue_.push_back(std::move(*message));
  }
  if (was_empty) WakeTask(consumer_);
  return true;
}

std::optional<Message> Channel::TryPop() {
  std::optional<Message> message;
  bool wake_producer = false;
  {
    std::lock_guard lock(mutex_);
    if (queue_.empty()) return std::nullopt;
    message = std::move(queue_.front());
    queue_.pop_front();
    wake_producer = producer_waiting_;
    producer_waiting_ = false;
  }
  if (wake_producer) WakeTask(producer_);
  return message;
}

bool Channel::HasMessage() const {
  std::lock_guard lock(mutex_);
  return !queue_.empty();
}

}  // namespace stave::executor

#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace stave::executor {

/// A list of byte strings (encoded keys) end to end in one buffer. A key costs its bytes and
/// eight more, where a vector of strings costs 32 a key and an allocation of its own past 15
/// bytes: lists that name every group of an aggregate (its open windows, the groups an epoch
/// changed) are a large share of its memory otherwise.
class PackedKeys {
 public:
  void push_back(std::string_view key) {
    bytes_.append(key);
    ends_.push_back(bytes_.size());
  }
  size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }
  /// Valid until the next push_back or clear.
  std::string_view operator[](size_t i) const {
    size_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::string_view(bytes_).substr(begin, ends_[i] - begin);
  }
  /// Empties the list and keeps its memory.
  void clear() {
    bytes_.clear();
    ends_.clear();
  }

 private:
  std::string bytes_;
  std::vector<size_t> ends_;
};

}  // namespace stave::executor

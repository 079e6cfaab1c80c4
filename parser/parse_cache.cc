#include "parser/parse_cache.h"

#include <algorithm>

#include "parser/parser.h"

namespace stave::parser {

std::shared_ptr<const ParseCache::Statements> ParseCache::Parse(std::string_view sql) {
  bool cacheable = capacity_ > 0 && sql.size() <= kMaxCachedTextBytes;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = index_.find(sql);
    if (found != index_.end()) {
      entries_.splice(entries_.begin(), entries_, found->second);
      return found->second->second;
    }
  }
  // Parsed outside the cache's lock: the parser serializes itself.
  std::shared_ptr<const Statements> statements =
      std::make_shared<Statements>(stave::parser::Parse(sql));
  bool has_parameters =
      std::any_of(statements->begin(), statements->end(),
                  [](const StatementPtr& statement) { return !statement->parameters.empty(); });
  if (!cacheable || has_parameters) return statements;
  std::lock_guard<std::mutex> lock(mutex_);
  if (index_.contains(sql)) return statements;  // Another thread parsed it meanwhile.
  entries_.emplace_front(std::string(sql), statements);
  index_.emplace(entries_.front().first, entries_.begin());
  if (entries_.size() > capacity_) {
    index_.erase(entries_.back().first);
    entries_.pop_back();
  }
  return statements;
}

size_t ParseCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

ParseCache& ParseCache::Shared() {
  static ParseCache cache(2048);
  return cache;
}

}  // namespace stave::parser

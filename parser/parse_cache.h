#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "parser/ast.h"

namespace stave::parser {

/// The statements of recently parsed query strings, keyed by their exact text, so that a
/// query a client sends again and again (a dashboard's SELECT, a driver's unnamed Parse) is
/// parsed once. Parsing is serialized across all connections (see parser.h), so it is the
/// cost this saves, besides the parse itself.
///
/// A cached statement is shared by every caller and must never change. Statements are
/// immutable except for the parameter slots of `$n` placeholders, which prepared statements
/// fill in; so strings whose statements have parameters are parsed every time and not kept.
/// Bounded: at most `capacity` strings of at most kMaxCachedTextBytes each, least recently
/// used dropped first.
///
/// Thread-safe.
class ParseCache {
 public:
  using Statements = std::vector<StatementPtr>;

  /// Longer query strings are parsed but not kept: they are rarely repeated, and their trees
  /// are large.
  static constexpr size_t kMaxCachedTextBytes = 4096;

  explicit ParseCache(size_t capacity) : capacity_(capacity) {}
  ParseCache(const ParseCache&) = delete;
  ParseCache& operator=(const ParseCache&) = delete;

  /// The statements of `sql`, as Parse(sql) returns them (and throwing what it throws),
  /// from the cache when the same text was parsed before.
  std::shared_ptr<const Statements> Parse(std::string_view sql);

  /// How many strings are cached.
  size_t size() const;

  /// The process-wide cache the server's sessions share: 2048 strings.
  static ParseCache& Shared();

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const Statements>>;

  const size_t capacity_;
  mutable std::mutex mutex_;
  std::list<Entry> entries_;  // GUARDED_BY(mutex_); most recently used first.
  // GUARDED_BY(mutex_); keys view the texts held in entries_.
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index_;
};

}  // namespace stave::parser

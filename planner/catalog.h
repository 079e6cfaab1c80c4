#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/data_type.h"

namespace stave::planner {

/// A named, typed column of a stream, view or result.
struct Column {
  std::string name;
  DataType type;
};

enum class ObjectType { kStream, kMaterializedView };

std::string_view ObjectTypeName(ObjectType type);  // "stream", "materialized view"

/// One catalog object. Immutable once published: a change replaces the object.
struct CatalogObject {
  uint32_t id = 0;
  ObjectType type = ObjectType::kStream;
  std::string name;
  std::vector<Column> columns;
  /// The CREATE statement as the user wrote it. The catalog persists only this (and the
  /// id): recovery plans it again, so the on-disk format does not freeze the plan's shape.
  std::string definition;

  // Streams.
  std::string connector;
  std::map<std::string, std::string> options;  ///< WITH options, keys lower-case.
  std::string format;

  // Materialized views.
  std::vector<uint32_t> depends_on;  ///< Objects this view reads.
};
using CatalogObjectPtr = std::shared_ptr<const CatalogObject>;

/// The persisted form of a catalog object (what recovery needs to re-create it).
std::string SerializeCatalogEntry(const CatalogObject& object);
/// Returns nullopt if the entry is malformed. Only id, type, name and definition are set.
std::optional<CatalogObject> DeserializeCatalogEntry(std::string_view entry);

/// The set of objects by name. Thread-safe: sessions bind against it while DDL changes it.
class Catalog {
 public:
  CatalogObjectPtr Find(std::string_view name) const;
  CatalogObjectPtr FindById(uint32_t id) const;
  /// All objects, ordered by id (creation order).
  std::vector<CatalogObjectPtr> List() const;
  /// Objects that depend on `id`.
  std::vector<CatalogObjectPtr> Dependents(uint32_t id) const;

  /// REQUIRES: no object with that name exists.
  void Add(CatalogObjectPtr object);
  void Remove(uint32_t id);

 private:
  mutable std::mutex mutex_;
  std::map<uint32_t, CatalogObjectPtr> by_id_;
  std::map<std::string, uint32_t, std::less<>> by_name_;
};

}  // namespace stave::planner

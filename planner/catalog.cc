#include "planner/catalog.h"

#include <nlohmann/json.hpp>

#include "common/json_integer.h"

namespace stave::planner {

std::string_view ObjectTypeName(ObjectType type) {
  switch (type) {
    case ObjectType::kStream:
      return "stream";
    case ObjectType::kMaterializedView:
      return "materialized view";
    case ObjectType::kTable:
      return "table";
    case ObjectType::kSystemTable:
      return "system table";
    case ObjectType::kSink:
      return "sink";
  }
  return "object";
}

std::vector<Column> CatalogObject::ChangelogColumns() const {
  std::vector<Column> result = columns;
  if (HasRowId()) result.push_back({std::string(kRowIdColumn), TypeId::kInt64, true});
  if (type == ObjectType::kMaterializedView) {
    result.push_back({std::string(kRowKeyColumn), TypeId::kVarchar, true});
  }
  return result;
}

std::string SerializeCatalogEntry(const CatalogObject& object) {
  nlohmann::json json = {
      {"id", object.id},
      {"type", object.type == ObjectType::kStream             ? "stream"
               : object.type == ObjectType::kMaterializedView ? "materialized_view"
               : object.type == ObjectType::kSink             ? "sink"
                                                              : "table"},
      {"name", object.name},
      {"definition", object.definition},
  };
  if (object.parallelism > 0) json["parallelism"] = object.parallelism;
  if (object.type == ObjectType::kMaterializedView || object.type == ObjectType::kSink) {
    json["plan_version"] = object.plan_version;
  }
  return json.dump();
}

std::optional<CatalogObject> DeserializeCatalogEntry(std::string_view entry) {
  nlohmann::json json = nlohmann::json::parse(entry, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("id") || !json.contains("type") ||
      !json.contains("name") || !json.contains("definition")) {
    return std::nullopt;
  }
  try {
    CatalogObject object;
    object.id = JsonInteger<uint32_t>(json["id"]);
    std::string type = json["type"].get<std::string>();
    if (type == "stream") {
      object.type = ObjectType::kStream;
    } else if (type == "materialized_view") {
      object.type = ObjectType::kMaterializedView;
    } else if (type == "table") {
      object.type = ObjectType::kTable;
    } else if (type == "sink") {
      object.type = ObjectType::kSink;
    } else {
      return std::nullopt;
    }
    object.name = json["name"].get<std::string>();
    object.definition = json["definition"].get<std::string>();
    if (json.contains("parallelism"))
      object.parallelism = JsonInteger<uint32_t>(json["parallelism"]);
    // Entries written before the revision was recorded were planned by revision 1.
    object.plan_version =
        json.contains("plan_version") ? JsonInteger<uint32_t>(json["plan_version"]) : 1;
    return object;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

void Catalog::RegisterSystemTable(SystemTable table) {
  std::lock_guard lock(mutex_);
  std::string schema = table.schema;
  std::string name = table.name;
  system_tables_[schema][name] = std::move(table);
}

const SystemTable* Catalog::FindSystemTable(std::string_view schema, std::string_view name) const {
  std::lock_guard lock(mutex_);
  auto tables = system_tables_.find(schema);
  if (tables == system_tables_.end()) return nullptr;
  auto it = tables->second.find(name);
  return it == tables->second.end() ? nullptr : &it->second;
}

bool Catalog::IsSystemSchema(std::string_view schema) const {
  std::lock_guard lock(mutex_);
  return system_tables_.contains(schema);
}

std::vector<const SystemTable*> Catalog::SystemTables() const {
  std::lock_guard lock(mutex_);
  std::vector<const SystemTable*> tables;
  for (const auto& [schema, by_name] : system_tables_) {
    for (const auto& [name, table] : by_name) tables.push_back(&table);
  }
  return tables;
}

CatalogObjectPtr Catalog::Find(std::string_view name) const {
  std::lock_guard lock(mutex_);
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : by_id_.at(it->second);
}

CatalogObjectPtr Catalog::FindById(uint32_t id) const {
  std::lock_guard lock(mutex_);
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

std::vector<CatalogObjectPtr> Catalog::List() const {
  std::lock_guard lock(mutex_);
  std::vector<CatalogObjectPtr> objects;
  for (const auto& [id, object] : by_id_) objects.push_back(object);
  return objects;
}

std::vector<CatalogObjectPtr> Catalog::Dependents(uint32_t id) const {
  std::lock_guard lock(mutex_);
  std::vector<CatalogObjectPtr> dependents;
  for (const auto& [other_id, object] : by_id_) {
    for (uint32_t dependency : object->depends_on) {
      if (dependency == id) {
        dependents.push_back(object);
        break;
      }
    }
  }
  return dependents;
}

void Catalog::Add(CatalogObjectPtr object) {
  std::lock_guard lock(mutex_);
  by_name_[object->name] = object->id;
  by_id_[object->id] = std::move(object);
}

void Catalog::Remove(uint32_t id) {
  std::lock_guard lock(mutex_);
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return;
  by_name_.erase(it->second->name);
  by_id_.erase(it);
}

}  // namespace stave::planner

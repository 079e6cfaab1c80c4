#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "planner/catalog.h"

namespace stave::executor {

/// The role that owns every object in the catalogs (Stave has no roles of its own).
inline constexpr std::string_view kOwnerName = "stave";
/// server_version as pg_settings reports it.
inline constexpr std::string_view kServerVersion = "15.18 (Stave 0.1.0)";

/// A schema of the PostgreSQL catalogs.
struct Schema {
  int64_t oid;
  std::string name;
};
/// public, pg_catalog, information_schema and stave_catalog.
std::vector<Schema> Schemas();

/// A relation the catalogs list: a user object that holds rows (tables, materialized views,
/// streams; not sinks) or a system table.
struct Relation {
  int64_t oid;
  std::string schema;
  int64_t namespace_oid;
  std::string name;
  char kind;  ///< pg_class.relkind.
  std::vector<planner::Column> columns;
  planner::CatalogObjectPtr object;  ///< Null for a system table.
};
/// User objects in creation order, then system tables by schema and name.
std::vector<Relation> Relations(const planner::Catalog& catalog);

/// A table's primary key constraint (and index) name, as PostgreSQL names it: "<table>_pkey".
std::string PrimaryKeyName(const planner::CatalogObject& table);

/// The query of a materialized view's CREATE statement (what pg_get_viewdef returns).
std::string ViewQuery(const planner::CatalogObject& view);

}  // namespace stave::executor

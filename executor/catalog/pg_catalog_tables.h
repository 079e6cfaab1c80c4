#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/data_type.h"
#include "planner/catalog.h"

namespace stave::executor {

/// One row of pg_type: a type Stave has, by PostgreSQL's OID and name.
struct PgType {
  int64_t oid;
  std::string name;      ///< typname: "int4", "_int4", ...
  DataType type;         ///< The Stave type (an array for the "_" types).
  std::string category;  ///< typcategory: "N" numeric, "S" string, "A" array, ...
};

/// Every type Stave has and its array type, plus PostgreSQL's text, name, oid and "char",
/// which the catalogs' own columns are reported as.
const std::vector<PgType>& PgTypes();

/// PostgreSQL's pg_catalog tables over `catalog`'s objects (docs/catalogs.md): what psql,
/// drivers and BI tools read. Tables for concepts Stave lacks (triggers, policies, ...) exist
/// and are empty, so clients' queries over them work. REQUIRES: `catalog` outlives the tables.
std::vector<planner::SystemTable> PgCatalogTables(const planner::Catalog* catalog);

/// The SQL standard's information_schema views over `catalog`'s objects.
/// REQUIRES: `catalog` outlives the tables.
std::vector<planner::SystemTable> InformationSchemaTables(const planner::Catalog* catalog);

/// pg_class.relkind of a readable object: 'r' table, 'm' materialized view, 'f' stream (a
/// foreign table: rows a connector reads from elsewhere); 0 for a sink, which is no relation.
char RelationKind(planner::ObjectType type);

}  // namespace stave::executor

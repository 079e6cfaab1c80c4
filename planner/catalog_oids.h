#pragma once

#include <cstdint>
#include <string_view>

namespace stave::planner {

/// The OIDs Stave's PostgreSQL catalogs (docs/catalogs.md) give its objects. Stable across
/// restarts: derived from catalog ids and fixed per-schema positions, never stored.
namespace catalog_oid {

/// PostgreSQL's own fixed OIDs for the schemas, the database, the role and the access method.
inline constexpr int64_t kPgCatalogNamespace = 11;
inline constexpr int64_t kPublicNamespace = 2200;
inline constexpr int64_t kInformationSchemaNamespace = 13000;
inline constexpr int64_t kStaveCatalogNamespace = 13100;
inline constexpr int64_t kDatabase = 5;
inline constexpr int64_t kOwner = 10;  ///< The one role, owner of everything.
inline constexpr int64_t kHeapAccessMethod = 2;
inline constexpr int64_t kBtreeAccessMethod = 403;

/// System tables: a range per schema, in name order within the schema.
inline constexpr int64_t kPgCatalogTables = 14000;
inline constexpr int64_t kInformationSchemaTables = 15000;
inline constexpr int64_t kStaveCatalogTables = 15500;

/// User objects (streams, tables, views, sinks): above PostgreSQL's FirstNormalObjectId, as
/// user objects are there.
inline constexpr int64_t kFirstUserObject = 16384;
/// A table's primary key, as an index and as a constraint, in ranges of their own.
inline constexpr int64_t kPrimaryKeyIndexOffset = 1'000'000'000;
inline constexpr int64_t kPrimaryKeyConstraintOffset = 2'000'000'000;

inline constexpr int64_t ForObject(uint32_t id) { return kFirstUserObject + id; }
inline constexpr int64_t PrimaryKeyIndex(uint32_t id) {
  return kPrimaryKeyIndexOffset + ForObject(id);
}
inline constexpr int64_t PrimaryKeyConstraint(uint32_t id) {
  return kPrimaryKeyConstraintOffset + ForObject(id);
}
/// The first OID of the system tables of `schema`; 0 for a schema without any.
int64_t FirstSystemTable(std::string_view schema);
/// The OID of `schema`; 0 if there is no such schema.
int64_t Namespace(std::string_view schema);

/// Whether a relation of that OID is found by its bare name (pg_table_is_visible): user
/// objects and pg_catalog's tables are on the search path; the other schemas' are not.
inline constexpr bool RelationVisible(int64_t oid) {
  return (oid >= kPgCatalogTables && oid < kInformationSchemaTables) ||
         (oid >= kFirstUserObject && oid < kPrimaryKeyConstraintOffset);
}

}  // namespace catalog_oid
}  // namespace stave::planner

#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/data_type.h"
#include "common/value.h"
#include "planner/bound_expression.h"

namespace stave::planner {

/// A named, typed column of a stream, view or result.
struct Column {
  std::string name;
  DataType type;
  bool not_null = false;  ///< Tables: the column refuses NULL (primary key columns do).
};

enum class ObjectType { kStream, kMaterializedView, kTable, kSystemTable, kSink };

/// "stream", "materialized view", "table", "system table", "sink".
std::string_view ObjectTypeName(ObjectType type);

/// The name of the hidden column that numbers the rows of a table without a primary key.
inline constexpr std::string_view kRowIdColumn = "_row_id";
/// The name of the hidden column that carries a materialized view row's key (its encoded
/// state key) to the readers of the view's changelog.
inline constexpr std::string_view kRowKeyColumn = "_row_key";

/// One catalog object. Immutable once published: a change replaces the object.
/// The revision of the streaming planner that new views and sinks are planned with. Recovery
/// plans a view again from its text, and the state it kept follows its plan's shape, so a
/// view keeps the revision it was created with:
/// 1. before plan_version was recorded;
/// 2. the inputs of joins carry only the columns something reads (PruneColumns);
/// 3. so do the inputs of time windows (PruningRules::time_window_inputs);
/// 4. identical stateful subplans are computed once (ShareIdenticalSubplans);
/// 5. a join side whose input only grows stores each row under a suffix of its own
///    (JoinNode::appends);
/// 6. a grouped view's rows carry its aggregate's states, which have no table of their own
///    (HashAggregateOperator::ViewRows);
/// 7. aggregate states are packed: zero fields cost a bit, small integers a byte
///    (GroupStateCodec::Layout::kPacked).
inline constexpr uint32_t kPlanVersion = 7;

struct CatalogObject {
  uint32_t id = 0;
  ObjectType type = ObjectType::kStream;
  std::string name;
  std::vector<Column> columns;
  /// The CREATE statement as the user wrote it. The catalog persists only this (and the
  /// id): recovery plans it again, so the on-disk format does not freeze the plan's shape.
  std::string definition;

  // Streams and sinks.
  std::string connector;
  /// WITH options, keys lower-case, `connector` excluded. A sink's may hold a password:
  /// never show them.
  std::map<std::string, std::string> options;
  std::string format;
  /// Streams declared WITH a `WATERMARK FOR column AS expression`: the event-time column,
  /// and the expression (over the stream's columns) the watermark trails — the source drops
  /// rows whose column is below it as late, and tells the dataflow how far event time got.
  std::optional<size_t> watermark_column;
  BoundExprPtr watermark;
  /// 'scan.watermark.idle-timeout': a split (Kafka partition) without rows for this long
  /// stops holding the watermark back. Unset: splits never count as idle.
  std::optional<std::chrono::milliseconds> watermark_idle_timeout;

  // Tables.
  std::vector<size_t> primary_key;  ///< Column positions; empty: rows get a hidden row id.
  bool append_only = false;         ///< INSERT only: its changelog never retracts.

  // Materialized views. `append_only` is set for a view that never retracts (no grouping
  // over an append-only input).
  std::vector<uint32_t> depends_on;  ///< Objects this view (or sink) reads.
  /// The visible columns whose values, encoded in this order, are the key each row of a
  /// keyed view is stored by; empty when the key is not all visible (or the view has none).
  /// Lets a batch query read `WHERE k = value` as a point lookup.
  std::vector<size_t> row_key_columns;
  /// The visible columns that carry event time (DeriveEventTimeColumns over the view's plan):
  /// column → delta, such that every change still to come has a value of at least
  /// `watermark + delta` there. The view's dataflow then publishes the watermark that flows
  /// out of its plan with its rows, and views over it read it: their windows close.
  std::map<size_t, int64_t> event_time_columns;
  /// Parallel instances per stage of the view's dataflow, as SET streaming_parallelism
  /// asked when it was created; 0: the server's default at each start.
  uint32_t parallelism = 0;
  /// The planner revision the view or sink was created with (kPlanVersion).
  uint32_t plan_version = kPlanVersion;

  /// Whether reading this object yields retractions (updates and deletes).
  bool Retracting() const { return type != ObjectType::kStream && !append_only; }
  /// Whether the object holds rows a query can read (not a sink).
  bool Readable() const { return type != ObjectType::kSink; }
  /// Whether rows carry the hidden row id column after the visible ones.
  bool HasRowId() const { return type == ObjectType::kTable && primary_key.empty(); }
  /// The columns a reader of this object's changelog sees: the visible ones, then the hidden
  /// row id of a keyless table.
  std::vector<Column> ChangelogColumns() const;
};
using CatalogObjectPtr = std::shared_ptr<const CatalogObject>;

/// The persisted form of a catalog object (what recovery needs to re-create it).
std::string SerializeCatalogEntry(const CatalogObject& object);
/// Returns nullopt if the entry is malformed. Only id, type, name, definition, parallelism and
/// plan_version are set.
std::optional<CatalogObject> DeserializeCatalogEntry(std::string_view entry);

/// The schema of Stave's own system tables (checkpoints, ...).
inline constexpr std::string_view kSystemSchema = "stave_catalog";
/// PostgreSQL's catalogs, which clients read (docs/catalogs.md). Its tables are also found
/// unqualified, after the user's objects, as PostgreSQL's search_path finds them.
inline constexpr std::string_view kPgCatalogSchema = "pg_catalog";
inline constexpr std::string_view kInformationSchema = "information_schema";
/// The schema user objects live in.
inline constexpr std::string_view kPublicSchema = "public";

/// A read-only table whose rows the server computes when a query reads it (checkpoint
/// history, pg_catalog.pg_class, ...). Registered at start by the executor, so the planner
/// needs no executor code.
struct SystemTable {
  std::string schema = std::string(kSystemSchema);
  std::string name;
  std::vector<Column> columns;
  /// The rows at the time of the call; one Value per column. Thread-safe.
  std::function<std::vector<std::vector<Value>>()> rows;
};

/// The set of objects by name. Thread-safe: sessions bind against it while DDL changes it.
class Catalog {
 public:
  /// Adds a system table, found as `<schema>.<name>`. Called at start only.
  void RegisterSystemTable(SystemTable table);
  /// nullptr if there is no such system table.
  const SystemTable* FindSystemTable(std::string_view schema, std::string_view name) const;
  /// Whether `schema` holds system tables (stave_catalog, pg_catalog, information_schema).
  bool IsSystemSchema(std::string_view schema) const;
  /// Every system table, ordered by schema and name.
  std::vector<const SystemTable*> SystemTables() const;

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
  /// By schema, then name.
  std::map<std::string, std::map<std::string, SystemTable, std::less<>>, std::less<>>
      system_tables_;
};

}  // namespace stave::planner

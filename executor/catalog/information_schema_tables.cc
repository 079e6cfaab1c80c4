#include <functional>
#include <utility>

#include "executor/catalog/catalog_relations.h"
#include "executor/catalog/pg_catalog_tables.h"

namespace stave::executor {
namespace {

using Rows = std::vector<std::vector<Value>>;

const DataType kText = TypeId::kVarchar;
const DataType kInt = TypeId::kInt32;
constexpr std::string_view kDatabaseName = "stave";

Value Text(std::string_view text) { return Value::String(std::string(text)); }
Value YesNo(bool yes) { return Text(yes ? "YES" : "NO"); }

planner::SystemTable Table(std::string name, std::vector<planner::Column> columns,
                           std::function<Rows()> rows) {
  planner::SystemTable table;
  table.schema = std::string(planner::kInformationSchema);
  table.name = std::move(name);
  table.columns = std::move(columns);
  table.rows = std::move(rows);
  return table;
}

// information_schema.tables.table_type: BASE TABLE for tables, VIEW for views (materialized
// or not), FOREIGN for streams, as PostgreSQL lists foreign tables.
std::string_view TableType(const Relation& relation) {
  switch (relation.kind) {
    case 'r':
      return relation.object ? "BASE TABLE" : "SYSTEM TABLE";
    case 'f':
      return "FOREIGN";
    default:
      return "VIEW";
  }
}

// The standard's name of a column's type; arrays are "ARRAY", as in PostgreSQL.
std::string StandardTypeName(DataType type) {
  if (type.IsArray()) return "ARRAY";
  if (type.id == TypeId::kJsonb || type.id == TypeId::kBytea) return type.Name();
  return type.Name();
}

std::string UdtName(DataType type) {
  for (const PgType& pg_type : PgTypes()) {
    if (pg_type.oid == type.Oid()) return pg_type.name;
  }
  return type.Name();
}

}  // namespace

std::vector<planner::SystemTable> InformationSchemaTables(const planner::Catalog* catalog) {
  std::vector<planner::SystemTable> tables;
  tables.push_back(Table("schemata",
                         {{"catalog_name", kText},
                          {"schema_name", kText},
                          {"schema_owner", kText},
                          {"default_character_set_catalog", kText},
                          {"default_character_set_schema", kText},
                          {"default_character_set_name", kText},
                          {"sql_path", kText}},
                         [] {
                           Rows rows;
                           for (const Schema& schema : Schemas()) {
                             rows.push_back({Text(kDatabaseName), Text(schema.name),
                                             Text(kOwnerName), Value::Null(), Value::Null(),
                                             Value::Null(), Value::Null()});
                           }
                           return rows;
                         }));
  tables.push_back(Table("tables",
                         {{"table_catalog", kText},
                          {"table_schema", kText},
                          {"table_name", kText},
                          {"table_type", kText},
                          {"self_referencing_column_name", kText},
                          {"reference_generation", kText},
                          {"user_defined_type_catalog", kText},
                          {"user_defined_type_schema", kText},
                          {"user_defined_type_name", kText},
                          {"is_insertable_into", kText},
                          {"is_typed", kText},
                          {"commit_action", kText}},
                         [catalog] {
                           Rows rows;
                           for (const Relation& relation : Relations(*catalog)) {
                             bool insertable = relation.object && relation.kind == 'r';
                             rows.push_back({Text(kDatabaseName), Text(relation.schema),
                                             Text(relation.name), Text(TableType(relation)),
                                             Value::Null(), Value::Null(), Value::Null(),
                                             Value::Null(), Value::Null(), YesNo(insertable),
                                             YesNo(false), Value::Null()});
                           }
                           return rows;
                         }));
  tables.push_back(Table(
      "columns",
      {{"table_catalog", kText},
       {"table_schema", kText},
       {"table_name", kText},
       {"column_name", kText},
       {"ordinal_position", kInt},
       {"column_default", kText},
       {"is_nullable", kText},
       {"data_type", kText},
       {"character_maximum_length", kInt},
       {"character_octet_length", kInt},
       {"numeric_precision", kInt},
       {"numeric_precision_radix", kInt},
       {"numeric_scale", kInt},
       {"datetime_precision", kInt},
       {"interval_type", kText},
       {"interval_precision", kInt},
       {"udt_catalog", kText},
       {"udt_schema", kText},
       {"udt_name", kText},
       {"is_identity", kText},
       {"is_generated", kText},
       {"generation_expression", kText},
       {"is_updatable", kText}},
      [catalog] {
        Rows rows;
        for (const Relation& relation : Relations(*catalog)) {
          for (size_t i = 0; i < relation.columns.size(); ++i) {
            const planner::Column& column = relation.columns[i];
            DataType type = column.type;
            bool numeric = type.IsNumeric();
            rows.push_back(
                {Text(kDatabaseName), Text(relation.schema), Text(relation.name), Text(column.name),
                 Value::Int(static_cast<int64_t>(i) + 1), Value::Null(), YesNo(!column.not_null),
                 Text(StandardTypeName(type)),
                 // varchar(n): n characters of at most 4 bytes in UTF-8.
                 type.length > 0 ? Value::Int(type.length) : Value::Null(),
                 type.length > 0 ? Value::Int(int64_t{4} * type.length) : Value::Null(),
                 numeric && type.precision > 0 ? Value::Int(type.precision) : Value::Null(),
                 numeric ? Value::Int(type.IsDecimal() ? 10 : 2) : Value::Null(),
                 type.IsDecimal() && type.precision > 0 ? Value::Int(type.scale) : Value::Null(),
                 Value::Null(), Value::Null(), Value::Null(), Text(kDatabaseName),
                 Text("pg_catalog"), Text(UdtName(type)), YesNo(false), Text("NEVER"),
                 Value::Null(), YesNo(relation.object && relation.kind == 'r')});
          }
        }
        return rows;
      }));
  tables.push_back(Table("views",
                         {{"table_catalog", kText},
                          {"table_schema", kText},
                          {"table_name", kText},
                          {"view_definition", kText},
                          {"check_option", kText},
                          {"is_updatable", kText},
                          {"is_insertable_into", kText},
                          {"is_trigger_updatable", kText},
                          {"is_trigger_deletable", kText},
                          {"is_trigger_insertable_into", kText}},
                         [] { return Rows(); }));  // Stave's views are all materialized.
  tables.push_back(Table(
      "table_constraints",
      {{"constraint_catalog", kText},
       {"constraint_schema", kText},
       {"constraint_name", kText},
       {"table_catalog", kText},
       {"table_schema", kText},
       {"table_name", kText},
       {"constraint_type", kText},
       {"is_deferrable", kText},
       {"initially_deferred", kText},
       {"enforced", kText},
       {"nulls_distinct", kText}},
      [catalog] {
        Rows rows;
        for (const planner::CatalogObjectPtr& object : catalog->List()) {
          if (object->type != planner::ObjectType::kTable || object->primary_key.empty()) continue;
          rows.push_back({Text(kDatabaseName), Text(planner::kPublicSchema),
                          Text(PrimaryKeyName(*object)), Text(kDatabaseName),
                          Text(planner::kPublicSchema), Text(object->name), Text("PRIMARY KEY"),
                          YesNo(false), YesNo(false), YesNo(true), Value::Null()});
        }
        return rows;
      }));
  tables.push_back(Table("key_column_usage",
                         {{"constraint_catalog", kText},
                          {"constraint_schema", kText},
                          {"constraint_name", kText},
                          {"table_catalog", kText},
                          {"table_schema", kText},
                          {"table_name", kText},
                          {"column_name", kText},
                          {"ordinal_position", kInt},
                          {"position_in_unique_constraint", kInt}},
                         [catalog] {
                           Rows rows;
                           for (const planner::CatalogObjectPtr& object : catalog->List()) {
                             if (object->type != planner::ObjectType::kTable) continue;
                             for (size_t i = 0; i < object->primary_key.size(); ++i) {
                               rows.push_back({Text(kDatabaseName), Text(planner::kPublicSchema),
                                               Text(PrimaryKeyName(*object)), Text(kDatabaseName),
                                               Text(planner::kPublicSchema), Text(object->name),
                                               Text(object->columns[object->primary_key[i]].name),
                                               Value::Int(static_cast<int64_t>(i) + 1),
                                               Value::Null()});
                             }
                           }
                           return rows;
                         }));
  return tables;
}

}  // namespace stave::executor

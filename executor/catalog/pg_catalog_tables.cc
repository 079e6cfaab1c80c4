#include "executor/catalog/pg_catalog_tables.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "common/array_value.h"
#include "common/version.h"
#include "executor/catalog/catalog_relations.h"
#include "planner/catalog_oids.h"
#include "planner/session_values.h"

namespace stave::executor {
namespace {

namespace oid = planner::catalog_oid;
using Row = std::vector<Value>;
using Rows = std::vector<Row>;

// The catalogs' column types as Stave holds them: oid and regproc as bigint, name and "char"
// as text, oidvector and int2vector as arrays whose subscripts start at 0.
const DataType kOid = TypeId::kInt64;
const DataType kText = TypeId::kVarchar;
const DataType kBool = TypeId::kBoolean;
const DataType kInt2 = TypeId::kInt16;
const DataType kInt4 = TypeId::kInt32;
const DataType kFloat4 = TypeId::kFloat32;
const DataType kOidArray = DataType::ArrayOf(TypeId::kInt64);
const DataType kInt2Array = DataType::ArrayOf(TypeId::kInt16);
const DataType kTextArray = DataType::ArrayOf(TypeId::kVarchar);
const DataType kOidVector = DataType::VectorOf(TypeId::kInt64);
const DataType kInt2Vector = DataType::VectorOf(TypeId::kInt16);

Value Text(std::string text) { return Value::String(std::move(text)); }
Value Char(char c) { return Value::String(std::string(1, c)); }
Value Bool(bool b) { return Value::Boolean(b); }
Value Int(int64_t i) { return Value::Int(i); }

planner::SystemTable Table(std::string name, std::vector<planner::Column> columns,
                           std::function<Rows()> rows) {
  planner::SystemTable table;
  table.schema = std::string(planner::kPgCatalogSchema);
  table.name = std::move(name);
  table.columns = std::move(columns);
  table.rows = std::move(rows);
  return table;
}

// A catalog of a concept Stave does not have: its columns, so queries bind, and no rows.
planner::SystemTable EmptyTable(std::string name, std::vector<planner::Column> columns) {
  return Table(std::move(name), std::move(columns), [] { return Rows(); });
}

Value Int2Array(const std::vector<int64_t>& numbers) {
  std::vector<Value> elements;
  for (int64_t number : numbers) elements.push_back(Value::Int(number));
  return Value::String(array::Encode(elements, TypeId::kInt16));
}

std::vector<int64_t> PrimaryKeyNumbers(const planner::CatalogObject& table) {
  std::vector<int64_t> numbers;
  for (size_t position : table.primary_key) numbers.push_back(static_cast<int64_t>(position) + 1);
  return numbers;
}

planner::SystemTable PgNamespace() {
  return Table(
      "pg_namespace",
      {{"oid", kOid}, {"nspname", kText}, {"nspowner", kOid}, {"nspacl", kTextArray}}, [] {
        Rows rows;
        for (const Schema& schema : Schemas()) {
          rows.push_back({Int(schema.oid), Text(schema.name), Int(oid::kOwner), Value::Null()});
        }
        return rows;
      });
}

planner::SystemTable PgClass(const planner::Catalog* catalog) {
  std::vector<planner::Column> columns = {{"oid", kOid},
                                          {"relname", kText},
                                          {"relnamespace", kOid},
                                          {"reltype", kOid},
                                          {"reloftype", kOid},
                                          {"relowner", kOid},
                                          {"relam", kOid},
                                          {"relfilenode", kOid},
                                          {"reltablespace", kOid},
                                          {"relpages", kInt4},
                                          {"reltuples", kFloat4},
                                          {"relallvisible", kInt4},
                                          {"reltoastrelid", kOid},
                                          {"relhasindex", kBool},
                                          {"relisshared", kBool},
                                          {"relpersistence", kText},
                                          {"relkind", kText},
                                          {"relnatts", kInt2},
                                          {"relchecks", kInt2},
                                          {"relhasrules", kBool},
                                          {"relhastriggers", kBool},
                                          {"relhassubclass", kBool},
                                          {"relrowsecurity", kBool},
                                          {"relforcerowsecurity", kBool},
                                          {"relispopulated", kBool},
                                          {"relreplident", kText},
                                          {"relispartition", kBool},
                                          {"relrewrite", kOid},
                                          {"relfrozenxid", kOid},
                                          {"relminmxid", kOid},
                                          {"relacl", kTextArray},
                                          {"reloptions", kTextArray},
                                          {"relpartbound", kText}};
  return Table("pg_class", std::move(columns), [catalog] {
    Rows rows;
    auto add = [&](int64_t relation_oid, const std::string& name, int64_t namespace_oid, char kind,
                   size_t attributes, bool has_index) {
      bool index = kind == 'i';
      rows.push_back({Int(relation_oid),
                      Text(name),
                      Int(namespace_oid),
                      Int(0),
                      Int(0),
                      Int(oid::kOwner),
                      Int(kind == 'r' || kind == 'm' ? oid::kHeapAccessMethod
                          : index                    ? oid::kBtreeAccessMethod
                                                     : 0),
                      Int(relation_oid),
                      Int(0),
                      Int(0),
                      Value::Double(-1),
                      Int(0),
                      Int(0),
                      Bool(has_index),
                      Bool(false),
                      Char('p'),
                      Char(kind),
                      Int(static_cast<int64_t>(attributes)),
                      Int(0),
                      Bool(false),
                      Bool(false),
                      Bool(false),
                      Bool(false),
                      Bool(false),
                      Bool(true),
                      Char(index ? 'n' : 'd'),
                      Bool(false),
                      Int(0),
                      Int(0),
                      Int(0),
                      Value::Null(),
                      Value::Null(),
                      Value::Null()});
    };
    for (const Relation& relation : Relations(*catalog)) {
      bool has_key = relation.object && !relation.object->primary_key.empty();
      add(relation.oid, relation.name, relation.namespace_oid, relation.kind,
          relation.columns.size(), has_key);
      if (has_key) {
        add(oid::PrimaryKeyIndex(relation.object->id), PrimaryKeyName(*relation.object),
            oid::kPublicNamespace, 'i', relation.object->primary_key.size(), false);
      }
    }
    return rows;
  });
}

planner::SystemTable PgAttribute(const planner::Catalog* catalog) {
  std::vector<planner::Column> columns = {{"attrelid", kOid},
                                          {"attname", kText},
                                          {"atttypid", kOid},
                                          {"attstattarget", kInt4},
                                          {"attlen", kInt2},
                                          {"attnum", kInt2},
                                          {"attndims", kInt4},
                                          {"attcacheoff", kInt4},
                                          {"atttypmod", kInt4},
                                          {"attbyval", kBool},
                                          {"attalign", kText},
                                          {"attstorage", kText},
                                          {"attcompression", kText},
                                          {"attnotnull", kBool},
                                          {"atthasdef", kBool},
                                          {"atthasmissing", kBool},
                                          {"attidentity", kText},
                                          {"attgenerated", kText},
                                          {"attisdropped", kBool},
                                          {"attislocal", kBool},
                                          {"attinhcount", kInt4},
                                          {"attcollation", kOid},
                                          {"attacl", kTextArray},
                                          {"attoptions", kTextArray},
                                          {"attfdwoptions", kTextArray},
                                          {"attmissingval", kText}};
  return Table("pg_attribute", std::move(columns), [catalog] {
    Rows rows;
    auto add = [&](int64_t relation_oid, const planner::Column& column, int64_t number) {
      DataType type = column.type;
      rows.push_back({Int(relation_oid),
                      Text(column.name),
                      Int(type.Oid()),
                      Int(-1),
                      Int(type.TypeLength()),
                      Int(number),
                      Int(type.IsArray() ? 1 : 0),
                      Int(-1),
                      Int(type.Typmod()),
                      Bool(type.TypeLength() > 0),
                      Char('i'),
                      Char('p'),
                      Char('\0'),
                      Bool(column.not_null),
                      Bool(false),
                      Bool(false),
                      Text(""),
                      Text(""),
                      Bool(false),
                      Bool(true),
                      Int(0),
                      Int(type.IsString() ? 100 : 0),
                      Value::Null(),
                      Value::Null(),
                      Value::Null(),
                      Value::Null()});
    };
    for (const Relation& relation : Relations(*catalog)) {
      for (size_t i = 0; i < relation.columns.size(); ++i) {
        add(relation.oid, relation.columns[i], static_cast<int64_t>(i) + 1);
      }
      if (relation.object && !relation.object->primary_key.empty()) {
        const std::vector<size_t>& key = relation.object->primary_key;
        for (size_t i = 0; i < key.size(); ++i) {
          add(oid::PrimaryKeyIndex(relation.object->id), relation.columns[key[i]],
              static_cast<int64_t>(i) + 1);
        }
      }
    }
    return rows;
  });
}

planner::SystemTable PgTypeTable() {
  std::vector<planner::Column> columns = {
      {"oid", kOid},           {"typname", kText},     {"typnamespace", kOid},
      {"typowner", kOid},      {"typlen", kInt2},      {"typbyval", kBool},
      {"typtype", kText},      {"typcategory", kText}, {"typispreferred", kBool},
      {"typisdefined", kBool}, {"typdelim", kText},    {"typrelid", kOid},
      {"typsubscript", kOid},  {"typelem", kOid},      {"typarray", kOid},
      {"typinput", kOid},      {"typoutput", kOid},    {"typreceive", kOid},
      {"typsend", kOid},       {"typmodin", kOid},     {"typmodout", kOid},
      {"typanalyze", kOid},    {"typalign", kText},    {"typstorage", kText},
      {"typnotnull", kBool},   {"typbasetype", kOid},  {"typtypmod", kInt4},
      {"typndims", kInt4},     {"typcollation", kOid}, {"typdefaultbin", kText},
      {"typdefault", kText},   {"typacl", kTextArray}};
  return Table("pg_type", std::move(columns), [] {
    Rows rows;
    for (const PgType& type : PgTypes()) {
      bool array = type.type.IsArray();
      int64_t element = array ? DataType(type.type.element).Oid() : 0;
      int64_t array_oid = array ? 0 : DataType::ArrayOf(type.type.id).Oid();
      if (array_oid == DataType(TypeId::kUnknown).Oid()) array_oid = 0;
      int16_t length = array ? -1 : type.type.TypeLength();
      rows.push_back({Int(type.oid),
                      Text(type.name),
                      Int(oid::kPgCatalogNamespace),
                      Int(oid::kOwner),
                      Int(length),
                      Bool(length > 0 && length <= 8),
                      Char('b'),
                      Text(type.category),
                      Bool(false),
                      Bool(true),
                      Char(','),
                      Int(0),
                      Int(0),
                      Int(element),
                      Int(array_oid),
                      Int(0),
                      Int(0),
                      Int(0),
                      Int(0),
                      Int(0),
                      Int(0),
                      Int(0),
                      Char('i'),
                      Char(length > 0 ? 'p' : 'x'),
                      Bool(false),
                      Int(0),
                      Int(-1),
                      Int(array ? 1 : 0),
                      Int(type.type.IsString() ? 100 : 0),
                      Value::Null(),
                      Value::Null(),
                      Value::Null()});
    }
    return rows;
  });
}

planner::SystemTable PgDatabase() {
  std::vector<planner::Column> columns = {
      {"oid", kOid},           {"datname", kText},        {"datdba", kOid},
      {"encoding", kInt4},     {"datlocprovider", kText}, {"datistemplate", kBool},
      {"datallowconn", kBool}, {"datconnlimit", kInt4},   {"datfrozenxid", kOid},
      {"datminmxid", kOid},    {"dattablespace", kOid},   {"datcollate", kText},
      {"datctype", kText},     {"daticulocale", kText},   {"datcollversion", kText},
      {"datacl", kTextArray}};
  return Table("pg_database", std::move(columns), [] {
    // Encoding 6 is UTF8, as pg_encoding_to_char spells it.
    return Rows{{Int(oid::kDatabase), Text("stave"), Int(oid::kOwner), Int(6), Char('c'),
                 Bool(false), Bool(true), Int(-1), Int(0), Int(0), Int(1663), Text("C"), Text("C"),
                 Value::Null(), Value::Null(), Value::Null()}};
  });
}

planner::SystemTable PgAm() {
  return Table("pg_am", {{"oid", kOid}, {"amname", kText}, {"amhandler", kOid}, {"amtype", kText}},
               [] {
                 return Rows{{Int(oid::kHeapAccessMethod), Text("heap"), Int(0), Char('t')},
                             {Int(oid::kBtreeAccessMethod), Text("btree"), Int(0), Char('i')}};
               });
}

// Streams are foreign tables: each connector is a foreign server (OIDs from 13200, in the
// connector names' order), and a stream's WITH options are its table's options, but for any
// that may hold a secret.
std::vector<std::string> StreamConnectors(const planner::Catalog* catalog) {
  std::vector<std::string> connectors;
  for (const planner::CatalogObjectPtr& object : catalog->List()) {
    if (object->type == planner::ObjectType::kStream) connectors.push_back(object->connector);
  }
  std::sort(connectors.begin(), connectors.end());
  connectors.erase(std::unique(connectors.begin(), connectors.end()), connectors.end());
  return connectors;
}

constexpr int64_t kFirstForeignServer = 13200;

int64_t ForeignServerOid(const std::vector<std::string>& connectors, const std::string& name) {
  auto found = std::find(connectors.begin(), connectors.end(), name);
  return kFirstForeignServer + (found - connectors.begin());
}

bool MayHoldSecret(const std::string& key) {
  for (const char* word : {"password", "secret", "sasl", "token", "credential", "key.pem"}) {
    if (key.find(word) != std::string::npos) return true;
  }
  return false;
}

planner::SystemTable PgForeignServer(const planner::Catalog* catalog) {
  return Table("pg_foreign_server",
               {{"oid", kOid},
                {"srvname", kText},
                {"srvowner", kOid},
                {"srvfdw", kOid},
                {"srvtype", kText},
                {"srvversion", kText},
                {"srvacl", kTextArray},
                {"srvoptions", kTextArray}},
               [catalog] {
                 Rows rows;
                 std::vector<std::string> connectors = StreamConnectors(catalog);
                 for (const std::string& connector : connectors) {
                   rows.push_back({Int(ForeignServerOid(connectors, connector)), Text(connector),
                                   Int(oid::kOwner), Int(0), Value::Null(), Value::Null(),
                                   Value::Null(), Value::Null()});
                 }
                 return rows;
               });
}

planner::SystemTable PgForeignTable(const planner::Catalog* catalog) {
  return Table("pg_foreign_table",
               {{"ftrelid", kOid}, {"ftserver", kOid}, {"ftoptions", kTextArray}}, [catalog] {
                 Rows rows;
                 std::vector<std::string> connectors = StreamConnectors(catalog);
                 for (const planner::CatalogObjectPtr& object : catalog->List()) {
                   if (object->type != planner::ObjectType::kStream) continue;
                   std::vector<Value> options;
                   for (const auto& [key, value] : object->options) {
                     if (!MayHoldSecret(key)) options.push_back(Text(key + "=" + value));
                   }
                   rows.push_back({Int(oid::ForObject(object->id)),
                                   Int(ForeignServerOid(connectors, object->connector)),
                                   Value::String(array::Encode(options, TypeId::kVarchar))});
                 }
                 return rows;
               });
}

planner::SystemTable PgIndex(const planner::Catalog* catalog) {
  std::vector<planner::Column> columns = {
      {"indexrelid", kOid},       {"indrelid", kOid},           {"indnatts", kInt2},
      {"indnkeyatts", kInt2},     {"indisunique", kBool},       {"indnullsnotdistinct", kBool},
      {"indisprimary", kBool},    {"indisexclusion", kBool},    {"indimmediate", kBool},
      {"indisclustered", kBool},  {"indisvalid", kBool},        {"indcheckxmin", kBool},
      {"indisready", kBool},      {"indislive", kBool},         {"indisreplident", kBool},
      {"indkey", kInt2Vector},    {"indcollation", kOidVector}, {"indclass", kOidVector},
      {"indoption", kInt2Vector}, {"indexprs", kText},          {"indpred", kText}};
  return Table("pg_index", std::move(columns), [catalog] {
    Rows rows;
    for (const planner::CatalogObjectPtr& object : catalog->List()) {
      if (object->type != planner::ObjectType::kTable || object->primary_key.empty()) continue;
      auto count = static_cast<int64_t>(object->primary_key.size());
      rows.push_back({Int(oid::PrimaryKeyIndex(object->id)),
                      Int(oid::ForObject(object->id)),
                      Int(count),
                      Int(count),
                      Bool(true),
                      Bool(false),
                      Bool(true),
                      Bool(false),
                      Bool(true),
                      Bool(false),
                      Bool(true),
                      Bool(false),
                      Bool(true),
                      Bool(true),
                      Bool(false),
                      Int2Array(PrimaryKeyNumbers(*object)),
                      Value::Null(),
                      Value::Null(),
                      Value::Null(),
                      Value::Null(),
                      Value::Null()});
    }
    return rows;
  });
}

planner::SystemTable PgConstraint(const planner::Catalog* catalog) {
  std::vector<planner::Column> columns = {{"oid", kOid},
                                          {"conname", kText},
                                          {"connamespace", kOid},
                                          {"contype", kText},
                                          {"condeferrable", kBool},
                                          {"condeferred", kBool},
                                          {"convalidated", kBool},
                                          {"conrelid", kOid},
                                          {"contypid", kOid},
                                          {"conindid", kOid},
                                          {"conparentid", kOid},
                                          {"confrelid", kOid},
                                          {"confupdtype", kText},
                                          {"confdeltype", kText},
                                          {"confmatchtype", kText},
                                          {"conislocal", kBool},
                                          {"coninhcount", kInt4},
                                          {"connoinherit", kBool},
                                          {"conkey", kInt2Array},
                                          {"confkey", kInt2Array},
                                          {"conpfeqop", kOidArray},
                                          {"conppeqop", kOidArray},
                                          {"conffeqop", kOidArray},
                                          {"confdelsetcols", kInt2Array},
                                          {"conexclop", kOidArray},
                                          {"conbin", kText}};
  return Table("pg_constraint", std::move(columns), [catalog] {
    Rows rows;
    for (const planner::CatalogObjectPtr& object : catalog->List()) {
      if (object->type != planner::ObjectType::kTable || object->primary_key.empty()) continue;
      rows.push_back({Int(oid::PrimaryKeyConstraint(object->id)),
                      Text(PrimaryKeyName(*object)),
                      Int(oid::kPublicNamespace),
                      Char('p'),
                      Bool(false),
                      Bool(false),
                      Bool(true),
                      Int(oid::ForObject(object->id)),
                      Int(0),
                      Int(oid::PrimaryKeyIndex(object->id)),
                      Int(0),
                      Int(0),
                      Char(' '),
                      Char(' '),
                      Char(' '),
                      Bool(true),
                      Int(0),
                      Bool(true),
                      Int2Array(PrimaryKeyNumbers(*object)),
                      Value::Null(),
                      Value::Null(),
                      Value::Null(),
                      Value::Null(),
                      Value::Null(),
                      Value::Null(),
                      Value::Null()});
    }
    return rows;
  });
}

planner::SystemTable PgRoles() {
  std::vector<planner::Column> columns = {{"rolname", kText},
                                          {"rolsuper", kBool},
                                          {"rolinherit", kBool},
                                          {"rolcreaterole", kBool},
                                          {"rolcreatedb", kBool},
                                          {"rolcanlogin", kBool},
                                          {"rolreplication", kBool},
                                          {"rolconnlimit", kInt4},
                                          {"rolpassword", kText},
                                          {"rolvaliduntil", kText},
                                          {"rolbypassrls", kBool},
                                          {"rolconfig", kTextArray},
                                          {"oid", kOid}};
  return Table("pg_roles", std::move(columns), [] {
    return Rows{{Text(std::string(kOwnerName)), Bool(true), Bool(true), Bool(true), Bool(true),
                 Bool(true), Bool(false), Int(-1), Text("********"), Value::Null(), Bool(true),
                 Value::Null(), Int(oid::kOwner)}};
  });
}

planner::SystemTable PgUser() {
  std::vector<planner::Column> columns = {
      {"usename", kText},  {"usesysid", kOid},  {"usecreatedb", kBool},
      {"usesuper", kBool}, {"userepl", kBool},  {"usebypassrls", kBool},
      {"passwd", kText},   {"valuntil", kText}, {"useconfig", kTextArray}};
  return Table("pg_user", std::move(columns), [] {
    return Rows{{Text(std::string(kOwnerName)), Int(oid::kOwner), Bool(true), Bool(true),
                 Bool(false), Bool(true), Text("********"), Value::Null(), Value::Null()}};
  });
}

planner::SystemTable PgSettings() {
  std::vector<planner::Column> columns = {
      {"name", kText},       {"setting", kText},        {"unit", kText},
      {"category", kText},   {"short_desc", kText},     {"extra_desc", kText},
      {"context", kText},    {"vartype", kText},        {"source", kText},
      {"min_val", kText},    {"max_val", kText},        {"enumvals", kTextArray},
      {"boot_val", kText},   {"reset_val", kText},      {"sourcefile", kText},
      {"sourceline", kInt4}, {"pending_restart", kBool}};
  return Table("pg_settings", std::move(columns), [] {
    // The settings of the session the query is bound for (pg_settings is read when it is);
    // without one, the server's defaults.
    std::vector<planner::SessionValues::Setting> settings =
        planner::CurrentSessionValues().Settings();
    if (settings.empty()) {
      settings = {{"client_encoding", "UTF8", "", "UTF8"},
                  {"DateStyle", "ISO, MDY", "", "ISO, MDY"},
                  {"integer_datetimes", "on", "", "on"},
                  {"IntervalStyle", "postgres", "", "postgres"},
                  {"max_identifier_length", "63", "", "63"},
                  {"search_path", "\"$user\", public", "", "\"$user\", public"},
                  {"server_encoding", "UTF8", "", "UTF8"},
                  {"server_version", std::string(kServerVersion), "", std::string(kServerVersion)},
                  {"standard_conforming_strings", "on", "", "on"},
                  {"TimeZone", "UTC", "", "UTC"},
                  {"transaction_isolation", "read committed", "", "read committed"}};
    }
    Rows rows;
    for (const planner::SessionValues::Setting& setting : settings) {
      bool changed = setting.value != setting.default_value;
      rows.push_back({Text(setting.name), Text(setting.value), Value::Null(), Text("Stave"),
                      setting.description.empty() ? Value::Null() : Text(setting.description),
                      Value::Null(), Text("user"), Text("string"),
                      Text(changed ? "session" : "default"), Value::Null(), Value::Null(),
                      Value::Null(), Text(setting.default_value), Text(setting.default_value),
                      Value::Null(), Value::Null(), Bool(false)});
    }
    return rows;
  });
}

planner::SystemTable PgTables(const planner::Catalog* catalog) {
  std::vector<planner::Column> columns = {
      {"schemaname", kText}, {"tablename", kText}, {"tableowner", kText},  {"tablespace", kText},
      {"hasindexes", kBool}, {"hasrules", kBool},  {"hastriggers", kBool}, {"rowsecurity", kBool}};
  return Table("pg_tables", std::move(columns), [catalog] {
    Rows rows;
    for (const Relation& relation : Relations(*catalog)) {
      if (relation.kind != 'r') continue;
      rows.push_back({Text(relation.schema), Text(relation.name), Text(std::string(kOwnerName)),
                      Value::Null(), Bool(relation.object && !relation.object->primary_key.empty()),
                      Bool(false), Bool(false), Bool(false)});
    }
    return rows;
  });
}

planner::SystemTable PgMatviews(const planner::Catalog* catalog) {
  std::vector<planner::Column> columns = {
      {"schemaname", kText}, {"matviewname", kText}, {"matviewowner", kText}, {"tablespace", kText},
      {"hasindexes", kBool}, {"ispopulated", kBool}, {"definition", kText}};
  return Table("pg_matviews", std::move(columns), [catalog] {
    Rows rows;
    for (const planner::CatalogObjectPtr& object : catalog->List()) {
      if (object->type != planner::ObjectType::kMaterializedView) continue;
      rows.push_back({Text(std::string(planner::kPublicSchema)), Text(object->name),
                      Text(std::string(kOwnerName)), Value::Null(), Bool(false), Bool(true),
                      Text(ViewQuery(*object))});
    }
    return rows;
  });
}

planner::SystemTable PgStatUserTables(const planner::Catalog* catalog) {
  std::vector<planner::Column> columns = {{"relid", kOid},
                                          {"schemaname", kText},
                                          {"relname", kText},
                                          {"seq_scan", TypeId::kInt64},
                                          {"seq_tup_read", TypeId::kInt64},
                                          {"idx_scan", TypeId::kInt64},
                                          {"idx_tup_fetch", TypeId::kInt64},
                                          {"n_tup_ins", TypeId::kInt64},
                                          {"n_tup_upd", TypeId::kInt64},
                                          {"n_tup_del", TypeId::kInt64},
                                          {"n_live_tup", TypeId::kInt64},
                                          {"n_dead_tup", TypeId::kInt64}};
  return Table("pg_stat_user_tables", std::move(columns), [catalog] {
    // Stave keeps no access statistics: the counters are zero.
    Rows rows;
    for (const Relation& relation : Relations(*catalog)) {
      if (!relation.object || relation.kind != 'r') continue;
      rows.push_back({Int(relation.oid), Text(relation.schema), Text(relation.name), Int(0), Int(0),
                      Int(0), Int(0), Int(0), Int(0), Int(0), Int(0), Int(0)});
    }
    return rows;
  });
}

planner::SystemTable PgDepend(const planner::Catalog* catalog) {
  std::vector<planner::Column> columns = {
      {"classid", kOid},  {"objid", kOid},        {"objsubid", kInt4}, {"refclassid", kOid},
      {"refobjid", kOid}, {"refobjsubid", kInt4}, {"deptype", kText}};
  return Table("pg_depend", std::move(columns), [catalog] {
    // What each view and sink reads: 'n' (normal) dependencies between pg_class rows (1259).
    Rows rows;
    for (const planner::CatalogObjectPtr& object : catalog->List()) {
      for (uint32_t input : object->depends_on) {
        rows.push_back({Int(1259), Int(oid::ForObject(object->id)), Int(0), Int(1259),
                        Int(oid::ForObject(input)), Int(0), Char('n')});
      }
    }
    return rows;
  });
}

planner::SystemTable PgTablespace() {
  return Table(
      "pg_tablespace",
      {{"oid", kOid},
       {"spcname", kText},
       {"spcowner", kOid},
       {"spcacl", kTextArray},
       {"spcoptions", kTextArray}},
      [] {
        return Rows{{Int(1663), Text("pg_default"), Int(oid::kOwner), Value::Null(), Value::Null()},
                    {Int(1664), Text("pg_global"), Int(oid::kOwner), Value::Null(), Value::Null()}};
      });
}

planner::SystemTable PgCollation() {
  std::vector<planner::Column> columns = {{"oid", kOid},           {"collname", kText},
                                          {"collnamespace", kOid}, {"collowner", kOid},
                                          {"collprovider", kText}, {"collisdeterministic", kBool},
                                          {"collencoding", kInt4}, {"collcollate", kText},
                                          {"collctype", kText},    {"colliculocale", kText},
                                          {"collversion", kText}};
  return Table("pg_collation", std::move(columns), [] {
    return Rows{
        {Int(100), Text("default"), Int(oid::kPgCatalogNamespace), Int(oid::kOwner), Char('d'),
         Bool(true), Int(-1), Value::Null(), Value::Null(), Value::Null(), Value::Null()},
        {Int(950), Text("C"), Int(oid::kPgCatalogNamespace), Int(oid::kOwner), Char('c'),
         Bool(true), Int(-1), Text("C"), Text("C"), Value::Null(), Value::Null()}};
  });
}

}  // namespace

const std::vector<PgType>& PgTypes() {
  static const std::vector<PgType> types = [] {
    std::vector<PgType> list;
    const std::vector<std::tuple<TypeId, std::string, std::string>> base = {
        {TypeId::kBoolean, "bool", "B"},        {TypeId::kInt16, "int2", "N"},
        {TypeId::kInt32, "int4", "N"},          {TypeId::kInt64, "int8", "N"},
        {TypeId::kFloat32, "float4", "N"},      {TypeId::kFloat64, "float8", "N"},
        {TypeId::kNumeric, "numeric", "N"},     {TypeId::kVarchar, "varchar", "S"},
        {TypeId::kDate, "date", "D"},           {TypeId::kTime, "time", "D"},
        {TypeId::kTimestamp, "timestamp", "D"}, {TypeId::kTimestampTz, "timestamptz", "D"},
        {TypeId::kInterval, "interval", "T"},   {TypeId::kBytea, "bytea", "U"},
        {TypeId::kJsonb, "jsonb", "U"}};
    for (const auto& [id, name, category] : base) {
      DataType type(id);
      list.push_back({type.Oid(), name, type, category});
      DataType array = DataType::ArrayOf(id);
      if (array.Oid() != DataType(TypeId::kUnknown).Oid()) {
        list.push_back({array.Oid(), "_" + name, array, "A"});
      }
    }
    // The types the catalogs' own columns have in PostgreSQL; Stave reports them as text and
    // bigint, but clients look these OIDs up.
    list.push_back({25, "text", TypeId::kVarchar, "S"});
    list.push_back({19, "name", TypeId::kVarchar, "S"});
    list.push_back({18, "char", TypeId::kVarchar, "Z"});
    list.push_back({26, "oid", TypeId::kInt64, "N"});
    list.push_back({1009, "_text", DataType::ArrayOf(TypeId::kVarchar), "A"});
    return list;
  }();
  return types;
}

char RelationKind(planner::ObjectType type) {
  switch (type) {
    case planner::ObjectType::kTable:
      return 'r';
    case planner::ObjectType::kMaterializedView:
      return 'm';
    case planner::ObjectType::kStream:
      return 'f';
    default:
      return 0;
  }
}

std::vector<planner::SystemTable> PgCatalogTables(const planner::Catalog* catalog) {
  std::vector<planner::SystemTable> tables;
  tables.push_back(PgNamespace());
  tables.push_back(PgClass(catalog));
  tables.push_back(PgAttribute(catalog));
  tables.push_back(PgTypeTable());
  tables.push_back(PgDatabase());
  tables.push_back(PgAm());
  tables.push_back(PgIndex(catalog));
  tables.push_back(PgConstraint(catalog));
  tables.push_back(PgRoles());
  tables.push_back(PgUser());
  tables.push_back(PgSettings());
  tables.push_back(PgTables(catalog));
  tables.push_back(PgMatviews(catalog));
  tables.push_back(PgStatUserTables(catalog));
  tables.push_back(PgDepend(catalog));
  tables.push_back(PgTablespace());
  tables.push_back(PgCollation());
  tables.push_back(EmptyTable(
      "pg_views",
      {{"schemaname", kText}, {"viewname", kText}, {"viewowner", kText}, {"definition", kText}}));
  tables.push_back(EmptyTable(
      "pg_description",
      {{"objoid", kOid}, {"classoid", kOid}, {"objsubid", kInt4}, {"description", kText}}));
  tables.push_back(EmptyTable("pg_shdescription",
                              {{"objoid", kOid}, {"classoid", kOid}, {"description", kText}}));
  tables.push_back(EmptyTable("pg_proc", {{"oid", kOid},
                                          {"proname", kText},
                                          {"pronamespace", kOid},
                                          {"proowner", kOid},
                                          {"prolang", kOid},
                                          {"procost", kFloat4},
                                          {"prorows", kFloat4},
                                          {"provariadic", kOid},
                                          {"prosupport", kOid},
                                          {"prokind", kText},
                                          {"prosecdef", kBool},
                                          {"proleakproof", kBool},
                                          {"proisstrict", kBool},
                                          {"proretset", kBool},
                                          {"provolatile", kText},
                                          {"proparallel", kText},
                                          {"pronargs", kInt2},
                                          {"pronargdefaults", kInt2},
                                          {"prorettype", kOid},
                                          {"proargtypes", kOidVector},
                                          {"proallargtypes", kOidArray},
                                          {"proargmodes", kTextArray},
                                          {"proargnames", kTextArray},
                                          {"proargdefaults", kText},
                                          {"protrftypes", kOidArray},
                                          {"prosrc", kText},
                                          {"probin", kText},
                                          {"prosqlbody", kText},
                                          {"proconfig", kTextArray},
                                          {"proacl", kTextArray}}));
  tables.push_back(EmptyTable(
      "pg_attrdef", {{"oid", kOid}, {"adrelid", kOid}, {"adnum", kInt2}, {"adbin", kText}}));
  tables.push_back(EmptyTable("pg_extension", {{"oid", kOid},
                                               {"extname", kText},
                                               {"extowner", kOid},
                                               {"extnamespace", kOid},
                                               {"extrelocatable", kBool},
                                               {"extversion", kText},
                                               {"extconfig", kOidArray},
                                               {"extcondition", kTextArray}}));
  tables.push_back(EmptyTable(
      "pg_enum",
      {{"oid", kOid}, {"enumtypid", kOid}, {"enumsortorder", kFloat4}, {"enumlabel", kText}}));
  tables.push_back(EmptyTable(
      "pg_inherits",
      {{"inhrelid", kOid}, {"inhparent", kOid}, {"inhseqno", kInt4}, {"inhdetachpending", kBool}}));
  tables.push_back(EmptyTable("pg_trigger", {{"oid", kOid},
                                             {"tgrelid", kOid},
                                             {"tgparentid", kOid},
                                             {"tgname", kText},
                                             {"tgfoid", kOid},
                                             {"tgtype", kInt2},
                                             {"tgenabled", kText},
                                             {"tgisinternal", kBool},
                                             {"tgconstrrelid", kOid},
                                             {"tgconstrindid", kOid},
                                             {"tgconstraint", kOid},
                                             {"tgdeferrable", kBool},
                                             {"tginitdeferred", kBool},
                                             {"tgnargs", kInt2}}));
  tables.push_back(EmptyTable("pg_policy", {{"oid", kOid},
                                            {"polname", kText},
                                            {"polrelid", kOid},
                                            {"polcmd", kText},
                                            {"polpermissive", kBool},
                                            {"polroles", kOidArray},
                                            {"polqual", kText},
                                            {"polwithcheck", kText}}));
  tables.push_back(EmptyTable("pg_publication", {{"oid", kOid},
                                                 {"pubname", kText},
                                                 {"pubowner", kOid},
                                                 {"puballtables", kBool},
                                                 {"pubinsert", kBool},
                                                 {"pubupdate", kBool},
                                                 {"pubdelete", kBool},
                                                 {"pubtruncate", kBool},
                                                 {"pubviaroot", kBool}}));
  tables.push_back(EmptyTable("pg_publication_rel", {{"oid", kOid},
                                                     {"prpubid", kOid},
                                                     {"prrelid", kOid},
                                                     {"prqual", kText},
                                                     {"prattrs", kInt2Vector}}));
  tables.push_back(EmptyTable("pg_publication_namespace",
                              {{"oid", kOid}, {"pnpubid", kOid}, {"pnnspid", kOid}}));
  tables.push_back(EmptyTable("pg_statistic_ext", {{"oid", kOid},
                                                   {"stxrelid", kOid},
                                                   {"stxname", kText},
                                                   {"stxnamespace", kOid},
                                                   {"stxowner", kOid},
                                                   {"stxstattarget", kInt4},
                                                   {"stxkeys", kInt2Vector},
                                                   {"stxkind", kTextArray}}));
  // PostgreSQL's built-in languages (\df+ names a function's language); no user functions.
  tables.push_back(
      Table("pg_language",
            {{"oid", kOid},
             {"lanname", kText},
             {"lanowner", kOid},
             {"lanispl", kBool},
             {"lanpltrusted", kBool},
             {"lanplcallfoid", kOid},
             {"laninline", kOid},
             {"lanvalidator", kOid},
             {"lanacl", kTextArray}},
            [] {
              Rows rows;
              for (auto [number, name] :
                   {std::pair<int64_t, const char*>{12, "internal"}, {13, "c"}, {14, "sql"}}) {
                rows.push_back({Int(number), Text(name), Int(oid::kOwner), Bool(false),
                                Bool(number == 14), Int(0), Int(0), Int(0), Value::Null()});
              }
              return rows;
            }));
  // One role, member of no other (\du).
  tables.push_back(EmptyTable("pg_auth_members", {{"oid", kOid},
                                                  {"roleid", kOid},
                                                  {"member", kOid},
                                                  {"grantor", kOid},
                                                  {"admin_option", kBool}}));
  tables.push_back(PgForeignServer(catalog));
  tables.push_back(PgForeignTable(catalog));
  tables.push_back(EmptyTable("pg_sequence", {{"seqrelid", kOid},
                                              {"seqtypid", kOid},
                                              {"seqstart", TypeId::kInt64},
                                              {"seqincrement", TypeId::kInt64},
                                              {"seqmax", TypeId::kInt64},
                                              {"seqmin", TypeId::kInt64},
                                              {"seqcache", TypeId::kInt64},
                                              {"seqcycle", kBool}}));
  return tables;
}

}  // namespace stave::executor

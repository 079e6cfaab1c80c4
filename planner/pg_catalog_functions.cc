// The functions clients call on PostgreSQL's catalogs (docs/catalogs.md), and the casts to
// the object identifier types. Stave's catalogs are small and change only by DDL, so the
// functions that look objects up by OID (pg_get_indexdef, ::regclass, format_type, ...) are
// bound to a CASE over the objects that exist when the query is planned.

#include <fmt/format.h>

#include <utility>

#include "common/array_value.h"
#include "common/sql_error.h"
#include "planner/catalog_oids.h"
#include "planner/expression_binder.h"
#include "planner/subquery_binder.h"

namespace stave::planner {
namespace {

namespace oid = catalog_oid;

BoundExprPtr Text(std::string text) {
  return BoundExpr::MakeConstant(Value::String(std::move(text)), TypeId::kVarchar);
}
BoundExprPtr NullText() { return BoundExpr::MakeConstant(Value::Null(), TypeId::kVarchar); }
BoundExprPtr Bool(bool value) {
  return BoundExpr::MakeConstant(Value::Boolean(value), TypeId::kBoolean);
}
BoundExprPtr Oid(int64_t value) {
  return BoundExpr::MakeConstant(Value::Int(value), TypeId::kInt64);
}

/// An OID argument as bigint; an error naming the function if it is not an integer.
BoundExprPtr OidArgument(BoundExprPtr arg, std::string_view function, int position) {
  BoundExprPtr coerced = ExpressionBinder::Coerce(std::move(arg), TypeId::kInt64, position);
  if (!coerced->type.IsInteger()) {
    throw SqlError(sqlstate::kUndefinedFunction,
                   fmt::format("function {}({}) does not exist", function, coerced->type.Name()),
                   position)
        .WithHint("The argument must be an OID.");
  }
  if (coerced->type.id != TypeId::kInt64) {
    coerced = BoundExpr::MakeFunction(ScalarFunction::kCast, TypeId::kInt64, {coerced});
  }
  return coerced;
}

/// CASE key WHEN oid1 THEN text1 ... ELSE otherwise END.
BoundExprPtr CaseByOid(const BoundExprPtr& key,
                       const std::vector<std::pair<int64_t, std::string>>& map,
                       BoundExprPtr otherwise) {
  if (map.empty()) return otherwise;
  std::vector<BoundExprPtr> args;
  for (const auto& [number, text] : map) {
    args.push_back(
        BoundExpr::MakeFunction(ScalarFunction::kEqual, TypeId::kBoolean, {key, Oid(number)}));
    args.push_back(Text(text));
  }
  args.push_back(std::move(otherwise));
  return BoundExpr::MakeFunction(ScalarFunction::kCase, TypeId::kVarchar, std::move(args));
}

BoundExprPtr Call(ScalarFunction function, DataType type, std::vector<BoundExprPtr> args) {
  return BoundExpr::MakeFunction(function, type, std::move(args));
}
BoundExprPtr Concat(std::vector<BoundExprPtr> parts) {
  BoundExprPtr joined = std::move(parts[0]);
  for (size_t i = 1; i < parts.size(); ++i) {
    joined = Call(ScalarFunction::kConcat, TypeId::kVarchar, {std::move(joined), parts[i]});
  }
  return joined;
}
BoundExprPtr Replace(BoundExprPtr text, const char* from, const char* to) {
  return Call(ScalarFunction::kReplace, TypeId::kVarchar, {std::move(text), Text(from), Text(to)});
}
BoundExprPtr AsText(BoundExprPtr value) {
  if (value->type.id == TypeId::kVarchar) return value;
  return Call(ScalarFunction::kCast, TypeId::kVarchar, {std::move(value)});
}
/// CASE WHEN value IS NULL THEN NULL ELSE otherwise END: a strict function's NULL.
BoundExprPtr NullIfNull(const BoundExprPtr& value, BoundExprPtr otherwise) {
  DataType type = otherwise->type;
  return Call(ScalarFunction::kCase, type,
              {Call(ScalarFunction::kIsNull, TypeId::kBoolean, {value}),
               BoundExpr::MakeConstant(Value::Null(), type), std::move(otherwise)});
}

// The keywords PostgreSQL's quote_ident quotes (every keyword but the unreserved ones).
constexpr const char* kQuotedKeywords =
    "^(all|analyse|analyze|and|any|array|as|asc|asymmetric|authorization|between|bigint|binary|"
    "bit|boolean|both|case|cast|char|character|check|coalesce|collate|collation|column|"
    "concurrently|constraint|create|cross|current_catalog|current_date|current_role|"
    "current_schema|current_time|current_timestamp|current_user|dec|decimal|default|deferrable|"
    "desc|distinct|do|else|end|except|exists|extract|false|fetch|float|for|foreign|freeze|from|"
    "full|grant|greatest|group|grouping|having|ilike|in|initially|inner|inout|int|integer|"
    "intersect|interval|into|is|isnull|join|lateral|leading|least|left|like|limit|localtime|"
    "localtimestamp|national|natural|nchar|none|normalize|not|notnull|null|nullif|numeric|offset|"
    "on|only|or|order|out|outer|overlaps|overlay|placing|position|precision|primary|real|"
    "references|returning|right|row|select|session_user|setof|similar|smallint|some|substring|"
    "symmetric|table|tablesample|then|time|timestamp|to|trailing|treat|trim|true|union|unique|"
    "user|using|values|varchar|variadic|verbose|when|where|window|with|xmlattributes|xmlconcat|"
    "xmlelement|xmlexists|xmlforest|xmlnamespaces|xmlparse|xmlpi|xmlroot|xmlserialize|"
    "xmltable)$";

/// quote_ident(text): the name as is when it needs no quotes, else in double quotes with
/// inner quotes doubled.
BoundExprPtr QuoteIdent(BoundExprPtr name) {
  BoundExprPtr plain = Call(
      ScalarFunction::kAnd, TypeId::kBoolean,
      {Call(ScalarFunction::kRegexMatch, TypeId::kBoolean, {name, Text("^[a-z_][a-z0-9_$]*$")}),
       Call(ScalarFunction::kRegexNotMatch, TypeId::kBoolean, {name, Text(kQuotedKeywords)})});
  return Call(ScalarFunction::kCase, TypeId::kVarchar,
              {plain, name, Concat({Text("\""), Replace(name, "\"", "\"\""), Text("\"")})});
}

/// quote_literal(value): a string literal; with a backslash, PostgreSQL writes E'…' and
/// doubles the backslashes.
BoundExprPtr QuoteLiteral(BoundExprPtr value) {
  BoundExprPtr text = AsText(std::move(value));
  BoundExprPtr quotes_doubled = Replace(text, "'", "''");
  BoundExprPtr has_backslash =
      Call(ScalarFunction::kGreater, TypeId::kBoolean,
           {Call(ScalarFunction::kStrPos, TypeId::kInt32, {text, Text("\\")}),
            BoundExpr::MakeConstant(Value::Int(0), TypeId::kInt32)});
  return Call(
      ScalarFunction::kCase, TypeId::kVarchar,
      {has_backslash, Concat({Text("E'"), Replace(quotes_doubled, "\\", "\\\\"), Text("'")}),
       Concat({Text("'"), quotes_doubled, Text("'")})});
}

/// A value as json_build_object writes it: numbers and booleans bare, text quoted with JSON's
/// escapes, NULL as null.
BoundExprPtr JsonValue(BoundExprPtr value) {
  BoundExprPtr text = AsText(value);
  if (value->type.id == TypeId::kBoolean) {
    text = NullIfNull(
        value, Call(ScalarFunction::kCase, TypeId::kVarchar, {value, Text("true"), Text("false")}));
  } else if (!value->type.IsNumeric()) {
    BoundExprPtr escaped = Replace(Replace(text, "\\", "\\\\"), "\"", "\\\"");
    escaped = Replace(Replace(Replace(escaped, "\n", "\\n"), "\r", "\\r"), "\t", "\\t");
    text = Concat({Text("\""), escaped, Text("\"")});
  }
  return Call(ScalarFunction::kCoalesce, TypeId::kVarchar, {text, Text("null")});
}

/// pg_size_pretty(bigint), as PostgreSQL 15 rounds: bytes below 10 kB, then kB, MB, GB, TB,
/// each the size halved-and-rounded once it is below 20 units (for sizes of zero or more).
BoundExprPtr SizePretty(BoundExprPtr bytes) {
  auto number = [](int64_t value) {
    return BoundExpr::MakeConstant(Value::Int(value), TypeId::kInt64);
  };
  auto divide = [&](const BoundExprPtr& value, int64_t by) {
    return Call(ScalarFunction::kDivide, TypeId::kInt64, {value, number(by)});
  };
  auto below = [&](const BoundExprPtr& value, int64_t limit) {
    return Call(ScalarFunction::kLess, TypeId::kBoolean, {value, number(limit)});
  };
  auto half_rounded = [&](const BoundExprPtr& value) {
    return AsText(divide(Call(ScalarFunction::kAdd, TypeId::kInt64, {value, number(1)}), 2));
  };
  const int64_t limit = 10 * 1024;
  const int64_t limit2 = limit * 2 - 1;
  std::vector<BoundExprPtr> cases = {below(bytes, limit), Concat({AsText(bytes), Text(" bytes")})};
  BoundExprPtr scaled = divide(bytes, 512);  // One extra bit, for the rounding.
  const char* units[] = {" kB", " MB", " GB"};
  for (const char* unit : units) {
    cases.push_back(below(scaled, limit2));
    cases.push_back(Concat({half_rounded(scaled), Text(unit)}));
    scaled = divide(scaled, 1024);
  }
  cases.push_back(Concat({half_rounded(scaled), Text(" TB")}));
  return Call(ScalarFunction::kCase, TypeId::kVarchar, std::move(cases));
}

const Catalog& BindingCatalog(int position) {
  const Catalog* catalog = CurrentBindingCatalog();
  if (!catalog) {
    throw SqlError(sqlstate::kFeatureNotSupported, "catalog lookups are not supported here",
                   position);
  }
  return *catalog;
}

std::string QuoteIdentifier(const std::string& name) {
  bool plain = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
  for (char c : name)
    plain = plain && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  if (plain) return name;
  std::string quoted = "\"";
  for (char c : name) {
    quoted += c;
    if (c == '"') quoted += '"';
  }
  return quoted + "\"";
}

std::string PrimaryKeyColumns(const CatalogObject& table) {
  std::string columns;
  for (size_t position : table.primary_key) {
    if (!columns.empty()) columns += ", ";
    columns += QuoteIdentifier(table.columns[position].name);
  }
  return columns;
}

/// Every type by OID, as format_type names it.
std::vector<std::pair<int64_t, std::string>> TypeNames() {
  std::vector<std::pair<int64_t, std::string>> names = {
      {25, "text"},
      {19, "name"},
      {18, "\"char\""},
      {26, "oid"},
      {1009, "text[]"},
      // Pseudo-types: no value has them, but catalog queries name them (pgcli compares
      // prorettype with 'trigger'::regtype).
      {2249, "record"},
      {2275, "cstring"},
      {2277, "anyarray"},
      {2278, "void"},
      {2279, "trigger"},
      {2281, "internal"},
      {2283, "anyelement"},
      {3838, "event_trigger"}};
  for (int id = static_cast<int>(TypeId::kBoolean); id <= static_cast<int>(TypeId::kJsonb); ++id) {
    DataType type(static_cast<TypeId>(id));
    names.emplace_back(type.Oid(), type.Name());
    DataType array = DataType::ArrayOf(type.id);
    if (array.Oid() != DataType(TypeId::kUnknown).Oid())
      names.emplace_back(array.Oid(), array.Name());
  }
  return names;
}

/// Every user relation (not sinks) by OID, by its name.
std::vector<std::pair<int64_t, std::string>> RelationNames(const Catalog& catalog) {
  std::vector<std::pair<int64_t, std::string>> names;
  for (const CatalogObjectPtr& object : catalog.List()) {
    if (!object->Readable()) continue;
    names.emplace_back(oid::ForObject(object->id), QuoteIdentifier(object->name));
    if (!object->primary_key.empty()) {
      names.emplace_back(oid::PrimaryKeyIndex(object->id), QuoteIdentifier(object->name + "_pkey"));
    }
  }
  return names;
}

// The names the reg type `type` prints OIDs as (none for regproc: Stave has no functions).
std::vector<std::pair<int64_t, std::string>> RegNames(std::string_view type, int position) {
  if (type == "regclass") return RelationNames(BindingCatalog(position));
  if (type == "regtype") return TypeNames();
  std::vector<std::pair<int64_t, std::string>> schemas;
  if (type == "regnamespace") {
    for (std::string_view schema :
         {kPgCatalogSchema, kPublicSchema, kInformationSchema, kSystemSchema}) {
      schemas.emplace_back(oid::Namespace(schema), std::string(schema));
    }
  }
  return schemas;
}

/// The OID of relation `name` ('accounts', 'public.accounts', 'pg_catalog.pg_class').
int64_t RelationOid(const Catalog& catalog, const std::string& name, int position) {
  std::string schema;
  std::string relation = name;
  if (size_t dot = name.find('.'); dot != std::string::npos) {
    schema = name.substr(0, dot);
    relation = name.substr(dot + 1);
  }
  if (schema.empty() || schema == kPublicSchema) {
    CatalogObjectPtr object = catalog.Find(relation);
    if (object && object->Readable()) return oid::ForObject(object->id);
  }
  std::string system_schema = schema.empty() ? std::string(kPgCatalogSchema) : schema;
  int64_t next = oid::FirstSystemTable(system_schema);
  for (const SystemTable* table : catalog.SystemTables()) {
    if (table->schema != system_schema) continue;
    if (table->name == relation) return next;
    ++next;
  }
  throw SqlError(sqlstate::kUndefinedTable, fmt::format("relation \"{}\" does not exist", name),
                 position);
}

}  // namespace

std::optional<BoundExprPtr> ExpressionBinder::BindPgCatalogFunction(
    const std::string& name, const parser::FunctionCallExpr& expr) {
  if (expr.star || expr.distinct || expr.name.size() > 2) return std::nullopt;
  int position = expr.position;
  auto args = [&] {
    std::vector<BoundExprPtr> bound;
    for (const auto& arg : expr.args) bound.push_back(Bind(*arg));
    return bound;
  };
  auto expect = [&](size_t low, size_t high) {
    if (expr.args.size() < low || expr.args.size() > high) {
      throw SqlError(
          sqlstate::kUndefinedFunction,
          fmt::format("function {}() with {} argument(s) does not exist", name, expr.args.size()),
          position)
          .WithHint("No function matches the given name and argument types.");
    }
  };
  // Every object belongs to the one role.
  if (name == "pg_get_userbyid") {
    expect(1, 1);
    args();
    return Text("stave");
  }
  if (name == "pg_encoding_to_char") {
    expect(1, 1);
    args();
    return Text("UTF8");
  }
  if (name == "pg_table_is_visible") {
    expect(1, 1);
    BoundExprPtr relation = OidArgument(args()[0], name, position);
    auto range = [&](int64_t low, int64_t high) {
      return BoundExpr::MakeFunction(
          ScalarFunction::kAnd, TypeId::kBoolean,
          {BoundExpr::MakeFunction(ScalarFunction::kGreaterEqual, TypeId::kBoolean,
                                   {relation, Oid(low)}),
           BoundExpr::MakeFunction(ScalarFunction::kLess, TypeId::kBoolean,
                                   {relation, Oid(high)})});
    };
    // catalog_oid::RelationVisible, over a column.
    return BoundExpr::MakeFunction(
        ScalarFunction::kOr, TypeId::kBoolean,
        {range(oid::kPgCatalogTables, oid::kInformationSchemaTables),
         range(oid::kFirstUserObject, oid::kPrimaryKeyConstraintOffset)});
  }
  // Types and functions all live in pg_catalog, which is on the search path.
  if (name == "pg_type_is_visible" || name == "pg_function_is_visible") {
    expect(1, 1);
    args();
    return Bool(true);
  }
  // Stave has no comments, column defaults, user functions or partitions.
  if (name == "obj_description" || name == "col_description" || name == "shobj_description" ||
      name == "pg_get_expr" || name == "pg_get_function_result" ||
      name == "pg_get_function_arguments" || name == "pg_get_function_identity_arguments" ||
      name == "pg_get_triggerdef" || name == "pg_get_statisticsobjdef_columns" ||
      name == "pg_get_function_sqlbody") {
    expect(1, 3);
    args();
    return NullText();
  }
  if (name == "quote_ident") {
    expect(1, 1);
    return QuoteIdent(Coerce(args()[0], TypeId::kVarchar, position));
  }
  if (name == "quote_literal") {
    expect(1, 1);
    return QuoteLiteral(args()[0]);
  }
  if (name == "pg_size_pretty") {
    expect(1, 1);
    BoundExprPtr bytes = Coerce(args()[0], TypeId::kInt64, position);
    if (!bytes->type.IsInteger()) {
      throw SqlError(sqlstate::kUndefinedFunction,
                     fmt::format("function pg_size_pretty({}) does not exist", bytes->type.Name()),
                     position)
          .WithHint("pg_size_pretty takes a bigint.");
    }
    if (bytes->type.id != TypeId::kInt64)
      bytes = Call(ScalarFunction::kCast, TypeId::kInt64, {bytes});
    return SizePretty(bytes);
  }
  // Stave keeps no per-relation sizes (state lives in one RocksDB): unknown, as NULL.
  if (name == "pg_table_size" || name == "pg_relation_size" || name == "pg_total_relation_size" ||
      name == "pg_indexes_size" || name == "pg_database_size") {
    expect(1, 2);
    args();
    return BoundExpr::MakeConstant(Value::Null(), TypeId::kInt64);
  }
  // Stave has no sequences.
  if (name == "pg_get_serial_sequence") {
    expect(2, 2);
    args();
    return NullText();
  }
  // json_build_object(key, value, …): the object as json text, as PostgreSQL prints it.
  if (name == "json_build_object") {
    if (expr.args.size() % 2 != 0) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "argument list must have even number of elements", position)
          .WithHint(
              "The arguments of json_build_object() must consist of alternating keys and "
              "values.");
    }
    std::vector<BoundExprPtr> bound = args();
    std::vector<BoundExprPtr> parts = {Text("{")};
    for (size_t i = 0; i < bound.size(); i += 2) {
      if (i > 0) parts.push_back(Text(", "));
      parts.push_back(JsonValue(bound[i]));
      parts.push_back(Text(" : "));
      parts.push_back(JsonValue(bound[i + 1]));
    }
    parts.push_back(Text("}"));
    return Concat(std::move(parts));
  }
  if (name == "pg_relation_is_publishable") {
    expect(1, 1);
    args();
    return Bool(false);
  }
  // One role with every privilege.
  if (name.starts_with("has_") && name.ends_with("_privilege")) {
    expect(2, 3);
    args();
    return Bool(true);
  }
  // Stave's arrays are one-dimensional; their subscripts start at the type's lower bound (1,
  // or 0 for int2vector and oidvector). Both bounds are NULL for an empty array or another
  // dimension.
  if (name == "array_upper" || name == "array_lower") {
    expect(2, 2);
    std::vector<BoundExprPtr> bound = args();
    if (!bound[0]->type.IsArray()) {
      throw SqlError(
          sqlstate::kUndefinedFunction,
          fmt::format("function {}({}, integer) does not exist", name, bound[0]->type.Name()),
          position);
    }
    int lower_bound = bound[0]->type.lower_bound;
    BoundExprPtr dimension = Coerce(bound[1], TypeId::kInt32, position);
    BoundExprPtr length = BoundExpr::MakeFunction(ScalarFunction::kArrayLength, TypeId::kInt32,
                                                  {bound[0], dimension});
    if (name == "array_upper") {
      if (lower_bound == 1) return length;
      return BoundExpr::MakeFunction(
          ScalarFunction::kAdd, TypeId::kInt32,
          {length, BoundExpr::MakeConstant(Value::Int(lower_bound - 1), TypeId::kInt32)});
    }
    return BoundExpr::MakeFunction(
        ScalarFunction::kCase, TypeId::kInt32,
        {BoundExpr::MakeFunction(ScalarFunction::kIsNotNull, TypeId::kBoolean, {length}),
         BoundExpr::MakeConstant(Value::Int(lower_bound), TypeId::kInt32),
         BoundExpr::MakeConstant(Value::Null(), TypeId::kInt32)});
  }
  if (name == "current_schemas") {
    expect(1, 1);
    BoundExprPtr implicit = Coerce(args()[0], TypeId::kBoolean, position);
    std::vector<Value> with = {Value::String("pg_catalog"), Value::String("public")};
    std::vector<Value> without = {Value::String("public")};
    DataType type = DataType::ArrayOf(TypeId::kVarchar);
    return BoundExpr::MakeFunction(
        ScalarFunction::kCase, type,
        {implicit,
         BoundExpr::MakeConstant(Value::String(array::Encode(with, TypeId::kVarchar)), type),
         BoundExpr::MakeConstant(Value::String(array::Encode(without, TypeId::kVarchar)), type)});
  }
  if (name == "pg_typeof") {
    // regtype's text: the argument's type as format_type names it, without a modifier
    // (PostgreSQL's result is a regtype; here it is that name as text).
    expect(1, 1);
    return Text(args()[0]->type.Name());
  }
  if (name == "format_type") {
    expect(2, 2);
    std::vector<BoundExprPtr> bound = args();
    BoundExprPtr type = OidArgument(bound[0], name, position);
    BoundExprPtr typmod = OidArgument(bound[1], name, position);
    // numeric's typmod holds ((precision << 16) | scale) + 4.
    auto number = [](int64_t value) {
      return BoundExpr::MakeConstant(Value::Int(value), TypeId::kInt64);
    };
    auto as_text = [](BoundExprPtr value) {
      return BoundExpr::MakeFunction(ScalarFunction::kCast, TypeId::kVarchar, {std::move(value)});
    };
    auto concat = [](BoundExprPtr a, BoundExprPtr b) {
      return BoundExpr::MakeFunction(ScalarFunction::kConcat, TypeId::kVarchar,
                                     {std::move(a), std::move(b)});
    };
    BoundExprPtr packed =
        BoundExpr::MakeFunction(ScalarFunction::kSubtract, TypeId::kInt64, {typmod, number(4)});
    BoundExprPtr precision =
        BoundExpr::MakeFunction(ScalarFunction::kDivide, TypeId::kInt64, {packed, number(65536)});
    BoundExprPtr scale =
        BoundExpr::MakeFunction(ScalarFunction::kModulo, TypeId::kInt64, {packed, number(65536)});
    BoundExprPtr numeric_with_typmod = BoundExpr::MakeFunction(
        ScalarFunction::kAnd, TypeId::kBoolean,
        {BoundExpr::MakeFunction(ScalarFunction::kEqual, TypeId::kBoolean,
                                 {type, number(DataType(TypeId::kNumeric).Oid())}),
         BoundExpr::MakeFunction(ScalarFunction::kGreaterEqual, TypeId::kBoolean,
                                 {typmod, number(4)})});
    BoundExprPtr numeric_name = concat(
        concat(concat(concat(Text("numeric("), as_text(precision)), Text(",")), as_text(scale)),
        Text(")"));
    // varchar's typmod holds its length + 4.
    BoundExprPtr varchar_with_typmod = BoundExpr::MakeFunction(
        ScalarFunction::kAnd, TypeId::kBoolean,
        {BoundExpr::MakeFunction(ScalarFunction::kEqual, TypeId::kBoolean,
                                 {type, number(DataType(TypeId::kVarchar).Oid())}),
         BoundExpr::MakeFunction(ScalarFunction::kGreater, TypeId::kBoolean, {typmod, number(4)})});
    BoundExprPtr varchar_name =
        concat(concat(Text("character varying("), as_text(packed)), Text(")"));
    // PostgreSQL prints "???" for an OID that names no type, and NULL for a NULL OID.
    return NullIfNull(
        type, BoundExpr::MakeFunction(ScalarFunction::kCase, TypeId::kVarchar,
                                      {numeric_with_typmod, numeric_name, varchar_with_typmod,
                                       varchar_name, CaseByOid(type, TypeNames(), Text("???"))}));
  }
  if (name == "pg_get_indexdef" || name == "pg_get_constraintdef" || name == "pg_get_viewdef") {
    expect(1, 3);
    BoundExprPtr object = OidArgument(args()[0], name, position);
    const Catalog& catalog = BindingCatalog(position);
    std::vector<std::pair<int64_t, std::string>> definitions;
    for (const CatalogObjectPtr& each : catalog.List()) {
      if (name == "pg_get_viewdef") {
        if (each->type == ObjectType::kMaterializedView) {
          definitions.emplace_back(oid::ForObject(each->id), each->definition);
        }
      } else if (each->type == ObjectType::kTable && !each->primary_key.empty()) {
        std::string columns = PrimaryKeyColumns(*each);
        if (name == "pg_get_indexdef") {
          definitions.emplace_back(oid::PrimaryKeyIndex(each->id),
                                   fmt::format("CREATE UNIQUE INDEX {} ON {} USING btree ({})",
                                               QuoteIdentifier(each->name + "_pkey"),
                                               QuoteIdentifier(each->name), columns));
        } else {
          definitions.emplace_back(oid::PrimaryKeyConstraint(each->id),
                                   fmt::format("PRIMARY KEY ({})", columns));
        }
      }
    }
    return CaseByOid(object, definitions, NullText());
  }
  return std::nullopt;
}

std::optional<BoundExprPtr> ExpressionBinder::BindObjectIdentifierComparison(
    const parser::BinaryExpr& expr) {
  static constexpr std::pair<parser::BinaryOp, ScalarFunction> kComparisons[] = {
      {parser::BinaryOp::kEqual, ScalarFunction::kEqual},
      {parser::BinaryOp::kNotEqual, ScalarFunction::kNotEqual},
      {parser::BinaryOp::kLess, ScalarFunction::kLess},
      {parser::BinaryOp::kLessEqual, ScalarFunction::kLessEqual},
      {parser::BinaryOp::kGreater, ScalarFunction::kGreater},
      {parser::BinaryOp::kGreaterEqual, ScalarFunction::kGreaterEqual}};
  const ScalarFunction* comparison = nullptr;
  for (const auto& [op, function] : kComparisons) {
    if (expr.op == op) comparison = &function;
  }
  auto reg_type = [](const parser::Expr& side) -> std::string_view {
    if (side.kind != parser::ExprKind::kCast) return {};
    const auto& cast = static_cast<const parser::CastExpr&>(side);
    std::string_view type = cast.type.name;
    if (type.starts_with("pg_catalog.")) type.remove_prefix(std::string_view("pg_catalog.").size());
    bool reg = type == "regclass" || type == "regtype" || type == "regnamespace";
    return reg && cast.type.array_dimensions == 0 ? type : std::string_view();
  };
  std::string_view type = reg_type(*expr.left);
  if (comparison == nullptr || type.empty() || reg_type(*expr.right) != type) return std::nullopt;
  // Each side as its OID: a name's OID for a literal, the operand itself otherwise.
  auto oid_of = [&](const parser::Expr& side) {
    const auto& cast = static_cast<const parser::CastExpr&>(side);
    BoundExprPtr bound = BindObjectIdentifierCast(cast).value();
    if (bound->type.IsInteger()) return bound;
    return OidArgument(Bind(*cast.operand), type, cast.position);
  };
  return Call(*comparison, TypeId::kBoolean, {oid_of(*expr.left), oid_of(*expr.right)});
}

std::optional<BoundExprPtr> ExpressionBinder::BindObjectIdentifierCast(
    const parser::CastExpr& expr) {
  std::string_view type = expr.type.name;
  if (type.starts_with("pg_catalog.")) type.remove_prefix(std::string_view("pg_catalog.").size());
  // An array of OIDs as an array of reg values (pgcli: proargtypes::regtype[]): each OID as
  // its name, or as its number when it names nothing (and for regproc: Stave has no
  // functions), as the reg types print.
  if (expr.type.array_dimensions == 1 &&
      (type == "regclass" || type == "regtype" || type == "regnamespace" || type == "regproc")) {
    BoundExprPtr operand = Bind(*expr.operand);
    if (!operand->type.IsArray() || !operand->type.ElementType().IsInteger()) {
      throw SqlError("42846",
                     fmt::format("cannot cast type {} to {}[]", operand->type.Name(), type),
                     expr.position);
    }
    std::vector<Value> numbers;
    std::vector<Value> names;
    for (const auto& [number, name] : RegNames(type, expr.position)) {
      numbers.push_back(Value::Int(number));
      names.push_back(Value::String(name));
    }
    DataType numbers_type = DataType::ArrayOf(TypeId::kInt64);
    DataType names_type = DataType::ArrayOf(TypeId::kVarchar);
    return Call(ScalarFunction::kOidArrayNames, names_type,
                {operand,
                 BoundExpr::MakeConstant(Value::String(array::Encode(numbers, TypeId::kInt64)),
                                         numbers_type),
                 BoundExpr::MakeConstant(Value::String(array::Encode(names, TypeId::kVarchar)),
                                         names_type)});
  }
  // oid[]: Stave's OIDs are bigints.
  if (expr.type.array_dimensions == 1 && type == "oid") {
    DataType oids = DataType::ArrayOf(TypeId::kInt64);
    BoundExprPtr operand = Bind(*expr.operand);
    if (operand->type.id == TypeId::kUnknown) return Coerce(operand, oids, expr.position);
    if (!operand->type.IsArray() || !operand->type.ElementType().IsInteger()) {
      throw SqlError("42846", fmt::format("cannot cast type {} to oid[]", operand->type.Name()),
                     expr.position);
    }
    if (operand->type == oids) return operand;
    return Call(ScalarFunction::kCast, oids, {operand});
  }
  if (expr.type.array_dimensions != 0 ||
      (type != "oid" && type != "regclass" && type != "regtype" && type != "regnamespace" &&
       type != "regproc")) {
    return std::nullopt;
  }
  BoundExprPtr operand = Bind(*expr.operand);
  int position = expr.position;
  if (type == "oid") return OidArgument(operand, "oid", position);
  // A name to its OID: 'accounts'::regclass.
  if (operand->kind == BoundExpr::Kind::kConstant && operand->type.id == TypeId::kUnknown &&
      !operand->constant.is_null()) {
    const std::string& text = operand->constant.string_value();
    if (type == "regclass") return Oid(RelationOid(BindingCatalog(position), text, position));
    if (type == "regnamespace") {
      int64_t schema = oid::Namespace(text);
      if (schema == 0) {
        throw SqlError("3F000", fmt::format("schema \"{}\" does not exist", text), position);
      }
      return Oid(schema);
    }
    if (type == "regtype") {
      for (const auto& [number, type_name] : TypeNames()) {
        if (type_name == text) return Oid(number);
      }
      std::optional<DataType> data_type = DataTypeFromName(text);
      if (!data_type) {
        throw SqlError(sqlstate::kUndefinedObject, fmt::format("type \"{}\" does not exist", text),
                       position);
      }
      return Oid(data_type->Oid());
    }
    throw SqlError(sqlstate::kUndefinedFunction,
                   fmt::format("function \"{}\" does not exist", text), position);
  }
  // A text value computed per row (pg_get_serial_sequence(...)::regclass): a user relation's
  // name to its OID; NULL for a name that is none, as to_regclass does.
  if (type == "regclass" && operand->type.IsString()) {
    std::vector<BoundExprPtr> cases;
    for (const auto& [number, name] : RelationNames(BindingCatalog(position))) {
      for (const std::string& spelled : {name, std::string(kPublicSchema) + "." + name}) {
        cases.push_back(Call(ScalarFunction::kEqual, TypeId::kBoolean, {operand, Text(spelled)}));
        cases.push_back(Oid(number));
      }
    }
    if (cases.empty()) return BoundExpr::MakeConstant(Value::Null(), TypeId::kInt64);
    cases.push_back(BoundExpr::MakeConstant(Value::Null(), TypeId::kInt64));
    return Call(ScalarFunction::kCase, TypeId::kInt64, std::move(cases));
  }
  // An OID to its name, as the reg types print: unknown OIDs print as the number.
  BoundExprPtr number = OidArgument(operand, type, position);
  BoundExprPtr as_text = BoundExpr::MakeFunction(ScalarFunction::kCast, TypeId::kVarchar, {number});
  return CaseByOid(number, RegNames(type, position), as_text);
}

}  // namespace stave::planner

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
      {25, "text"}, {19, "name"}, {18, "\"char\""}, {26, "oid"}, {1009, "text[]"}};
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
      name == "pg_get_triggerdef" || name == "pg_get_statisticsobjdef_columns") {
    expect(1, 3);
    args();
    return NullText();
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
  // Stave's arrays are one-dimensional and 1-based: the upper bound is the length, the lower
  // bound 1; both NULL for an empty array or another dimension.
  if (name == "array_upper" || name == "array_lower") {
    expect(2, 2);
    std::vector<BoundExprPtr> bound = args();
    if (!bound[0]->type.IsArray()) {
      throw SqlError(
          sqlstate::kUndefinedFunction,
          fmt::format("function {}({}, integer) does not exist", name, bound[0]->type.Name()),
          position);
    }
    BoundExprPtr dimension = Coerce(bound[1], TypeId::kInt32, position);
    BoundExprPtr length = BoundExpr::MakeFunction(ScalarFunction::kArrayLength, TypeId::kInt32,
                                                  {bound[0], dimension});
    if (name == "array_upper") return length;
    return BoundExpr::MakeFunction(
        ScalarFunction::kCase, TypeId::kInt32,
        {BoundExpr::MakeFunction(ScalarFunction::kIsNotNull, TypeId::kBoolean, {length}),
         BoundExpr::MakeConstant(Value::Int(1), TypeId::kInt32),
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
    // PostgreSQL prints "???" for an OID that names no type, and NULL for a NULL OID.
    return BoundExpr::MakeFunction(
        ScalarFunction::kCase, TypeId::kVarchar,
        {numeric_with_typmod, numeric_name, CaseByOid(type, TypeNames(), Text("???"))});
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

std::optional<BoundExprPtr> ExpressionBinder::BindObjectIdentifierCast(
    const parser::CastExpr& expr) {
  std::string_view type = expr.type.name;
  if (type.starts_with("pg_catalog.")) type.remove_prefix(std::string_view("pg_catalog.").size());
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
  // An OID to its name, as the reg types print: unknown OIDs print as the number.
  BoundExprPtr number = OidArgument(operand, type, position);
  BoundExprPtr as_text = BoundExpr::MakeFunction(ScalarFunction::kCast, TypeId::kVarchar, {number});
  if (type == "regclass")
    return CaseByOid(number, RelationNames(BindingCatalog(position)), as_text);
  if (type == "regtype") return CaseByOid(number, TypeNames(), as_text);
  if (type == "regnamespace") {
    std::vector<std::pair<int64_t, std::string>> schemas;
    for (std::string_view schema :
         {kPgCatalogSchema, kPublicSchema, kInformationSchema, kSystemSchema}) {
      schemas.emplace_back(oid::Namespace(schema), std::string(schema));
    }
    return CaseByOid(number, schemas, as_text);
  }
  return as_text;
}

}  // namespace stave::planner

// The functions and keywords that read or change the client's session (planner/
// session_values.h): current_user, session_user, current_role, user, current_catalog,
// current_schema, pg_backend_pid(), current_setting() and set_config(). A statement reads its
// session once, when it is bound, so each is a constant of the statement.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "common/sql_error.h"
#include "planner/catalog.h"
#include "planner/expression_binder.h"
#include "planner/session_values.h"

namespace stave::planner {
namespace {

BoundExprPtr Text(std::string text) {
  return BoundExpr::MakeConstant(Value::String(std::move(text)), TypeId::kVarchar);
}

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

/// The first schema of the search_path that exists, as PostgreSQL's current_schema gives;
/// "$user" names no schema here (Stave has none per user). nullopt if none exists.
std::optional<std::string> CurrentSchema() {
  std::string path =
      CurrentSessionValues().FindSetting("search_path").value_or("\"$user\", public");
  size_t start = 0;
  while (start <= path.size()) {
    size_t comma = std::min(path.find(',', start), path.size());
    std::string entry = path.substr(start, comma - start);
    start = comma + 1;
    entry.erase(0, entry.find_first_not_of(" \t"));
    entry.erase(entry.find_last_not_of(" \t") + 1);
    if (entry.size() >= 2 && entry.front() == '"' && entry.back() == '"') {
      entry = entry.substr(1, entry.size() - 2);
    } else {
      entry = Lower(entry);
    }
    for (std::string_view schema :
         {kPublicSchema, kPgCatalogSchema, kInformationSchema, kSystemSchema}) {
      if (entry == schema) return entry;
    }
  }
  return std::nullopt;
}

/// A text argument that must be known when the statement is bound; nullopt for NULL.
std::optional<std::string> ConstantText(const BoundExprPtr& arg, std::string_view function,
                                        int position) {
  BoundExprPtr text = ExpressionBinder::Coerce(arg, TypeId::kVarchar, position);
  if (text->kind != BoundExpr::Kind::kConstant || !text->type.IsString()) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("the arguments of {}() must be constants", function), position)
        .WithHint("Pass the setting's name and value as literals, as SET takes them.");
  }
  if (text->constant.is_null()) return std::nullopt;
  return text->constant.string_value();
}

}  // namespace

std::optional<BoundExprPtr> ExpressionBinder::BindSessionValueName(const std::string& name) {
  if (name == "current_user" || name == "session_user" || name == "current_role" ||
      name == "user") {
    return Text(CurrentSessionValues().UserName());
  }
  if (name == "current_catalog") return Text("stave");
  if (name == "current_schema") {
    std::optional<std::string> schema = CurrentSchema();
    if (!schema) return BoundExpr::MakeConstant(Value::Null(), TypeId::kVarchar);
    return Text(*schema);
  }
  return std::nullopt;
}

std::optional<BoundExprPtr> ExpressionBinder::BindSessionFunction(
    const std::string& name, const parser::FunctionCallExpr& expr) {
  if (name != "current_schema" && name != "pg_backend_pid" && name != "current_setting" &&
      name != "set_config") {
    return std::nullopt;
  }
  int position = expr.position;
  auto expect = [&](size_t low, size_t high) {
    if (expr.star || expr.distinct || expr.args.size() < low || expr.args.size() > high) {
      throw SqlError(
          sqlstate::kUndefinedFunction,
          fmt::format("function {}() with {} argument(s) does not exist", name, expr.args.size()),
          position)
          .WithHint("No function matches the given name and argument types.");
    }
  };
  std::vector<BoundExprPtr> args;
  for (const auto& arg : expr.args) args.push_back(Bind(*arg));
  SessionValues& session = CurrentSessionValues();
  if (name == "current_schema") {
    expect(0, 0);
    return BindSessionValueName(name);
  }
  if (name == "pg_backend_pid") {
    expect(0, 0);
    return BoundExpr::MakeConstant(Value::Int(session.BackendPid()), TypeId::kInt32);
  }
  if (name == "current_setting") {
    expect(1, 2);
    bool missing_ok = false;
    if (args.size() == 2) {
      BoundExprPtr flag = Coerce(args[1], TypeId::kBoolean, position);
      if (flag->kind != BoundExpr::Kind::kConstant || flag->type.id != TypeId::kBoolean) {
        throw SqlError(sqlstate::kFeatureNotSupported,
                       "the missing_ok argument of current_setting() must be a constant", position);
      }
      // PostgreSQL's current_setting is strict: a NULL argument gives NULL.
      if (flag->constant.is_null()) return BoundExpr::MakeConstant(Value::Null(), TypeId::kVarchar);
      missing_ok = flag->constant.int_value() != 0;
    }
    BoundExprPtr setting = Coerce(args[0], TypeId::kVarchar, position);
    if (!setting->type.IsString()) {
      throw SqlError(
          sqlstate::kUndefinedFunction,
          fmt::format("function current_setting({}) does not exist", setting->type.Name()),
          position);
    }
    if (setting->kind == BoundExpr::Kind::kConstant) {
      if (setting->constant.is_null())
        return BoundExpr::MakeConstant(Value::Null(), TypeId::kVarchar);
      const std::string& wanted = setting->constant.string_value();
      if (std::optional<std::string> value = session.FindSetting(wanted)) return Text(*value);
      if (missing_ok) return BoundExpr::MakeConstant(Value::Null(), TypeId::kVarchar);
      throw SqlError(sqlstate::kUndefinedParameter,
                     fmt::format("unrecognized configuration parameter \"{}\"", wanted), position);
    }
    // A name computed per row: a CASE over the session's settings; NULL for an unknown name.
    BoundExprPtr key = BoundExpr::MakeFunction(ScalarFunction::kLower, TypeId::kVarchar, {setting});
    std::vector<BoundExprPtr> cases;
    for (const SessionValues::Setting& each : session.Settings()) {
      cases.push_back(BoundExpr::MakeFunction(ScalarFunction::kEqual, TypeId::kBoolean,
                                              {key, Text(Lower(each.name))}));
      cases.push_back(Text(each.value));
    }
    cases.push_back(BoundExpr::MakeConstant(Value::Null(), TypeId::kVarchar));
    if (cases.size() == 1) return cases[0];
    return BoundExpr::MakeFunction(ScalarFunction::kCase, TypeId::kVarchar, std::move(cases));
  }
  // set_config(name, value, is_local): the statement's binding applies it, as SET would.
  expect(3, 3);
  std::optional<std::string> setting = ConstantText(args[0], name, position);
  std::optional<std::string> value = ConstantText(args[1], name, position);
  BoundExprPtr local = Coerce(args[2], TypeId::kBoolean, position);
  if (local->kind != BoundExpr::Kind::kConstant || local->type.id != TypeId::kBoolean) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "the arguments of set_config() must be constants", position);
  }
  if (!setting) {
    throw SqlError(sqlstate::kInvalidParameterValue, "SET requires parameter name", position);
  }
  // A NULL value resets the setting, as in PostgreSQL.
  bool is_local = !local->constant.is_null() && local->constant.int_value() != 0;
  return Text(session.SetConfig(Lower(*setting), value, is_local, position));
}

}  // namespace stave::planner

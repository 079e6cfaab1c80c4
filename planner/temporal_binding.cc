#include "planner/temporal_binding.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "common/sql_error.h"
#include "common/temporal.h"
#include "common/value_cast.h"
#include "planner/expression_binder.h"

namespace stave::planner {
namespace {

thread_local ScopedTemporalContext* current_context = nullptr;

bool IsUntyped(const BoundExprPtr& expr) { return expr->type.id == TypeId::kUnknown; }

[[noreturn]] void ThrowNoOperator(std::string_view op, DataType left, DataType right,
                                  int position) {
  throw SqlError(sqlstate::kUndefinedFunction,
                 fmt::format("operator does not exist: {} {} {}", left.Name(), op, right.Name()),
                 position)
      .WithHint(
          "No operator matches the given name and argument types. You might need to add "
          "explicit type casts.");
}

[[noreturn]] void ThrowNotUnique(std::string_view op, std::string_view left, std::string_view right,
                                 int position) {
  throw SqlError("42725", fmt::format("operator is not unique: {} {} {}", left, op, right),
                 position)
      .WithHint(
          "Could not choose a best candidate operator. You might need to add explicit type "
          "casts.");
}

[[noreturn]] void ThrowNoFunction(const std::string& name, const std::vector<BoundExprPtr>& args,
                                  int position) {
  std::vector<std::string> types;
  for (const auto& arg : args) types.push_back(arg->type.Name());
  throw SqlError(sqlstate::kUndefinedFunction,
                 fmt::format("function {}({}) does not exist", name, fmt::join(types, ", ")),
                 position)
      .WithHint(
          "No function matches the given name and argument types. You might need to add "
          "explicit type casts.");
}

BoundExprPtr Coerce(BoundExprPtr expr, DataType type, int position) {
  return ExpressionBinder::Coerce(std::move(expr), type, position);
}

BoundExprPtr Make(ScalarFunction function, DataType type, BoundExprPtr left, BoundExprPtr right) {
  return BoundExpr::MakeFunction(function, type, {std::move(left), std::move(right)});
}

BoundExprPtr Constant(int64_t value, DataType type) {
  return BoundExpr::MakeConstant(Value::Int(value), type);
}

}  // namespace

ScopedTemporalContext::ScopedTemporalContext(bool streaming)
    : streaming_(streaming), previous_(current_context) {
  current_context = this;
}

ScopedTemporalContext::~ScopedTemporalContext() { current_context = previous_; }

void ScopedTemporalContext::CheckNowTaken(size_t taken) const {
  if (now_positions_.size() <= taken) return;
  throw SqlError(sqlstate::kFeatureNotSupported,
                 "now() in a materialized view or sink is supported only in a temporal filter: "
                 "WHERE time > now() - INTERVAL '…' (or >=), as a condition of its own",
                 now_positions_[taken])
      .WithHint(
          "A view runs forever, so the current time has no single value there; a temporal "
          "filter keeps the recent rows and retracts them as time passes.");
}

std::optional<BoundExprPtr> StreamingNow(int position) {
  ScopedTemporalContext* context = current_context;
  if (context == nullptr || !context->streaming_) return std::nullopt;
  context->now_positions_.push_back(position);
  return BoundExpr::MakeFunction(ScalarFunction::kNow, TypeId::kTimestampTz, {});
}

int64_t StatementTimestamp(std::string_view function, int position) {
  ScopedTemporalContext* context = current_context;
  if (context == nullptr) return temporal::CurrentTimestamp();  // INSERT ... VALUES (now()).
  if (context->streaming_) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("{} is not supported in a materialized view or sink", function),
                   position)
        .WithHint(
            "A view runs forever, so the current time has no single value there; a temporal "
            "filter (WHERE time > now() - INTERVAL '…') keeps recent rows, or compute it in "
            "the query that reads the view.");
  }
  if (!context->statement_time_) context->statement_time_ = temporal::CurrentTimestamp();
  return *context->statement_time_;
}

BoundExprPtr BindTemporalArithmetic(std::string_view symbol, BoundExprPtr left, BoundExprPtr right,
                                    int position) {
  bool add = symbol == "+", subtract = symbol == "-";
  bool scale = symbol == "*" || symbol == "/";
  // An untyped literal: first the other side's type if `T op T` exists (PostgreSQL's first
  // rule), else the one type the remaining candidates agree on.
  auto resolve_literal = [&](const BoundExprPtr& typed) -> DataType {
    DataType t = typed->type;
    if (subtract || (add && t.id == TypeId::kInterval)) return t;
    if (add && t.IsTimestamp()) return TypeId::kInterval;
    if (scale && t.id == TypeId::kInterval) return TypeId::kFloat64;
    bool literal_left = IsUntyped(left);
    ThrowNotUnique(symbol, literal_left ? "unknown" : t.Name(), literal_left ? t.Name() : "unknown",
                   position);
  };
  if (IsUntyped(left)) left = Coerce(left, resolve_literal(right), position);
  if (IsUntyped(right)) right = Coerce(right, resolve_literal(left), position);
  DataType l = left->type, r = right->type;
  auto is = [](DataType type, TypeId id) { return type.id == id; };

  if (add) {
    // The commutative forms put the temporal operand first, so the evaluator sees one order.
    bool swap = (l.IsInteger() && is(r, TypeId::kDate)) ||
                (is(l, TypeId::kInterval) &&
                 (r.IsTimestamp() || is(r, TypeId::kDate) || is(r, TypeId::kTime))) ||
                (is(l, TypeId::kTime) && is(r, TypeId::kDate));
    if (swap) {
      std::swap(left, right);
      std::swap(l, r);
    }
  }
  if (scale && l.IsNumeric() && is(r, TypeId::kInterval) && symbol == "*") {
    std::swap(left, right);
    std::swap(l, r);
  }
  ScalarFunction function = add             ? ScalarFunction::kAdd
                            : subtract      ? ScalarFunction::kSubtract
                            : symbol == "*" ? ScalarFunction::kMultiply
                                            : ScalarFunction::kDivide;

  if (add || subtract) {
    if (is(l, TypeId::kDate) && r.IsInteger()) {
      return Make(function, TypeId::kDate, left, right);
    }
    if (subtract && is(l, TypeId::kDate) && is(r, TypeId::kDate)) {
      return Make(function, TypeId::kInt32, left, right);
    }
    if (add && is(l, TypeId::kDate) && is(r, TypeId::kTime)) {
      return Make(function, TypeId::kTimestamp, left, right);
    }
    if (is(l, TypeId::kDate) && is(r, TypeId::kInterval)) {
      return Make(function, TypeId::kTimestamp, Coerce(left, TypeId::kTimestamp, position), right);
    }
    if (l.IsTimestamp() && is(r, TypeId::kInterval)) return Make(function, l, left, right);
    if (is(l, TypeId::kTime) && is(r, TypeId::kInterval)) {
      return Make(function, TypeId::kTime, left, right);
    }
    if (is(l, TypeId::kInterval) && is(r, TypeId::kInterval)) {
      return Make(function, TypeId::kInterval, left, right);
    }
    if (subtract) {
      if (is(l, TypeId::kTime) && is(r, TypeId::kTime)) {
        return Make(function, TypeId::kInterval, left, right);
      }
      // date, timestamp and timestamptz meet at the wider type, then subtract to an interval.
      bool l_instant = is(l, TypeId::kDate) || l.IsTimestamp();
      bool r_instant = is(r, TypeId::kDate) || r.IsTimestamp();
      if (l_instant && r_instant) {
        DataType common = (is(l, TypeId::kTimestampTz) || is(r, TypeId::kTimestampTz))
                              ? DataType(TypeId::kTimestampTz)
                              : DataType(TypeId::kTimestamp);
        return Make(function, TypeId::kInterval, Coerce(left, common, position),
                    Coerce(right, common, position));
      }
    }
  }
  if (scale && is(l, TypeId::kInterval) && r.IsNumeric()) {
    return Make(function, TypeId::kInterval, left, Coerce(right, TypeId::kFloat64, position));
  }
  ThrowNoOperator(symbol, l, r, position);
}

std::optional<BoundExprPtr> BindCurrentTimeName(std::string_view name, int position) {
  if (name == "current_timestamp") {
    if (std::optional<BoundExprPtr> now = StreamingNow(position)) return now;
    return Constant(StatementTimestamp("current_timestamp", position), TypeId::kTimestampTz);
  }
  if (name == "localtimestamp") {
    return Constant(StatementTimestamp("localtimestamp", position), TypeId::kTimestamp);
  }
  if (name == "current_date") {
    return Constant(temporal::TimestampToDate(StatementTimestamp("current_date", position)),
                    TypeId::kDate);
  }
  if (name == "localtime") {
    return Constant(temporal::TimestampToTime(StatementTimestamp("localtime", position)),
                    TypeId::kTime);
  }
  if (name == "current_time") {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "current_time is of type time with time zone, which Stave does not support",
                   position)
        .WithHint("Use localtime, or current_timestamp::time.");
  }
  return std::nullopt;
}

bool IsTemporalFunction(std::string_view name) {
  static const std::set<std::string_view> kNames = {"now",
                                                    "transaction_timestamp",
                                                    "statement_timestamp",
                                                    "date_trunc",
                                                    "date_part",
                                                    "extract",
                                                    "to_timestamp",
                                                    "make_date",
                                                    "make_time",
                                                    "make_timestamp",
                                                    "make_interval",
                                                    "to_char"};
  return kNames.count(name) > 0;
}

BoundExprPtr BindTemporalFunction(const std::string& name, std::vector<BoundExprPtr> args,
                                  const parser::FunctionCallExpr& call) {
  int position = call.position;
  const std::vector<BoundExprPtr> written = args;  // For errors: the types as written.
  if (call.star || call.distinct) ThrowNoFunction(name, written, position);
  auto arity = [&](size_t low, size_t high) {
    if (args.size() < low || args.size() > high) ThrowNoFunction(name, written, position);
  };
  if (name == "now" || name == "transaction_timestamp" || name == "statement_timestamp") {
    arity(0, 0);
    if (std::optional<BoundExprPtr> now = StreamingNow(position)) return *now;
    return Constant(StatementTimestamp(name + "()", position), TypeId::kTimestampTz);
  }
  if (name == "date_trunc" || name == "date_part" || name == "extract") {
    arity(2, 2);
    args[0] = Coerce(args[0], TypeId::kVarchar, position);
    if (!args[0]->type.IsString()) ThrowNoFunction(name, written, position);
    // An untyped literal is a timestamptz: PostgreSQL's preferred type of the date/time
    // category. A date is one too for date_trunc and date_part (there is no date version of
    // either); extract has its own for date.
    if (IsUntyped(args[1])) args[1] = Coerce(args[1], TypeId::kTimestampTz, position);
    DataType type = args[1]->type;
    if (type.id == TypeId::kDate && name != "extract") {
      args[1] = Coerce(args[1], TypeId::kTimestampTz, position);
      type = TypeId::kTimestampTz;
    }
    if (name == "date_trunc") {
      if (!type.IsTimestamp() && type.id != TypeId::kInterval)
        ThrowNoFunction(name, written, position);
      return BoundExpr::MakeFunction(ScalarFunction::kDateTrunc, type, std::move(args));
    }
    if (!type.IsTemporal()) ThrowNoFunction(name, written, position);
    // extract is numeric, as in PostgreSQL 14+; date_part stays double precision.
    if (name == "extract") {
      return BoundExpr::MakeFunction(ScalarFunction::kExtract, TypeId::kNumeric, std::move(args));
    }
    return BoundExpr::MakeFunction(ScalarFunction::kDatePart, TypeId::kFloat64, std::move(args));
  }
  if (name == "to_timestamp") {
    if (args.size() == 2) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "to_timestamp(text, format) is not supported yet", position)
          .WithHint("Cast the text instead: '2024-01-02 03:04:05'::timestamptz.");
    }
    arity(1, 1);
    BoundExprPtr seconds = Coerce(args[0], TypeId::kFloat64, position);
    if (!seconds->type.IsNumeric()) ThrowNoFunction(name, written, position);
    return BoundExpr::MakeFunction(ScalarFunction::kToTimestamp, TypeId::kTimestampTz,
                                   {Coerce(seconds, TypeId::kFloat64, position)});
  }
  if (name == "to_char") {
    arity(2, 2);
    // A date (and an untyped literal) is a timestamptz, as PostgreSQL resolves
    // to_char(date, text): it has no date version.
    if (IsUntyped(args[0]) || args[0]->type.id == TypeId::kDate) {
      args[0] = Coerce(args[0], TypeId::kTimestampTz, position);
    }
    args[1] = Coerce(args[1], TypeId::kVarchar, position);
    DataType type = args[0]->type;
    bool formats = type.IsTimestamp() || type.id == TypeId::kInterval || type.IsNumeric();
    if (!formats || !args[1]->type.IsString()) {
      ThrowNoFunction(name, written, position);
    }
    return BoundExpr::MakeFunction(ScalarFunction::kToChar, TypeId::kVarchar, std::move(args));
  }
  // make_*: integer fields, the seconds in double precision.
  auto fields = [&](size_t count, size_t required, bool last_is_seconds, ScalarFunction function,
                    DataType result) {
    arity(required, count);
    for (size_t i = 0; i < args.size(); ++i) {
      bool seconds = last_is_seconds && i + 1 == count;
      BoundExprPtr arg = Coerce(args[i], seconds ? TypeId::kFloat64 : TypeId::kInt64, position);
      if (seconds ? !arg->type.IsNumeric() : !arg->type.IsInteger()) {
        ThrowNoFunction(name, written, position);
      }
      args[i] = Coerce(arg, seconds ? TypeId::kFloat64 : TypeId::kInt64, position);
    }
    // Omitted arguments (make_interval's defaults) are zero.
    while (args.size() < count) {
      bool seconds = last_is_seconds && args.size() + 1 == count;
      args.push_back(seconds ? BoundExpr::MakeConstant(Value::Double(0), TypeId::kFloat64)
                             : BoundExpr::MakeConstant(Value::Int(0), TypeId::kInt64));
    }
    return BoundExpr::MakeFunction(function, result, std::move(args));
  };
  if (name == "make_date") return fields(3, 3, false, ScalarFunction::kMakeDate, TypeId::kDate);
  if (name == "make_time") return fields(3, 3, true, ScalarFunction::kMakeTime, TypeId::kTime);
  if (name == "make_timestamp") {
    return fields(6, 6, true, ScalarFunction::kMakeTimestamp, TypeId::kTimestamp);
  }
  return fields(7, 0, true, ScalarFunction::kMakeInterval, TypeId::kInterval);
}

}  // namespace stave::planner

#include "executor/temporal_functions.h"

#include <functional>
#include <limits>
#include <optional>

#include "common/sql_error.h"
#include "common/temporal.h"
#include "common/to_char.h"

namespace stave::executor {
namespace {

using planner::ScalarFunction;
namespace t = temporal;

t::Interval IntervalAt(const Column& column, size_t row) {
  return t::DecodeInterval(column.strings[row]);
}

// Applies `op` to every row where no argument is NULL (all temporal functions are strict).
Column Strict(DataType type, const std::vector<const Column*>& args, size_t rows,
              const std::function<Value(size_t)>& op) {
  Column out(type);
  out.Reserve(rows);
  for (size_t i = 0; i < rows; ++i) {
    bool any_null = false;
    for (const Column* arg : args) any_null |= arg->nulls[i] != 0;
    if (any_null) {
      out.AppendNull();
    } else {
      out.AppendValue(op(i));
    }
  }
  return out;
}

Value IntervalValue(const t::Interval& interval) {
  return Value::String(t::EncodeInterval(interval));
}

// to_char(value, template). The template is parsed once per distinct text: usually once per
// chunk. PostgreSQL returns NULL for an empty template.
Column ToChar(const Column& value, const Column& templates, size_t rows) {
  std::optional<to_char::DateTimeFormat> date_format;
  std::optional<to_char::NumberFormat> number_format;
  const std::string* parsed = nullptr;
  Column out(TypeId::kVarchar);
  out.Reserve(rows);
  for (size_t i = 0; i < rows; ++i) {
    if (value.nulls[i] || templates.nulls[i] || templates.strings[i].empty()) {
      out.AppendNull();
      continue;
    }
    const std::string& text = templates.strings[i];
    if (parsed == nullptr || *parsed != text) {
      if (value.type.IsNumeric()) {
        number_format.emplace(text);
      } else {
        date_format.emplace(text);
      }
      parsed = &text;
    }
    switch (value.type.id) {
      case TypeId::kInterval:
        out.AppendString(date_format->FormatInterval(IntervalAt(value, i)));
        break;
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz:
        out.AppendString(
            date_format->FormatTimestamp(value.ints[i], value.type.id == TypeId::kTimestampTz));
        break;
      case TypeId::kFloat32:
      case TypeId::kFloat64:
        out.AppendString(to_char::FormatFloat(*number_format, value.doubles[i],
                                              value.type.id == TypeId::kFloat32 ? 6 : 15));
        break;
      default:
        out.AppendString(value.type.IsDecimal()
                             ? to_char::FormatNumeric(*number_format, value.decimals[i])
                             : to_char::FormatInteger(*number_format, value.ints[i]));
        break;
    }
  }
  return out;
}

}  // namespace

Column TemporalArithmetic(ScalarFunction function, DataType result, const Column& left,
                          const Column& right) {
  bool add = function == ScalarFunction::kAdd;
  DataType l = left.type, r = right.type;
  std::function<Value(size_t)> op;
  if (l.id == TypeId::kDate && r.IsInteger()) {
    op = [&](size_t i) {
      int64_t days = right.ints[i];
      if (!add) {
        if (days == std::numeric_limits<int64_t>::min()) t::CheckDate(days);
        days = -days;
      }
      return Value::Int(t::AddDays(left.ints[i], days));
    };
  } else if (l.id == TypeId::kDate && r.id == TypeId::kDate) {
    op = [&](size_t i) { return Value::Int(left.ints[i] - right.ints[i]); };
  } else if (l.id == TypeId::kDate && r.id == TypeId::kTime) {
    op = [&](size_t i) {
      int64_t micros = t::DateToTimestamp(left.ints[i]) + right.ints[i];
      t::CheckTimestamp(micros);
      return Value::Int(micros);
    };
  } else if (l.IsTimestamp() && r.id == TypeId::kInterval) {
    op = [&](size_t i) {
      t::Interval interval = IntervalAt(right, i);
      return Value::Int(add ? t::AddInterval(left.ints[i], interval)
                            : t::SubtractInterval(left.ints[i], interval));
    };
  } else if (l.IsTimestamp() && r.IsTimestamp()) {
    op = [&](size_t i) {
      return IntervalValue(t::SubtractTimestamps(left.ints[i], right.ints[i]));
    };
  } else if (l.id == TypeId::kTime && r.id == TypeId::kInterval) {
    op = [&](size_t i) {
      t::Interval interval = IntervalAt(right, i);
      return Value::Int(
          t::AddIntervalToTime(left.ints[i], add ? interval : t::NegateInterval(interval)));
    };
  } else if (l.id == TypeId::kTime && r.id == TypeId::kTime) {
    op = [&](size_t i) { return IntervalValue({0, 0, left.ints[i] - right.ints[i]}); };
  } else if (l.id == TypeId::kInterval && r.id == TypeId::kInterval) {
    op = [&](size_t i) {
      t::Interval a = IntervalAt(left, i), b = IntervalAt(right, i);
      return IntervalValue(add ? t::AddIntervals(a, b) : t::SubtractIntervals(a, b));
    };
  } else if (l.id == TypeId::kInterval && r.IsFloat()) {
    op = [&](size_t i) {
      t::Interval a = IntervalAt(left, i);
      return IntervalValue(function == ScalarFunction::kMultiply
                               ? t::MultiplyInterval(a, right.doubles[i])
                               : t::DivideInterval(a, right.doubles[i]));
    };
  } else {
    throw SqlError(sqlstate::kInternalError,
                   "no temporal operator for " + l.Name() + " and " + r.Name());
  }
  return Strict(result, {&left, &right}, left.size(), op);
}

Column NegateIntervals(Column column) {
  for (size_t i = 0; i < column.size(); ++i) {
    if (column.nulls[i]) continue;
    column.strings[i] = t::EncodeInterval(t::NegateInterval(IntervalAt(column, i)));
  }
  return column;
}

bool EvaluateTemporalFunction(const planner::BoundExpr& expr, std::vector<Column>* args_ptr,
                              size_t rows, Column* out) {
  const std::vector<Column>& args = *args_ptr;
  std::function<Value(size_t)> op;
  switch (expr.function) {
    case ScalarFunction::kDateTrunc: {
      const Column& value = args[1];
      op = [&](size_t i) {
        const std::string& unit = args[0].strings[i];
        if (value.type.id == TypeId::kInterval) {
          return IntervalValue(t::TruncateInterval(unit, IntervalAt(value, i)));
        }
        return Value::Int(t::TruncateTimestamp(unit, value.ints[i], value.type.Name()));
      };
      break;
    }
    case ScalarFunction::kDatePart:
    case ScalarFunction::kExtract: {
      // extract is exact numeric (PostgreSQL 14+), date_part double precision.
      const Column& value = args[1];
      bool exact = expr.function == ScalarFunction::kExtract;
      op = [&, exact](size_t i) {
        const std::string& field = args[0].strings[i];
        if (value.type.id == TypeId::kInterval) {  // Held as its encoding, not an integer.
          t::Interval interval = IntervalAt(value, i);
          return exact ? Value::Numeric(t::IntervalExtract(field, interval))
                       : Value::Double(t::IntervalPart(field, interval));
        }
        int64_t at = value.ints[i];
        switch (value.type.id) {
          case TypeId::kDate:
            return exact ? Value::Numeric(t::DateExtract(field, at))
                         : Value::Double(t::DatePart(field, at));
          case TypeId::kTime:
            return exact ? Value::Numeric(t::TimeExtract(field, at))
                         : Value::Double(t::TimePart(field, at));
          default: {
            bool with_time_zone = value.type.id == TypeId::kTimestampTz;
            return exact ? Value::Numeric(t::TimestampExtract(field, at, with_time_zone))
                         : Value::Double(t::TimestampPart(field, at, with_time_zone));
          }
        }
      };
      break;
    }
    case ScalarFunction::kToTimestamp:
      op = [&](size_t i) { return Value::Int(t::TimestampFromUnixSeconds(args[0].doubles[i])); };
      break;
    case ScalarFunction::kMakeDate:
      op = [&](size_t i) {
        return Value::Int(t::MakeDate(args[0].ints[i], args[1].ints[i], args[2].ints[i]));
      };
      break;
    case ScalarFunction::kMakeTime:
      op = [&](size_t i) {
        return Value::Int(t::MakeTime(args[0].ints[i], args[1].ints[i], args[2].doubles[i]));
      };
      break;
    case ScalarFunction::kMakeTimestamp:
      op = [&](size_t i) {
        return Value::Int(t::MakeTimestamp(args[0].ints[i], args[1].ints[i], args[2].ints[i],
                                           args[3].ints[i], args[4].ints[i], args[5].doubles[i]));
      };
      break;
    case ScalarFunction::kMakeInterval:
      op = [&](size_t i) {
        return IntervalValue(t::MakeInterval(args[0].ints[i], args[1].ints[i], args[2].ints[i],
                                             args[3].ints[i], args[4].ints[i], args[5].ints[i],
                                             args[6].doubles[i]));
      };
      break;
    case ScalarFunction::kToChar:
      *out = ToChar(args[0], args[1], rows);
      return true;
    default:
      return false;
  }
  std::vector<const Column*> arg_columns;
  for (const Column& arg : args) arg_columns.push_back(&arg);
  *out = Strict(expr.type, arg_columns, rows, op);
  return true;
}

}  // namespace stave::executor

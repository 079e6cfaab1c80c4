#include "executor/bytea_jsonb_array_functions.h"

#include <functional>
#include <map>
#include <optional>

#include "common/array_value.h"
#include "common/bytea.h"
#include "common/jsonb.h"
#include "common/sql_error.h"

namespace stave::executor {
namespace {

using planner::ScalarFunction;

// Applies `op` to every row where no argument is NULL; `op` may return NULL itself.
Column Strict(DataType type, const std::vector<Column>& args, size_t rows,
              const std::function<Value(size_t)>& op) {
  Column out(type);
  out.Reserve(rows);
  for (size_t i = 0; i < rows; ++i) {
    bool any_null = false;
    for (const Column& arg : args) any_null |= arg.nulls[i] != 0;
    if (any_null) {
      out.AppendNull();
    } else {
      out.AppendValue(op(i));
    }
  }
  return out;
}

Value OptionalString(std::optional<std::string> text) {
  return text ? Value::String(std::move(*text)) : Value::Null();
}

std::vector<std::optional<std::string>> TextPath(const std::string& encoded) {
  std::vector<std::optional<std::string>> path;
  for (Value& step : array::Decode(encoded, TypeId::kVarchar)) {
    path.push_back(step.is_null() ? std::nullopt : std::optional<std::string>(step.string_value()));
  }
  return path;
}

// An element of `array` compared with `value` by `comparison`: true, false or NULL (either
// side NULL).
std::optional<bool> CompareElement(const Value& value, const Value& element,
                                   ScalarFunction comparison) {
  if (value.is_null() || element.is_null()) return std::nullopt;
  int c = CompareValues(value, element);
  switch (comparison) {
    case ScalarFunction::kEqual:
      return c == 0;
    case ScalarFunction::kNotEqual:
      return c != 0;
    case ScalarFunction::kLess:
      return c < 0;
    case ScalarFunction::kLessEqual:
      return c <= 0;
    case ScalarFunction::kGreater:
      return c > 0;
    default:
      return c >= 0;
  }
}

// x op ANY/ALL (array) with SQL's three-valued logic: ANY is true if some comparison is,
// else NULL if some was NULL, else false; ALL the dual. An empty array gives false (ANY) or
// true (ALL) even for a NULL x, as in PostgreSQL.
Column Quantified(bool all, DataType element_type, const std::vector<Column>& args, size_t rows) {
  auto comparison = static_cast<ScalarFunction>(args[2].ints.empty() ? 0 : args[2].ints[0]);
  Column out(TypeId::kBoolean);
  out.Reserve(rows);
  for (size_t i = 0; i < rows; ++i) {
    if (args[1].nulls[i]) {
      out.AppendNull();
      continue;
    }
    Value value = args[0].GetValue(i);
    bool saw_null = false;
    bool decided = false;
    for (const Value& element : array::Decode(args[1].strings[i], element_type)) {
      std::optional<bool> result = CompareElement(value, element, comparison);
      if (!result) {
        saw_null = true;
      } else if (*result != all) {
        decided = true;
        break;
      }
    }
    if (decided) {
      out.AppendInt(all ? 0 : 1);
    } else if (saw_null) {
      out.AppendNull();
    } else {
      out.AppendInt(all ? 1 : 0);
    }
  }
  return out;
}

// PostgreSQL's array_contain_compare: every non-NULL element of `contained` equals some
// element of `container`; a NULL element is never contained.
bool ArrayContains(const std::string& container, const std::string& contained,
                   DataType element_type) {
  std::vector<Value> have = array::Decode(container, element_type);
  for (const Value& want : array::Decode(contained, element_type)) {
    if (want.is_null()) return false;
    bool found = false;
    for (const Value& each : have) {
      if (!each.is_null() && CompareValues(each, want) == 0) {
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

// PostgreSQL's string_to_array: `text` split at each `delimiter`; a NULL delimiter splits it
// into its characters, an empty one keeps it whole; an empty text gives an empty array. Fields
// equal to `null_string` (when there is one) become NULL.
std::string StringToArray(const std::string& text, const std::string* delimiter,
                          const std::string* null_string) {
  std::vector<Value> elements;
  auto add = [&](std::string field) {
    if (null_string != nullptr && field == *null_string) {
      elements.push_back(Value::Null());
    } else {
      elements.push_back(Value::String(std::move(field)));
    }
  };
  if (!text.empty()) {
    if (delimiter == nullptr) {
      // One element per UTF-8 character: a lead byte and its continuation bytes.
      size_t start = 0;
      for (size_t i = 1; i <= text.size(); ++i) {
        if (i == text.size() || (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
          add(text.substr(start, i - start));
          start = i;
        }
      }
    } else if (delimiter->empty()) {
      add(text);
    } else {
      size_t start = 0;
      while (true) {
        size_t found = text.find(*delimiter, start);
        if (found == std::string::npos) {
          add(text.substr(start));
          break;
        }
        add(text.substr(start, found - start));
        start = found + delimiter->size();
      }
    }
  }
  return array::Encode(elements, TypeId::kVarchar);
}

}  // namespace

bool EvaluateByteaJsonbArrayFunction(const planner::BoundExpr& expr, std::vector<Column>* args_in,
                                     size_t rows, Column* out) {
  std::vector<Column>& args = *args_in;
  DataType type = expr.type;
  auto string = [&](size_t arg, size_t row) -> const std::string& {
    return args[arg].strings[row];
  };
  switch (expr.function) {
    case ScalarFunction::kOctetLength:
      *out = Strict(type, args, rows, [&](size_t i) {
        return Value::Int(static_cast<int64_t>(string(0, i).size()));
      });
      return true;
    case ScalarFunction::kEncode:
      *out = Strict(type, args, rows, [&](size_t i) {
        return Value::String(bytea::Encode(string(0, i), string(1, i)));
      });
      return true;
    case ScalarFunction::kDecode:
      *out = Strict(type, args, rows, [&](size_t i) {
        return Value::String(bytea::Decode(string(0, i), string(1, i)));
      });
      return true;
    case ScalarFunction::kMd5:
      *out = Strict(type, args, rows,
                    [&](size_t i) { return Value::String(bytea::Md5Hex(string(0, i))); });
      return true;
    case ScalarFunction::kJsonbField:
      *out = Strict(type, args, rows, [&](size_t i) {
        return OptionalString(jsonb::Field(string(0, i), string(1, i)));
      });
      return true;
    case ScalarFunction::kJsonbFieldText:
      *out = Strict(type, args, rows, [&](size_t i) {
        std::optional<std::string> field = jsonb::Field(string(0, i), string(1, i));
        return OptionalString(field ? jsonb::AsText(*field) : std::nullopt);
      });
      return true;
    case ScalarFunction::kJsonbElement:
      *out = Strict(type, args, rows, [&](size_t i) {
        return OptionalString(jsonb::Element(string(0, i), args[1].ints[i]));
      });
      return true;
    case ScalarFunction::kJsonbElementText:
      *out = Strict(type, args, rows, [&](size_t i) {
        std::optional<std::string> element = jsonb::Element(string(0, i), args[1].ints[i]);
        return OptionalString(element ? jsonb::AsText(*element) : std::nullopt);
      });
      return true;
    case ScalarFunction::kJsonbPath:
    case ScalarFunction::kJsonbPathText: {
      bool text = expr.function == ScalarFunction::kJsonbPathText;
      *out = Strict(type, args, rows, [&](size_t i) {
        std::optional<std::string> found = jsonb::Path(string(0, i), TextPath(string(1, i)));
        return OptionalString(found && text ? jsonb::AsText(*found) : found);
      });
      return true;
    }
    case ScalarFunction::kJsonbContains:
      *out = Strict(type, args, rows, [&](size_t i) {
        return Value::Boolean(jsonb::Contains(string(0, i), string(1, i)));
      });
      return true;
    case ScalarFunction::kJsonbTypeof:
      *out = Strict(type, args, rows,
                    [&](size_t i) { return Value::String(jsonb::TypeOf(string(0, i))); });
      return true;
    case ScalarFunction::kJsonbArrayLength:
      *out = Strict(type, args, rows,
                    [&](size_t i) { return Value::Int(jsonb::ArrayLength(string(0, i))); });
      return true;
    case ScalarFunction::kArrayConstruct: {
      // Not strict: NULL elements are elements.
      DataType element_type = type.ElementType();
      Column result(type);
      result.Reserve(rows);
      std::vector<Value> elements(args.size());
      for (size_t i = 0; i < rows; ++i) {
        for (size_t a = 0; a < args.size(); ++a) elements[a] = args[a].GetValue(i);
        result.AppendString(array::Encode(elements, element_type));
      }
      *out = std::move(result);
      return true;
    }
    case ScalarFunction::kArraySubscript: {
      DataType array_type = args[0].type;
      *out = Strict(type, args, rows, [&](size_t i) {
        int64_t index = args[1].ints[i];
        std::vector<Value> elements = array::Decode(string(0, i), array_type.ElementType());
        if (index < 1 || index > static_cast<int64_t>(elements.size())) return Value::Null();
        return elements[static_cast<size_t>(index - 1)];
      });
      return true;
    }
    case ScalarFunction::kArrayLength:
    case ScalarFunction::kCardinality: {
      DataType element_type = args[0].type.ElementType();
      bool cardinality = expr.function == ScalarFunction::kCardinality;
      *out = Strict(type, args, rows, [&](size_t i) {
        auto length = static_cast<int64_t>(array::Length(string(0, i), element_type));
        if (cardinality) return Value::Int(length);
        // array_length of an empty array, or of a dimension it lacks, is NULL.
        if (length == 0 || args[1].ints[i] != 1) return Value::Null();
        return Value::Int(length);
      });
      return true;
    }
    case ScalarFunction::kArrayAppend:
    case ScalarFunction::kArrayPrepend: {
      // NULL arrays are taken as empty and NULL elements are elements, as PostgreSQL's.
      bool append = expr.function == ScalarFunction::kArrayAppend;
      size_t array_arg = append ? 0 : 1;
      DataType element_type = type.ElementType();
      Column result(type);
      result.Reserve(rows);
      for (size_t i = 0; i < rows; ++i) {
        std::vector<Value> elements;
        if (!args[array_arg].nulls[i]) {
          elements = array::Decode(args[array_arg].strings[i], element_type);
        }
        Value element = args[1 - array_arg].GetValue(i);
        if (append) {
          elements.push_back(std::move(element));
        } else {
          elements.insert(elements.begin(), std::move(element));
        }
        result.AppendString(array::Encode(elements, element_type));
      }
      *out = std::move(result);
      return true;
    }
    case ScalarFunction::kArrayCat: {
      // A NULL side is ignored; NULL only when both are.
      DataType element_type = type.ElementType();
      Column result(type);
      result.Reserve(rows);
      for (size_t i = 0; i < rows; ++i) {
        if (args[0].nulls[i] && args[1].nulls[i]) {
          result.AppendNull();
        } else if (args[0].nulls[i] || args[1].nulls[i]) {
          result.AppendString(args[0].nulls[i] ? args[1].strings[i] : args[0].strings[i]);
        } else {
          std::vector<Value> elements = array::Decode(args[0].strings[i], element_type);
          for (Value& element : array::Decode(args[1].strings[i], element_type)) {
            elements.push_back(std::move(element));
          }
          result.AppendString(array::Encode(elements, element_type));
        }
      }
      *out = std::move(result);
      return true;
    }
    case ScalarFunction::kArrayContains: {
      DataType element_type = args[0].type.ElementType();
      *out = Strict(type, args, rows, [&](size_t i) {
        return Value::Boolean(ArrayContains(string(0, i), string(1, i), element_type));
      });
      return true;
    }
    case ScalarFunction::kArrayToString: {
      // Strict in the array and the delimiter; NULL elements are skipped unless a
      // null_string (itself not NULL) stands for them.
      DataType element_type = args[0].type.ElementType();
      Column result(type);
      result.Reserve(rows);
      for (size_t i = 0; i < rows; ++i) {
        if (args[0].nulls[i] || args[1].nulls[i]) {
          result.AppendNull();
          continue;
        }
        bool replace_nulls = args.size() == 3 && !args[2].nulls[i];
        std::string text;
        bool first = true;
        for (const Value& element : array::Decode(string(0, i), element_type)) {
          if (element.is_null() && !replace_nulls) continue;
          if (!first) text += string(1, i);
          first = false;
          text += element.is_null() ? string(2, i) : element.ToText(element_type);
        }
        result.AppendString(std::move(text));
      }
      *out = std::move(result);
      return true;
    }
    case ScalarFunction::kStringToArray: {
      // NULL only for a NULL text.
      Column result(type);
      result.Reserve(rows);
      for (size_t i = 0; i < rows; ++i) {
        if (args[0].nulls[i]) {
          result.AppendNull();
          continue;
        }
        const std::string* delimiter = args[1].nulls[i] ? nullptr : &string(1, i);
        const std::string* null_string =
            args.size() == 3 && !args[2].nulls[i] ? &string(2, i) : nullptr;
        result.AppendString(StringToArray(string(0, i), delimiter, null_string));
      }
      *out = std::move(result);
      return true;
    }
    case ScalarFunction::kOidArrayNames: {
      // args[1] and args[2] are constants: the OIDs that have names, and the names.
      std::map<int64_t, std::string> names;
      if (rows > 0 && !args[1].nulls[0] && !args[2].nulls[0]) {
        std::vector<Value> numbers = array::Decode(string(1, 0), TypeId::kInt64);
        std::vector<Value> texts = array::Decode(string(2, 0), TypeId::kVarchar);
        for (size_t n = 0; n < numbers.size() && n < texts.size(); ++n) {
          names.emplace(numbers[n].int_value(), texts[n].string_value());
        }
      }
      DataType element_type = args[0].type.ElementType();
      *out = Strict(type, {args[0]}, rows, [&](size_t i) {
        std::vector<Value> elements = array::Decode(string(0, i), element_type);
        for (Value& element : elements) {
          if (element.is_null()) continue;
          auto found = names.find(element.int_value());
          element = Value::String(found != names.end() ? found->second
                                                       : std::to_string(element.int_value()));
        }
        return Value::String(array::Encode(elements, TypeId::kVarchar));
      });
      return true;
    }
    case ScalarFunction::kAnyCompare:
    case ScalarFunction::kAllCompare:
      *out = Quantified(expr.function == ScalarFunction::kAllCompare, args[1].type.ElementType(),
                        args, rows);
      return true;
    default:
      return false;
  }
}

}  // namespace stave::executor

#include "executor/aggregate_state.h"

#include <cstring>
#include <limits>

#include "common/array_value.h"
#include "common/sql_error.h"
#include "executor/expression_evaluator.h"
#include "storage/key_codec.h"
#include "storage/row_codec.h"

namespace stave::executor {

AggregateState& AggregateState::operator=(const AggregateState& other) {
  if (this == &other) return *this;
  count = other.count;
  int_sum = other.int_sum;
  float_sum = other.float_sum;
  extremum = other.extremum;
  sum_scale = other.sum_scale;
  extras_ = other.extras_ ? std::make_unique<AggregateExtras>(*other.extras_) : nullptr;
  return *this;
}

const AggregateExtras& AggregateState::extras() const {
  static const AggregateExtras kNone;
  return extras_ ? *extras_ : kNone;
}

AggregateExtras& AggregateState::mutable_extras() {
  if (!extras_) extras_ = std::make_unique<AggregateExtras>();
  return *extras_;
}

namespace {

using planner::AggregateKind;

bool HasNumericArgument(const planner::AggregateCall& call) {
  return call.arg && call.arg->type.IsDecimal();
}

// The fields a numeric argument adds to its call's: sum_scale, the three special-value
// counts and wide_sum (GroupStateCodec).
constexpr size_t kNumericFields = 5;

storage::RowTypes StateTypes(const std::vector<planner::AggregateCall>& calls) {
  storage::RowTypes types = {TypeId::kInt64};
  for (const auto& call : calls) {
    types.push_back(TypeId::kInt64);                                        // count
    types.push_back(TypeId::kInt64);                                        // int_sum, high 64 bits
    types.push_back(TypeId::kInt64);                                        // int_sum, low 64 bits
    types.push_back(TypeId::kFloat64);                                      // float_sum
    types.push_back(call.arg ? call.arg->type : DataType(TypeId::kInt64));  // extremum
    if (HasNumericArgument(call)) {
      types.insert(types.end(), kNumericFields - 1, TypeId::kInt64);
      types.push_back(TypeId::kNumeric);
    }
  }
  return types;
}

// Adds sign × value to a numeric sum, first widening the sum's scale if the value has more
// digits after the point.
void AccumulateDecimal(const Decimal& value, int sign, AggregateState* state) {
  switch (value.kind) {
    case Decimal::Kind::kNaN:
      state->mutable_extras().nan_count += sign;
      return;
    case Decimal::Kind::kInfinity:
      state->mutable_extras().infinity_count += sign;
      return;
    case Decimal::Kind::kNegativeInfinity:
      state->mutable_extras().negative_infinity_count += sign;
      return;
    case Decimal::Kind::kFinite:
      break;
  }
  // What leaves 128 bits joins wide_sum, exactly (and slowly); ordinary sums never do.
  auto add_wide = [&] {
    Decimal& wide_sum = state->mutable_extras().wide_sum;
    wide_sum = decimal::Add(wide_sum, sign > 0 ? value : decimal::Negate(value));
  };
  if (value.is_wide()) return add_wide();
  Int128 unscaled = value.unscaled;
  if (value.scale > state->sum_scale) {
    int widen = value.scale - state->sum_scale;
    Int128 widened = 0;
    if (state->int_sum != 0 &&
        (widen > decimal::kNarrowDigits ||
         __builtin_mul_overflow(state->int_sum, decimal::PowerOfTen(widen), &widened))) {
      Decimal& wide_sum = state->mutable_extras().wide_sum;
      wide_sum = decimal::Add(wide_sum, decimal::FromInt128(state->int_sum, state->sum_scale));
      widened = 0;
    }
    state->int_sum = widened;
    state->sum_scale = value.scale;
  } else if (value.scale < state->sum_scale) {
    int widen = state->sum_scale - value.scale;
    if (unscaled != 0 &&
        (widen > decimal::kNarrowDigits ||
         __builtin_mul_overflow(unscaled, decimal::PowerOfTen(widen), &unscaled))) {
      return add_wide();
    }
  }
  Int128 sum = 0;
  if (__builtin_add_overflow(state->int_sum, unscaled * sign, &sum)) return add_wide();
  state->int_sum = sum;
}

// A numeric sum as a value: NaN if any input is NaN or infinities of both signs meet.
Decimal DecimalSum(const AggregateState& state) {
  const AggregateExtras& extras = state.extras();
  if (extras.nan_count > 0 || (extras.infinity_count > 0 && extras.negative_infinity_count > 0)) {
    return Decimal::NaN();
  }
  if (extras.infinity_count > 0) return Decimal::Infinity(false);
  if (extras.negative_infinity_count > 0) return Decimal::Infinity(true);
  return decimal::Add(decimal::FromInt128(state.int_sum, state.sum_scale), extras.wide_sum);
}

// Whether the call counts the rows holding each value (AggregateExtras::distinct_values).
bool KeepsValues(const planner::AggregateCall& call) {
  return call.distinct || call.keeps_values || call.kind == AggregateKind::kArrayAgg ||
         call.kind == AggregateKind::kStringAgg;
}

bool CollectsValues(const planner::AggregateCall& call) {
  return call.kind == AggregateKind::kArrayAgg || call.kind == AggregateKind::kStringAgg;
}

bool HasDistinct(const std::vector<planner::AggregateCall>& calls) {
  for (const auto& call : calls) {
    if (KeepsValues(call)) return true;
  }
  return false;
}

// A value's entry in AggregateExtras::distinct_values: its key encoding, which orders values
// and makes equal numerics meet (1.50 and 1.5 have one key). For DISTINCT that is the point;
// for min, max and array_agg, which show the values themselves, a numeric's display scale
// follows (two bytes, so equal values still sort together) and comes back on decoding, as
// PostgreSQL shows the value as it was written.
std::string ValueKey(const planner::AggregateCall& call, const Value& value, DataType type) {
  std::string key;
  storage::EncodeKeyValue(value, type, &key);
  if (!call.distinct && type.IsDecimal() && !value.is_null() && value.decimal_value().is_finite()) {
    int scale = value.decimal_value().scale;
    key.push_back(static_cast<char>(scale >> 8));
    key.push_back(static_cast<char>(scale & 0xff));
  }
  return key;
}

Value DecodeValueKey(std::string_view key, DataType type, std::string_view what) {
  Value value;
  if (!storage::DecodeKeyValue(&key, type, &value)) {
    throw SqlError(sqlstate::kInternalError, "corrupt " + std::string(what) + " state");
  }
  if (key.size() == 2 && type.IsDecimal() && !value.is_null()) {
    int scale = (static_cast<uint8_t>(key[0]) << 8) | static_cast<uint8_t>(key[1]);
    value = Value::Numeric(decimal::Round(value.decimal_value(), scale));
  }
  return value;
}

// The entry of array_agg(x ORDER BY y) for a row: a byte placing a NULL y first or last (0x00
// or 0x02; 0x01 for a value), y's key encoding, then x's (ValueKey). The map's order, read
// backwards for DESC, is then the call's.
std::string OrderedValueKey(const planner::AggregateCall& call, const Value& order,
                            const Value& value, DataType type) {
  std::string key;
  if (order.is_null()) {
    key.push_back(call.nulls_first != call.descending ? '\x00' : '\x02');
  } else {
    key.push_back('\x01');
    storage::EncodeKeyValue(order, call.order_key->type, &key);
  }
  key += ValueKey(call, value, type);
  return key;
}

// The value of an OrderedValueKey entry.
Value DecodeOrderedValueKey(const planner::AggregateCall& call, std::string_view key) {
  if (key.empty()) throw SqlError(sqlstate::kInternalError, "corrupt array_agg state");
  bool has_order = key[0] == '\x01';
  key.remove_prefix(1);
  if (has_order) {
    Value order;
    if (!storage::DecodeKeyValue(&key, call.order_key->type, &order)) {
      throw SqlError(sqlstate::kInternalError, "corrupt array_agg state");
    }
  }
  return DecodeValueKey(key, call.arg->type, "array_agg");
}

// array_agg's array or string_agg's text of the values kept, in the call's order.
Value CollectedValues(const planner::AggregateCall& call, const AggregateState& state) {
  std::vector<Value> values;
  size_t nulls = 0;
  auto add = [&](std::string_view key, int64_t count) {
    if (call.order_key) {
      // NULL values keep their place in the order of the ordering value.
      Value value = DecodeOrderedValueKey(call, key);
      for (int64_t i = 0; i < count; ++i) values.push_back(value);
      return;
    }
    Value value = DecodeValueKey(key, call.arg->type, "array_agg");
    if (value.is_null()) {
      nulls += call.distinct ? 1 : static_cast<size_t>(count);
      return;
    }
    for (int64_t i = 0; i < (call.distinct ? 1 : count); ++i) values.push_back(value);
  };
  if (call.descending) {
    const auto& values = state.extras().distinct_values;
    for (auto it = values.rbegin(); it != values.rend(); ++it) {
      add(it->first, it->second);
    }
  } else {
    for (const auto& [key, count] : state.extras().distinct_values) add(key, count);
  }
  if (values.empty() && nulls == 0) return Value::Null();
  if (call.kind == AggregateKind::kStringAgg) {
    std::string text;
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) text += call.separator;
      text += values[i].string_value();
    }
    return Value::String(std::move(text));
  }
  values.insert(call.nulls_first ? values.begin() : values.end(), nulls, Value::Null());
  return Value::String(array::Encode(values, call.arg->type));
}

// min/max without kept values: `value` (not NULL) becomes the extreme if it passes it. An
// equal value does not replace the one that came first.
void KeepExtreme(const planner::AggregateCall& call, Value value, AggregateState* state) {
  if (state->extremum.is_null()) {
    state->extremum = std::move(value);
    return;
  }
  int c = CompareValues(value, state->extremum);
  if ((call.kind == AggregateKind::kMin && c < 0) || (call.kind == AggregateKind::kMax && c > 0)) {
    state->extremum = std::move(value);
  }
}

}  // namespace

AggregateInput EvaluateAggregateInput(const planner::AggregateCall& call, const Chunk& chunk) {
  AggregateInput input;
  if (call.arg) input.arg = Evaluate(*call.arg, chunk);
  if (call.filter) input.filter = Evaluate(*call.filter, chunk);
  if (call.order_key) input.order = Evaluate(*call.order_key, chunk);
  return input;
}

void Accumulate(const planner::AggregateCall& call, AggregateState* state,
                const AggregateInput& input, size_t row, int sign) {
  if (input.filter && (input.filter->IsNull(row) || input.filter->ints[row] == 0)) return;
  const Column* arg = input.arg ? &*input.arg : nullptr;
  if (call.kind == AggregateKind::kCountStar) {
    state->count += sign;
    return;
  }
  if (CollectsValues(call)) {
    // array_agg keeps NULLs (their key sorts last, as NULLS LAST); string_agg skips them.
    if (call.kind == AggregateKind::kStringAgg && arg->IsNull(row)) return;
    std::string key = input.order ? OrderedValueKey(call, input.order->GetValue(row),
                                                    arg->GetValue(row), arg->type)
                                  : ValueKey(call, arg->GetValue(row), arg->type);
    auto& values = state->mutable_extras().distinct_values;
    auto [it, inserted] = values.try_emplace(std::move(key), 0);
    it->second += sign;
    if (it->second == 0) values.erase(it);
    return;
  }
  if (arg->IsNull(row)) return;
  if (KeepsValues(call)) {
    std::string key = ValueKey(call, arg->GetValue(row), arg->type);
    auto& values = state->mutable_extras().distinct_values;
    auto [it, inserted] = values.try_emplace(std::move(key), 0);
    int64_t before = it->second;
    it->second += sign;
    int64_t after = it->second;
    if (after == 0) values.erase(it);
    // Only a value's first arrival and its last departure change the aggregate.
    if ((before > 0) == (after > 0)) return;
    sign = after > 0 ? 1 : -1;
  }
  state->count += sign;
  switch (call.kind) {
    case AggregateKind::kSum:
    case AggregateKind::kAvg:
      if (arg->type.IsInteger()) {
        state->int_sum += static_cast<__int128>(arg->ints[row]) * sign;
      } else if (arg->type.IsDecimal()) {
        AccumulateDecimal(arg->decimals[row], sign, state);
      } else {
        state->float_sum += arg->doubles[row] * sign;
      }
      break;
    case AggregateKind::kMin:
    case AggregateKind::kMax: {
      if (KeepsValues(call)) {
        // The extreme of the values still held: the first or the last key.
        const auto& values = state->extras().distinct_values;
        if (values.empty()) {
          state->extremum = Value::Null();
          break;
        }
        std::string_view key =
            call.kind == AggregateKind::kMin ? values.begin()->first : values.rbegin()->first;
        state->extremum = DecodeValueKey(key, arg->type, "min/max");
        break;
      }
      if (sign < 0) {
        throw SqlError(
            sqlstate::kFeatureNotSupported,
            "min() and max() over rows that are updated or deleted are not supported yet");
      }
      KeepExtreme(call, arg->GetValue(row), state);
      break;
    }
    default:
      break;
  }
}

bool CombinesPartially(const planner::AggregateCall& call) {
  if (call.distinct || call.keeps_values || call.order_key) return false;
  switch (call.kind) {
    case AggregateKind::kCountStar:
    case AggregateKind::kCount:
    case AggregateKind::kMin:
    case AggregateKind::kMax:
      return true;
    case AggregateKind::kSum:
    case AggregateKind::kAvg:
      // A float's sum would depend on the order of its additions; a numeric's carries its
      // scale and special values.
      return call.arg && call.arg->type.IsInteger();
    default:
      return false;
  }
}

std::vector<DataType> PartialExtraTypes(const planner::AggregateCall& call) {
  switch (call.kind) {
    case AggregateKind::kMin:
    case AggregateKind::kMax:
      return {call.arg->type};
    case AggregateKind::kSum:
    case AggregateKind::kAvg:
      return {TypeId::kInt64, TypeId::kInt64};
    default:
      return {};
  }
}

void AppendPartialExtras(const planner::AggregateCall& call, const AggregateState& state,
                         Column* columns) {
  switch (call.kind) {
    case AggregateKind::kMin:
    case AggregateKind::kMax:
      columns[0].AppendValue(state.extremum);
      return;
    case AggregateKind::kSum:
    case AggregateKind::kAvg: {
      auto sum = static_cast<unsigned __int128>(state.int_sum);
      columns[0].AppendInt(static_cast<int64_t>(static_cast<uint64_t>(sum >> 64)));
      columns[1].AppendInt(static_cast<int64_t>(static_cast<uint64_t>(sum)));
      return;
    }
    default:
      return;
  }
}

void MergePartial(const planner::AggregateCall& call, AggregateState* state, int64_t count,
                  const Column* extras, size_t row) {
  state->count += count;
  switch (call.kind) {
    case AggregateKind::kSum:
    case AggregateKind::kAvg: {
      auto high = static_cast<uint64_t>(extras[0].ints[row]);
      auto low = static_cast<uint64_t>(extras[1].ints[row]);
      // Wraps as the sum of the rows would (Accumulate adds without a check).
      auto sum = static_cast<unsigned __int128>(state->int_sum) +
                 ((static_cast<unsigned __int128>(high) << 64) | low);
      state->int_sum = static_cast<Int128>(sum);
      return;
    }
    case AggregateKind::kMin:
    case AggregateKind::kMax:
      if (!extras[0].IsNull(row)) KeepExtreme(call, extras[0].GetValue(row), state);
      return;
    default:
      return;
  }
}

Value AggregateResult(const planner::AggregateCall& call, const AggregateState& state) {
  switch (call.kind) {
    case AggregateKind::kCountStar:
    case AggregateKind::kCount:
      return Value::Int(state.count);
    case AggregateKind::kSum:
      if (state.count == 0) return Value::Null();
      if (call.result_type.id == TypeId::kInt64) {
        if (state.int_sum > std::numeric_limits<int64_t>::max() ||
            state.int_sum < std::numeric_limits<int64_t>::min()) {
          throw SqlError(sqlstate::kNumericValueOutOfRange, "bigint out of range in sum()");
        }
        return Value::Int(static_cast<int64_t>(state.int_sum));
      }
      if (call.arg->type.IsDecimal()) return Value::Numeric(DecimalSum(state));
      if (call.arg->type.IsInteger()) return Value::Numeric(decimal::FromInt128(state.int_sum));
      return Value::Double(state.float_sum);
    case AggregateKind::kAvg: {
      if (state.count == 0) return Value::Null();
      if (call.arg->type.IsFloat()) {
        return Value::Double(state.float_sum / static_cast<double>(state.count));
      }
      // PostgreSQL's avg is numeric division of the sum by the count (numeric_avg).
      Decimal sum =
          call.arg->type.IsDecimal() ? DecimalSum(state) : decimal::FromInt128(state.int_sum);
      return Value::Numeric(decimal::Divide(sum, decimal::FromInteger(state.count)));
    }
    case AggregateKind::kMin:
    case AggregateKind::kMax:
      return state.count == 0 ? Value::Null() : state.extremum;
    case AggregateKind::kArrayAgg:
    case AggregateKind::kStringAgg:
      return CollectedValues(call, state);
  }
  return Value::Null();
}

GroupStateCodec::GroupStateCodec(const std::vector<planner::AggregateCall>& calls,
                                 size_t key_scale_count, Layout layout)
    : layout_(layout),
      types_(StateTypes(calls)),
      call_count_(calls.size()),
      key_scale_count_(key_scale_count),
      has_distinct_(HasDistinct(calls)) {
  types_.insert(types_.end(), key_scale_count, TypeId::kInt64);
  fields_.push_back({Slot::kRowCount, 0});
  for (uint32_t i = 0; i < calls.size(); ++i) {
    for (Slot slot :
         {Slot::kCount, Slot::kSumHigh, Slot::kSumLow, Slot::kFloatSum, Slot::kExtremum}) {
      fields_.push_back({slot, i});
    }
    if (HasNumericArgument(calls[i])) {
      for (Slot slot : {Slot::kSumScale, Slot::kNanCount, Slot::kInfinityCount,
                        Slot::kNegativeInfinityCount, Slot::kWideSum}) {
        fields_.push_back({slot, i});
      }
    }
    keeps_values_.push_back(KeepsValues(calls[i]) ? 1 : 0);
  }
  for (uint32_t k = 0; k < key_scale_count; ++k) fields_.push_back({Slot::kKeyScale, k});
}

void GroupStateCodec::Encode(const GroupState& state, std::string* out) const {
  struct Fields {
    const GroupState& state;
    const std::vector<Field>& fields;
    bool zero_as_null;  // Layout::kPacked's.
    const AggregateState& Of(size_t i) const { return state.aggregates[fields[i].index]; }
    bool IsNull(size_t i) const {
      switch (fields[i].slot) {
        case Slot::kExtremum:
          return Of(i).extremum.is_null();
        case Slot::kFloatSum: {
          // Only +0.0: a -0.0 sum is written, so that it reads back as it was.
          double sum = Of(i).float_sum;
          uint64_t bits;
          std::memcpy(&bits, &sum, 8);
          return zero_as_null && bits == 0;
        }
        case Slot::kWideSum: {
          const Decimal& sum = Of(i).extras().wide_sum;
          return zero_as_null && sum.is_finite() && !sum.is_wide() && sum.unscaled == 0 &&
                 sum.scale == 0;
        }
        default:
          return zero_as_null && Int(i) == 0;
      }
    }
    int64_t Int(size_t i) const {
      switch (fields[i].slot) {
        case Slot::kRowCount:
          return state.row_count;
        case Slot::kCount:
          return Of(i).count;
        case Slot::kSumHigh:
          return static_cast<int64_t>(Of(i).int_sum >> 64);
        case Slot::kSumLow:
          return static_cast<int64_t>(static_cast<uint64_t>(Of(i).int_sum));
        case Slot::kExtremum:
          return Of(i).extremum.int_value();
        case Slot::kSumScale:
          return Of(i).sum_scale;
        case Slot::kNanCount:
          return Of(i).extras().nan_count;
        case Slot::kInfinityCount:
          return Of(i).extras().infinity_count;
        case Slot::kNegativeInfinityCount:
          return Of(i).extras().negative_infinity_count;
        case Slot::kKeyScale:
          return state.key_scales[fields[i].index];
        case Slot::kFloatSum:
        case Slot::kWideSum:
          break;
      }
      return 0;
    }
    double Double(size_t i) const {
      return fields[i].slot == Slot::kFloatSum ? Of(i).float_sum : Of(i).extremum.double_value();
    }
    std::string_view String(size_t i) const { return Of(i).extremum.string_value(); }
    const Decimal& Numeric(size_t i) const {
      return fields[i].slot == Slot::kWideSum ? Of(i).extras().wide_sum
                                              : Of(i).extremum.decimal_value();
    }
  };
  Fields fields{state, fields_, layout_ == Layout::kPacked};
  auto encode_fields = [&] {
    if (layout_ == Layout::kPacked) {
      storage::EncodePackedRowFrom(fields, types_, out);
    } else {
      storage::EncodeRowFrom(fields, types_, out);
    }
  };
  if (!has_distinct_) {
    encode_fields();
    return;
  }
  // With DISTINCT aggregates: the fixed part's length, the fixed part, then each DISTINCT
  // aggregate's values and their counts.
  size_t length_at = out->size();
  storage::AppendBigEndian32(0, out);
  encode_fields();
  std::string length;
  storage::AppendBigEndian32(static_cast<uint32_t>(out->size() - length_at - 4), &length);
  out->replace(length_at, 4, length);
  for (size_t i = 0; i < call_count_; ++i) {
    if (!keeps_values_[i]) continue;
    const auto& values = state.aggregates[i].extras().distinct_values;
    storage::AppendBigEndian32(static_cast<uint32_t>(values.size()), out);
    for (const auto& [value, count] : values) {
      storage::AppendBigEndian32(static_cast<uint32_t>(value.size()), out);
      *out += value;
      storage::AppendBigEndian64(static_cast<uint64_t>(count), out);
    }
  }
}

bool GroupStateCodec::Decode(std::string_view bytes, GroupState* state) const {
  std::string_view distinct_part;
  if (has_distinct_) {
    if (bytes.size() < 4) return false;
    uint32_t size = storage::ReadBigEndian32(bytes);
    bytes.remove_prefix(4);
    if (bytes.size() < size) return false;
    distinct_part = bytes.substr(size);
    bytes = bytes.substr(0, size);
  }
  state->row_count = 0;
  state->aggregates.assign(call_count_, AggregateState());
  state->key_scales.assign(key_scale_count_, 0);
  struct Fields {
    GroupState& state;
    const std::vector<Field>& fields;
    bool zero_as_null;       // Layout::kPacked's: a NULL field holds zero, as it already does.
    bool malformed = false;  // A NULL where only the extremum may be one.
    AggregateState& Of(size_t i) const { return state.aggregates[fields[i].index]; }
    void Null(size_t i) {
      if (fields[i].slot == Slot::kExtremum) {
        Of(i).extremum = Value::Null();
      } else if (!zero_as_null) {
        malformed = true;
      }
    }
    void Int(size_t i, int64_t value) {
      switch (fields[i].slot) {
        case Slot::kRowCount:
          state.row_count = value;
          break;
        case Slot::kCount:
          Of(i).count = value;
          break;
        case Slot::kSumHigh:
          Of(i).int_sum = static_cast<Int128>(static_cast<UInt128>(value) << 64) |
                          static_cast<Int128>(static_cast<uint64_t>(Of(i).int_sum));
          break;
        case Slot::kSumLow:
          Of(i).int_sum =
              static_cast<Int128>((static_cast<UInt128>(Of(i).int_sum) & ~UInt128{UINT64_MAX}) |
                                  static_cast<uint64_t>(value));
          break;
        case Slot::kExtremum:
          Of(i).extremum = Value::Int(value);
          break;
        case Slot::kSumScale:
          Of(i).sum_scale = static_cast<int32_t>(value);
          break;
        case Slot::kNanCount:
          if (value != 0) Of(i).mutable_extras().nan_count = value;
          break;
        case Slot::kInfinityCount:
          if (value != 0) Of(i).mutable_extras().infinity_count = value;
          break;
        case Slot::kNegativeInfinityCount:
          if (value != 0) Of(i).mutable_extras().negative_infinity_count = value;
          break;
        case Slot::kKeyScale:
          state.key_scales[fields[i].index] = static_cast<int32_t>(value);
          break;
        case Slot::kFloatSum:
        case Slot::kWideSum:
          malformed = true;
          break;
      }
    }
    void Double(size_t i, double value) {
      if (fields[i].slot == Slot::kFloatSum) {
        Of(i).float_sum = value;
      } else {
        Of(i).extremum = Value::Double(value);
      }
    }
    void String(size_t i, std::string_view value) {
      Of(i).extremum = Value::String(std::string(value));
    }
    void Numeric(size_t i, const Decimal& value) {
      if (fields[i].slot == Slot::kWideSum) {
        // The usual zero stays unallocated; any other value, even a zero of another scale, is
        // kept as it was written.
        bool zero = value.kind == Decimal::Kind::kFinite && !value.wide && value.unscaled == 0 &&
                    value.scale == 0;
        if (!zero) Of(i).mutable_extras().wide_sum = value;
      } else {
        Of(i).extremum = Value::Numeric(value);
      }
    }
  } fields{*state, fields_, layout_ == Layout::kPacked};
  bool read = layout_ == Layout::kPacked
                  ? storage::VisitPackedRowPrefix(&bytes, types_, fields) && bytes.empty()
                  : storage::VisitRow(bytes, types_, fields);
  if (!read || fields.malformed) return false;
  for (size_t i = 0; i < call_count_; ++i) {
    if (!keeps_values_[i]) continue;
    if (distinct_part.size() < 4) return false;
    uint32_t values = storage::ReadBigEndian32(distinct_part);
    distinct_part.remove_prefix(4);
    for (uint32_t v = 0; v < values; ++v) {
      if (distinct_part.size() < 4) return false;
      uint32_t size = storage::ReadBigEndian32(distinct_part);
      distinct_part.remove_prefix(4);
      if (distinct_part.size() < size + 8u) return false;
      std::string value(distinct_part.substr(0, size));
      distinct_part.remove_prefix(size);
      state->aggregates[i].mutable_extras().distinct_values.emplace(
          std::move(value), static_cast<int64_t>(storage::ReadBigEndian64(distinct_part)));
      distinct_part.remove_prefix(8);
    }
  }
  return distinct_part.empty();
}

}  // namespace stave::executor

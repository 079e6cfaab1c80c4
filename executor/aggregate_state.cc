#include "executor/aggregate_state.h"

#include <limits>

#include "common/sql_error.h"
#include "storage/key_codec.h"
#include "storage/row_codec.h"

namespace stave::executor {
namespace {

using planner::AggregateKind;

storage::RowTypes StateTypes(const std::vector<planner::AggregateCall>& calls) {
  storage::RowTypes types = {TypeId::kInt64};
  for (const auto& call : calls) {
    types.push_back(TypeId::kInt64);                                        // count
    types.push_back(TypeId::kInt64);                                        // int_sum, high 64 bits
    types.push_back(TypeId::kInt64);                                        // int_sum, low 64 bits
    types.push_back(TypeId::kFloat64);                                      // float_sum
    types.push_back(call.arg ? call.arg->type : DataType(TypeId::kInt64));  // extremum
  }
  return types;
}

bool HasDistinct(const std::vector<planner::AggregateCall>& calls) {
  for (const auto& call : calls) {
    if (call.distinct) return true;
  }
  return false;
}

}  // namespace

void Accumulate(const planner::AggregateCall& call, AggregateState* state, const Column* arg,
                size_t row, int sign) {
  if (call.kind == AggregateKind::kCountStar) {
    state->count += sign;
    return;
  }
  if (arg->IsNull(row)) return;
  if (call.distinct) {
    std::string key;
    storage::EncodeKeyValue(arg->GetValue(row), arg->type, &key);
    auto [it, inserted] = state->distinct_values.try_emplace(std::move(key), 0);
    int64_t before = it->second;
    it->second += sign;
    int64_t after = it->second;
    if (after == 0) state->distinct_values.erase(it);
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
      } else {
        state->float_sum += arg->doubles[row] * sign;
      }
      break;
    case AggregateKind::kMin:
    case AggregateKind::kMax: {
      if (sign < 0) {
        throw SqlError(
            sqlstate::kFeatureNotSupported,
            "min() and max() over rows that are updated or deleted are not supported yet");
      }
      Value value = arg->GetValue(row);
      if (state->extremum.is_null()) {
        state->extremum = std::move(value);
      } else {
        int c = CompareValues(value, state->extremum);
        if ((call.kind == AggregateKind::kMin && c < 0) ||
            (call.kind == AggregateKind::kMax && c > 0)) {
          state->extremum = std::move(value);
        }
      }
      break;
    }
    default:
      break;
  }
}

Value AggregateResult(const planner::AggregateCall& call, const AggregateState& state) {
  switch (call.kind) {
    case AggregateKind::kCountStar:
    case AggregateKind::kCount:
      return Value::Int(state.count);
    case AggregateKind::kSum:
      if (state.count == 0) return Value::Null();
      if (call.arg->type.IsInteger()) {
        if (state.int_sum > std::numeric_limits<int64_t>::max() ||
            state.int_sum < std::numeric_limits<int64_t>::min()) {
          throw SqlError(sqlstate::kNumericValueOutOfRange, "bigint out of range in sum()");
        }
        return Value::Int(static_cast<int64_t>(state.int_sum));
      }
      return Value::Double(state.float_sum);
    case AggregateKind::kAvg:
      if (state.count == 0) return Value::Null();
      if (call.arg->type.IsInteger()) {
        return Value::Double(static_cast<double>(state.int_sum) / static_cast<double>(state.count));
      }
      return Value::Double(state.float_sum / static_cast<double>(state.count));
    case AggregateKind::kMin:
    case AggregateKind::kMax:
      return state.count == 0 ? Value::Null() : state.extremum;
  }
  return Value::Null();
}

std::string EncodeGroupState(const GroupState& state,
                             const std::vector<planner::AggregateCall>& calls) {
  std::vector<Value> row = {Value::Int(state.row_count)};
  for (const AggregateState& aggregate : state.aggregates) {
    row.push_back(Value::Int(aggregate.count));
    row.push_back(Value::Int(static_cast<int64_t>(aggregate.int_sum >> 64)));
    row.push_back(Value::Int(static_cast<int64_t>(static_cast<uint64_t>(aggregate.int_sum))));
    row.push_back(Value::Double(aggregate.float_sum));
    row.push_back(aggregate.extremum);
  }
  std::string bytes;
  storage::EncodeRow(row, StateTypes(calls), &bytes);
  if (!HasDistinct(calls)) return bytes;
  // With DISTINCT aggregates: the fixed part's length, the fixed part, then each DISTINCT
  // aggregate's values and their counts.
  std::string framed;
  storage::AppendBigEndian32(static_cast<uint32_t>(bytes.size()), &framed);
  framed += bytes;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (!calls[i].distinct) continue;
    const auto& values = state.aggregates[i].distinct_values;
    storage::AppendBigEndian32(static_cast<uint32_t>(values.size()), &framed);
    for (const auto& [value, count] : values) {
      storage::AppendBigEndian32(static_cast<uint32_t>(value.size()), &framed);
      framed += value;
      storage::AppendBigEndian64(static_cast<uint64_t>(count), &framed);
    }
  }
  return framed;
}

bool DecodeGroupState(std::string_view bytes, const std::vector<planner::AggregateCall>& calls,
                      GroupState* state) {
  std::string_view distinct_part;
  if (HasDistinct(calls)) {
    if (bytes.size() < 4) return false;
    uint32_t size = storage::ReadBigEndian32(bytes);
    bytes.remove_prefix(4);
    if (bytes.size() < size) return false;
    distinct_part = bytes.substr(size);
    bytes = bytes.substr(0, size);
  }
  auto row = storage::DecodeRow(bytes, StateTypes(calls));
  if (!row) return false;
  state->row_count = (*row)[0].int_value();
  state->aggregates.assign(calls.size(), AggregateState());
  for (size_t i = 0; i < calls.size(); ++i) {
    size_t base = 1 + i * 5;
    AggregateState& aggregate = state->aggregates[i];
    aggregate.count = (*row)[base].int_value();
    aggregate.int_sum = (static_cast<__int128>((*row)[base + 1].int_value()) << 64) |
                        static_cast<__int128>(static_cast<uint64_t>((*row)[base + 2].int_value()));
    aggregate.float_sum = (*row)[base + 3].double_value();
    aggregate.extremum = (*row)[base + 4];
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    if (!calls[i].distinct) continue;
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
      state->aggregates[i].distinct_values.emplace(
          std::move(value), static_cast<int64_t>(storage::ReadBigEndian64(distinct_part)));
      distinct_part.remove_prefix(8);
    }
  }
  return distinct_part.empty();
}

}  // namespace stave::executor

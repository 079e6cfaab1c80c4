#include "executor/aggregate_state.h"

#include <limits>

#include "common/sql_error.h"
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

}  // namespace

void Accumulate(const planner::AggregateCall& call, AggregateState* state, const Column* arg,
                size_t row, int sign) {
  if (call.kind == AggregateKind::kCountStar) {
    state->count += sign;
    return;
  }
  if (arg->IsNull(row)) return;
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
  return bytes;
}

bool DecodeGroupState(std::string_view bytes, const std::vector<planner::AggregateCall>& calls,
                      GroupState* state) {
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
  return true;
}

}  // namespace stave::executor

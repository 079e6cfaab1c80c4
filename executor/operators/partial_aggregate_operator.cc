#include "executor/operators/partial_aggregate_operator.h"

#include "executor/expression_evaluator.h"
#include "planner/plan_printer.h"

namespace stave::executor {

PartialAggregateOperator::PartialAggregateOperator(
    std::shared_ptr<const planner::AggregateNode> node)
    : node_(std::move(node)) {
  for (const planner::Column& column : OutputColumns(*node_)) {
    output_types_.push_back(column.type);
  }
}

bool PartialAggregateOperator::Combinable(const planner::AggregateNode& node) {
  for (const planner::AggregateCall& call : node.aggregates) {
    if (!CombinesPartially(call)) return false;
  }
  return true;
}

std::vector<planner::Column> PartialAggregateOperator::OutputColumns(
    const planner::AggregateNode& node) {
  std::vector<planner::Column> columns;
  for (size_t k = 0; k < node.group_keys.size(); ++k) {
    const planner::BoundExpr& key = *node.group_keys[k];
    columns.push_back({node.input ? planner::ExplainExpression(key, node.input->output)
                                  : "_group_key_" + std::to_string(k),
                       key.type});
  }
  columns.push_back({"_row_count", TypeId::kInt64});
  for (size_t a = 0; a < node.aggregates.size(); ++a) {
    columns.push_back({"_count_" + std::to_string(a), TypeId::kInt64});
  }
  for (size_t a = 0; a < node.aggregates.size(); ++a) {
    std::vector<DataType> extras = PartialExtraTypes(node.aggregates[a]);
    for (size_t e = 0; e < extras.size(); ++e) {
      columns.push_back({"_partial_" + std::to_string(a) + "_" + std::to_string(e), extras[e]});
    }
  }
  return columns;
}

void PartialAggregateOperator::OnChunk(Chunk chunk) {
  if (chunk.empty()) return;
  std::vector<Column> keys;
  keys.reserve(node_->group_keys.size());
  for (const auto& key : node_->group_keys) keys.push_back(Evaluate(*key, chunk));
  std::vector<AggregateInput> inputs;
  for (const auto& call : node_->aggregates) inputs.push_back(EvaluateAggregateInput(call, chunk));

  // Every row's key first, end to end, so that the views into them stay put.
  keys_.clear();
  key_ends_.resize(chunk.size());
  for (size_t row = 0; row < chunk.size(); ++row) {
    for (const Column& key : keys) key.AppendKey(row, &keys_);
    key_ends_[row] = static_cast<uint32_t>(keys_.size());
  }
  size_t calls = node_->aggregates.size();
  groups_.clear();
  first_rows_.clear();
  row_counts_.clear();
  states_.clear();
  uint32_t begin = 0;
  for (size_t row = 0; row < chunk.size(); ++row) {
    std::string_view key(keys_.data() + begin, key_ends_[row] - begin);
    begin = key_ends_[row];
    auto [it, created] = groups_.try_emplace(key, static_cast<uint32_t>(first_rows_.size()));
    if (created) {
      first_rows_.push_back(static_cast<uint32_t>(row));
      row_counts_.push_back(0);
      states_.resize(states_.size() + calls);
    }
    uint32_t group = it->second;
    int sign = RowSign(chunk.ops[row]);
    row_counts_[group] += sign;
    for (size_t a = 0; a < calls; ++a) {
      Accumulate(node_->aggregates[a], &states_[group * calls + a], inputs[a], row, sign);
    }
  }

  // A row per group, in the order the groups came; one whose rows cancel out too, as the
  // group may not exist yet: its first row creates it, as the rows themselves would have.
  size_t groups = first_rows_.size();
  Chunk out;
  out.columns.reserve(output_types_.size());
  for (const Column& key : keys) {
    out.columns.emplace_back(key.type);
    out.columns.back().AppendRows(key, first_rows_.data(), groups);
  }
  out.columns.emplace_back(TypeId::kInt64);
  for (size_t group = 0; group < groups; ++group) out.columns.back().AppendInt(row_counts_[group]);
  for (size_t a = 0; a < calls; ++a) {
    out.columns.emplace_back(TypeId::kInt64);
    for (size_t group = 0; group < groups; ++group) {
      out.columns.back().AppendInt(states_[group * calls + a].count);
    }
  }
  for (size_t a = 0; a < calls; ++a) {
    const planner::AggregateCall& call = node_->aggregates[a];
    size_t first = out.columns.size();
    for (DataType type : PartialExtraTypes(call)) out.columns.emplace_back(type);
    if (out.columns.size() == first) continue;
    for (size_t group = 0; group < groups; ++group) {
      AppendPartialExtras(call, states_[group * calls + a], &out.columns[first]);
    }
  }
  out.ops.assign(groups, RowOp::kInsert);
  Emit(std::move(out));
}

}  // namespace stave::executor

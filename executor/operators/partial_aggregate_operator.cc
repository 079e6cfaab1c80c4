#include "executor/operators/partial_aggregate_operator.h"

#include <set>

#include "executor/expression_evaluator.h"
#include "executor/operators/time_window_operator.h"
#include "planner/plan_printer.h"

namespace stave::executor {
namespace {

// The HOP a partial step by slide takes in (CombinesBySlide's test): `node`'s input.
const planner::TimeWindowNode* HopOf(const planner::AggregateNode& node) {
  if (!node.input || node.input->kind != planner::PlanNodeKind::kTimeWindow) return nullptr;
  const auto* hop = static_cast<const planner::TimeWindowNode*>(node.input.get());
  bool sliced = hop->slide > 0 && hop->slide < hop->size && hop->size % hop->slide == 0;
  return sliced ? hop : nullptr;
}

// Whether `expr` (if any) reads the window's start or end, columns `start` and `start + 1`.
bool ReadsBounds(const planner::BoundExprPtr& expr, size_t start) {
  if (!expr) return false;
  std::set<size_t> columns;
  planner::CollectColumns(*expr, &columns);
  return columns.count(start) > 0 || columns.count(start + 1) > 0;
}

}  // namespace

PartialAggregateOperator::PartialAggregateOperator(
    std::shared_ptr<const planner::AggregateNode> node, bool by_slide)
    : node_(std::move(node)) {
  for (const planner::Column& column : OutputColumns(*node_)) {
    output_types_.push_back(column.type);
  }
  if (!by_slide) return;
  const planner::TimeWindowNode* hop = HopOf(*node_);
  slices_.emplace(*hop);
  slices_->size = hop->slide;
  window_size_ = hop->size;
  windows_per_slice_ = hop->size / hop->slide;
  for (const auto& key : node_->group_keys) {
    key_bounds_.push_back(BoundOf(*key, hop->visible_columns));
  }
}

PartialAggregateOperator::Bound PartialAggregateOperator::BoundOf(const planner::BoundExpr& key,
                                                                  size_t start) {
  if (key.kind != planner::BoundExpr::Kind::kColumn) return Bound::kNone;
  if (key.column == start) return Bound::kStart;
  return key.column == start + 1 ? Bound::kEnd : Bound::kNone;
}

bool PartialAggregateOperator::Combinable(const planner::AggregateNode& node) {
  for (const planner::AggregateCall& call : node.aggregates) {
    if (!CombinesPartially(call)) return false;
  }
  return true;
}

bool PartialAggregateOperator::CombinesBySlide(const planner::AggregateNode& node) {
  const planner::TimeWindowNode* hop = HopOf(node);
  if (!hop || !Combinable(node)) return false;
  size_t start = hop->visible_columns;
  for (const auto& key : node.group_keys) {
    if (BoundOf(*key, start) == Bound::kNone && ReadsBounds(key, start)) return false;
  }
  for (const planner::AggregateCall& call : node.aggregates) {
    if (ReadsBounds(call.arg, start) || ReadsBounds(call.filter, start) ||
        ReadsBounds(call.order_key, start)) {
      return false;
    }
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
  // By slide, each row once, in its slice, whose bounds stand in for the windows' bounds.
  if (slices_) chunk = TimeWindowOperator::Apply(*slices_, chunk);
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
  // By slide, a row per window holding the group's slice, earliest first, as the HOP orders
  // a row's copies: the first partial row of each window's group still comes from the
  // group's first row of the chunk.
  size_t groups = first_rows_.size();
  auto copies = static_cast<size_t>(windows_per_slice_);
  size_t rows = groups * copies;
  // Calls `append` with the group of each output row, in order.
  auto each_row = [&](auto&& append) {
    for (size_t group = 0; group < groups; ++group) {
      for (size_t copy = 0; copy < copies; ++copy) append(group);
    }
  };
  // The input row each output row's keys come from: its group's first.
  const uint32_t* key_rows = first_rows_.data();
  if (copies > 1) {
    repeated_first_rows_.clear();
    each_row([&](size_t group) { repeated_first_rows_.push_back(first_rows_[group]); });
    key_rows = repeated_first_rows_.data();
  }
  Chunk out;
  out.columns.reserve(output_types_.size());
  for (size_t k = 0; k < keys.size(); ++k) {
    out.columns.emplace_back(keys[k].type);
    Column& column = out.columns.back();
    if (key_bounds_.empty() || key_bounds_[k] == Bound::kNone) {
      column.AppendRows(keys[k], key_rows, rows);
      continue;
    }
    // The slice's start is its window_start (never NULL: Apply drops rows without a time).
    const Column& slice_start = chunk.columns[slices_->visible_columns];
    for (uint32_t first_row : first_rows_) {
      for (int64_t earlier = windows_per_slice_ - 1; earlier >= 0; --earlier) {
        int64_t start = slice_start.ints[first_row] - earlier * slices_->slide;
        column.AppendInt(key_bounds_[k] == Bound::kStart ? start : start + window_size_);
      }
    }
  }
  out.columns.emplace_back(TypeId::kInt64);
  each_row([&](size_t group) { out.columns.back().AppendInt(row_counts_[group]); });
  for (size_t a = 0; a < calls; ++a) {
    out.columns.emplace_back(TypeId::kInt64);
    each_row([&](size_t group) { out.columns.back().AppendInt(states_[group * calls + a].count); });
  }
  for (size_t a = 0; a < calls; ++a) {
    const planner::AggregateCall& call = node_->aggregates[a];
    size_t first = out.columns.size();
    for (DataType type : PartialExtraTypes(call)) out.columns.emplace_back(type);
    if (out.columns.size() == first) continue;
    each_row([&](size_t group) {
      AppendPartialExtras(call, states_[group * calls + a], &out.columns[first]);
    });
  }
  out.ops.assign(rows, RowOp::kInsert);
  Emit(std::move(out));
}

}  // namespace stave::executor

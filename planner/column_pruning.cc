#include "planner/column_pruning.h"

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

#include "common/sql_error.h"

namespace stave::planner {
namespace {

/// Per column of a node's output before the rewrite: its position in the rewritten node's
/// output, or nullopt where it was dropped.
using ColumnMap = std::vector<std::optional<size_t>>;

/// A rewritten node, and where its old output columns went.
struct Pruned {
  PlanNodePtr node;
  ColumnMap map;
};

ColumnMap Identity(size_t width) {
  ColumnMap map(width);
  for (size_t i = 0; i < width; ++i) map[i] = i;
  return map;
}

void MarkColumns(const BoundExprPtr& expr, std::vector<bool>* used) {
  if (!expr) return;
  std::set<size_t> columns;
  CollectColumns(*expr, &columns);
  for (size_t column : columns) {
    if (column < used->size()) (*used)[column] = true;
  }
}

void MarkAggregate(const AggregateCall& call, std::vector<bool>* used) {
  MarkColumns(call.arg, used);
  MarkColumns(call.order_key, used);
  MarkColumns(call.filter, used);
}

size_t Mapped(const ColumnMap& map, size_t column) {
  if (column >= map.size() || !map[column]) {
    throw SqlError(sqlstate::kInternalError, "column pruning dropped a column still read");
  }
  return *map[column];
}

/// `expr` reading the rewritten columns.
BoundExprPtr Remap(const BoundExprPtr& expr, const ColumnMap& map) {
  if (!expr) return expr;
  if (expr->kind == BoundExpr::Kind::kColumn) {
    auto copy = std::make_shared<BoundExpr>(*expr);
    copy->column = Mapped(map, expr->column);
    return copy;
  }
  if (expr->args.empty()) return expr;
  auto copy = std::make_shared<BoundExpr>(*expr);
  for (BoundExprPtr& arg : copy->args) arg = Remap(arg, map);
  return copy;
}

void RemapAggregate(AggregateCall* call, const ColumnMap& map) {
  call->arg = Remap(call->arg, map);
  call->order_key = Remap(call->order_key, map);
  call->filter = Remap(call->filter, map);
}

Pruned Prune(const PruningRules& rules, const PlanNodePtr& node, const std::vector<bool>& required);
Pruned PruneAll(const PruningRules& rules, const PlanNodePtr& node);
Pruned PruneTimeWindow(const PruningRules& rules, const PlanNodePtr& node,
                       const std::vector<bool>& required);

/// `pruned` with a projection on top that keeps only the `needed` columns, where that pays:
/// where it drops a column of strings (text, bytea, jsonb, arrays), whose bytes dominate a
/// stored row. A projection over a source costs a stage of its own (a hop between tasks), and
/// dropping fixed-size values saves little. A row keeps at least one column.
Pruned Narrow(Pruned pruned, const std::vector<bool>& needed) {
  bool drops_strings = false;
  bool keeps_any = false;
  for (size_t column = 0; column < needed.size(); ++column) {
    keeps_any |= needed[column];
    if (!needed[column] && pruned.map[column]) {
      drops_strings |=
          pruned.node->output[*pruned.map[column]].type.physical() == PhysicalType::kString;
    }
  }
  if (!drops_strings || !keeps_any) return pruned;
  // Over a projection, a narrower copy of it rather than a second one.
  const auto* below = pruned.node->kind == PlanNodeKind::kProject
                          ? static_cast<const ProjectNode*>(pruned.node.get())
                          : nullptr;
  auto project = std::make_shared<ProjectNode>();
  ColumnMap map(needed.size());
  for (size_t column = 0; column < needed.size(); ++column) {
    if (!needed[column]) continue;
    size_t from = Mapped(pruned.map, column);
    map[column] = project->expressions.size();
    project->expressions.push_back(
        below ? below->expressions[from]
              : BoundExpr::MakeColumn(from, pruned.node->output[from].type));
    project->output.push_back(pruned.node->output[from]);
  }
  project->input = below ? below->input : pruned.node;
  return {std::move(project), std::move(map)};
}

Pruned PruneJoin(const PruningRules& rules, const PlanNodePtr& node,
                 const std::vector<bool>& required) {
  const auto& join = static_cast<const JoinNode&>(*node);
  const size_t left_width = join.input->output.size();
  const size_t right_width = join.right->output.size();
  std::vector<bool> needed[2] = {std::vector<bool>(left_width), std::vector<bool>(right_width)};
  for (size_t i = 0; i < left_width; ++i) needed[0][i] = required[i];
  if (!join.FiltersLeft()) {
    for (size_t i = 0; i < right_width; ++i) needed[1][i] = required[left_width + i];
  }
  for (const BoundExprPtr& key : join.left_keys) MarkColumns(key, &needed[0]);
  for (const BoundExprPtr& key : join.right_keys) MarkColumns(key, &needed[1]);
  std::vector<bool> in_residual(left_width + right_width);
  MarkColumns(join.residual, &in_residual);
  for (size_t i = 0; i < in_residual.size(); ++i) {
    if (!in_residual[i]) continue;
    if (i < left_width) {
      needed[0][i] = true;
    } else {
      needed[1][i - left_width] = true;
    }
  }
  for (size_t side = 0; side < 2; ++side) {
    for (const JoinNode::Expiry& expiry : join.expiry[side]) needed[side][expiry.column] = true;
  }

  Pruned sides[2] = {Narrow(Prune(rules, join.input, needed[0]), needed[0]),
                     Narrow(Prune(rules, join.right, needed[1]), needed[1])};
  if (sides[0].node == join.input && sides[1].node == join.right) {
    return {node, Identity(node->output.size())};
  }
  auto copy = std::make_shared<JoinNode>(join);
  copy->input = sides[0].node;
  copy->right = sides[1].node;
  for (BoundExprPtr& key : copy->left_keys) key = Remap(key, sides[0].map);
  for (BoundExprPtr& key : copy->right_keys) key = Remap(key, sides[1].map);
  for (size_t side = 0; side < 2; ++side) {
    for (JoinNode::Expiry& expiry : copy->expiry[side]) {
      expiry.column = Mapped(sides[side].map, expiry.column);
    }
  }
  // The residual reads a row of both sides: the left's columns, then the right's.
  const size_t new_left_width = sides[0].node->output.size();
  ColumnMap joined = sides[0].map;
  for (const std::optional<size_t>& column : sides[1].map) {
    joined.push_back(column ? std::optional<size_t>(*column + new_left_width) : std::nullopt);
  }
  copy->residual = Remap(join.residual, joined);

  ColumnMap map = join.FiltersLeft() ? sides[0].map : joined;
  copy->output.assign(
      join.FiltersLeft() ? new_left_width : new_left_width + sides[1].node->output.size(),
      Column{});
  for (size_t i = 0; i < map.size(); ++i) {
    if (map[i]) copy->output[*map[i]] = node->output[i];
  }
  return {std::move(copy), std::move(map)};
}

Pruned Prune(const PruningRules& rules, const PlanNodePtr& node,
             const std::vector<bool>& required) {
  switch (node->kind) {
    case PlanNodeKind::kFilter: {
      // A filter outputs its input's columns: it reads what is read above, and its predicate.
      const auto& filter = static_cast<const FilterNode&>(*node);
      std::vector<bool> needed = required;
      MarkColumns(filter.predicate, &needed);
      Pruned input = Prune(rules, filter.input, needed);
      if (input.node == filter.input) return {node, std::move(input.map)};
      auto copy = std::make_shared<FilterNode>(filter);
      copy->predicate = Remap(filter.predicate, input.map);
      copy->output = input.node->output;
      copy->input = std::move(input.node);
      return {std::move(copy), std::move(input.map)};
    }
    case PlanNodeKind::kProject: {
      const auto& project = static_cast<const ProjectNode&>(*node);
      std::vector<bool> needed(project.input->output.size());
      for (const BoundExprPtr& expr : project.expressions) MarkColumns(expr, &needed);
      Pruned input = Prune(rules, project.input, needed);
      if (input.node == project.input) return {node, Identity(node->output.size())};
      auto copy = std::make_shared<ProjectNode>(project);
      for (BoundExprPtr& expr : copy->expressions) expr = Remap(expr, input.map);
      copy->input = std::move(input.node);
      return {std::move(copy), Identity(node->output.size())};
    }
    case PlanNodeKind::kAggregate: {
      const auto& aggregate = static_cast<const AggregateNode&>(*node);
      std::vector<bool> needed(aggregate.input->output.size());
      for (const BoundExprPtr& key : aggregate.group_keys) MarkColumns(key, &needed);
      for (const AggregateCall& call : aggregate.aggregates) MarkAggregate(call, &needed);
      Pruned input = Prune(rules, aggregate.input, needed);
      if (input.node == aggregate.input) return {node, Identity(node->output.size())};
      auto copy = std::make_shared<AggregateNode>(aggregate);
      for (BoundExprPtr& key : copy->group_keys) key = Remap(key, input.map);
      for (AggregateCall& call : copy->aggregates) RemapAggregate(&call, input.map);
      copy->input = std::move(input.node);
      return {std::move(copy), Identity(node->output.size())};
    }
    case PlanNodeKind::kTopN: {
      // Outputs its input's columns and then the rank; it keeps whole input rows in state.
      const auto& top = static_cast<const TopNNode&>(*node);
      const size_t width = top.input->output.size();
      std::vector<bool> needed(required.begin(), required.begin() + width);
      for (const BoundExprPtr& key : top.function.partition_keys) MarkColumns(key, &needed);
      for (const WindowOrderKey& key : top.function.order_keys) MarkColumns(key.expr, &needed);
      Pruned input = Narrow(Prune(rules, top.input, needed), needed);
      if (input.node == top.input) return {node, Identity(node->output.size())};
      auto copy = std::make_shared<TopNNode>(top);
      for (BoundExprPtr& key : copy->function.partition_keys) key = Remap(key, input.map);
      for (WindowOrderKey& key : copy->function.order_keys) key.expr = Remap(key.expr, input.map);
      copy->output = input.node->output;
      copy->output.push_back(node->output.back());
      ColumnMap map = input.map;
      map.push_back(input.node->output.size());  // The rank.
      copy->input = std::move(input.node);
      return {std::move(copy), std::move(map)};
    }
    case PlanNodeKind::kJoin:
      return PruneJoin(rules, node, required);
    case PlanNodeKind::kTimeWindow:
      if (rules.time_window_inputs) return PruneTimeWindow(rules, node, required);
      return PruneAll(rules, node);
    case PlanNodeKind::kScan: {
      // The scan's shape stays; it learns which columns nobody reads, which its source may
      // then skip producing (Nexmark's `extra` padding, say).
      const auto& scan = static_cast<const ScanNode&>(*node);
      bool all_read = std::find(required.begin(), required.end(), false) == required.end();
      if (all_read || required.size() != node->output.size() || required == scan.read_columns) {
        return {node, Identity(node->output.size())};
      }
      auto copy = std::make_shared<ScanNode>(scan);
      copy->read_columns = required;
      return {std::move(copy), Identity(node->output.size())};
    }
    default:
      return PruneAll(rules, node);
  }
}

Pruned PruneAll(const PruningRules& rules, const PlanNodePtr& node) {
  // Reads every column of its inputs, whose outputs therefore keep their shape.
  PlanNodePtr inputs[2] = {node->input, nullptr};
  if (const PlanNodePtr* second = SecondInput(*node)) inputs[1] = *second;
  bool changed = false;
  for (PlanNodePtr& input : inputs) {
    if (!input) continue;
    PlanNodePtr pruned = Prune(rules, input, std::vector<bool>(input->output.size(), true)).node;
    changed |= pruned != input;
    input = std::move(pruned);
  }
  PlanNodePtr result = changed ? WithInputs(*node, inputs[0], inputs[1]) : node;
  return {std::move(result), Identity(node->output.size())};
}

Pruned PruneTimeWindow(const PruningRules& rules, const PlanNodePtr& node,
                       const std::vector<bool>& required) {
  // Output: the input's visible columns, window_start, window_end, then the input's hidden
  // columns (a row's identity, kept whole). The window reads its time column.
  const auto& window = static_cast<const TimeWindowNode&>(*node);
  const size_t visible = window.visible_columns;
  const size_t width = window.input->output.size();
  std::vector<bool> needed(width, true);
  for (size_t column = 0; column < visible; ++column) needed[column] = required[column];
  needed[window.time_column] = true;
  Pruned input = Narrow(Prune(rules, window.input, needed), needed);
  if (input.node == window.input) return {node, Identity(node->output.size())};
  // Narrow keeps the columns in their order, so the kept visible ones come first.
  size_t kept_visible = 0;
  for (size_t column = 0; column < visible; ++column) kept_visible += input.map[column].has_value();
  auto copy = std::make_shared<TimeWindowNode>(window);
  copy->time_column = Mapped(input.map, window.time_column);
  copy->visible_columns = kept_visible;
  const std::vector<Column>& inputs = input.node->output;
  copy->output.assign(inputs.begin(), inputs.begin() + static_cast<ptrdiff_t>(kept_visible));
  copy->output.push_back(node->output[visible]);
  copy->output.push_back(node->output[visible + 1]);
  copy->output.insert(copy->output.end(), inputs.begin() + static_cast<ptrdiff_t>(kept_visible),
                      inputs.end());
  ColumnMap map(node->output.size());
  for (size_t column = 0; column < width; ++column) {
    if (!input.map[column]) continue;
    size_t to = *input.map[column];
    if (column < visible) {
      map[column] = to;
    } else {
      map[column + 2] = to + 2;
    }
  }
  map[visible] = kept_visible;
  map[visible + 1] = kept_visible + 1;
  copy->input = std::move(input.node);
  return {std::move(copy), std::move(map)};
}

}  // namespace

PlanNodePtr PruneColumns(const PlanNodePtr& root, const PruningRules& rules) {
  if (!root) return root;
  return Prune(rules, root, std::vector<bool>(root->output.size(), true)).node;
}

}  // namespace stave::planner

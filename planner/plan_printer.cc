#include "planner/plan_printer.h"

#include <fmt/format.h>

#include <cctype>
#include <map>
#include <set>

#include "common/temporal.h"
#include "planner/join_state_cleaning.h"
#include "planner/shared_subplans.h"

namespace stave::planner {
namespace {

std::string Join(const std::vector<std::string>& parts) {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) text += ", ";
    text += parts[i];
  }
  return text;
}

std::string Expressions(const std::vector<BoundExprPtr>& exprs,
                        const std::vector<Column>& columns) {
  std::vector<std::string> parts;
  for (const BoundExprPtr& expr : exprs) parts.push_back(ExplainExpression(*expr, columns));
  return Join(parts);
}

// `row_number() OVER (PARTITION BY a ORDER BY b DESC)`.
std::string DescribeWindowFunction(const WindowFunction& function,
                                   const std::vector<Column>& input) {
  std::string call = function.Name() + "(";
  if (function.kind == WindowFunctionKind::kAggregate) {
    call += function.aggregate.arg ? ExplainExpression(*function.aggregate.arg, input) : "*";
  }
  call += ")";
  if (function.aggregate.filter) {
    call += " FILTER (WHERE " + ExplainExpression(*function.aggregate.filter, input) + ")";
  }
  call += " OVER (";
  if (!function.partition_keys.empty()) {
    call += "PARTITION BY " + Expressions(function.partition_keys, input);
  }
  std::vector<std::string> keys;
  for (const WindowOrderKey& key : function.order_keys) {
    keys.push_back(ExplainExpression(*key.expr, input) + (key.descending ? " DESC" : "") +
                   (key.nulls_first != key.descending ? " NULLS FIRST" : ""));
  }
  if (!keys.empty()) {
    if (!function.partition_keys.empty()) call += " ";
    call += "ORDER BY " + Join(keys);
  }
  return call + ")";
}

std::string DescribeNode(const PlanNode& node) {
  const std::vector<Column> none;
  const std::vector<Column>& input = node.input ? node.input->output : none;
  switch (node.kind) {
    case PlanNodeKind::kScan: {
      const auto& scan = static_cast<const ScanNode&>(node);
      return fmt::format("Scan {} {}", ObjectTypeName(scan.object->type), scan.object->name);
    }
    case PlanNodeKind::kValues: {
      const auto& values = static_cast<const ValuesNode&>(node);
      if (values.rows.empty()) return "Values: one empty row";
      return fmt::format("Values: {} row{}", values.rows.size(),
                         values.rows.size() == 1 ? "" : "s");
    }
    case PlanNodeKind::kRepeat:
      return fmt::format("Repeat: each row {} times",
                         input[static_cast<const RepeatNode&>(node).count_column].name);
    case PlanNodeKind::kUnnest: {
      const auto& unnest = static_cast<const UnnestNode&>(node);
      return fmt::format("Unnest: {}{}", Expressions(unnest.arrays, input),
                         unnest.with_ordinality ? " WITH ORDINALITY" : "");
    }
    case PlanNodeKind::kFilter:
      return "Filter: " + ExplainExpression(*static_cast<const FilterNode&>(node).predicate, input);
    case PlanNodeKind::kProject: {
      const auto& project = static_cast<const ProjectNode&>(node);
      std::vector<std::string> parts;
      for (size_t i = 0; i < project.expressions.size(); ++i) {
        std::string text = ExplainExpression(*project.expressions[i], input);
        if (text != project.output[i].name) text += " AS " + project.output[i].name;
        parts.push_back(std::move(text));
      }
      return "Project: " + Join(parts);
    }
    case PlanNodeKind::kTimeWindow: {
      const auto& window = static_cast<const TimeWindowNode&>(node);
      const Column& time = input[window.time_column];
      // Lengths as the user wrote them: intervals over timestamps, numbers over bigints.
      auto length = [&](int64_t units) {
        if (!time.type.IsTimestamp()) return std::to_string(units);
        return "'" +
               temporal::FormatInterval(
                   temporal::Interval{0, static_cast<int32_t>(units / temporal::kMicrosPerDay),
                                      units % temporal::kMicrosPerDay}) +
               "'";
      };
      if (window.slide == window.size) {
        return fmt::format("TimeWindow: TUMBLE({}, size {})", time.name, length(window.size));
      }
      return fmt::format("TimeWindow: HOP({}, slide {}, size {})", time.name, length(window.slide),
                         length(window.size));
    }
    case PlanNodeKind::kAggregate: {
      const auto& aggregate = static_cast<const AggregateNode&>(node);
      std::string text = "HashAggregate: " + ExplainGrouping(aggregate);
      if (aggregate.window_close) {
        text += fmt::format(
            "; a group closes when the watermark reaches {} + {}",
            ExplainExpression(*aggregate.group_keys[aggregate.window_close->key], input),
            aggregate.window_close->offset);
      }
      if (aggregate.emit_on_window_close) text += "; emit on window close";
      return text;
    }
    case PlanNodeKind::kSort: {
      const auto& sort = static_cast<const SortNode&>(node);
      std::vector<std::string> keys;
      for (const SortKey& key : sort.keys) {
        keys.push_back(input[key.column].name + (key.descending ? " DESC" : "") +
                       (key.nulls_first != key.descending ? " NULLS FIRST" : ""));
      }
      return "Sort: " + Join(keys);
    }
    case PlanNodeKind::kLimit: {
      const auto& limit = static_cast<const LimitNode&>(node);
      std::string text = limit.limit >= 0 ? fmt::format("Limit: {}", limit.limit) : "Limit: all";
      if (limit.offset > 0) text += fmt::format(" offset {}", limit.offset);
      return text;
    }
    case PlanNodeKind::kUnion:
      return "Union: all rows of both inputs";
    case PlanNodeKind::kTemporalFilter: {
      const auto& filter = static_cast<const TemporalFilterNode&>(node);
      return fmt::format("TemporalFilter: {}; a row leaves when now() {} {} + {}",
                         ExplainExpression(*filter.condition, input),
                         filter.inclusive ? "passes" : "reaches",
                         ExplainExpression(*filter.time, input), filter.offset);
    }
    case PlanNodeKind::kWindow: {
      std::vector<std::string> calls;
      for (const WindowFunction& function : static_cast<const WindowNode&>(node).functions) {
        calls.push_back(DescribeWindowFunction(function, input));
      }
      return "Window: " + Join(calls);
    }
    case PlanNodeKind::kTopN: {
      const auto& top = static_cast<const TopNNode&>(node);
      return fmt::format(
          "TopN: {} <= {}{}", DescribeWindowFunction(top.function, input), top.limit,
          top.append_only_input ? "; append-only input: keeps the top rows only" : "");
    }
    case PlanNodeKind::kJoin: {
      const auto& join = static_cast<const JoinNode&>(node);
      std::vector<std::string> keys;
      for (size_t i = 0; i < join.left_keys.size(); ++i) {
        keys.push_back(ExplainExpression(*join.left_keys[i], input) + " = " +
                       ExplainExpression(*join.right_keys[i], join.right->output));
      }
      std::string text = fmt::format("{} ({})", keys.empty() ? "NestedLoopJoin" : "HashJoin",
                                     JoinTypeName(join.join_type));
      if (join.scalar_subquery) {
        text += ": the scalar subquery's row; when it changes, every row is filtered again";
      } else if (!keys.empty()) {
        text += ": " + Join(keys);
      }
      if (join.residual) {
        std::vector<Column> joined = input;
        joined.insert(joined.end(), join.right->output.begin(), join.right->output.end());
        text += "; condition: " + ExplainExpression(*join.residual, joined);
      }
      std::string cleaning = DescribeJoinStateCleaning(join);
      if (!cleaning.empty()) text += "; state cleaned by watermark: " + cleaning;
      return text;
    }
  }
  return "?";
}

// Writes the plan as a tree. A node several nodes read (a shared subplan, computed once) is
// written whole under its first reader, marked, and as one marked line under the others.
class PlanWriter {
 public:
  explicit PlanWriter(const PlanNode& root) : readers_(CountReaders(root)) {}

  void Write(const PlanNode& node, size_t depth, std::vector<std::string>* lines) {
    std::string indent = depth == 0 ? "" : std::string(depth * 2 - 2, ' ') + "-> ";
    auto readers = readers_.find(&node);
    if (readers == readers_.end() || readers->second < 2) {
      lines->push_back(indent + DescribeNode(node));
    } else if (written_.insert(&node).second) {
      lines->push_back(indent + DescribeNode(node) +
                       fmt::format(" [computed once for {} readers]", readers->second));
    } else {
      lines->push_back(indent + DescribeNode(node) + " [the one above]");
      return;
    }
    if (node.input) Write(*node.input, depth + 1, lines);
    if (const PlanNodePtr* second = SecondInput(node)) Write(**second, depth + 1, lines);
  }

 private:
  std::map<const PlanNode*, size_t> readers_;
  std::set<const PlanNode*> written_;
};

}  // namespace

std::string ExplainExpression(const BoundExpr& expr, const std::vector<Column>& columns) {
  switch (expr.kind) {
    case BoundExpr::Kind::kColumn:
      return expr.column < columns.size() ? columns[expr.column].name
                                          : fmt::format("${}", expr.column);
    case BoundExpr::Kind::kConstant:
      return expr.ToString();
    case BoundExpr::Kind::kOuterColumn:
      return fmt::format("outer.${}", expr.column);
    case BoundExpr::Kind::kSubquery:
      return SubqueryText(expr, expr.args.empty() ? "" : ExplainExpression(*expr.args[0], columns));
    case BoundExpr::Kind::kFunction: {
      std::vector<std::string> args;
      for (const BoundExprPtr& arg : expr.args) args.push_back(ExplainExpression(*arg, columns));
      std::string_view name = ScalarFunctionName(expr.function);
      // Operators (named by their symbol) infix, as they were written.
      bool symbol = !name.empty() && !std::isalpha(static_cast<unsigned char>(name[0]));
      if (args.size() == 2 && (symbol || name == "AND" || name == "OR")) {
        return fmt::format("({} {} {})", args[0], name, args[1]);
      }
      std::string text = fmt::format("{}({})", name, Join(args));
      if (expr.function == ScalarFunction::kCast) text += "::" + expr.type.Name();
      return text;
    }
  }
  return "?";
}

std::string ExplainGrouping(const AggregateNode& aggregate) {
  std::vector<Column> input;
  if (aggregate.input) input = aggregate.input->output;
  std::vector<std::string> calls;
  for (const AggregateCall& call : aggregate.aggregates) {
    std::string text =
        fmt::format("{}({}{})", AggregateKindName(call.kind), call.distinct ? "DISTINCT " : "",
                    call.arg ? ExplainExpression(*call.arg, input) : "*");
    if (call.filter) text += " FILTER (WHERE " + ExplainExpression(*call.filter, input) + ")";
    calls.push_back(std::move(text));
  }
  std::string text;
  if (!aggregate.group_keys.empty()) {
    text += "group by " + Expressions(aggregate.group_keys, input) + "; ";
  }
  return text + Join(calls);
}

std::string ExplainNode(const PlanNode& node) { return DescribeNode(node); }

std::vector<std::string> ExplainPlan(const PlanNode& root) {
  std::vector<std::string> lines;
  PlanWriter(root).Write(root, 0, &lines);
  return lines;
}

}  // namespace stave::planner

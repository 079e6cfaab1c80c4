#include "planner/window_binder.h"

#include <fmt/format.h>

#include "common/sql_error.h"
#include "planner/aggregate_call_binder.h"

namespace stave::planner {

bool ContainsWindowFunction(const parser::Expr& expr) {
  using parser::ExprKind;
  switch (expr.kind) {
    case ExprKind::kFunctionCall: {
      const auto& call = static_cast<const parser::FunctionCallExpr&>(expr);
      if (call.over) return true;
      for (const auto& arg : call.args) {
        if (ContainsWindowFunction(*arg)) return true;
      }
      return false;
    }
    case ExprKind::kUnary:
      return ContainsWindowFunction(*static_cast<const parser::UnaryExpr&>(expr).operand);
    case ExprKind::kBinary: {
      const auto& binary = static_cast<const parser::BinaryExpr&>(expr);
      return ContainsWindowFunction(*binary.left) || ContainsWindowFunction(*binary.right);
    }
    case ExprKind::kCase: {
      const auto& case_expr = static_cast<const parser::CaseExpr&>(expr);
      if (case_expr.operand && ContainsWindowFunction(*case_expr.operand)) return true;
      for (const auto& [when, then] : case_expr.when_then) {
        if (ContainsWindowFunction(*when) || ContainsWindowFunction(*then)) return true;
      }
      return case_expr.else_result && ContainsWindowFunction(*case_expr.else_result);
    }
    case ExprKind::kCast:
      return ContainsWindowFunction(*static_cast<const parser::CastExpr&>(expr).operand);
    case ExprKind::kIsNull:
      return ContainsWindowFunction(*static_cast<const parser::IsNullExpr&>(expr).operand);
    case ExprKind::kBetween: {
      const auto& between = static_cast<const parser::BetweenExpr&>(expr);
      return ContainsWindowFunction(*between.operand) || ContainsWindowFunction(*between.lower) ||
             ContainsWindowFunction(*between.upper);
    }
    case ExprKind::kInList: {
      const auto& in = static_cast<const parser::InListExpr&>(expr);
      if (ContainsWindowFunction(*in.operand)) return true;
      for (const auto& item : in.list) {
        if (ContainsWindowFunction(*item)) return true;
      }
      return false;
    }
    case ExprKind::kLike: {
      const auto& like = static_cast<const parser::LikeExpr&>(expr);
      return ContainsWindowFunction(*like.operand) || ContainsWindowFunction(*like.pattern);
    }
    default:
      return false;
  }
}

void RefuseWindowFunctionInGroupedQuery(const parser::FunctionCallExpr& call) {
  throw SqlError(sqlstate::kFeatureNotSupported,
                 "window functions in a query with GROUP BY or aggregates are not supported yet",
                 call.position)
      .WithHint("Compute the aggregates in a subquery in FROM and the window function over it.");
}

std::optional<BoundExprPtr> WindowExpressionBinder::Intercept(const parser::Expr& expr) {
  if (expr.kind != parser::ExprKind::kFunctionCall) return std::nullopt;
  const auto& call = static_cast<const parser::FunctionCallExpr&>(expr);
  if (unnests_ && IsSetReturningFunction(call.name)) return unnests_->Bind(call, this);
  if (!call.over) return std::nullopt;
  return BindWindowFunction(call);
}

BoundExprPtr WindowExpressionBinder::BindWindowFunction(const parser::FunctionCallExpr& call) {
  std::string name = call.name.back();
  WindowFunction function;
  if (IsWindowOnlyFunction(call.name)) {
    if (!call.args.empty() || call.star || call.distinct) {
      throw SqlError(
          sqlstate::kUndefinedFunction,
          fmt::format("function {} with {} argument(s) does not exist", name, call.args.size()),
          call.position)
          .WithHint("No function matches the given name and argument types.");
    }
    if (call.filter) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "FILTER is not implemented for non-aggregate window functions", call.position);
    }
    function.kind = name == "row_number" ? WindowFunctionKind::kRowNumber
                    : name == "rank"     ? WindowFunctionKind::kRank
                                         : WindowFunctionKind::kDenseRank;
    function.result_type = TypeId::kInt64;
  } else if (IsAggregateFunction(call.name)) {
    if (call.distinct) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "DISTINCT is not implemented for window functions", call.position);
    }
    for (const auto& arg : call.args) {
      if (ContainsWindowFunction(*arg)) {
        throw SqlError("42P20", "window function calls cannot be nested", arg->position);
      }
    }
    function.kind = WindowFunctionKind::kAggregate;
    function.aggregate = BindAggregateCall(call, scope_);
    function.result_type = function.aggregate.result_type;
  } else {
    throw SqlError("42809",
                   fmt::format("OVER specified, but {} is not a window function nor an aggregate "
                               "function",
                               name),
                   call.position);
  }
  // Partition and order are over the input rows; a window call inside them is refused by
  // the plain binder (42P20).
  ExpressionBinder input_binder(scope_);
  for (const parser::ExprPtr& key : call.over->partition_by) {
    function.partition_keys.push_back(input_binder.Bind(*key));
  }
  for (const parser::OrderItem& order : call.over->order_by) {
    WindowOrderKey key;
    key.expr = input_binder.Bind(*order.expr);
    key.descending = order.descending;
    key.nulls_first = order.nulls_first.value_or(order.descending);
    function.order_keys.push_back(std::move(key));
  }
  functions_->push_back(std::move(function));
  return BoundExpr::MakeColumn(input_width_ + functions_->size() - 1,
                               functions_->back().result_type);
}

std::string WindowFunction::Name() const {
  switch (kind) {
    case WindowFunctionKind::kRowNumber:
      return "row_number";
    case WindowFunctionKind::kRank:
      return "rank";
    case WindowFunctionKind::kDenseRank:
      return "dense_rank";
    case WindowFunctionKind::kAggregate:
      return std::string(AggregateKindName(aggregate.kind));
  }
  return "?";
}

PlanNodePtr MakeWindowNode(PlanNodePtr input, std::vector<WindowFunction> functions,
                           bool append_only_input) {
  if (functions.empty()) return input;
  auto window = std::make_shared<WindowNode>();
  window->append_only_input = append_only_input;
  window->output = input->output;
  for (const WindowFunction& function : functions) {
    window->output.push_back({function.Name(), function.result_type});
  }
  window->functions = std::move(functions);
  window->input = std::move(input);
  return window;
}

PlanNodePtr MakeDistinctOn(PlanNodePtr input, const std::vector<size_t>& distinct_on,
                           const std::vector<SortKey>& order, bool append_only_input) {
  auto top = std::make_shared<TopNNode>();
  top->append_only_input = append_only_input;
  top->function.kind = WindowFunctionKind::kRowNumber;
  for (size_t column : distinct_on) {
    top->function.partition_keys.push_back(
        BoundExpr::MakeColumn(column, input->output[column].type));
  }
  for (const SortKey& key : order) {
    top->function.order_keys.push_back(
        {BoundExpr::MakeColumn(key.column, input->output[key.column].type), key.descending,
         key.nulls_first});
  }
  top->limit = 1;
  top->output = input->output;
  top->output.push_back({"_row_number", TypeId::kInt64});
  top->input = std::move(input);
  return top;
}

}  // namespace stave::planner

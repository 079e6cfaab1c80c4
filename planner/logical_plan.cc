#include "planner/logical_plan.h"

namespace stave::planner {
namespace {

template <typename Node>
std::shared_ptr<Node> CopyOf(const PlanNode& node) {
  return std::make_shared<Node>(static_cast<const Node&>(node));
}

}  // namespace

PlanNodePtr WithInputs(const PlanNode& node, PlanNodePtr input, PlanNodePtr second) {
  std::shared_ptr<PlanNode> copy;
  switch (node.kind) {
    case PlanNodeKind::kScan:
      copy = CopyOf<ScanNode>(node);
      break;
    case PlanNodeKind::kValues:
      copy = CopyOf<ValuesNode>(node);
      break;
    case PlanNodeKind::kFilter:
      copy = CopyOf<FilterNode>(node);
      break;
    case PlanNodeKind::kProject:
      copy = CopyOf<ProjectNode>(node);
      break;
    case PlanNodeKind::kTimeWindow:
      copy = CopyOf<TimeWindowNode>(node);
      break;
    case PlanNodeKind::kAggregate:
      copy = CopyOf<AggregateNode>(node);
      break;
    case PlanNodeKind::kSort:
      copy = CopyOf<SortNode>(node);
      break;
    case PlanNodeKind::kLimit:
      copy = CopyOf<LimitNode>(node);
      break;
    case PlanNodeKind::kWindow:
      copy = CopyOf<WindowNode>(node);
      break;
    case PlanNodeKind::kTopN:
      copy = CopyOf<TopNNode>(node);
      break;
    case PlanNodeKind::kTemporalFilter:
      copy = CopyOf<TemporalFilterNode>(node);
      break;
    case PlanNodeKind::kRepeat:
      copy = CopyOf<RepeatNode>(node);
      break;
    case PlanNodeKind::kUnnest:
      copy = CopyOf<UnnestNode>(node);
      break;
    case PlanNodeKind::kJoin: {
      auto join = CopyOf<JoinNode>(node);
      join->right = std::move(second);
      copy = join;
      break;
    }
    case PlanNodeKind::kUnion: {
      auto union_node = CopyOf<UnionNode>(node);
      union_node->right = std::move(second);
      copy = union_node;
      break;
    }
  }
  copy->input = std::move(input);
  return copy;
}

}  // namespace stave::planner

#include "planner/growing_join_sides.h"

#include <map>
#include <memory>

#include "planner/catalog.h"

namespace stave::planner {

bool OnlyGrows(const PlanNode& node) {
  switch (node.kind) {
    case PlanNodeKind::kScan: {
      const auto& scan = static_cast<const ScanNode&>(node);
      return scan.object && !scan.system_rows && !scan.object->Retracting();
    }
    case PlanNodeKind::kFilter:
    case PlanNodeKind::kProject:
    case PlanNodeKind::kTimeWindow:
    case PlanNodeKind::kUnnest:
      return OnlyGrows(*node.input);
    case PlanNodeKind::kUnion:
      return OnlyGrows(*node.input) && OnlyGrows(*static_cast<const UnionNode&>(node).right);
    case PlanNodeKind::kJoin: {
      // An outer join retracts a padded row once it meets a match.
      const auto& join = static_cast<const JoinNode&>(node);
      return join.join_type == JoinType::kInner && !join.scalar_subquery &&
             OnlyGrows(*join.input) && OnlyGrows(*join.right);
    }
    case PlanNodeKind::kAggregate:
      // Each closed window's rows, inserted once and final.
      return static_cast<const AggregateNode&>(node).emit_on_window_close && OnlyGrows(*node.input);
    default:
      return false;
  }
}

namespace {

class Marker {
 public:
  PlanNodePtr Mark(const PlanNodePtr& node) {
    if (!node) return node;
    if (auto it = done_.find(node.get()); it != done_.end()) return it->second;
    const PlanNodePtr* second = SecondInput(*node);
    PlanNodePtr input = Mark(node->input);
    PlanNodePtr second_input = second ? Mark(*second) : nullptr;
    PlanNodePtr result = node;
    if (node->kind == PlanNodeKind::kJoin) {
      auto join = std::make_shared<JoinNode>(static_cast<const JoinNode&>(*node));
      join->input = input;
      join->right = second_input;
      join->appends[0] = !join->scalar_subquery && OnlyGrows(*join->input);
      join->appends[1] = !join->scalar_subquery && OnlyGrows(*join->right);
      result = join;
    } else if (input != node->input || (second && second_input != *second)) {
      result = WithInputs(*node, input, second_input);
    }
    done_.emplace(node.get(), result);
    return result;
  }

 private:
  std::map<const PlanNode*, PlanNodePtr> done_;  // Each node once: shared subplans stay so.
};

}  // namespace

PlanNodePtr MarkGrowingJoinSides(const PlanNodePtr& root) { return Marker().Mark(root); }

}  // namespace stave::planner

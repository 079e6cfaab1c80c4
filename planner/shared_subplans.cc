#include "planner/shared_subplans.h"

#include <fmt/format.h>

#include <map>
#include <string>
#include <utility>

namespace stave::planner {
namespace {

// A text that two nodes share only if they compute the same rows from the same inputs: the
// node's own fields, its output columns, and the identities of its (already shared)
// inputs. Empty for a node this pass does not compare.
std::string NodeText(const PlanNode& node, const std::map<const PlanNode*, size_t>& ids) {
  std::string text;
  switch (node.kind) {
    case PlanNodeKind::kScan: {
      const auto& scan = static_cast<const ScanNode&>(node);
      if (!scan.object || scan.system_rows) return "";
      text = fmt::format("scan {}", scan.object->id);
      for (bool read : scan.read_columns) text += read ? " r" : " -";
      break;
    }
    case PlanNodeKind::kFilter:
      text = "filter " + static_cast<const FilterNode&>(node).predicate->ToString();
      break;
    case PlanNodeKind::kProject:
      text = "project";
      for (const BoundExprPtr& expression : static_cast<const ProjectNode&>(node).expressions) {
        text += " " + expression->ToString();
      }
      break;
    case PlanNodeKind::kTimeWindow: {
      const auto& window = static_cast<const TimeWindowNode&>(node);
      text = fmt::format("window {} {} {} {} {}", window.time_column, window.visible_columns,
                         window.slide, window.size, window.origin);
      break;
    }
    case PlanNodeKind::kAggregate: {
      const auto& aggregate = static_cast<const AggregateNode&>(node);
      text = "aggregate";
      for (const BoundExprPtr& key : aggregate.group_keys) text += " " + key->ToString();
      for (const AggregateCall& call : aggregate.aggregates) {
        text +=
            fmt::format(" {} {} {}", call.ToString(), call.result_type.Name(), call.keeps_values);
      }
      if (aggregate.window_close) {
        text += fmt::format(" close {} {}", aggregate.window_close->key,
                            aggregate.window_close->offset);
      }
      if (aggregate.emit_on_window_close) text += " eowc";
      break;
    }
    default:
      return "";
  }
  text += " ->";
  for (const Column& column : node.output) {
    text += fmt::format(" {}:{}:{}", column.name, column.type.Name(), column.not_null);
  }
  if (node.input) {
    auto it = ids.find(node.input.get());
    if (it == ids.end()) return "";
    text += fmt::format(" <- {}", it->second);
  }
  return text;
}

class Sharer {
 public:
  // The node `node` stands for: the first stateful node met of its text, or `node` with its
  // inputs replaced by their stand-ins.
  PlanNodePtr Share(const PlanNodePtr& node) {
    if (!node) return node;
    if (auto it = done_.find(node.get()); it != done_.end()) return it->second;
    PlanNodePtr result = WithSharedInputs(node);
    std::string text = NodeText(*result, classes_);
    size_t identity = next_class_;
    if (!text.empty()) {
      auto [it, inserted] = first_of_text_.try_emplace(text, First{result, next_class_});
      identity = it->second.identity;
      if (!inserted && Stateful(*it->second.node)) result = it->second.node;
    }
    if (identity == next_class_) ++next_class_;
    classes_.try_emplace(result.get(), identity);
    done_[node.get()] = result;
    return result;
  }

 private:
  struct First {
    PlanNodePtr node;
    size_t identity = 0;  // Equal for nodes of equal texts, shared or not.
  };

  PlanNodePtr WithSharedInputs(const PlanNodePtr& node) {
    PlanNodePtr input = Share(node->input);
    const PlanNodePtr* second = SecondInput(*node);
    PlanNodePtr right = second ? Share(*second) : nullptr;
    if (input == node->input && (!second || right == *second)) return node;
    return WithInputs(*node, std::move(input), std::move(right));
  }

  // Whether the subplan under `node` holds state: only such subplans are shared. (The
  // kinds NodeText compares have one input.)
  static bool Stateful(const PlanNode& node) {
    for (const PlanNode* each = &node; each; each = each->input.get()) {
      if (each->kind == PlanNodeKind::kAggregate) return true;
    }
    return false;
  }

  std::map<const PlanNode*, PlanNodePtr> done_;  // Each node met: its stand-in.
  std::map<std::string, First> first_of_text_;
  std::map<const PlanNode*, size_t> classes_;  // Each stand-in: its identity.
  size_t next_class_ = 0;
};

}  // namespace

PlanNodePtr ShareIdenticalSubplans(const PlanNodePtr& root) { return Sharer().Share(root); }

std::map<const PlanNode*, size_t> CountReaders(const PlanNode& root) {
  std::map<const PlanNode*, size_t> readers;
  auto count = [&](const PlanNode& node, auto& self) -> void {
    auto read = [&](const PlanNode* input) {
      if (input && readers[input]++ == 0) self(*input, self);
    };
    read(node.input.get());
    if (const PlanNodePtr* second = SecondInput(node)) read(second->get());
  };
  count(root, count);
  return readers;
}

}  // namespace stave::planner

#include "planner/view_row_key.h"

#include <string>

namespace stave::planner {

std::vector<size_t> VisibleRowKeyColumns(const BoundQuery& query) {
  // A keyless view numbers its rows; a multiset view keys them by their whole content.
  if (!query.keyed || query.key_columns.empty() || query.root == nullptr ||
      query.root->kind != PlanNodeKind::kProject) {
    return {};
  }
  const auto& expressions = static_cast<const ProjectNode&>(*query.root).expressions;
  std::vector<size_t> visible;
  for (size_t key : query.key_columns) {
    if (key < query.visible_columns) {
      visible.push_back(key);
      continue;
    }
    if (key >= expressions.size()) return {};
    std::string wanted = expressions[key]->ToString();
    size_t found = query.visible_columns;
    for (size_t i = 0; i < query.visible_columns && i < expressions.size(); ++i) {
      if (expressions[i]->type == expressions[key]->type && expressions[i]->ToString() == wanted) {
        found = i;
        break;
      }
    }
    if (found == query.visible_columns) return {};
    visible.push_back(found);
  }
  return visible;
}

}  // namespace stave::planner

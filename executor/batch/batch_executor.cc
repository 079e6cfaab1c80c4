#include "executor/batch/batch_executor.h"

#include <algorithm>
#include <unordered_map>

#include "common/sql_error.h"
#include "executor/aggregate_state.h"
#include "executor/chunk.h"
#include "executor/expression_evaluator.h"
#include "executor/operators/filter_operator.h"
#include "executor/operators/project_operator.h"
#include "executor/plan_builder.h"
#include "storage/key_codec.h"
#include "storage/row_codec.h"

namespace stave::executor {
namespace {

std::vector<DataType> TypesOf(const std::vector<planner::Column>& columns) {
  std::vector<DataType> types;
  for (const auto& column : columns) types.push_back(column.type);
  return types;
}

std::vector<Chunk> Run(const planner::PlanNode& node, const storage::Snapshot& snapshot);

std::vector<Chunk> Scan(const planner::ScanNode& scan, const storage::Snapshot& snapshot) {
  std::vector<DataType> types = TypesOf(scan.output);
  if (scan.system_rows) {
    Chunk chunk = Chunk::WithTypes(types);
    for (const auto& row : *scan.system_rows) chunk.AppendRow(row, RowOp::kInsert);
    std::vector<Chunk> chunks;
    if (!chunk.empty()) chunks.push_back(std::move(chunk));
    return chunks;
  }
  std::vector<DataType> visible = TypesOf(scan.object->columns);
  // Rows decode straight into the chunk's columns: a Value per field would cost more than
  // reading the row.
  struct ToColumns {
    Chunk* chunk;
    void Null(size_t i) { chunk->columns[i].AppendNull(); }
    void Int(size_t i, int64_t value) { chunk->columns[i].AppendInt(value); }
    void Double(size_t i, double value) { chunk->columns[i].AppendDouble(value); }
    void String(size_t i, std::string_view value) {
      chunk->columns[i].AppendString(std::string(value));
    }
  };
  bool has_row_id = scan.object->HasRowId();
  bool has_row_key = scan.object->type == planner::ObjectType::kMaterializedView;
  std::vector<Chunk> chunks;
  Chunk current = Chunk::WithTypes(types);
  ToColumns to_columns{&current};
  bool corrupt = false;
  auto visit = [&](std::string_view key, std::string_view value) {
    if (!storage::VisitRow(value, visible, to_columns)) {
      corrupt = true;
      return false;
    }
    std::string_view rest = key.substr(2);  // After the virtual node.
    if (has_row_id) {
      // A keyless table's hidden row id is its key.
      Value row_id;
      storage::DecodeKeyValue(&rest, TypeId::kInt64, &row_id);
      current.columns[visible.size()].AppendValue(row_id);
    }
    if (has_row_key) current.columns[visible.size()].AppendString(std::string(rest));
    current.ops.push_back(RowOp::kInsert);
    if (current.size() == kChunkRows) {
      chunks.push_back(std::move(current));
      current = Chunk::WithTypes(types);
    }
    return true;
  };
  Status status = snapshot.ScanStateTable(StateTableId(scan.object->id, kViewRowsSlot), visit);
  status.ThrowIfError();
  if (corrupt) throw SqlError("XX001", "corrupt row in \"" + scan.object->name + "\"");
  if (!current.empty()) chunks.push_back(std::move(current));
  return chunks;
}

std::vector<Chunk> Aggregate(const planner::AggregateNode& node, std::vector<Chunk> input) {
  std::vector<DataType> key_types;
  for (const auto& key : node.group_keys) key_types.push_back(key->type);
  // Groups in first-seen order, found by their memcomparable key.
  std::unordered_map<std::string, size_t> index;
  std::vector<std::vector<Value>> keys;
  std::vector<GroupState> states;
  auto new_group = [&](std::vector<Value> key_values) {
    keys.push_back(std::move(key_values));
    states.push_back(GroupState{0, std::vector<AggregateState>(node.aggregates.size())});
    return states.size() - 1;
  };
  if (node.group_keys.empty()) index.emplace("", new_group({}));
  std::string key;
  for (const Chunk& chunk : input) {
    std::vector<Column> key_columns;
    for (const auto& expr : node.group_keys) key_columns.push_back(Evaluate(*expr, chunk));
    std::vector<std::optional<Column>> args;
    for (const auto& call : node.aggregates) {
      args.push_back(call.arg ? std::optional<Column>(Evaluate(*call.arg, chunk)) : std::nullopt);
    }
    for (size_t row = 0; row < chunk.size(); ++row) {
      key.clear();
      for (size_t k = 0; k < key_columns.size(); ++k) {
        storage::EncodeKeyValue(key_columns[k].GetValue(row), key_types[k], &key);
      }
      size_t group;
      auto it = index.find(key);
      if (it != index.end()) {
        group = it->second;
      } else {
        std::vector<Value> key_values;
        for (const Column& column : key_columns) key_values.push_back(column.GetValue(row));
        group = new_group(std::move(key_values));
        index.emplace(key, group);
      }
      states[group].row_count++;
      for (size_t a = 0; a < node.aggregates.size(); ++a) {
        Accumulate(node.aggregates[a], &states[group].aggregates[a], args[a] ? &*args[a] : nullptr,
                   row, 1);
      }
    }
  }
  std::vector<Chunk> output;
  Chunk current = Chunk::WithTypes(TypesOf(node.output));
  for (size_t g = 0; g < states.size(); ++g) {
    std::vector<Value> row = keys[g];
    for (size_t a = 0; a < node.aggregates.size(); ++a) {
      row.push_back(AggregateResult(node.aggregates[a], states[g].aggregates[a]));
    }
    current.AppendRow(row, RowOp::kInsert);
    if (current.size() == kChunkRows) {
      output.push_back(std::move(current));
      current = Chunk::WithTypes(TypesOf(node.output));
    }
  }
  if (!current.empty()) output.push_back(std::move(current));
  return output;
}

std::vector<Chunk> Sort(const planner::SortNode& node, std::vector<Chunk> input) {
  std::vector<std::vector<Value>> rows;
  for (const Chunk& chunk : input) {
    for (size_t r = 0; r < chunk.size(); ++r) rows.push_back(chunk.GetRow(r));
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
    for (const planner::SortKey& key : node.keys) {
      const Value& x = a[key.column];
      const Value& y = b[key.column];
      if (x.is_null() || y.is_null()) {
        if (x.is_null() && y.is_null()) continue;
        return x.is_null() == key.nulls_first;
      }
      int c = CompareValues(x, y);
      if (c != 0) return key.descending ? c > 0 : c < 0;
    }
    return false;
  });
  Chunk out = Chunk::WithTypes(TypesOf(node.output));
  for (const auto& row : rows) out.AppendRow(row, RowOp::kInsert);
  std::vector<Chunk> output;
  if (!out.empty()) output.push_back(std::move(out));
  return output;
}

std::vector<Chunk> Limit(const planner::LimitNode& node, std::vector<Chunk> input) {
  std::vector<Chunk> output;
  int64_t skip = node.offset;
  int64_t remaining = node.limit < 0 ? INT64_MAX : node.limit;
  for (Chunk& chunk : input) {
    if (remaining == 0) break;
    std::vector<uint8_t> keep(chunk.size(), 0);
    for (size_t r = 0; r < chunk.size() && remaining > 0; ++r) {
      if (skip > 0) {
        --skip;
        continue;
      }
      keep[r] = 1;
      --remaining;
    }
    Chunk selected = chunk.Select(keep);
    if (!selected.empty()) output.push_back(std::move(selected));
  }
  return output;
}

std::vector<Chunk> Run(const planner::PlanNode& node, const storage::Snapshot& snapshot) {
  switch (node.kind) {
    case planner::PlanNodeKind::kScan:
      return Scan(static_cast<const planner::ScanNode&>(node), snapshot);
    case planner::PlanNodeKind::kValues: {
      Chunk one;
      one.ops.push_back(RowOp::kInsert);
      std::vector<Chunk> chunks;
      chunks.push_back(std::move(one));
      return chunks;
    }
    case planner::PlanNodeKind::kFilter: {
      const auto& filter = static_cast<const planner::FilterNode&>(node);
      std::vector<Chunk> output;
      for (Chunk& chunk : Run(*node.input, snapshot)) {
        Chunk kept = FilterOperator::Apply(*filter.predicate, std::move(chunk));
        if (!kept.empty()) output.push_back(std::move(kept));
      }
      return output;
    }
    case planner::PlanNodeKind::kProject: {
      const auto& project = static_cast<const planner::ProjectNode&>(node);
      std::vector<Chunk> output;
      for (Chunk& chunk : Run(*node.input, snapshot)) {
        output.push_back(ProjectOperator::Apply(project.expressions, std::move(chunk)));
      }
      return output;
    }
    case planner::PlanNodeKind::kAggregate:
      return Aggregate(static_cast<const planner::AggregateNode&>(node),
                       Run(*node.input, snapshot));
    case planner::PlanNodeKind::kSort:
      return Sort(static_cast<const planner::SortNode&>(node), Run(*node.input, snapshot));
    case planner::PlanNodeKind::kLimit:
      return Limit(static_cast<const planner::LimitNode&>(node), Run(*node.input, snapshot));
  }
  throw SqlError(sqlstate::kInternalError, "unknown plan node");
}

}  // namespace

QueryResult ExecuteBatchQuery(const planner::BoundQuery& query, const storage::Snapshot& snapshot) {
  QueryResult result;
  result.returns_rows = true;
  for (size_t i = 0; i < query.visible_columns; ++i) {
    result.columns.push_back({query.root->output[i].name, query.root->output[i].type});
  }
  for (const Chunk& chunk : Run(*query.root, snapshot)) {
    for (size_t r = 0; r < chunk.size(); ++r) {
      std::vector<Value> row;
      row.reserve(query.visible_columns);
      for (size_t c = 0; c < query.visible_columns; ++c)
        row.push_back(chunk.columns[c].GetValue(r));
      result.rows.push_back(std::move(row));
    }
  }
  result.command_tag = "SELECT " + std::to_string(result.rows.size());
  return result;
}

}  // namespace stave::executor

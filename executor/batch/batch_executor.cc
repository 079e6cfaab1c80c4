#include "executor/batch/batch_executor.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "common/cancellation.h"
#include "common/sql_error.h"
#include "executor/aggregate_state.h"
#include "executor/batch/query_memory.h"
#include "executor/chunk.h"
#include "executor/connectors/values/values_source.h"
#include "executor/expression_evaluator.h"
#include "executor/operators/filter_operator.h"
#include "executor/operators/project_operator.h"
#include "executor/operators/repeat_operator.h"
#include "executor/operators/time_window_operator.h"
#include "executor/operators/unnest_operator.h"
#include "executor/plan_builder.h"
#include "executor/subquery_evaluation.h"
#include "executor/window_order.h"
#include "storage/key_codec.h"
#include "storage/row_codec.h"
#include "storage/state_table.h"

namespace stave::executor {
namespace {

std::vector<DataType> TypesOf(const std::vector<planner::Column>& columns) {
  std::vector<DataType> types;
  for (const auto& column : columns) types.push_back(column.type);
  return types;
}

/// What every operator of one query shares: the snapshot it reads, the client's request
/// to stop it (checked between chunks, so a cancel or a statement timeout takes effect within
/// a chunk's work), and the query's memory budget.
///
/// Memory: every node's output is charged while it is held (from when the node returns it
/// until its consumer returns), and operators charge what they build besides (hash tables,
/// sorted rows, groups) with a MemoryReservation. `held_by_inputs` is the bookkeeping of the
/// first: the bytes of the outputs the running node's inputs returned.
struct BatchContext {
  const storage::Snapshot& snapshot;
  const Cancellation* cancellation;
  QueryMemory* memory;
  mutable size_t held_by_inputs = 0;
  // The most rows the consumer of the node about to run will read (a LIMIT above it, through
  // nodes that keep every row): a scan or series may stop there. Each node takes it on entry.
  mutable uint64_t rows_wanted = UINT64_MAX;
  // Likewise, which of that node's output columns its consumer reads (1), or empty for all:
  // a scan leaves the others NULL instead of copying them out of the row.
  mutable std::vector<uint8_t> columns_wanted;

  void ThrowIfCancelled() const { ::stave::ThrowIfCancelled(cancellation); }
};

std::vector<Chunk> Run(const planner::PlanNode& node, const BatchContext& context);

// Appends `chunk` to `chunks` (an operator's output being built), charging it.
void Emit(Chunk chunk, std::vector<Chunk>* chunks, MemoryReservation* reservation) {
  reservation->Grow(ChunkBytes(chunk));
  chunks->push_back(std::move(chunk));
}

// Marks in `wanted` (one flag per column of the input) the columns `expr` reads. False if it
// holds a subquery, whose correlated references to the row are not visible here.
bool MarkColumns(const planner::BoundExpr& expr, std::vector<uint8_t>* wanted) {
  if (expr.kind == planner::BoundExpr::Kind::kSubquery) return false;
  if (expr.kind == planner::BoundExpr::Kind::kColumn && expr.column < wanted->size()) {
    (*wanted)[expr.column] = 1;
  }
  for (const planner::BoundExprPtr& arg : expr.args) {
    if (!MarkColumns(*arg, wanted)) return false;
  }
  return true;
}

// Reads the rows of `scan`: all of them (at most `rows_wanted`; of the columns in
// `columns_wanted`, if not empty, the others NULL), or only `only_row` (a key and value as
// ScanStateTable shows them) when a point lookup found it.
std::vector<Chunk> Scan(const planner::ScanNode& scan, const BatchContext& context,
                        uint64_t rows_wanted, const std::vector<uint8_t>& columns_wanted = {},
                        const std::pair<std::string, std::string>* only_row = nullptr) {
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
    const std::vector<uint8_t>& wanted;
    bool Skips(size_t i) {
      if (wanted.empty() || wanted[i]) return false;
      chunk->columns[i].AppendNull();
      return true;
    }
    void Null(size_t i) { chunk->columns[i].AppendNull(); }
    void Int(size_t i, int64_t value) {
      if (!Skips(i)) chunk->columns[i].AppendInt(value);
    }
    void Double(size_t i, double value) {
      if (!Skips(i)) chunk->columns[i].AppendDouble(value);
    }
    void String(size_t i, std::string_view value) {
      if (!Skips(i)) chunk->columns[i].AppendString(std::string(value));
    }
    void Numeric(size_t i, const Decimal& value) {
      if (!Skips(i)) chunk->columns[i].AppendDecimal(value);
    }
  };
  bool has_row_id = scan.object->HasRowId();
  bool has_row_key = scan.object->type == planner::ObjectType::kMaterializedView;
  // Released when the scan returns: Run charges its output as a whole then.
  MemoryReservation reservation(context.memory);
  std::vector<Chunk> chunks;
  Chunk current = Chunk::WithTypes(types);
  ToColumns to_columns{&current, columns_wanted};
  bool corrupt = false;
  uint64_t rows = 0;
  auto visit = [&](std::string_view key, std::string_view value) {
    if (rows++ == rows_wanted) return false;
    // A view's rows may carry bytes past the row (a grouped view's aggregate state).
    std::string_view rest = value;
    if (!storage::VisitRowPrefix(&rest, visible, to_columns) || (!has_row_key && !rest.empty())) {
      corrupt = true;
      return false;
    }
    rest = key.substr(2);  // After the virtual node.
    if (has_row_id) {
      // A keyless table's hidden row id is its key.
      Value row_id;
      storage::DecodeKeyValue(&rest, TypeId::kInt64, &row_id);
      current.columns[visible.size()].AppendValue(row_id);
    }
    if (has_row_key) current.columns[visible.size()].AppendString(std::string(rest));
    current.ops.push_back(RowOp::kInsert);
    if (current.size() == kChunkRows) {
      Emit(std::move(current), &chunks, &reservation);
      current = Chunk::WithTypes(types);
      context.ThrowIfCancelled();
    }
    return true;
  };
  if (only_row != nullptr) {
    visit(only_row->first, only_row->second);
  } else {
    Status status =
        context.snapshot.ScanStateTable(StateTableId(scan.object->id, kViewRowsSlot), visit);
    status.ThrowIfError();
  }
  if (corrupt) throw SqlError("XX001", "corrupt row in \"" + scan.object->name + "\"");
  if (!current.empty()) chunks.push_back(std::move(current));
  return chunks;
}

// The value that `conjunct` requires `column` to equal, when it is `column = constant` (either
// way round) with a constant of the column's own type, as its key is encoded in.
const Value* RequiredValue(const planner::BoundExpr& conjunct, size_t column,
                           const DataType& type) {
  if (conjunct.kind != planner::BoundExpr::Kind::kFunction ||
      conjunct.function != planner::ScalarFunction::kEqual || conjunct.args.size() != 2) {
    return nullptr;
  }
  for (size_t side = 0; side < 2; ++side) {
    const planner::BoundExpr& left = *conjunct.args[side];
    const planner::BoundExpr& right = *conjunct.args[1 - side];
    if (left.kind == planner::BoundExpr::Kind::kColumn && left.column == column &&
        right.kind == planner::BoundExpr::Kind::kConstant && right.type == type &&
        left.type == type) {
      return &right.constant;
    }
  }
  return nullptr;
}

// `WHERE key = value` straight over a table with a primary key or a keyed view: the one row
// is read by its key instead of scanning them all. nullopt when the filter does not fix
// every key column. The filter still runs over what is found.
std::optional<std::vector<Chunk>> PointLookup(const planner::FilterNode& filter,
                                              const BatchContext& context) {
  if (filter.input == nullptr || filter.input->kind != planner::PlanNodeKind::kScan) {
    return std::nullopt;
  }
  const auto& scan = static_cast<const planner::ScanNode&>(*filter.input);
  if (scan.system_rows || scan.object == nullptr) return std::nullopt;
  const planner::CatalogObject& object = *scan.object;
  const std::vector<size_t>& key_columns =
      object.type == planner::ObjectType::kMaterializedView ? object.row_key_columns
      : object.type == planner::ObjectType::kTable          ? object.primary_key
                                                            : std::vector<size_t>{};
  if (key_columns.empty()) return std::nullopt;
  std::vector<planner::BoundExprPtr> conjuncts;
  planner::SplitConjuncts(filter.predicate, &conjuncts);
  std::string key;
  for (size_t column : key_columns) {
    const Value* value = nullptr;
    for (const planner::BoundExprPtr& conjunct : conjuncts) {
      value = RequiredValue(*conjunct, column, object.columns[column].type);
      if (value != nullptr) break;
    }
    if (value == nullptr) return std::nullopt;
    if (value->is_null()) return std::vector<Chunk>{};  // `= NULL` holds for no row.
    storage::EncodeKeyValue(*value, object.columns[column].type, &key);
  }
  std::pair<std::string, std::string> row;
  storage::AppendBigEndian16(storage::VirtualNodeOf(key), &row.first);
  row.first += key;
  std::optional<std::string> value =
      context.snapshot.GetStateTableRow(StateTableId(object.id, kViewRowsSlot), row.first)
          .ValueOrThrow();
  if (!value) return std::vector<Chunk>{};
  row.second = std::move(*value);
  return Scan(scan, context, UINT64_MAX, {}, &row);
}

std::vector<Chunk> Aggregate(const planner::AggregateNode& node, std::vector<Chunk> input,
                             const BatchContext& context) {
  std::vector<DataType> key_types;
  for (const auto& key : node.group_keys) key_types.push_back(key->type);
  // Groups in first-seen order, found by their memcomparable key.
  std::unordered_map<std::string, size_t> index;
  std::vector<std::vector<Value>> keys;
  std::vector<GroupState> states;
  MemoryReservation reservation(context.memory);
  // A group: its key twice (the index's and the values), its states and the hash node.
  size_t group_bytes = sizeof(GroupState) + node.aggregates.size() * sizeof(AggregateState) +
                       sizeof(std::pair<const std::string, size_t>) + 4 * sizeof(void*);
  auto new_group = [&](std::vector<Value> key_values) {
    reservation.Grow(group_bytes + 2 * RowBytes(key_values, key_types));
    keys.push_back(std::move(key_values));
    states.push_back(GroupState{0, std::vector<AggregateState>(node.aggregates.size()), {}});
    return states.size() - 1;
  };
  if (node.group_keys.empty()) index.emplace("", new_group({}));
  std::string key;
  for (const Chunk& chunk : input) {
    context.ThrowIfCancelled();
    std::vector<Column> key_columns;
    for (const auto& expr : node.group_keys) key_columns.push_back(Evaluate(*expr, chunk));
    std::vector<AggregateInput> inputs;
    for (const auto& call : node.aggregates) inputs.push_back(EvaluateAggregateInput(call, chunk));
    for (size_t row = 0; row < chunk.size(); ++row) {
      key.clear();
      for (size_t k = 0; k < key_columns.size(); ++k) {
        key_columns[k].AppendKey(row, &key);
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
        Accumulate(node.aggregates[a], &states[group].aggregates[a], inputs[a], row, 1);
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
      Emit(std::move(current), &output, &reservation);
      current = Chunk::WithTypes(TypesOf(node.output));
    }
  }
  if (!current.empty()) output.push_back(std::move(current));
  return output;
}

/// A hash join (or, without keys, a nested loop) over materialized inputs. Rows whose key
/// holds a NULL never match; the residual is evaluated over each candidate pair.
std::vector<Chunk> Join(const planner::JoinNode& node, std::vector<Chunk> left,
                        std::vector<Chunk> right, const BatchContext& context) {
  std::vector<DataType> output_types = TypesOf(node.output);
  // Pairs of rows: the left's columns, then the right's (a semi or anti join outputs the
  // left's only).
  std::vector<DataType> joined_types = TypesOf(node.input->output);
  for (const auto& column : node.right->output) joined_types.push_back(column.type);
  size_t left_width = node.input->output.size();
  size_t right_width = node.right->output.size();
  struct Side {
    std::vector<std::vector<Value>> rows;
    std::vector<std::string> keys;  // Empty string with `null_key`.
    std::vector<uint8_t> null_key;
    std::vector<uint8_t> matched;
  };
  MemoryReservation reservation(context.memory);
  auto collect = [&reservation](const std::vector<Chunk>& chunks,
                                const std::vector<planner::BoundExprPtr>& keys,
                                const std::vector<DataType>& types, Side* side) {
    for (const Chunk& chunk : chunks) {
      std::vector<Column> key_columns;
      for (const auto& key : keys) key_columns.push_back(Evaluate(*key, chunk));
      for (size_t r = 0; r < chunk.size(); ++r) {
        side->rows.push_back(chunk.GetRow(r));
        // The row, its key, its flags and (on the right) its hash table entry.
        reservation.Grow(RowBytes(side->rows.back(), types) + sizeof(std::string) +
                         8 * sizeof(void*));
        std::string key;
        bool null_key = false;
        for (size_t k = 0; k < keys.size(); ++k) {
          if (key_columns[k].IsNull(r)) null_key = true;
          key_columns[k].AppendKey(r, &key);
        }
        side->keys.push_back(null_key ? std::string() : std::move(key));
        side->null_key.push_back(null_key ? 1 : 0);
      }
    }
    side->matched.assign(side->rows.size(), 0);
  };
  Side l;
  Side r;
  collect(left, node.left_keys, TypesOf(node.input->output), &l);
  collect(right, node.right_keys, TypesOf(node.right->output), &r);
  std::unordered_multimap<std::string, size_t> table;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (!r.null_key[i]) table.emplace(r.keys[i], i);
  }
  std::vector<Chunk> output;
  Chunk current = Chunk::WithTypes(output_types);
  auto flush = [&](bool force) {
    if (current.size() >= kChunkRows || (force && !current.empty())) {
      Emit(std::move(current), &output, &reservation);
      current = Chunk::WithTypes(output_types);
    }
  };
  // Candidate pairs go through the residual a chunk at a time.
  Chunk candidates = Chunk::WithTypes(joined_types);
  std::vector<std::pair<size_t, size_t>> pairs;
  auto test_candidates = [&] {
    if (candidates.empty()) return;
    context.ThrowIfCancelled();
    std::vector<uint8_t> keep(candidates.size(), 1);
    if (node.residual) {
      Column result = Evaluate(*node.residual, candidates);
      for (size_t i = 0; i < candidates.size(); ++i) {
        keep[i] = !result.IsNull(i) && result.ints[i] != 0;
      }
    }
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (!keep[i]) continue;
      l.matched[pairs[i].first] = 1;
      r.matched[pairs[i].second] = 1;
      if (node.FiltersLeft()) continue;
      for (size_t c = 0; c < output_types.size(); ++c) {
        current.columns[c].AppendFrom(candidates.columns[c], i);
      }
      current.ops.push_back(RowOp::kInsert);
      flush(false);
    }
    candidates = Chunk::WithTypes(joined_types);
    pairs.clear();
  };
  auto add_candidate = [&](size_t li, size_t ri) {
    std::vector<Value> row = l.rows[li];
    row.insert(row.end(), r.rows[ri].begin(), r.rows[ri].end());
    candidates.AppendRow(row, RowOp::kInsert);
    pairs.emplace_back(li, ri);
    if (candidates.size() >= kChunkRows) test_candidates();
  };
  bool keyed = !node.left_keys.empty();
  for (size_t li = 0; li < l.rows.size(); ++li) {
    if (li % kChunkRows == 0) context.ThrowIfCancelled();
    if (keyed) {
      if (l.null_key[li]) continue;
      auto [begin, end] = table.equal_range(l.keys[li]);
      for (auto it = begin; it != end; ++it) add_candidate(li, it->second);
    } else {
      for (size_t ri = 0; ri < r.rows.size(); ++ri) add_candidate(li, ri);
    }
  }
  test_candidates();
  if (node.FiltersLeft()) {
    bool semi = node.join_type == planner::JoinType::kSemi;
    for (size_t li = 0; li < l.rows.size(); ++li) {
      if ((l.matched[li] != 0) != semi) continue;
      current.AppendRow(l.rows[li], RowOp::kInsert);
      flush(false);
    }
    flush(true);
    return output;
  }
  std::vector<Value> padded(left_width + right_width);
  if (node.PadsLeft()) {
    for (size_t li = 0; li < l.rows.size(); ++li) {
      if (l.matched[li]) continue;
      std::fill(padded.begin(), padded.end(), Value());
      std::copy(l.rows[li].begin(), l.rows[li].end(), padded.begin());
      current.AppendRow(padded, RowOp::kInsert);
      flush(false);
    }
  }
  if (node.PadsRight()) {
    for (size_t ri = 0; ri < r.rows.size(); ++ri) {
      if (r.matched[ri]) continue;
      std::fill(padded.begin(), padded.end(), Value());
      std::copy(r.rows[ri].begin(), r.rows[ri].end(), padded.begin() + left_width);
      current.AppendRow(padded, RowOp::kInsert);
      flush(false);
    }
  }
  flush(true);
  return output;
}

/// The values of one window function for `rows` (the rows of `input`, in order): rows are
/// sorted by partition, then by the window's order (stably: peers keep their input order),
/// and numbered or aggregated partition by partition.
std::vector<Value> ComputeWindowFunction(const planner::WindowFunction& function,
                                         const std::vector<Chunk>& input, size_t rows) {
  std::vector<std::string> partition(rows);
  std::vector<std::vector<Value>> order(rows);
  // An aggregate's argument and FILTER over all rows, in input order.
  AggregateInput aggregate_input;
  if (function.aggregate.arg) aggregate_input.arg = Column(function.aggregate.arg->type);
  if (function.aggregate.filter) aggregate_input.filter = Column(TypeId::kBoolean);
  if (function.aggregate.order_key) {
    aggregate_input.order = Column(function.aggregate.order_key->type);
  }
  size_t base = 0;
  for (const Chunk& chunk : input) {
    for (const auto& key : function.partition_keys) {
      Column column = Evaluate(*key, chunk);
      for (size_t r = 0; r < chunk.size(); ++r) {
        column.AppendKey(r, &partition[base + r]);
      }
    }
    for (const auto& key : function.order_keys) {
      Column column = Evaluate(*key.expr, chunk);
      for (size_t r = 0; r < chunk.size(); ++r) order[base + r].push_back(column.GetValue(r));
    }
    if (function.kind == planner::WindowFunctionKind::kAggregate) {
      AggregateInput input = EvaluateAggregateInput(function.aggregate, chunk);
      for (size_t r = 0; r < chunk.size(); ++r) {
        if (input.arg) aggregate_input.arg->AppendFrom(*input.arg, r);
        if (input.filter) aggregate_input.filter->AppendFrom(*input.filter, r);
        if (input.order) aggregate_input.order->AppendFrom(*input.order, r);
      }
    }
    base += chunk.size();
  }
  std::vector<size_t> sorted(rows);
  for (size_t i = 0; i < rows; ++i) sorted[i] = i;
  std::stable_sort(sorted.begin(), sorted.end(), [&](size_t a, size_t b) {
    if (partition[a] != partition[b]) return partition[a] < partition[b];
    return CompareWindowOrder(order[a], order[b], function.order_keys) < 0;
  });
  std::vector<Value> result(rows);
  for (size_t begin = 0; begin < rows;) {
    size_t end = begin;
    while (end < rows && partition[sorted[end]] == partition[sorted[begin]]) ++end;
    AggregateState state;
    int64_t dense_rank = 0;
    for (size_t peers = begin; peers < end;) {
      // [peers, peers_end): rows with equal ORDER BY values (all of the partition without
      // ORDER BY), which share rank, dense_rank and an aggregate's frame.
      size_t peers_end = peers + 1;
      while (peers_end < end && CompareWindowOrder(order[sorted[peers]], order[sorted[peers_end]],
                                                   function.order_keys) == 0) {
        ++peers_end;
      }
      ++dense_rank;
      if (function.kind == planner::WindowFunctionKind::kAggregate) {
        for (size_t i = peers; i < peers_end; ++i) {
          Accumulate(function.aggregate, &state, aggregate_input, sorted[i], 1);
        }
      }
      for (size_t i = peers; i < peers_end; ++i) {
        switch (function.kind) {
          case planner::WindowFunctionKind::kRowNumber:
            result[sorted[i]] = Value::Int(static_cast<int64_t>(i - begin + 1));
            break;
          case planner::WindowFunctionKind::kRank:
            result[sorted[i]] = Value::Int(static_cast<int64_t>(peers - begin + 1));
            break;
          case planner::WindowFunctionKind::kDenseRank:
            result[sorted[i]] = Value::Int(dense_rank);
            break;
          case planner::WindowFunctionKind::kAggregate:
            result[sorted[i]] = AggregateResult(function.aggregate, state);
            break;
        }
      }
      peers = peers_end;
    }
    begin = end;
  }
  return result;
}

/// Window functions (`functions`), and with `limit` the top-N: only rows whose one ranking
/// function is at most `limit`.
std::vector<Chunk> Window(const std::vector<planner::WindowFunction>& functions,
                          std::optional<int64_t> limit, const std::vector<planner::Column>& output,
                          std::vector<Chunk> input, const BatchContext& context) {
  size_t rows = 0;
  for (const Chunk& chunk : input) rows += chunk.size();
  // Per row and function: its partition key, ORDER BY values, position and result, which
  // are about a copy of the row.
  MemoryReservation reservation(context.memory);
  reservation.Grow(functions.size() * (ChunksBytes(input) + rows * 4 * sizeof(Value)));
  std::vector<std::vector<Value>> values;
  for (const planner::WindowFunction& function : functions) {
    values.push_back(ComputeWindowFunction(function, input, rows));
  }
  std::vector<Chunk> result;
  Chunk current = Chunk::WithTypes(TypesOf(output));
  size_t index = 0;
  for (const Chunk& chunk : input) {
    for (size_t r = 0; r < chunk.size(); ++r, ++index) {
      if (limit && values[0][index].int_value() > *limit) continue;
      std::vector<Value> row = chunk.GetRow(r);
      for (const auto& function_values : values) row.push_back(function_values[index]);
      current.AppendRow(row, RowOp::kInsert);
      if (current.size() == kChunkRows) {
        Emit(std::move(current), &result, &reservation);
        current = Chunk::WithTypes(TypesOf(output));
      }
    }
  }
  if (!current.empty()) result.push_back(std::move(current));
  return result;
}

std::vector<Chunk> Sort(const planner::SortNode& node, std::vector<Chunk> input,
                        const BatchContext& context) {
  MemoryReservation reservation(context.memory);
  std::vector<DataType> types = TypesOf(node.output);
  std::vector<std::vector<Value>> rows;
  for (const Chunk& chunk : input) {
    context.ThrowIfCancelled();
    for (size_t r = 0; r < chunk.size(); ++r) {
      rows.push_back(chunk.GetRow(r));
      reservation.Grow(RowBytes(rows.back(), types));
    }
  }
  // What the stable sort's buffer and the output chunk take besides.
  reservation.Grow(rows.size() * sizeof(rows[0]) + ChunksBytes(input));
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

std::vector<Chunk> RunNode(const planner::PlanNode& node, const BatchContext& context);

// Runs `node` and charges its output, which its consumer holds until it returns; what the
// node's own inputs returned is released once the node is done with them.
std::vector<Chunk> Run(const planner::PlanNode& node, const BatchContext& context) {
  size_t held_by_siblings = context.held_by_inputs;
  context.held_by_inputs = 0;
  std::vector<Chunk> output = RunNode(node, context);
  context.memory->Release(context.held_by_inputs);
  size_t bytes = ChunksBytes(output);
  context.memory->Charge(bytes);
  context.held_by_inputs = held_by_siblings + bytes;
  return output;
}

std::vector<Chunk> RunNode(const planner::PlanNode& node, const BatchContext& context) {
  context.ThrowIfCancelled();
  uint64_t rows_wanted = context.rows_wanted;
  context.rows_wanted = UINT64_MAX;
  std::vector<uint8_t> columns_wanted = std::move(context.columns_wanted);
  context.columns_wanted.clear();
  // The columns of the node's input that `exprs` read, for context.columns_wanted: empty (all)
  // when one holds a subquery.
  auto input_columns_read = [&](const std::vector<const planner::BoundExpr*>& exprs) {
    std::vector<uint8_t> wanted(node.input->output.size(), 0);
    for (const planner::BoundExpr* expr : exprs) {
      if (expr != nullptr && !MarkColumns(*expr, &wanted)) return std::vector<uint8_t>();
    }
    return wanted;
  };
  switch (node.kind) {
    case planner::PlanNodeKind::kScan:
      return Scan(static_cast<const planner::ScanNode&>(node), context, rows_wanted,
                  columns_wanted);
    case planner::PlanNodeKind::kValues: {
      // Released when the node returns: Run charges its output as a whole then.
      MemoryReservation reservation(context.memory);
      ValuesRowsCursor cursor(static_cast<const planner::ValuesNode&>(node));
      std::vector<Chunk> chunks;
      while (!cursor.done() && cursor.next_row() < rows_wanted) {
        Emit(cursor.Next(std::min<uint64_t>(kChunkRows, rows_wanted - cursor.next_row())), &chunks,
             &reservation);
        context.ThrowIfCancelled();
      }
      return chunks;
    }
    case planner::PlanNodeKind::kRepeat: {
      const auto& repeat = static_cast<const planner::RepeatNode&>(node);
      std::vector<Chunk> output;
      for (Chunk& chunk : Run(*node.input, context)) {
        Chunk repeated = RepeatOperator::Apply(repeat.count_column, chunk);
        if (!repeated.empty()) output.push_back(std::move(repeated));
      }
      return output;
    }
    case planner::PlanNodeKind::kUnnest: {
      const auto& unnest = static_cast<const planner::UnnestNode&>(node);
      std::vector<Chunk> output;
      for (Chunk& chunk : Run(*node.input, context)) {
        context.ThrowIfCancelled();
        Chunk expanded = UnnestOperator::Apply(unnest, chunk);
        if (!expanded.empty()) output.push_back(std::move(expanded));
      }
      return output;
    }
    case planner::PlanNodeKind::kFilter: {
      const auto& filter = static_cast<const planner::FilterNode&>(node);
      std::optional<std::vector<Chunk>> looked_up = PointLookup(filter, context);
      if (!columns_wanted.empty() && MarkColumns(*filter.predicate, &columns_wanted)) {
        context.columns_wanted = std::move(columns_wanted);  // The filter keeps the columns.
      }
      std::vector<Chunk> output;
      for (Chunk& chunk : looked_up ? std::move(*looked_up) : Run(*node.input, context)) {
        context.ThrowIfCancelled();
        Chunk kept = FilterOperator::Apply(*filter.predicate, std::move(chunk));
        if (!kept.empty()) output.push_back(std::move(kept));
      }
      return output;
    }
    case planner::PlanNodeKind::kProject: {
      const auto& project = static_cast<const planner::ProjectNode&>(node);
      context.rows_wanted = rows_wanted;  // A projection keeps every row.
      // Outputs nobody reads are NULL, so their inputs need not be read either.
      std::vector<planner::BoundExprPtr> expressions = project.expressions;
      std::vector<const planner::BoundExpr*> read;
      for (size_t i = 0; i < expressions.size(); ++i) {
        if (!columns_wanted.empty() && !columns_wanted[i]) {
          expressions[i] = planner::BoundExpr::MakeConstant(Value::Null(), expressions[i]->type);
        }
        read.push_back(expressions[i].get());
      }
      context.columns_wanted = input_columns_read(read);
      std::vector<Chunk> output;
      for (Chunk& chunk : Run(*node.input, context)) {
        context.ThrowIfCancelled();
        output.push_back(ProjectOperator::Apply(expressions, std::move(chunk)));
      }
      return output;
    }
    case planner::PlanNodeKind::kTimeWindow: {
      const auto& window = static_cast<const planner::TimeWindowNode&>(node);
      std::vector<Chunk> output;
      for (Chunk& chunk : Run(*node.input, context)) {
        Chunk windowed = TimeWindowOperator::Apply(window, chunk);
        if (!windowed.empty()) output.push_back(std::move(windowed));
      }
      return output;
    }
    case planner::PlanNodeKind::kAggregate: {
      const auto& aggregate = static_cast<const planner::AggregateNode&>(node);
      std::vector<const planner::BoundExpr*> read;
      for (const planner::BoundExprPtr& key : aggregate.group_keys) read.push_back(key.get());
      for (const planner::AggregateCall& call : aggregate.aggregates) {
        read.insert(read.end(), {call.arg.get(), call.order_key.get(), call.filter.get()});
      }
      context.columns_wanted = input_columns_read(read);
      return Aggregate(aggregate, Run(*node.input, context), context);
    }
    case planner::PlanNodeKind::kSort:
      return Sort(static_cast<const planner::SortNode&>(node), Run(*node.input, context), context);
    case planner::PlanNodeKind::kLimit: {
      const auto& limit = static_cast<const planner::LimitNode&>(node);
      uint64_t rows_out =
          limit.limit < 0 ? rows_wanted : std::min<uint64_t>(rows_wanted, limit.limit);
      if (rows_out != UINT64_MAX) context.rows_wanted = limit.offset + rows_out;
      return Limit(limit, Run(*node.input, context));
    }
    case planner::PlanNodeKind::kJoin: {
      const auto& join = static_cast<const planner::JoinNode&>(node);
      return Join(join, Run(*join.input, context), Run(*join.right, context), context);
    }
    case planner::PlanNodeKind::kWindow:
      return Window(static_cast<const planner::WindowNode&>(node).functions, std::nullopt,
                    node.output, Run(*node.input, context), context);
    case planner::PlanNodeKind::kTopN: {
      const auto& top = static_cast<const planner::TopNNode&>(node);
      return Window({top.function}, top.limit, node.output, Run(*node.input, context), context);
    }
    case planner::PlanNodeKind::kUnion: {
      std::vector<Chunk> output = Run(*node.input, context);
      for (Chunk& chunk : Run(*static_cast<const planner::UnionNode&>(node).right, context)) {
        output.push_back(std::move(chunk));
      }
      return output;
    }
    case planner::PlanNodeKind::kTemporalFilter:
      // A SELECT binds now() to the statement's start: its filters are plain ones.
      break;
  }
  throw SqlError(sqlstate::kInternalError, "unknown plan node");
}

/// Runs subqueries over the same snapshot as the query around them.
class BatchSubqueryRunner : public SubqueryRunner {
 public:
  explicit BatchSubqueryRunner(const BatchContext* context) : context_(context) {}

  std::vector<Value> FirstColumn(const planner::PlanNode& plan) override {
    std::vector<Value> values;
    size_t held_before = context_->held_by_inputs;
    for (const Chunk& chunk : Run(plan, *context_)) {
      for (size_t r = 0; r < chunk.size(); ++r) {
        values.push_back(chunk.columns.empty() ? Value::Null() : chunk.columns[0].GetValue(r));
      }
    }
    // The subquery's rows are gone once its first column is taken (a correlated subquery
    // runs once per outer row: its outputs must not add up).
    context_->memory->Release(context_->held_by_inputs - held_before);
    context_->held_by_inputs = held_before;
    return values;
  }

 private:
  const BatchContext* context_;
};

}  // namespace

QueryResult ExecuteBatchQuery(const planner::BoundQuery& query, const storage::Snapshot& snapshot,
                              const Cancellation* cancellation, size_t memory_limit_bytes) {
  QueryMemory memory(memory_limit_bytes);
  BatchContext context{snapshot, cancellation, &memory, 0, UINT64_MAX, {}};
  BatchSubqueryRunner subquery_runner(&context);
  ScopedSubqueryRunner subqueries(&subquery_runner);
  QueryResult result;
  result.returns_rows = true;
  for (size_t i = 0; i < query.visible_columns; ++i) {
    result.columns.push_back({query.root->output[i].name, query.root->output[i].type});
  }
  // The result's rows are held until the client has them: charged too.
  MemoryReservation result_rows(&memory);
  std::vector<DataType> result_types = TypesOf(query.root->output);
  for (const Chunk& chunk : Run(*query.root, context)) {
    for (size_t r = 0; r < chunk.size(); ++r) {
      std::vector<Value> row;
      row.reserve(query.visible_columns);
      for (size_t c = 0; c < query.visible_columns; ++c)
        row.push_back(chunk.columns[c].GetValue(r));
      result_rows.Grow(RowBytes(row, result_types));
      result.rows.push_back(std::move(row));
    }
  }
  result.command_tag = "SELECT " + std::to_string(result.rows.size());
  return result;
}

}  // namespace stave::executor

#include "executor/plan_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "common/sql_error.h"
#include "executor/connectors/connectors.h"
#include "executor/connectors/table/table_source.h"
#include "executor/connectors/values/values_source.h"
#include "executor/connectors/view/view_source.h"
#include "executor/operators/filter_operator.h"
#include "executor/operators/hash_aggregate_operator.h"
#include "executor/operators/hash_join_operator.h"
#include "executor/operators/materialize_operator.h"
#include "executor/operators/partial_aggregate_operator.h"
#include "executor/operators/project_operator.h"
#include "executor/operators/repeat_operator.h"
#include "executor/operators/sink_operator.h"
#include "executor/operators/temporal_filter_operator.h"
#include "executor/operators/time_window_operator.h"
#include "executor/operators/top_n_operator.h"
#include "executor/operators/union_operator.h"
#include "executor/operators/unnest_operator.h"
#include "executor/runtime/partitioner.h"
#include "planner/plan_printer.h"
#include "planner/shared_subplans.h"

namespace stave::executor {
namespace {

/// How the source's rows are routed to the first stage: all changes of one row of the
/// input (its key) must meet in one instance, in order. An input that never retracts has
/// no such pairs, so whole chunks go round-robin.
StageInput SourceRouting(const planner::CatalogObject& input) {
  StageInput routing;
  if (!input.Retracting()) return routing;
  routing.round_robin = false;
  std::vector<planner::Column> columns = input.ChangelogColumns();
  std::vector<size_t> key = input.primary_key;
  if (key.empty()) key.push_back(input.columns.size());  // The hidden _row_id or _row_key.
  for (size_t column : key) {
    routing.keys.push_back(planner::BoundExpr::MakeColumn(column, columns[column].type));
  }
  return routing;
}

/// A chain of nodes reading a stage's trunk: one reader of a shared subplan.
struct BranchPlan {
  std::vector<const planner::PlanNode*> nodes;
  StageOutput output;
  /// The aggregate whose groups the chain's rows are combined into a chunk at a time before
  /// they go out (PartialAggregateOperator); null: none.
  const planner::AggregateNode* combine = nullptr;
};

/// The plan cut into stages: a new stage starts at every aggregation, fed by an exchange
/// on its group keys, and at every join, fed by one exchange per side on its join keys. A
/// subplan several nodes read (planner/shared_subplans.h) ends its stage's trunk; each
/// reader continues on a branch of its own.
struct StagePlan {
  StageInput inputs[2];
  std::vector<const planner::PlanNode*> nodes;  ///< The trunk's.
  StageOutput output;                           ///< The trunk's, without branches.
  /// The trunk's BranchPlan::combine (ignored with branches: each has its own).
  const planner::AggregateNode* combine = nullptr;
  std::vector<BranchPlan> branches;
  /// The stage's aggregate reads partial rows (its input was combined).
  bool partial_input = false;

  /// The columns of what goes out on branch `branch` (-1: the trunk).
  std::vector<planner::Column> OutputColumns(int branch) const {
    const planner::AggregateNode* combined = branch >= 0 ? branches[branch].combine : combine;
    if (combined) return PartialAggregateOperator::OutputColumns(*combined);
    const std::vector<const planner::PlanNode*>& chain =
        branch >= 0 && !branches[branch].nodes.empty() ? branches[branch].nodes : nodes;
    return chain.empty() ? std::vector<planner::Column>() : chain.back()->output;
  }
};

/// A reader of one scan (or of a VALUES list's rows) and the stage input it feeds.
struct SourcePlan {
  const planner::ScanNode* scan = nullptr;
  const planner::ValuesNode* values = nullptr;  ///< Instead of `scan`.
  size_t stage = 0;
  size_t side = 0;
};

/// A dataflow without its last operator: the readers of its inputs and its stages.
struct Dataflow {
  std::vector<JobSource> sources;
  std::vector<Stage> stages;
};

/// A reference to each of `columns`: routing by the whole row.
std::vector<planner::BoundExprPtr> EveryColumn(const std::vector<planner::Column>& columns) {
  std::vector<planner::BoundExprPtr> keys;
  for (size_t i = 0; i < columns.size(); ++i) {
    keys.push_back(planner::BoundExpr::MakeColumn(i, columns[i].type));
  }
  return keys;
}

/// Whether the partial step of `combine` (if any), which ends `chain`, takes in the chain's
/// last node, the aggregate's input HOP, a slice at a time
/// (PartialAggregateOperator::CombinesBySlide).
bool TakesHopBySlide(const std::vector<const planner::PlanNode*>& chain,
                     const planner::AggregateNode* combine) {
  return combine && !chain.empty() && chain.back() == combine->input.get() &&
         PartialAggregateOperator::CombinesBySlide(*combine);
}

/// How EXPLAIN and the dataflow graph name an aggregate's partial step (`by_slide`: taking
/// in its input HOP, TakesHopBySlide).
std::string PartialAggregateLabel(const planner::PlanNode& aggregate, bool by_slide) {
  const auto& node = static_cast<const planner::AggregateNode&>(aggregate);
  if (!by_slide) return "PartialAggregate (a chunk at a time): " + planner::ExplainGrouping(node);
  std::string hop = planner::ExplainNode(*node.input);  // "TimeWindow: HOP(…)"
  hop.erase(0, hop.find("HOP("));
  return "PartialAggregate (a chunk at a time, each row in its slice of " + hop +
         "): " + planner::ExplainGrouping(node);
}

/// Cuts a plan into stages, in an order where producers precede consumers.
class StagePlanner {
 public:
  /// Plans `node`; returns the stage whose operators end with it.
  size_t Plan(const planner::PlanNode* node) {
    readers_ = planner::CountReaders(*node);
    Fragment fragment = Build(node);
    if (fragment.branch >= 0) {
      // Not met: a shared node's readers all lie under the root, and a join or a union
      // between them starts a stage of its own, so the root is never on a branch.
      fragment = Fragment{-1, static_cast<int>(ExchangeByRow(fragment, node))};
    }
    return Open(fragment);
  }
  /// Feeds the stage `from` into a new stage routed by `keys`; returns the new stage.
  size_t Exchange(size_t from, std::vector<planner::BoundExprPtr> keys) {
    size_t stage = NewStage();
    Connect(Fragment{-1, static_cast<int>(from)}, stage, 0, std::move(keys));
    return stage;
  }

  std::vector<StagePlan> stages;
  std::vector<SourcePlan> sources;

 private:
  // The output of a subplan: a source's rows not yet in any stage, or a stage's (its trunk's
  // or one of its branches').
  struct Fragment {
    int source = -1;
    int stage = -1;
    int branch = -1;
  };

  size_t NewStage() {
    stages.emplace_back();
    return stages.size() - 1;
  }

  // A branch of `fragment`'s stage reading its trunk.
  Fragment NewBranch(Fragment fragment) {
    stages[fragment.stage].branches.emplace_back();
    return Fragment{-1, fragment.stage,
                    static_cast<int>(stages[fragment.stage].branches.size()) - 1};
  }

  // Feeds a branch into a new stage keyed by every column of `node`'s output (its rows'
  // changes meet in one instance, in order), whose trunk goes on with it.
  size_t ExchangeByRow(Fragment branch, const planner::PlanNode* node) {
    size_t stage = NewStage();
    Connect(branch, stage, 0, EveryColumn(node->output));
    return stage;
  }

  // Routes `from` into input `side` of `stage` by `keys`.
  void Connect(Fragment from, size_t stage, size_t side, std::vector<planner::BoundExprPtr> keys) {
    stages[stage].inputs[side].round_robin = false;
    stages[stage].inputs[side].keys = std::move(keys);
    if (from.source >= 0) {
      sources[from.source].stage = stage;
      sources[from.source].side = side;
    } else if (from.branch >= 0) {
      stages[from.stage].branches[from.branch].output = {static_cast<int>(stage), side};
    } else {
      stages[from.stage].output = {static_cast<int>(stage), side};
    }
  }

  // The stage holding `fragment`'s rows: a source's rows get a stage routed by its key.
  size_t Open(Fragment fragment) {
    if (fragment.stage >= 0) return fragment.stage;
    size_t stage = NewStage();
    const SourcePlan& source = sources[fragment.source];
    if (source.scan) stages[stage].inputs[0] = SourceRouting(*source.scan->object);
    sources[fragment.source].stage = stage;
    sources[fragment.source].side = 0;
    return stage;
  }

  // Appends `node` where `fragment`'s rows are: its branch, else its stage's trunk.
  Fragment Append(Fragment fragment, const planner::PlanNode* node) {
    if (fragment.branch >= 0) {
      stages[fragment.stage].branches[fragment.branch].nodes.push_back(node);
      return fragment;
    }
    size_t stage = Open(fragment);
    stages[stage].nodes.push_back(node);
    return Fragment{-1, static_cast<int>(stage)};
  }

  // A node several nodes read is built once; each reader gets a branch of its stage. A
  // shared node that ends a branch itself first moves to a stage of its own, so that
  // branches never branch.
  Fragment Build(const planner::PlanNode* node) {
    auto readers = readers_.find(node);
    if (readers == readers_.end() || readers->second <= 1) return BuildOnce(node);
    auto it = shared_.find(node);
    if (it == shared_.end()) {
      Fragment fragment = BuildOnce(node);
      if (fragment.branch >= 0) {
        fragment = Fragment{-1, static_cast<int>(ExchangeByRow(fragment, node))};
      }
      it = shared_.emplace(node, Fragment{-1, static_cast<int>(Open(fragment))}).first;
    }
    return NewBranch(it->second);
  }

  Fragment BuildOnce(const planner::PlanNode* node) {
    switch (node->kind) {
      case planner::PlanNodeKind::kScan:
        sources.push_back(SourcePlan{static_cast<const planner::ScanNode*>(node)});
        return Fragment{static_cast<int>(sources.size() - 1), -1};
      case planner::PlanNodeKind::kValues:
        sources.push_back(SourcePlan{nullptr, static_cast<const planner::ValuesNode*>(node)});
        return Fragment{static_cast<int>(sources.size() - 1), -1};
      case planner::PlanNodeKind::kAggregate: {
        // Route by the group keys, evaluated over the aggregate's input; or, where its calls
        // combine, over partial rows, the input's rows combined a chunk at a time in the
        // stage they come from (a source's rows get a stage for it).
        const auto* aggregate = static_cast<const planner::AggregateNode*>(node);
        Fragment input = Build(node->input.get());
        bool combine = PartialAggregateOperator::Combinable(*aggregate);
        // Opened first: a producer's stage comes before its consumer's.
        if (combine && input.stage < 0) input = Fragment{-1, static_cast<int>(Open(input))};
        size_t stage = NewStage();
        if (combine) {
          if (input.branch >= 0) {
            stages[input.stage].branches[input.branch].combine = aggregate;
          } else {
            stages[input.stage].combine = aggregate;
          }
          std::vector<planner::BoundExprPtr> keys;
          for (size_t k = 0; k < aggregate->group_keys.size(); ++k) {
            keys.push_back(planner::BoundExpr::MakeColumn(k, aggregate->group_keys[k]->type));
          }
          Connect(input, stage, 0, std::move(keys));
          stages[stage].partial_input = true;
        } else {
          Connect(input, stage, 0, aggregate->group_keys);
        }
        stages[stage].nodes.push_back(node);
        return Fragment{-1, static_cast<int>(stage)};
      }
      case planner::PlanNodeKind::kTopN: {
        // Route by the partition keys: an instance ranks whole partitions.
        Fragment input = Build(node->input.get());
        size_t stage = NewStage();
        Connect(input, stage, 0,
                static_cast<const planner::TopNNode*>(node)->function.partition_keys);
        stages[stage].nodes.push_back(node);
        return Fragment{-1, static_cast<int>(stage)};
      }
      case planner::PlanNodeKind::kJoin: {
        const auto* join = static_cast<const planner::JoinNode*>(node);
        Fragment left = Build(join->input.get());
        Fragment right = Build(join->right.get());
        size_t stage = NewStage();
        Connect(left, stage, 0, join->left_keys);
        Connect(right, stage, 1, join->right_keys);
        stages[stage].nodes.push_back(node);
        return Fragment{-1, static_cast<int>(stage)};
      }
      case planner::PlanNodeKind::kTemporalFilter: {
        // Keyed by the whole row: all changes of a row meet in one instance, which holds
        // the row's state.
        Fragment input = Build(node->input.get());
        size_t stage = NewStage();
        Connect(input, stage, 0, EveryColumn(node->input->output));
        stages[stage].nodes.push_back(node);
        return Fragment{-1, static_cast<int>(stage)};
      }
      case planner::PlanNodeKind::kUnion: {
        Fragment left = Build(node->input.get());
        Fragment right = Build(static_cast<const planner::UnionNode*>(node)->right.get());
        size_t stage = NewStage();
        Connect(left, stage, 0, EveryColumn(node->input->output));
        Connect(right, stage, 1, EveryColumn(node->output));
        stages[stage].nodes.push_back(node);
        return Fragment{-1, static_cast<int>(stage)};
      }
      default:
        return Append(Build(node->input.get()), node);
    }
  }

  std::map<const planner::PlanNode*, size_t> readers_;   // planner::CountReaders.
  std::map<const planner::PlanNode*, Fragment> shared_;  // Its trunk's stage.
};

/// The shared pointer of `node`, a node of the plan under `root`.
planner::PlanNodePtr FindNode(const planner::PlanNodePtr& root, const planner::PlanNode* node) {
  if (!root || root.get() == node) return root;
  if (const planner::PlanNodePtr* second = planner::SecondInput(*root)) {
    if (auto found = FindNode(*second, node)) return found;
  }
  return FindNode(root->input, node);
}

// The aggregate's output column that column `i` of a view's plan shows as it is, if any: the
// plan's root is the aggregate, or a projection over it.
std::optional<size_t> ShownColumn(const planner::PlanNode& root, const planner::PlanNode& aggregate,
                                  size_t i) {
  if (&root == &aggregate) return i < aggregate.output.size() ? std::optional(i) : std::nullopt;
  const auto& project = static_cast<const planner::ProjectNode&>(root);
  if (i >= project.expressions.size()) return std::nullopt;
  const planner::BoundExpr& expr = *project.expressions[i];
  if (expr.kind != planner::BoundExpr::Kind::kColumn || expr.column >= aggregate.output.size() ||
      !(aggregate.output[expr.column].type == expr.type)) {
    return std::nullopt;
  }
  return expr.column;
}

/// Builds the readers and the stages of `owner`'s query, `parallelism` instances per stage.
/// State tables take the owner's slots from `first_slot` on. With `multiset_output`, the
/// last stage is fed by an exchange on every output column (see MaterializeOperator). With
/// `view_rows`, its aggregate keeps its groups in the view's rows.
Dataflow BuildDataflow(const planner::CatalogObject& owner, const planner::BoundQuery& query,
                       const storage::Store* store, Metrics* metrics,
                       const std::function<std::shared_ptr<Table>(uint32_t)>& tables,
                       size_t parallelism, size_t state_cache_bytes, uint32_t first_slot,
                       bool multiset_output = false, const AggregateViewRows* view_rows = nullptr) {
  // An aggregate's instance keeps this many groups cached past a barrier.
  size_t cached_groups = std::max<size_t>(
      1024, state_cache_bytes / parallelism / HashAggregateOperator::kBytesPerCachedGroup);
  // A join's instance keeps about this many bytes of decoded keys cached past a barrier.
  size_t join_cache_bytes = state_cache_bytes / parallelism;
  StagePlanner planner;
  size_t last = planner.Plan(query.root.get());
  if (multiset_output) {
    std::vector<planner::BoundExprPtr> columns;
    for (size_t i = 0; i < query.visible_columns; ++i) {
      columns.push_back(planner::BoundExpr::MakeColumn(i, query.root->output[i].type));
    }
    last = planner.Exchange(last, std::move(columns));
  }
  if (last + 1 != planner.stages.size()) {
    throw SqlError(sqlstate::kInternalError, "the last stage of a dataflow is not its end");
  }
  std::vector<StagePlan>& plans = planner.stages;
  std::string kind = owner.type == planner::ObjectType::kSink ? "sink" : "view";
  std::atomic<uint64_t>* rows_in = metrics->Counter(
      fmt::format("stave_{}_rows_in_total", kind), {{kind, owner.name}},
      fmt::format("Rows a {} read from its input.", planner::ObjectTypeName(owner.type)));
  std::atomic<uint64_t>* bytes_in = metrics->Counter(
      fmt::format("stave_{}_in_bytes_total", kind), {{kind, owner.name}},
      fmt::format("Bytes a {} read from its input: records' payloads as received (Kafka, "
                  "socket), else an estimate of the rows' size.",
                  planner::ObjectTypeName(owner.type)));
  Dataflow dataflow;
  for (const SourcePlan& plan : planner.sources) {
    if (plan.values) {
      JobSource source;
      source.stage = plan.stage;
      source.side = plan.side;
      source.reader = std::make_unique<ValuesSource>(
          std::static_pointer_cast<const planner::ValuesNode>(FindNode(query.root, plan.values)));
      source.counters.rows_in = rows_in;
      source.counters.bytes_in = bytes_in;
      source.label = "VALUES";
      dataflow.sources.push_back(std::move(source));
      continue;
    }
    const planner::ScanNode& scan = *plan.scan;
    if (!scan.object || scan.system_rows) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     fmt::format("a {} must read a stream, a table or a view",
                                 planner::ObjectTypeName(owner.type)));
    }
    JobSource source;
    source.stage = plan.stage;
    source.side = plan.side;
    source.label =
        std::string(planner::ObjectTypeName(scan.object->type)) + " " + scan.object->name;
    source.input = scan.object->id;
    if (scan.object->type == planner::ObjectType::kTable) {
      source.reader = std::make_unique<TableSource>(
          tables(scan.object->id), store,
          std::string(planner::ObjectTypeName(owner.type)) + " " + owner.name);
    } else if (scan.object->type == planner::ObjectType::kMaterializedView) {
      source.reader = std::make_unique<ViewSource>(
          scan.object, store, std::string(planner::ObjectTypeName(owner.type)) + " " + owner.name);
    } else {
      source.reader = OpenSourceReader(*scan.object, scan.read_columns);
    }
    source.counters.rows_in = rows_in;
    source.counters.bytes_in = bytes_in;
    source.counters.stream_bytes =
        scan.object->type == planner::ObjectType::kTable
            ? metrics->Counter("stave_table_read_bytes_total", {{"table", scan.object->name}},
                               "Estimated bytes of the row changes read from a table's log.")
        : scan.object->type == planner::ObjectType::kMaterializedView
            ? metrics->Counter("stave_view_changes_read_bytes_total", {{"view", scan.object->name}},
                               "Estimated bytes of the row changes read from a view's changelog.")
            : metrics->Counter("stave_stream_read_bytes_total", {{"stream", scan.object->name}},
                               "Bytes read from a stream: records' payloads as received "
                               "(Kafka, socket), else an estimate of the rows' size.");
    source.counters.stream_rows =
        scan.object->type == planner::ObjectType::kTable
            ? metrics->Counter("stave_table_rows_read_total", {{"table", scan.object->name}},
                               "Row changes read from a table's log, over all views reading it.")
        : scan.object->type == planner::ObjectType::kMaterializedView
            ? metrics->Counter("stave_view_changes_read_total", {{"view", scan.object->name}},
                               "Row changes read from a view's changelog by views over it.")
            : metrics->Counter("stave_stream_rows_read_total", {{"stream", scan.object->name}},
                               "Rows read from a stream, over all views reading it.");
    if (scan.object->type == planner::ObjectType::kStream) {
      source.counters.bad_records = metrics->Counter(
          "stave_source_bad_records_total", {{"stream", scan.object->name}, {kind, owner.name}},
          "Records a stream's reader could not decode (skipped, dead-lettered or failed on).");
      if (scan.object->watermark) {
        source.counters.late_rows = metrics->Counter(
            "stave_source_late_rows_total", {{"stream", scan.object->name}, {kind, owner.name}},
            "Rows a stream dropped for arriving below its watermark.");
      }
    }
    dataflow.sources.push_back(std::move(source));
  }
  size_t global_owner = InstanceOfKey("", parallelism);
  uint32_t next_slot = first_slot;
  for (size_t s = 0; s < plans.size(); ++s) {
    Stage stage;
    stage.input = plans[s].inputs[0];
    stage.right_input = plans[s].inputs[1];
    stage.output = plans[s].output;
    // Each instance's operators: the trunk's, then each branch's. A chain whose rows go to
    // an aggregate combined ends in that aggregate's partial step.
    struct Step {
      const planner::PlanNode* node;
      bool partial = false;   // The partial aggregate of `node`, an aggregate of a later stage.
      bool by_slide = false;  // That partial step takes in the HOP before it (TakesHopBySlide).
    };
    std::vector<Step> steps;
    auto add_chain = [&steps](const std::vector<const planner::PlanNode*>& chain,
                              const planner::AggregateNode* combine) {
      bool by_slide = TakesHopBySlide(chain, combine);
      size_t first = steps.size();
      for (size_t i = 0; i < chain.size() - (by_slide ? 1 : 0); ++i) steps.push_back({chain[i]});
      if (combine) steps.push_back({combine, true, by_slide});
      return steps.size() - first;
    };
    add_chain(plans[s].nodes, plans[s].branches.empty() ? plans[s].combine : nullptr);
    for (const BranchPlan& branch : plans[s].branches) {
      stage.branches.push_back({add_chain(branch.nodes, branch.combine), branch.output});
    }
    for (const Step& step : steps) {
      stage.operator_labels.push_back(step.partial
                                          ? PartialAggregateLabel(*step.node, step.by_slide)
                                          : planner::ExplainNode(*step.node));
    }
    uint32_t stage_slot = next_slot;
    for (uint32_t instance = 0; instance < parallelism; ++instance) {
      // Every instance of an operator shares its state table; keys never overlap, as each
      // instance sees only the keys of its virtual nodes.
      uint32_t slot = stage_slot;
      std::vector<std::unique_ptr<StreamOperator>> operators;
      for (const Step& step : steps) {
        const planner::PlanNode* node = step.node;
        if (step.partial) {
          operators.push_back(std::make_unique<PartialAggregateOperator>(
              std::static_pointer_cast<const planner::AggregateNode>(FindNode(query.root, node)),
              step.by_slide));
          continue;
        }
        switch (node->kind) {
          case planner::PlanNodeKind::kFilter:
            operators.push_back(std::make_unique<FilterOperator>(
                static_cast<const planner::FilterNode*>(node)->predicate));
            break;
          case planner::PlanNodeKind::kProject:
            operators.push_back(std::make_unique<ProjectOperator>(
                static_cast<const planner::ProjectNode*>(node)->expressions));
            break;
          case planner::PlanNodeKind::kTimeWindow:
            operators.push_back(std::make_unique<TimeWindowOperator>(
                std::static_pointer_cast<const planner::TimeWindowNode>(
                    FindNode(query.root, node))));
            break;
          case planner::PlanNodeKind::kAggregate: {
            // The slot stays taken when the groups live in the view's rows: the slots of
            // the operators after it do not move.
            uint32_t table = StateTableId(owner.id, slot++);
            std::optional<HashAggregateOperator::ViewRows> rows;
            if (view_rows && view_rows->aggregate == node) {
              table = StateTableId(owner.id, kViewRowsSlot);
              rows = view_rows->rows;
            }
            operators.push_back(std::make_unique<HashAggregateOperator>(
                std::static_pointer_cast<const planner::AggregateNode>(FindNode(query.root, node)),
                storage::StateTable(store, table), instance == global_owner, cached_groups,
                instance, parallelism, std::move(rows),
                owner.plan_version >= 7 ? GroupStateCodec::Layout::kPacked
                                        : GroupStateCodec::Layout::kRow,
                plans[s].partial_input && node == plans[s].nodes.front()));
            break;
          }
          case planner::PlanNodeKind::kUnion:
            operators.push_back(std::make_unique<UnionOperator>());
            break;
          case planner::PlanNodeKind::kTemporalFilter:
            operators.push_back(std::make_unique<TemporalFilterOperator>(
                std::static_pointer_cast<const planner::TemporalFilterNode>(
                    FindNode(query.root, node)),
                storage::StateTable(store, StateTableId(owner.id, slot++)), instance, parallelism));
            break;
          case planner::PlanNodeKind::kTopN:
            operators.push_back(std::make_unique<TopNOperator>(
                std::static_pointer_cast<const planner::TopNNode>(FindNode(query.root, node)),
                storage::StateTable(store, StateTableId(owner.id, slot++))));
            break;
          case planner::PlanNodeKind::kRepeat:
            operators.push_back(std::make_unique<RepeatOperator>(
                static_cast<const planner::RepeatNode*>(node)->count_column));
            break;
          case planner::PlanNodeKind::kUnnest:
            operators.push_back(std::make_unique<UnnestOperator>(
                std::static_pointer_cast<const planner::UnnestNode>(FindNode(query.root, node))));
            break;
          case planner::PlanNodeKind::kJoin: {
            // Two slots: the left side's rows, then the right side's.
            uint32_t left_slot = slot++;
            uint32_t right_slot = slot++;
            operators.push_back(std::make_unique<HashJoinOperator>(
                std::static_pointer_cast<const planner::JoinNode>(FindNode(query.root, node)),
                storage::StateTable(store, StateTableId(owner.id, left_slot)),
                storage::StateTable(store, StateTableId(owner.id, right_slot)), instance,
                parallelism, join_cache_bytes));
            break;
          }
          default:
            throw SqlError(sqlstate::kFeatureNotSupported,
                           fmt::format("this query cannot run as a {} yet",
                                       planner::ObjectTypeName(owner.type)));
        }
      }
      if (slot > 255) {
        throw SqlError(sqlstate::kFeatureNotSupported,
                       fmt::format("this query has too many joins and aggregations for a {}",
                                   planner::ObjectTypeName(owner.type)));
      }
      next_slot = slot;
      stage.instances.push_back(std::move(operators));
    }
    dataflow.stages.push_back(std::move(stage));
  }
  return dataflow;
}

bool HasStatefulNode(const planner::PlanNode* node) {
  if (!node) return false;
  if (node->kind == planner::PlanNodeKind::kAggregate) return true;
  if (node->kind == planner::PlanNodeKind::kJoin) return true;
  if (node->kind == planner::PlanNodeKind::kTemporalFilter) return true;
  if (node->kind == planner::PlanNodeKind::kTopN) return true;
  if (const planner::PlanNodePtr* second = planner::SecondInput(*node)) {
    if (HasStatefulNode(second->get())) return true;
  }
  return HasStatefulNode(node->input.get());
}

bool HasAggregate(const planner::BoundQuery& query) { return HasStatefulNode(query.root.get()); }

}  // namespace

std::optional<AggregateViewRows> AggregateStoringViewRows(const planner::BoundQuery& query,
                                                          uint32_t plan_version) {
  const planner::PlanNode* root = query.root.get();
  if (plan_version < 6 || !query.keyed || !root) return std::nullopt;
  const planner::PlanNode* node = root;
  if (node->kind == planner::PlanNodeKind::kProject) node = node->input.get();
  if (!node || node->kind != planner::PlanNodeKind::kAggregate) return std::nullopt;
  const auto& aggregate = static_cast<const planner::AggregateNode&>(*node);
  if (aggregate.window_close || aggregate.emit_on_window_close ||
      query.key_columns.size() != aggregate.group_keys.size()) {
    return std::nullopt;
  }
  for (size_t k = 0; k < query.key_columns.size(); ++k) {
    if (ShownColumn(*root, aggregate, query.key_columns[k]) != k) return std::nullopt;
  }
  AggregateViewRows result{&aggregate, {}};
  for (size_t i = 0; i < query.visible_columns; ++i) {
    std::optional<size_t> column = ShownColumn(*root, aggregate, i);
    if (!column) return std::nullopt;
    result.rows.columns.push_back(*column);
    result.rows.types.push_back(root->output[i].type);
  }
  return result;
}

std::unique_ptr<Job> BuildJob(const planner::CatalogObject& view, const planner::BoundQuery& query,
                              const storage::Store* store, Metrics* metrics,
                              const std::function<std::shared_ptr<Table>(uint32_t)>& tables,
                              const JobOptions& options) {
  size_t parallelism = std::clamp<size_t>(options.parallelism, 1, kMaxParallelism);
  // A retracting join result without keys is kept as a multiset of rows.
  bool multiset = query.has_join && !query.keyed && !query.append_only;
  std::atomic<uint64_t>* rows_out =
      metrics->Counter("stave_view_rows_out_total", {{"view", view.name}},
                       "Row changes applied to a materialized view.");
  std::atomic<uint64_t>* bytes_out =
      metrics->Counter("stave_view_out_bytes_total", {{"view", view.name}},
                       "Estimated bytes of the row changes applied to a materialized view.");
  auto log_changes = std::make_shared<std::atomic<bool>>(false);
  std::optional<AggregateViewRows> view_rows = AggregateStoringViewRows(query, view.plan_version);
  if (view_rows) {
    // The aggregate that writes the view's rows emits changes only for the view's log.
    view_rows->rows.changes_read = log_changes;
    view_rows->rows.rows_written = rows_out;
    view_rows->rows.bytes_written = bytes_out;
  }
  Dataflow dataflow =
      BuildDataflow(view, query, store, metrics, tables, parallelism, options.state_cache_bytes,
                    kViewRowsSlot + 2, multiset, view_rows ? &*view_rows : nullptr);
  storage::RowTypes visible_types;
  for (const planner::Column& column : view.columns) visible_types.push_back(column.type);
  dataflow.stages.back().operator_labels.push_back("Materialize into " + view.name);
  std::vector<std::vector<std::unique_ptr<StreamOperator>>>& last =
      dataflow.stages.back().instances;
  for (uint32_t instance = 0; instance < last.size(); ++instance) {
    // Slot 0: the view's rows; 1: the materialization's counters.
    auto materialize = std::make_unique<MaterializeOperator>(
        view.id, instance, visible_types, query.keyed, query.key_columns,
        storage::StateTable(store, StateTableId(view.id, kViewRowsSlot)),
        storage::StateTable(store, StateTableId(view.id, kViewRowsSlot + 1)), log_changes, rows_out,
        multiset, bytes_out, view_rows.has_value());
    if (!view.event_time_columns.empty()) {
      materialize->PublishWatermark(static_cast<uint32_t>(last.size()));
    }
    last[instance].push_back(std::move(materialize));
  }
  return std::make_unique<Job>(view.id, view.name, std::move(dataflow.sources),
                               std::move(dataflow.stages), std::move(log_changes),
                               options.throttle);
}

std::unique_ptr<Job> BuildSinkJob(const planner::CatalogObject& sink,
                                  const planner::BoundQuery& query, const storage::Store* store,
                                  Metrics* metrics,
                                  const std::function<std::shared_ptr<Table>(uint32_t)>& tables,
                                  const JobOptions& options, std::shared_ptr<SinkWriter> writer,
                                  std::vector<size_t> key_columns) {
  // Stateless plans gain nothing from parallel instances before the one writer.
  size_t parallelism =
      HasAggregate(query) ? std::clamp<size_t>(options.parallelism, 1, kMaxParallelism) : 1;
  Dataflow dataflow =
      BuildDataflow(sink, query, store, metrics, tables, parallelism, options.state_cache_bytes, 0);
  storage::RowTypes types;
  for (const planner::Column& column : sink.columns) types.push_back(column.type);
  auto sink_operator = std::make_unique<SinkOperator>(
      writer, types, std::move(key_columns),
      metrics->Counter("stave_sink_rows_out_total", {{"sink", sink.name}},
                       "Row changes a sink handed to its target (after compaction per key)."),
      metrics->Counter("stave_sink_out_bytes_total", {{"sink", sink.name}},
                       "Estimated bytes of the row changes a sink handed to its target."));
  const std::atomic<bool>* epoch_full = sink_operator->epoch_full();
  std::string sink_label = "Sink " + sink.name + " (" + sink.connector + ")";
  if (parallelism == 1) {
    dataflow.stages.back().instances[0].push_back(std::move(sink_operator));
    dataflow.stages.back().operator_labels.push_back(sink_label);
  } else {
    // One writer per sink, so that each epoch reaches the target as one transaction. Each
    // key's changes come from one upstream instance, in order.
    Stage stage;
    stage.instances.emplace_back();
    stage.instances[0].push_back(std::move(sink_operator));
    stage.operator_labels.push_back(sink_label);
    dataflow.stages.push_back(std::move(stage));
  }
  auto job = std::make_unique<Job>(sink.id, sink.name, std::move(dataflow.sources),
                                   std::move(dataflow.stages),
                                   std::make_shared<std::atomic<bool>>(false), options.throttle);
  job->set_on_commit([writer](uint64_t epoch) { writer->OnEpochCommitted(epoch); });
  // A target slower than the dataflow slows its input, rather than filling checkpoints.
  job->PauseSourcesWhile(writer->lagging());
  // An epoch kept small: held in memory until delivered, and cheap to write ahead.
  job->PauseSourcesWhile(epoch_full);
  job->CheckpointEarlyWhile(epoch_full);
  return job;
}

std::vector<std::string> ExplainDataflow(const planner::BoundQuery& query, size_t parallelism,
                                         const std::string& sink,
                                         const planner::AggregateNode* view_rows) {
  StagePlanner planner;
  size_t last = planner.Plan(query.root.get());
  auto routing = [](const StageInput& input, const std::vector<planner::Column>& columns) {
    if (input.round_robin) return std::string("round-robin");
    std::string keys;
    for (const planner::BoundExprPtr& key : input.keys) {
      if (!keys.empty()) keys += ", ";
      keys += planner::ExplainExpression(*key, columns);
    }
    return "hash(" + keys + ")";
  };
  std::vector<std::string> lines;
  for (size_t s = 0; s < planner.stages.size(); ++s) {
    const StagePlan& stage = planner.stages[s];
    lines.push_back(
        fmt::format("Stage {}: {} instance{}", s, parallelism, parallelism == 1 ? "" : "s"));
    for (const SourcePlan& source : planner.sources) {
      if (source.stage != s) continue;
      if (source.values) {
        lines.push_back(fmt::format("  <- VALUES ({} rows, once) by {}", source.values->rows.size(),
                                    routing(stage.inputs[source.side], source.values->output)));
        continue;
      }
      const planner::CatalogObject& object = *source.scan->object;
      lines.push_back(fmt::format(
          "  <- {} {}{} by {}", planner::ObjectTypeName(object.type), object.name,
          object.watermark || !object.event_time_columns.empty() ? " (with a watermark)" : "",
          routing(stage.inputs[source.side], source.scan->output)));
    }
    for (size_t from = 0; from < s; ++from) {
      const StagePlan& producer = planner.stages[from];
      auto feeds = [&](const StageOutput& output, int branch) {
        if (output.stage != static_cast<int>(s)) return;
        lines.push_back(fmt::format(
            "  <- stage {}{} by {}", from, branch >= 0 ? fmt::format(" branch {}", branch) : "",
            routing(stage.inputs[output.side], producer.OutputColumns(branch))));
      };
      if (producer.branches.empty()) feeds(producer.output, -1);
      for (size_t b = 0; b < producer.branches.size(); ++b) {
        feeds(producer.branches[b].output, static_cast<int>(b));
      }
    }
    auto describe = [&](const planner::PlanNode* node) {
      std::string state;
      if (node->kind == planner::PlanNodeKind::kAggregate) {
        state = node == view_rows ? " [state: groups, in the view's rows]" : " [state: groups]";
      }
      if (node->kind == planner::PlanNodeKind::kTemporalFilter) {
        state = " [state: rows until they leave]";
      }
      if (node->kind == planner::PlanNodeKind::kJoin) {
        const auto* join = static_cast<const planner::JoinNode*>(node);
        bool cleaned = !join->expiry[0].empty() || !join->expiry[1].empty();
        state = cleaned ? " [state: rows of each side, cleaned by watermark]"
                        : " [state: rows of each side]";
      }
      if (node->kind == planner::PlanNodeKind::kTopN) state = " [state: rows of each partition]";
      return planner::ExplainNode(*node) + state;
    };
    // A chain's nodes, then its partial step, which may take in the last node.
    auto describe_chain = [&](const std::vector<const planner::PlanNode*>& chain,
                              const planner::AggregateNode* combine, const std::string& indent) {
      bool by_slide = TakesHopBySlide(chain, combine);
      for (size_t i = 0; i < chain.size() - (by_slide ? 1 : 0); ++i) {
        lines.push_back(indent + describe(chain[i]));
      }
      if (combine) lines.push_back(indent + PartialAggregateLabel(*combine, by_slide));
    };
    describe_chain(stage.nodes, stage.branches.empty() ? stage.combine : nullptr, "  ");
    for (size_t b = 0; b < stage.branches.size(); ++b) {
      const BranchPlan& branch = stage.branches[b];
      lines.push_back(fmt::format("  branch {}: the rows above{}", b,
                                  branch.nodes.empty() && !branch.combine ? "" : ", then"));
      describe_chain(branch.nodes, branch.combine, "    ");
    }
    if (s == last) lines.push_back("  " + sink);
  }
  return lines;
}

}  // namespace stave::executor

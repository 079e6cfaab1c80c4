#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "executor/connectors/sink_target.h"
#include "planner/connector_spec.h"

namespace stave::executor {

/// The WITH options of a `connector = 'postgres'` sink, checked.
struct PostgresSinkOptions {
  enum class Mode { kUpsert, kAppend };
  enum class Commit { kProgress, kTwoPhase };

  /// What libpq connects with: a URL, or keyword=value pairs. Holds the password: never
  /// show it, log it or put it into an error.
  std::string connection_string;
  /// The target as users may see it: postgresql://user@host:port/dbname, no password.
  std::string display_target;
  std::string schema = "public";
  std::string table;
  std::vector<std::string> columns;  ///< The input's column names, in order.
  std::vector<DataType> types;       ///< Their types.
  std::vector<size_t> primary_key;   ///< Positions in `columns`; empty in append mode.
  Mode mode = Mode::kAppend;
  Commit commit = Commit::kProgress;
  bool create_table = true;
  /// 'max_rows_per_transaction': larger epochs are staged in parts of their own
  /// transactions, then merged into the table in one.
  uint64_t max_rows_per_transaction = 5000000;

  /// Checks `options` (without `connector` and `delivery`) against the sink's input.
  /// Throws SqlError 22023 naming the option at fault.
  static PostgresSinkOptions Parse(const std::map<std::string, std::string>& options,
                                   const planner::SinkInput& input);
  /// E.g. "postgres postgresql://u@h:5432/db table public.t, upsert on (k), commit=progress".
  std::string Describe() const;
};

/// A sink's connection to a PostgreSQL database (libpqxx). Each epoch becomes visible in one
/// transaction that also upserts the sink's row in `<schema>.stave_sink_progress(sink,
/// epoch)`, so a replay can tell which epochs the target already has. Upserts are prepared
/// `INSERT ... SELECT * FROM unnest($1::type[], ...) ON CONFLICT (key) DO UPDATE` statements
/// that bind one array per column (up to 10,000 rows each), deletes `DELETE ... USING
/// unnest(...)`, and appends go through COPY; values are always bound (or escaped for COPY),
/// identifiers quoted.
///
/// An epoch larger than max_rows_per_transaction (the backfill of a big view) is staged:
/// each part of it is copied into an unlogged staging table in a transaction of its own,
/// tagged with its epoch and part, so a delivery that fails midway resumes after the parts
/// already there; then one transaction merges the epoch's staged rows into the table, sets
/// the progress row and empties the staging table. Readers still see the epoch whole.
class PostgresSinkTarget : public SinkTarget {
 public:
  /// `sink` names the sink in the progress table and in prepared transaction ids.
  PostgresSinkTarget(std::string sink, PostgresSinkOptions options);
  ~PostgresSinkTarget() override;

  /// Connects, creates or checks the target table and the progress table, for two_phase
  /// also checks max_prepared_transactions, then forgets an earlier sink of the same name
  /// (its progress row and prepared transactions). Throws SqlError.
  void Create() override;

  void Connect() override;
  void Disconnect() noexcept override;
  uint64_t Recover(const std::optional<std::string>& keep) override;
  bool two_phase() const override {
    return options_.commit == PostgresSinkOptions::Commit::kTwoPhase;
  }
  void Prepare(uint64_t epoch, const std::string& id, const SinkChangeBatches& changes) override;
  void CommitPrepared(uint64_t epoch, const std::string& id) override;
  uint64_t max_changes_per_transaction() const override {
    return options_.max_rows_per_transaction;
  }
  void Deliver(uint64_t epoch, uint64_t count, const SinkChangeBatches& changes) override;
  void Drop() override;

  /// `stave:<sink>:`: the prefix of the ids of this sink's prepared transactions.
  std::string PreparedIdPrefix() const;

 private:
  /// Runs `work`, turning libpqxx's exceptions into SqlErrors that name the target.
  template <typename Work>
  auto Guarded(Work&& work) -> decltype(work());
  void CreateUnguarded();
  uint64_t RecoverUnguarded(const std::optional<std::string>& keep);
  void CommitPreparedUnguarded(uint64_t epoch, const std::string& id);
  /// Deliver for an epoch too large for one transaction.
  void DeliverStaged(uint64_t epoch, const SinkChangeBatches& changes);
  /// Writes the changes and the progress record inside the open transaction.
  void WriteEpoch(uint64_t epoch, const SinkChangeBatches& changes);
  /// Prepares the upsert and delete statements on a new connection.
  void PrepareStatements();
  /// Runs prepared `statement` over rows `rows` of `changes`, binding one array per column
  /// of `columns`.
  void WriteArrays(const std::string& statement, const Chunk& changes,
                   const std::vector<uint32_t>& rows, const std::vector<size_t>& columns);
  /// One COPY of the rows of every batch into `table`: `prefix` fields (already in COPY's
  /// text format) first, then (`with_op`) whether the row is a delete, then its columns.
  void CopyRows(const std::string& table, const std::vector<std::string>& columns,
                const std::string& prefix, const SinkChangeBatches& batches, bool with_op);
  void WriteProgress(uint64_t epoch);
  /// The last epoch the progress table records for this sink, 0 if none.
  uint64_t ReadProgress();
  /// The ids of this sink's prepared transactions.
  std::vector<std::string> ListPrepared();
  void Execute(const std::string& sql);

  std::string sink_;
  PostgresSinkOptions options_;
  std::string qualified_table_;     // "schema"."table", quoted.
  std::string qualified_progress_;  // "schema"."stave_sink_progress", quoted.
  std::string qualified_staging_;   // "schema"."stave_stage_<hash of the sink's name>".
  std::unique_ptr<pqxx::connection> connection_;
};

/// The planner's view of the postgres sink connector.
planner::ConnectorSpec PostgresConnectorSpec();

/// `name` quoted as a PostgreSQL identifier ("a""b").
std::string QuotePostgresIdentifier(std::string_view name);

}  // namespace stave::executor

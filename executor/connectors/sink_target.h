#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "executor/chunk.h"

namespace stave::executor {

/// A sink's changes travel in chunks of its columns. A change is an insert (in upsert mode,
/// an upsert: RowOp::kInsert) or a delete (RowOp::kDelete), of whose row the target's key
/// matters. An epoch's changes are compacted first: in upsert mode each key appears at most
/// once, so their order within the epoch does not matter.
inline bool IsSinkDelete(const Chunk& changes, size_t row) { return RowSign(changes.ops[row]) < 0; }

/// An epoch's changes, in parts of at most SinkWriter::kChangesPerRecord: the parts its
/// checkpoint keeps them in.
using SinkEpochChanges = std::vector<Chunk>;

/// How many changes `changes` holds.
inline uint64_t CountChanges(const SinkEpochChanges& changes) {
  uint64_t count = 0;
  for (const Chunk& part : changes) count += part.size();
  return count;
}

/// Hands an epoch's changes over in batches: calls `consume` once per batch, so that an
/// epoch of any size streams through bounded memory.
using SinkChangeBatches = std::function<void(const std::function<void(const Chunk&)>& consume)>;

/// The external system a sink writes to, as one connection that the sink's writer thread
/// drives. Every method may throw (a std::exception whose what() is for users) when the
/// target is unreachable or refuses; the writer then reconnects and retries, so each method
/// must be safe to call again after a failure whose outcome is unknown (a lost reply).
/// Not thread-safe.
class SinkTarget {
 public:
  virtual ~SinkTarget() = default;

  /// At CREATE SINK: checks the target (creating its table if asked), so that a wrong
  /// schema or a missing permission fails the statement, and clears what an earlier sink of
  /// the same name left there. Throws SqlError.
  virtual void Create() {}
  /// Opens the connection.
  virtual void Connect() = 0;
  /// Drops the connection, if any (after a failure). Never throws.
  virtual void Disconnect() noexcept = 0;
  /// After a (re)connection: rolls back every transaction an earlier run of this sink left
  /// prepared, except `keep` (a prepared epoch the checkpoint holds or is about to), and
  /// returns the last epoch the target has finished (0 if none).
  virtual uint64_t Recover(const std::optional<std::string>& keep) = 0;

  /// Whether the target keeps nothing (a blackhole): its epochs need no write-ahead.
  virtual bool discards() const { return false; }
  /// Whether the target can pre-commit an epoch (commit='two_phase').
  virtual bool two_phase() const { return false; }
  /// Writes an epoch's changes and its progress record in one transaction and prepares it
  /// under `id`, without committing.
  virtual void Prepare(uint64_t epoch, const std::string& id, const SinkChangeBatches& changes) {
    (void)epoch, (void)id, (void)changes;
  }
  /// Commits the transaction prepared for `epoch` under `id`. If it is no longer prepared,
  /// succeeds when the target has finished `epoch` (an earlier call's reply was lost), else
  /// throws.
  virtual void CommitPrepared(uint64_t epoch, const std::string& id) { (void)epoch, (void)id; }

  /// The most changes one transaction should write. A larger epoch is not pre-committed
  /// (it is owed instead), and Deliver may stage it in parts.
  virtual uint64_t max_changes_per_transaction() const { return UINT64_MAX; }

  /// Writes an epoch's `count` changes and its progress record, visible all at once, and
  /// commits. Each call hands over the same batches in the same order, so a target may
  /// resume a delivery that failed midway.
  virtual void Deliver(uint64_t epoch, uint64_t count, const SinkChangeBatches& changes) = 0;

  /// Removes what the sink keeps in the target besides its rows (its progress record,
  /// transactions it left prepared): DROP SINK. Best effort.
  virtual void Drop() = 0;
};

}  // namespace stave::executor

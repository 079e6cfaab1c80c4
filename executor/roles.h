#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "executor/query_result.h"
#include "parser/ast.h"

namespace stave::storage {
class Store;
}

namespace stave::executor {

/// A role that clients log in as. Only what authentication needs is kept: never the password.
struct Role {
  std::string name;
  /// PostgreSQL's text form of a SCRAM-SHA-256 verifier; empty: no password.
  std::string scram_verifier;
  /// "md5" followed by md5(password || name) in hex, for MD5 authentication; empty: none.
  std::string md5_hash;
  bool can_login = true;
};

/// The users (login roles) of the server, kept in the store next to the catalog and read at
/// start. CREATE/ALTER/DROP USER (and ROLE) change them; connections look them up to
/// authenticate. Thread-safe.
class Roles {
 public:
  /// The role that always exists: the bootstrap superuser, as PostgreSQL's `postgres`.
  static constexpr std::string_view kBootstrapUser = "stave";

  /// Reads the stored roles. Throws SqlError if the store cannot be read or an entry is
  /// malformed. REQUIRES: `store` outlives this.
  explicit Roles(storage::Store* store);

  /// Sets the bootstrap user's password (from the server's flags) and stores it, so that
  /// the password of the last start is the one in force.
  void SetBootstrapPassword(std::string_view password);

  /// The role named `name`, or nullopt.
  std::optional<Role> Find(std::string_view name) const;

  /// Runs CREATE, ALTER or DROP USER/ROLE. Throws SqlError: 42710 for a role that exists,
  /// 42704 for one that does not, 55006 for dropping the bootstrap user.
  QueryResult Execute(const parser::RoleStatement& statement);

 private:
  // Stores `role` durably, then publishes it. REQUIRES: mutex_ held.
  void PutLocked(Role role);
  // Sets the password of `role`: empty or nullopt clears it; a SCRAM verifier or an MD5
  // hash given as such is kept as it is, as PostgreSQL does.
  static void SetPassword(Role* role, const std::optional<std::string>& password);

  storage::Store* store_;
  mutable std::mutex mutex_;
  std::map<std::string, Role, std::less<>> roles_;  // GUARDED_BY(mutex_)
};

}  // namespace stave::executor

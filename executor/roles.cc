#include "executor/roles.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/password.h"
#include "common/sql_error.h"
#include "storage/store.h"

namespace stave::executor {
namespace {

constexpr std::string_view kObjectInUse = "55006";

std::string SerializeRole(const Role& role) {
  nlohmann::json entry;
  entry["scram_verifier"] = role.scram_verifier;
  entry["md5_hash"] = role.md5_hash;
  entry["login"] = role.can_login;
  return entry.dump();
}

Role DeserializeRole(const std::string& name, const std::string& text) {
  nlohmann::json entry = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!entry.is_object() || !entry.value("scram_verifier", nlohmann::json()).is_string() ||
      !entry.value("md5_hash", nlohmann::json()).is_string() ||
      !entry.value("login", nlohmann::json()).is_boolean()) {
    throw SqlError(sqlstate::kInternalError, fmt::format("malformed stored role \"{}\"", name));
  }
  Role role;
  role.name = name;
  role.scram_verifier = entry["scram_verifier"].get<std::string>();
  role.md5_hash = entry["md5_hash"].get<std::string>();
  role.can_login = entry["login"].get<bool>();
  return role;
}

bool IsMd5Hash(std::string_view text) {
  if (text.size() != 35 || !text.starts_with("md5")) return false;
  for (char c : text.substr(3)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

Roles::Roles(storage::Store* store) : store_(store) {
  for (auto& [name, entry] : store_->LoadRoles().ValueOrThrow()) {
    roles_[name] = DeserializeRole(name, entry);
  }
}

void Roles::SetBootstrapPassword(std::string_view password) {
  std::lock_guard<std::mutex> lock(mutex_);
  Role role;
  auto it = roles_.find(kBootstrapUser);
  if (it != roles_.end()) role = it->second;
  role.name = std::string(kBootstrapUser);
  role.can_login = true;
  SetPassword(&role, std::string(password));
  PutLocked(std::move(role));
}

std::optional<Role> Roles::Find(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = roles_.find(name);
  if (it != roles_.end()) return it->second;
  // The bootstrap user exists even before it has a password (then only trust lets it in).
  if (name == kBootstrapUser) return Role{std::string(kBootstrapUser), "", "", true};
  return std::nullopt;
}

QueryResult Roles::Execute(const parser::RoleStatement& statement) {
  std::lock_guard<std::mutex> lock(mutex_);
  QueryResult result;
  switch (statement.action) {
    case parser::RoleStatement::Action::kCreate: {
      const std::string& name = statement.names.front();
      if (roles_.contains(name) || name == kBootstrapUser) {
        throw SqlError(sqlstate::kDuplicateObject, fmt::format("role \"{}\" already exists", name),
                       statement.name_position);
      }
      Role role;
      role.name = name;
      role.can_login = statement.login.value_or(statement.is_user);
      if (statement.password) SetPassword(&role, *statement.password);
      PutLocked(std::move(role));
      result.command_tag = "CREATE ROLE";
      return result;
    }
    case parser::RoleStatement::Action::kAlter: {
      const std::string& name = statement.names.front();
      auto it = roles_.find(name);
      Role role;
      if (it != roles_.end()) {
        role = it->second;
      } else if (name == kBootstrapUser) {
        role.name = name;
      } else {
        throw SqlError(sqlstate::kUndefinedObject, fmt::format("role \"{}\" does not exist", name),
                       statement.name_position);
      }
      if (statement.login) role.can_login = *statement.login;
      if (statement.password) SetPassword(&role, *statement.password);
      PutLocked(std::move(role));
      result.command_tag = "ALTER ROLE";
      return result;
    }
    case parser::RoleStatement::Action::kDrop: {
      // Checked first, so that nothing is dropped when one name fails, as in PostgreSQL.
      for (const std::string& name : statement.names) {
        if (name == kBootstrapUser) {
          throw SqlError(kObjectInUse,
                         fmt::format("cannot drop role {} because it is required by the "
                                     "database system",
                                     name),
                         statement.name_position);
        }
        if (!roles_.contains(name) && !statement.if_exists) {
          throw SqlError(sqlstate::kUndefinedObject,
                         fmt::format("role \"{}\" does not exist", name), statement.name_position);
        }
      }
      storage::WriteBatch batch;
      for (const std::string& name : statement.names) batch.DeleteRole(name);
      store_->WriteDurably(&batch).ThrowIfError();
      for (const std::string& name : statement.names) roles_.erase(name);
      result.command_tag = "DROP ROLE";
      return result;
    }
  }
  return result;
}

void Roles::PutLocked(Role role) {
  storage::WriteBatch batch;
  batch.PutRole(role.name, SerializeRole(role));
  store_->WriteDurably(&batch).ThrowIfError();
  std::string name = role.name;
  roles_[name] = std::move(role);
}

void Roles::SetPassword(Role* role, const std::optional<std::string>& password) {
  role->scram_verifier.clear();
  role->md5_hash.clear();
  if (!password || password->empty()) return;  // PostgreSQL clears an empty password too.
  if (password::ParseScramVerifier(*password)) {
    role->scram_verifier = *password;
  } else if (IsMd5Hash(*password)) {
    role->md5_hash = *password;
  } else {
    role->scram_verifier = password::FormatScramVerifier(password::MakeScramVerifier(*password));
    role->md5_hash = password::Md5PasswordHash(*password, role->name);
  }
}

}  // namespace stave::executor

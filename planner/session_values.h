#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stave::planner {

/// What the session a statement is bound for holds that SQL can read: the user behind
/// current_user and session_user, the key behind pg_backend_pid(), and the settings that
/// current_setting(), set_config() and pg_settings show. The server's session implements it;
/// statements bound without a session (unit tests, view definitions at recovery) see
/// DefaultSessionValues().
class SessionValues {
 public:
  struct Setting {
    std::string name;  ///< As PostgreSQL spells it (DateStyle, TimeZone, ...).
    std::string value;
    std::string description;
    std::string default_value;  ///< What RESET gives.
  };

  virtual ~SessionValues() = default;
  virtual std::string UserName() const = 0;
  /// The process id of the connection's BackendKeyData; 0 without a connection.
  virtual int32_t BackendPid() const = 0;
  /// A setting's value by name, in any case; nullopt for a setting that does not exist.
  virtual std::optional<std::string> FindSetting(const std::string& name) const = 0;
  /// Every setting, in SHOW ALL's order.
  virtual std::vector<Setting> Settings() const = 0;
  /// set_config(name, value, is_local): assigns as SET (or SET LOCAL) does, with its errors,
  /// or resets the setting for a NULL value; returns the value the setting now has.
  virtual std::string SetConfig(const std::string& name, const std::optional<std::string>& value,
                                bool is_local, int position) = 0;
};

/// While alive, statements bound on this thread read `values`. Scopes nest and must be
/// destroyed in reverse order, on the thread that made them.
class ScopedSessionValues {
 public:
  explicit ScopedSessionValues(SessionValues* values);
  ~ScopedSessionValues();
  ScopedSessionValues(const ScopedSessionValues&) = delete;
  ScopedSessionValues& operator=(const ScopedSessionValues&) = delete;

 private:
  SessionValues* previous_;
};

/// The session of the statement being bound on this thread, or the defaults: user stave,
/// no backend, no settings that can change (set_config refuses with 0A000).
SessionValues& CurrentSessionValues();

}  // namespace stave::planner

#pragma once

#include <string>
#include <string_view>

namespace stave {

/// The one place that decides what is a secret and hides it, so that passwords given in
/// connector options, connection strings and CREATE/ALTER USER never reach SHOW, EXPLAIN, the
/// system tables, the admin API or the log.

/// Whether an option (a connector's WITH key, a librdkafka property, a libpq keyword) holds
/// a secret: its name has "password", "secret" or "token" in it, or it is a private key.
bool IsSecretOptionKey(std::string_view key);

/// What shows in place of a secret.
inline constexpr std::string_view kRedacted = "********";

/// A connection string without its secrets: a URL's `user:password@` loses the password
/// (postgresql://user@host/db), and secret query parameters (`?password=...`) and libpq
/// keywords (`password=... `, `password='...'`) lose their values to kRedacted.
std::string RedactConnectionString(std::string_view text);

/// A SQL statement's text with every secret replaced by kRedacted: the string after a
/// secret option's key and `=` (`password = '...'`, `'properties.sasl.password' = '...'`),
/// after PASSWORD (CREATE/ALTER USER), and the secrets of connection strings in any string
/// literal. The rest is kept as written.
std::string RedactSqlSecrets(std::string_view sql);

}  // namespace stave

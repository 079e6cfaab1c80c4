#include "common/redact.h"

#include <cctype>
#include <string>

namespace stave {
namespace {

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

bool IsKeywordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

// Redacts the values of secret `key=value` pairs separated by `separator` characters (libpq's
// keyword form: spaces; a URL's query: '&'). Values may be single-quoted in libpq's form.
std::string RedactKeyValues(std::string_view text, std::string_view separators) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    // A key: the run of keyword characters before '='.
    size_t key_start = i;
    while (i < text.size() && IsKeywordChar(text[i])) ++i;
    size_t key_end = i;
    size_t j = i;
    while (j < text.size() && text[j] == ' ') ++j;
    bool pair = key_end > key_start && j < text.size() && text[j] == '=';
    if (!pair) {
      if (i == key_start) ++i;  // Not a keyword character: copy it and go on.
      out.append(text.substr(key_start, i - key_start));
      continue;
    }
    ++j;  // After '='.
    while (j < text.size() && text[j] == ' ') ++j;
    size_t value_end = j;
    if (value_end < text.size() && text[value_end] == '\'') {
      ++value_end;
      while (value_end < text.size() && text[value_end] != '\'') {
        if (text[value_end] == '\\') ++value_end;
        ++value_end;
      }
      if (value_end < text.size()) ++value_end;  // The closing quote.
    } else {
      while (value_end < text.size() && separators.find(text[value_end]) == std::string::npos)
        ++value_end;
    }
    out.append(text.substr(key_start, j - key_start));
    if (IsSecretOptionKey(text.substr(key_start, key_end - key_start))) {
      out.append(kRedacted);
    } else {
      out.append(text.substr(j, value_end - j));
    }
    i = value_end;
  }
  return out;
}

}  // namespace

bool IsSecretOptionKey(std::string_view key) {
  std::string lower = Lower(key);
  for (std::string_view word : {"password", "passwd", "secret", "token"}) {
    if (lower.find(word) != std::string::npos) return true;
  }
  return lower == "sasl.oauthbearer.config" || lower == "ssl.key.pem" || lower == "ssl_key" ||
         lower == "sslpassword";
}

std::string RedactConnectionString(std::string_view text) {
  size_t scheme = text.find("://");
  if (scheme == std::string_view::npos) return RedactKeyValues(text, " \t\n");
  std::string out(text.substr(0, scheme + 3));
  size_t authority = scheme + 3;
  size_t authority_end = text.find_first_of("/?#", authority);
  if (authority_end == std::string_view::npos) authority_end = text.size();
  std::string_view host_part = text.substr(authority, authority_end - authority);
  // user:password@host: the password goes (the last '@' ends the user information).
  size_t at = host_part.rfind('@');
  if (at != std::string_view::npos) {
    std::string_view user_info = host_part.substr(0, at);
    size_t colon = user_info.find(':');
    out.append(user_info.substr(0, colon));
    out.append(host_part.substr(at));
  } else {
    out.append(host_part);
  }
  std::string_view rest = text.substr(authority_end);
  size_t query = rest.find('?');
  if (query == std::string_view::npos) {
    out.append(rest);
    return out;
  }
  out.append(rest.substr(0, query + 1));
  out.append(RedactKeyValues(rest.substr(query + 1), "&#"));
  return out;
}

std::string RedactSqlSecrets(std::string_view sql) {
  std::string out;
  // The last two things read outside literals: a secret key (quoted or not) then '=', or the
  // keyword PASSWORD, makes the next literal a secret.
  bool secret_next = false;
  bool after_secret_key = false;
  size_t i = 0;
  while (i < sql.size()) {
    char c = sql[i];
    if (c == '\'' || (c == '"')) {
      // A string literal or a quoted identifier; '' or "" inside escapes the quote.
      size_t end = i + 1;
      while (end < sql.size()) {
        if (sql[end] == c) {
          if (end + 1 < sql.size() && sql[end + 1] == c) {
            end += 2;
            continue;
          }
          break;
        }
        ++end;
      }
      size_t close = end < sql.size() ? end + 1 : end;
      std::string_view body = sql.substr(i + 1, end - i - 1);
      if (c == '\'' && secret_next) {
        out += "'";
        out += kRedacted;
        out += "'";
        secret_next = false;
        after_secret_key = false;
      } else if (c == '\'') {
        std::string redacted = RedactConnectionString(body);
        out += "'" + redacted + (close > end ? "'" : "");
        after_secret_key = IsSecretOptionKey(body);
        secret_next = false;
      } else {
        out.append(sql.substr(i, close - i));
        after_secret_key = IsSecretOptionKey(body);
        secret_next = false;
      }
      i = close;
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t end = i;
      while (end < sql.size() && IsKeywordChar(sql[end])) ++end;
      std::string_view word = sql.substr(i, end - i);
      out.append(word);
      if (Lower(word) == "password") {
        secret_next = true;  // PASSWORD 'x' (CREATE USER), and password = 'x'.
      } else {
        secret_next = false;
      }
      after_secret_key = IsSecretOptionKey(word);
      i = end;
      continue;
    }
    if (c == '=') {
      secret_next = secret_next || after_secret_key;
    } else if (!std::isspace(static_cast<unsigned char>(c))) {
      secret_next = false;
      after_secret_key = false;
    }
    out += c;
    ++i;
  }
  return out;
}

}  // namespace stave

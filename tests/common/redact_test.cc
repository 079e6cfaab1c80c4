#include "common/redact.h"

#include <gtest/gtest.h>

namespace stave {
namespace {

TEST(RedactTest, SecretOptionKeys) {
  for (const char* key : {"password", "PASSWORD", "properties.sasl.password", "ssl.key.password",
                          "client.secret", "sasl.oauthbearer.config", "api_token", "sslpassword"}) {
    EXPECT_TRUE(IsSecretOptionKey(key)) << key;
  }
  for (const char* key : {"url", "host", "user", "table", "properties.bootstrap.servers"}) {
    EXPECT_FALSE(IsSecretOptionKey(key)) << key;
  }
}

TEST(RedactTest, ConnectionStrings) {
  EXPECT_EQ(RedactConnectionString("postgresql://alice:s3cret@db.example:5432/app"),
            "postgresql://alice@db.example:5432/app");
  EXPECT_EQ(RedactConnectionString("postgresql://alice:p@ss@host/app?sslmode=require"),
            "postgresql://alice@host/app?sslmode=require");
  EXPECT_EQ(RedactConnectionString("postgres://host/app?user=bob&password=s3cret&sslmode=disable"),
            "postgres://host/app?user=bob&password=********&sslmode=disable");
  EXPECT_EQ(RedactConnectionString("postgresql://host"), "postgresql://host");
  EXPECT_EQ(RedactConnectionString("host=h port=5432 password=s3cret dbname=app"),
            "host=h port=5432 password=******** dbname=app");
  EXPECT_EQ(RedactConnectionString("host=h password = 'with space' user=u"),
            "host=h password = ******** user=u");
  EXPECT_EQ(RedactConnectionString("no secrets here"), "no secrets here");
}

TEST(RedactTest, SqlStatements) {
  EXPECT_EQ(RedactSqlSecrets("CREATE SINK s FROM v WITH (connector = 'postgres', "
                             "url = 'postgresql://u:pw1@h/db', table = 't')"),
            "CREATE SINK s FROM v WITH (connector = 'postgres', "
            "url = 'postgresql://u@h/db', table = 't')");
  EXPECT_EQ(RedactSqlSecrets("WITH (host = 'h', password = 'pw''2', user = 'u')"),
            "WITH (host = 'h', password = '********', user = 'u')");
  EXPECT_EQ(RedactSqlSecrets("WITH ('properties.sasl.password' = 'pw3', topic = 't')"),
            "WITH ('properties.sasl.password' = '********', topic = 't')");
  EXPECT_EQ(RedactSqlSecrets("CREATE USER alice WITH LOGIN PASSWORD 'pw4'"),
            "CREATE USER alice WITH LOGIN PASSWORD '********'");
  EXPECT_EQ(RedactSqlSecrets("alter user bob password 'pw5'"),
            "alter user bob password '********'");
  // Nothing secret: unchanged.
  std::string plain = "SELECT 'a=b', \"password\" FROM t WHERE x = 'password'";
  EXPECT_EQ(RedactSqlSecrets(plain), plain);
}

}  // namespace
}  // namespace stave

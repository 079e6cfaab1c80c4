#include "common/password.h"

#include <gtest/gtest.h>

namespace stave::password {
namespace {

// RFC 7677, section 3: user "user", password "pencil".
constexpr std::string_view kClientFirst = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
constexpr std::string_view kServerNonce = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
constexpr std::string_view kServerFirst =
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
constexpr std::string_view kClientFinal =
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
    "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
constexpr std::string_view kServerFinal = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

ScramVerifier Rfc7677Verifier() {
  return MakeScramVerifier("pencil", *Base64Decode("W22ZaJ0SNY7soEsUEjb6gQ=="), 4096);
}

TEST(PasswordTest, Rfc7677ExchangeSucceeds) {
  ScramServerExchange exchange(Rfc7677Verifier(), std::string(kServerNonce));
  std::string error;
  std::optional<std::string> server_first = exchange.HandleClientFirst(kClientFirst, &error);
  ASSERT_TRUE(server_first) << error;
  EXPECT_EQ(*server_first, kServerFirst);
  bool malformed = true;
  std::optional<std::string> server_final =
      exchange.HandleClientFinal(kClientFinal, &error, &malformed);
  ASSERT_TRUE(server_final) << error;
  EXPECT_EQ(*server_final, kServerFinal);
}

TEST(PasswordTest, Rfc7677ClientSideComputations) {
  std::string auth_message = std::string(kClientFirst.substr(3)) + "," + std::string(kServerFirst) +
                             "," + "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
  EXPECT_EQ(
      ScramClientProof("pencil", *Base64Decode("W22ZaJ0SNY7soEsUEjb6gQ=="), 4096, auth_message),
      "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=");
  EXPECT_EQ("v=" + ScramServerSignature(Rfc7677Verifier(), auth_message), kServerFinal);
}

TEST(PasswordTest, WrongPasswordFailsTheProof) {
  ScramServerExchange exchange(
      MakeScramVerifier("pencil2", *Base64Decode("W22ZaJ0SNY7soEsUEjb6gQ=="), 4096),
      std::string(kServerNonce));
  std::string error;
  ASSERT_TRUE(exchange.HandleClientFirst(kClientFirst, &error));
  bool malformed = true;
  EXPECT_FALSE(exchange.HandleClientFinal(kClientFinal, &error, &malformed));
  EXPECT_FALSE(malformed);
  EXPECT_EQ(error, "wrong SCRAM proof");
}

TEST(PasswordTest, MalformedAndTamperedMessagesAreRefused) {
  std::string error;
  bool malformed = false;
  {
    ScramServerExchange exchange(Rfc7677Verifier(), std::string(kServerNonce));
    EXPECT_FALSE(exchange.HandleClientFirst("p=tls-server-end-point,,n=,r=abc", &error));
    EXPECT_FALSE(exchange.HandleClientFirst("n,,n=user", &error));
    EXPECT_FALSE(exchange.HandleClientFirst("garbage", &error));
    EXPECT_FALSE(exchange.HandleClientFirst("n,a=admin,n=user,r=abc", &error));
  }
  {
    // The nonce must be the one of this exchange.
    ScramServerExchange exchange(Rfc7677Verifier(), "otherNonce");
    ASSERT_TRUE(exchange.HandleClientFirst(kClientFirst, &error));
    EXPECT_FALSE(exchange.HandleClientFinal(kClientFinal, &error, &malformed));
    EXPECT_TRUE(malformed);
  }
  {
    // The channel-binding echo must repeat the GS2 header.
    ScramServerExchange exchange(Rfc7677Verifier(), std::string(kServerNonce));
    ASSERT_TRUE(exchange.HandleClientFirst(kClientFirst, &error));
    std::string tampered(kClientFinal);
    tampered.replace(0, 6, "c=eSws");
    EXPECT_FALSE(exchange.HandleClientFinal(tampered, &error, &malformed));
    EXPECT_TRUE(malformed);
  }
}

TEST(PasswordTest, VerifierTextFormatRoundTrips) {
  ScramVerifier verifier = Rfc7677Verifier();
  std::string text = FormatScramVerifier(verifier);
  // PostgreSQL's pg_authid.rolpassword form.
  EXPECT_TRUE(text.starts_with("SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$")) << text;
  std::optional<ScramVerifier> parsed = ParseScramVerifier(text);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->iterations, 4096);
  EXPECT_EQ(parsed->salt, verifier.salt);
  EXPECT_EQ(parsed->stored_key, verifier.stored_key);
  EXPECT_EQ(parsed->server_key, verifier.server_key);
  EXPECT_TRUE(ScramVerifierMatches(*parsed, "pencil"));
  EXPECT_FALSE(ScramVerifierMatches(*parsed, "Pencil"));
  EXPECT_FALSE(ParseScramVerifier("md5abc"));
  EXPECT_FALSE(ParseScramVerifier("SCRAM-SHA-256$x:AAAA$AAAA:AAAA"));
  EXPECT_FALSE(ParseScramVerifier("SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$AAAA:AAAA"));
}

TEST(PasswordTest, NewVerifiersHaveFreshSalts) {
  ScramVerifier a = MakeScramVerifier("secret");
  ScramVerifier b = MakeScramVerifier("secret");
  EXPECT_EQ(a.salt.size(), kScramSaltLength);
  EXPECT_NE(a.salt, b.salt);
  EXPECT_NE(a.stored_key, b.stored_key);
  EXPECT_TRUE(ScramVerifierMatches(a, "secret"));
}

TEST(PasswordTest, Md5MatchesPostgres) {
  // SELECT 'md5' || md5('secret' || 'alice') in PostgreSQL.
  EXPECT_EQ(Md5PasswordHash("secret", "alice"), "md54a0a68b43b6cd5cf266fa02f196e2371");
  // What libpq answers to the salt 01 02 03 04.
  EXPECT_EQ(Md5Response("md54a0a68b43b6cd5cf266fa02f196e2371", "\x01\x02\x03\x04"),
            "md598a0412b9c31436fc53776e863350083");
}

TEST(PasswordTest, Base64RejectsJunk) {
  EXPECT_EQ(Base64Decode(""), "");
  EXPECT_EQ(Base64Decode("YQ=="), "a");
  EXPECT_EQ(Base64Decode("YWI="), "ab");
  EXPECT_FALSE(Base64Decode("YQ="));
  EXPECT_FALSE(Base64Decode("Y=Q="));
  EXPECT_FALSE(Base64Decode("YQ!="));
  EXPECT_EQ(Base64Encode("ab"), "YWI=");
}

}  // namespace
}  // namespace stave::password

#include "server/admin_handler.h"

#include <gtest/gtest.h>

#include "common/password.h"

namespace stave::server {
namespace {

http::HttpRequest Request(std::string method, std::string path, std::string authorization = "") {
  http::HttpRequest request;
  request.method = std::move(method);
  request.path = std::move(path);
  request.target = request.path;
  if (!authorization.empty()) request.headers.emplace_back("authorization", authorization);
  return request;
}

TEST(AdminEndpointTest, HealthAndReadinessBeforeRecovery) {
  AdminEndpoint endpoint({}, nullptr);
  EXPECT_EQ(endpoint.Handle(Request("GET", "/healthz")).status, 200);
  http::HttpResponse ready = endpoint.Handle(Request("GET", "/readyz"));
  EXPECT_EQ(ready.status, 503);
  EXPECT_EQ(ready.body, "recovering\n");
  // Routes that need the database wait for it; unknown routes are 404 at once.
  EXPECT_EQ(endpoint.Handle(Request("GET", "/api/v1/jobs")).status, 503);
  EXPECT_EQ(endpoint.Handle(Request("GET", "/metrics")).status, 503);
  EXPECT_EQ(endpoint.Handle(Request("GET", "/api/v1/nothing")).status, 404);
  endpoint.set_ready(true);
  EXPECT_EQ(endpoint.Handle(Request("GET", "/readyz")).status, 200);
}

TEST(AdminEndpointTest, RecoveryProgressWhileRecovering) {
  auto recovery = std::make_shared<executor::RecoveryProgress>();
  AdminEndpoint endpoint({"", false, recovery}, nullptr);
  recovery->Start(10, 41);
  recovery->ObjectDone();
  recovery->ObjectDone();
  recovery->SetPhase("restoring state");
  http::HttpResponse ready = endpoint.Handle(Request("GET", "/readyz"));
  EXPECT_EQ(ready.status, 503);
  EXPECT_EQ(ready.body, "recovering\n2 objects of 10 planned, restoring state\n");
  http::HttpResponse jobs = endpoint.Handle(Request("GET", "/api/v1/jobs"));
  EXPECT_EQ(jobs.status, 503);
  EXPECT_NE(jobs.body.find(R"("objects_done":2)"), std::string::npos) << jobs.body;
  EXPECT_NE(jobs.body.find(R"("objects_total":10)"), std::string::npos) << jobs.body;
  EXPECT_NE(jobs.body.find(R"("state":"running")"), std::string::npos) << jobs.body;
}

TEST(AdminEndpointTest, TokenGuardsAllButHealthAndReadiness) {
  AdminEndpoint endpoint({"s3cret", false, nullptr}, nullptr);
  EXPECT_EQ(endpoint.Handle(Request("GET", "/healthz")).status, 200);
  EXPECT_EQ(endpoint.Handle(Request("GET", "/readyz")).status, 503);
  // The page: a browser is challenged for Basic credentials, whose password is the token.
  http::HttpResponse refused = endpoint.Handle(Request("GET", "/"));
  EXPECT_EQ(refused.status, 401);
  ASSERT_EQ(refused.headers.size(), 1u);
  EXPECT_EQ(refused.headers[0].second.substr(0, 6), "Basic ");
  std::string basic = "Basic " + password::Base64Encode("anyone:s3cret");
  http::HttpResponse page = endpoint.Handle(Request("GET", "/", basic));
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("checkpoint-chart"), std::string::npos);
  EXPECT_EQ(endpoint.Handle(Request("GET", "/index.html", "Bearer s3cret")).status, 200);
  EXPECT_EQ(endpoint.Handle(Request("POST", "/", basic)).status, 405);
  EXPECT_EQ(endpoint.Handle(Request("GET", "/metrics")).headers[0].second.substr(0, 7), "Bearer ");
  for (const char* path :
       {"/", "/api/v1/jobs", "/metrics", "/api/v1/checkpoints", "/api/v1/nothing"}) {
    http::HttpResponse denied = endpoint.Handle(Request("GET", path));
    EXPECT_EQ(denied.status, 401) << path;
    EXPECT_EQ(endpoint.Handle(Request("GET", path, "Bearer s3cre")).status, 401) << path;
    EXPECT_EQ(endpoint.Handle(Request("GET", path, "Bearer s3cretX")).status, 401) << path;
    EXPECT_EQ(endpoint.Handle(Request("GET", path, "Basic s3cret")).status, 401) << path;
  }
  // With the token: past the guard (503: no database yet; 404: no such route).
  EXPECT_EQ(endpoint.Handle(Request("GET", "/api/v1/jobs", "Bearer s3cret")).status, 503);
  EXPECT_EQ(endpoint.Handle(Request("GET", "/api/v1/nothing", "bearer s3cret")).status, 404);
  EXPECT_EQ(endpoint.Handle(Request("GET", "/api/v1/jobs", basic)).status, 503);
}

TEST(AdminEndpointTest, FailpointsOnlyWhenEnabled) {
  AdminEndpoint disabled({}, nullptr);
  EXPECT_EQ(disabled.Handle(Request("POST", "/api/v1/failpoints")).status, 404);
  AdminEndpoint enabled({"", true, nullptr}, nullptr);
  http::HttpRequest bad = Request("POST", "/api/v1/failpoints");
  bad.body = R"({"spec": "no_such_failpoint=crash"})";
  EXPECT_EQ(enabled.Handle(bad).status, 400);
  EXPECT_EQ(enabled.Handle(Request("GET", "/api/v1/failpoints")).status, 405);
  http::HttpRequest off = Request("POST", "/api/v1/failpoints");
  EXPECT_EQ(enabled.Handle(off).status, 200);  // An empty spec disarms everything.
}

TEST(AdminEndpointTest, LoopbackAddresses) {
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackAddress("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackAddress("::1"));
  EXPECT_TRUE(IsLoopbackAddress("localhost"));
  EXPECT_FALSE(IsLoopbackAddress("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackAddress("::"));
  EXPECT_FALSE(IsLoopbackAddress("10.0.0.1"));
  EXPECT_FALSE(IsLoopbackAddress("1270.0.0.1"));
}

TEST(AdminEndpointTest, TokensAsBearerOrBasicPassword) {
  EXPECT_TRUE(AuthorizationCarriesToken("Bearer abc", "abc"));
  EXPECT_TRUE(AuthorizationCarriesToken("bearer abc", "abc"));
  EXPECT_FALSE(AuthorizationCarriesToken("Bearer abd", "abc"));
  EXPECT_FALSE(AuthorizationCarriesToken("Bearer abc ", "abc"));
  EXPECT_FALSE(AuthorizationCarriesToken("Bearer ", ""));
  EXPECT_FALSE(AuthorizationCarriesToken("", "abc"));
  EXPECT_FALSE(AuthorizationCarriesToken("Bearerabc", "abc"));
  EXPECT_FALSE(AuthorizationCarriesToken("Token abc", "abc"));
  // Basic: the password is the token, whatever the user name.
  EXPECT_TRUE(AuthorizationCarriesToken("Basic " + password::Base64Encode("stave:abc"), "abc"));
  EXPECT_TRUE(AuthorizationCarriesToken("BASIC " + password::Base64Encode(":abc"), "abc"));
  EXPECT_TRUE(AuthorizationCarriesToken("Basic " + password::Base64Encode("a:b:c"), "b:c"));
  EXPECT_FALSE(AuthorizationCarriesToken("Basic " + password::Base64Encode("stave:abd"), "abc"));
  EXPECT_FALSE(AuthorizationCarriesToken("Basic " + password::Base64Encode("abc"), "abc"));
  EXPECT_FALSE(AuthorizationCarriesToken("Basic " + password::Base64Encode("abc:"), "abc"));
  EXPECT_FALSE(AuthorizationCarriesToken("Basic not-base64!", "abc"));
  EXPECT_FALSE(AuthorizationCarriesToken("Basic " + password::Base64Encode("u:"), ""));
}

}  // namespace
}  // namespace stave::server

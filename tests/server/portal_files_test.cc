// The portal's files at /ui/ (server/portal_files.h), through a real server on
// 127.0.0.1: the build's files, index.html for the portal's own routes, nothing
// outside the folder, and /ui/config.json telling the browser how to sign in.
#include "server/portal_files.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "client/api_client.h"
#include "server/server.h"
#include "tests/testing/test_server.h"

namespace tessera {
namespace {

class PortalFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("tessera-portal-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "dist" / "assets");
    Write(root_ / "dist" / "index.html", "<!doctype html><div id=root></div>");
    Write(root_ / "dist" / "assets" / "index-3f2a.js", "console.log(1)");
    Write(root_ / "secret.txt", "not the portal's");
  }
  void TearDown() override {
    client_.reset();
    server_.reset();
    std::filesystem::remove_all(root_);
  }
  static void Write(const std::filesystem::path& p, const std::string& text) { std::ofstream(p) << text; }

  void Start(ServerOptions options) {
    options.ui_dir = (root_ / "dist").string();
    server_ = testing::StartLocalServer((root_ / "data").string(), std::move(options));
    ASSERT_NE(server_, nullptr);
    client_ = std::make_unique<ApiClient>(server_->url(), "");  // no token: the portal's files need none
  }
  ApiResponse Get(const std::string& path, const std::string& method = "GET") {
    auto r = client_->Request(method, path);
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r.has_value() ? *r : ApiResponse{};
  }

  std::filesystem::path root_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ApiClient> client_;
};

TEST_F(PortalFilesTest, ServesTheBuildAndIndexForThePortalsRoutes) {
  Start({});
  ApiResponse index = Get("/ui/");
  EXPECT_EQ(index.status, 200);
  EXPECT_EQ(index.body, "<!doctype html><div id=root></div>");
  EXPECT_EQ(index.content_type, "text/html; charset=utf-8");
  // A shared link into the portal draws its view: the app, not a 404.
  ApiResponse route = Get("/ui/ns/team-nlp/notebooks/nb1");
  EXPECT_EQ(route.status, 200);
  EXPECT_EQ(route.body, index.body);
  ApiResponse asset = Get("/ui/assets/index-3f2a.js");
  EXPECT_EQ(asset.status, 200);
  EXPECT_EQ(asset.body, "console.log(1)");
  EXPECT_EQ(asset.content_type, "text/javascript; charset=utf-8");
  // A missing file is 404, not the app (a stale tab asking for an old asset).
  EXPECT_EQ(Get("/ui/assets/index-old.js").status, 404);
  EXPECT_EQ(Get("/ui").status, 301);
}

TEST_F(PortalFilesTest, NothingOutsideItsFolderAndOnlyReads) {
  Start({});
  ApiResponse up = Get("/ui/../secret.txt");
  EXPECT_NE(up.body, "not the portal's");
  ApiResponse encoded = Get("/ui/%2e%2e/secret.txt");
  EXPECT_NE(encoded.body, "not the portal's");
  ApiResponse post = Get("/ui/", "POST");
  EXPECT_EQ(post.status, 405);
  EXPECT_NE(post.body.find("read with GET"), std::string::npos) << post.body;
  // The API beside it is untouched: still asks for a token.
  EXPECT_EQ(Get("/api/v1/namespaces").status, 401);
}

TEST_F(PortalFilesTest, ConfigSaysWhichIdentityProviderTheBrowserMaySignInWith) {
  Start({});
  nlohmann::json none = nlohmann::json::parse(Get("/ui/config.json").body);
  EXPECT_TRUE(none["oidc"].is_null()) << none;

  server_.reset();
  ServerOptions options;
  // Never contacted here: its keys are fetched on a token's first use, and no token is sent.
  options.oidc = OidcOptions{.issuer_url = "https://login.example.test/tenant/v2.0", .client_id = "tessera-portal"};
  Start(std::move(options));
  nlohmann::json oidc = nlohmann::json::parse(Get("/ui/config.json").body);
  EXPECT_EQ(oidc["oidc"]["issuerUrl"], "https://login.example.test/tenant/v2.0") << oidc;
  EXPECT_EQ(oidc["oidc"]["clientId"], "tessera-portal") << oidc;
}

TEST(PortalFilesUnbuiltTest, SaysHowToBuildThePortal) {
  PortalFiles files("", nlohmann::json::object());
  HttpRequest get{.method = "GET", .path = "/ui/"};
  HttpResponse r = files.Serve(get);
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find("npm ci && npm run build"), std::string::npos) << r.body;
}

}  // namespace
}  // namespace tessera

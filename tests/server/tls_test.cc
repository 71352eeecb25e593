// The API server over HTTPS on 127.0.0.1, with a self-signed certificate made
// at test time: a client that trusts it works (requests and watches), one that
// does not is refused with the reason, and a plain-HTTP request to the HTTPS
// port gets a clear answer while the server keeps serving.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "client/api_client.h"
#include "server/server.h"
#include "tests/testing/self_signed_cert.h"
#include "tests/testing/test_dirs.h"

namespace tessera {
namespace {

using nlohmann::json;
using testing::CertFiles;
using testing::WriteSelfSignedCert;

const json kNamespace{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "secure"}}}};

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-tls");
    cert_ = WriteSelfSignedCert(dir_, "server");
    ASSERT_FALSE(cert_.cert.empty()) << "could not make a test certificate";
    auto s = Server::Start(Options(cert_));
    ASSERT_TRUE(s.has_value()) << s.error().ToString();
    server_ = std::move(*s);
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  ServerOptions Options(const CertFiles& files) const {
    ServerOptions options;
    options.data_dir = (dir_ / "data").string();
    options.http.port = 0;
    options.http.tls_cert_file = files.cert;
    options.http.tls_key_file = files.key;
    return options;
  }
  std::string HttpsUrl() const { return "https://127.0.0.1:" + std::to_string(server_->port()); }
  ApiClient Trusting(const std::string& ca_file) {
    return ApiClient(HttpsUrl(), server_->admin_token(), {.certificate_authority = ca_file});
  }

  std::filesystem::path dir_;
  CertFiles cert_;
  std::unique_ptr<Server> server_;
};

TEST_F(TlsTest, ServerSaysItServesHttps) {
  EXPECT_EQ(server_->url(), HttpsUrl());
}

// A client that trusts the server's certificate creates and reads an object.
TEST_F(TlsTest, ClientTrustingTheCertificateCreatesAndGets) {
  ApiClient client = Trusting(cert_.cert);
  auto created = client.Request("POST", "/api/v1/namespaces", kNamespace.dump());
  ASSERT_TRUE(created.has_value()) << created.error().ToString();
  EXPECT_EQ(created->status, 201) << created->body;
  auto got = client.Request("GET", "/api/v1/namespaces/secure");
  ASSERT_TRUE(got.has_value()) << got.error().ToString();
  EXPECT_EQ(got->status, 200);
  EXPECT_EQ(json::parse(got->body)["metadata"]["name"], "secure");
}

// A watch streams over TLS as over plain HTTP (the server reads and writes the
// TLS stream at once while streaming).
TEST_F(TlsTest, WatchStreamsOverTls) {
  std::vector<json> events;
  std::thread watcher([&] {
    ApiClient w = Trusting(cert_.cert);
    Status s = w.Stream("/api/v1/namespaces?watch=true&labelSelector=watched", [&](const std::string& line) {
      events.push_back(json::parse(line));
      return false;  // one event is enough
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the watch register
  json ns = kNamespace;
  ns["metadata"]["labels"]["watched"] = "yes";
  ApiClient client = Trusting(cert_.cert);
  ASSERT_EQ(client.Request("POST", "/api/v1/namespaces", ns.dump())->status, 201);
  watcher.join();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[0]["object"]["metadata"]["name"], "secure");
}

// Plain HTTP to the HTTPS port: a 400 Status saying to use https://, and the
// server goes on serving HTTPS.
TEST_F(TlsTest, PlainHttpToTheTlsPortIsRefusedAndTheServerKeepsServing) {
  ApiClient plain("http://127.0.0.1:" + std::to_string(server_->port()), server_->admin_token());
  auto r = plain.Request("GET", "/api/v1/namespaces");
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->status, 400);
  const json status = json::parse(r->body);
  EXPECT_EQ(status["reason"], "BadRequest");
  EXPECT_NE(status["message"].get<std::string>().find("https://"), std::string::npos) << r->body;
  ApiClient client = Trusting(cert_.cert);
  EXPECT_EQ(client.Request("GET", "/api/v1/namespaces/default")->status, 200);
}

// A client that trusts only the system's CAs is refused: the error says the
// certificate is not trusted, why, and which flags fix it; nothing was sent.
TEST_F(TlsTest, ClientNotTrustingTheCertificateIsRefused) {
  ApiClient client(HttpsUrl(), server_->admin_token());
  auto r = client.Request("POST", "/api/v1/namespaces", kNamespace.dump());
  ASSERT_FALSE(r.has_value());
  const std::string message = r.error().message();
  EXPECT_NE(message.find("is not trusted (self-signed certificate)"), std::string::npos) << message;
  EXPECT_NE(message.find("--certificate-authority"), std::string::npos) << message;
  ApiClient trusting = Trusting(cert_.cert);
  EXPECT_EQ(trusting.Request("GET", "/api/v1/namespaces/secure")->status, 404);  // and the server serves on
}

// Trusting another CA is no better than trusting none.
TEST_F(TlsTest, ClientTrustingAnotherCaIsRefused) {
  const CertFiles other = WriteSelfSignedCert(dir_, "other");
  ApiClient client = Trusting(other.cert);
  auto r = client.Request("GET", "/api/v1/namespaces");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("is not trusted"), std::string::npos) << r.error().message();
}

// A trusted certificate for other names does not do for 127.0.0.1.
TEST_F(TlsTest, CertificateForAnotherHostIsRefused) {
  server_.reset();
  const CertFiles elsewhere = WriteSelfSignedCert(dir_, "elsewhere", "DNS:api.example.com");
  auto s = Server::Start(Options(elsewhere));
  ASSERT_TRUE(s.has_value()) << s.error().ToString();
  server_ = std::move(*s);
  ApiClient client = Trusting(elsewhere.cert);
  auto r = client.Request("GET", "/api/v1/namespaces");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("is not valid for 127.0.0.1 (IP address mismatch)"), std::string::npos)
      << r.error().message();
}

// --insecure-skip-tls-verify accepts the certificate unchecked; with a CA file
// as well it is refused, as kubectl refuses it.
TEST_F(TlsTest, InsecureSkipVerifyAcceptsAnyCertificateButNotWithACaFile) {
  ApiClient insecure(HttpsUrl(), server_->admin_token(), {.insecure_skip_tls_verify = true});
  EXPECT_EQ(insecure.Request("GET", "/api/v1/namespaces/default")->status, 200);
  ApiClient both(HttpsUrl(), server_->admin_token(),
                 {.certificate_authority = cert_.cert, .insecure_skip_tls_verify = true});
  auto r = both.Request("GET", "/api/v1/namespaces/default");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("with the insecure flag is not allowed"), std::string::npos)
      << r.error().message();
}

// A key that is not the certificate's is a start-up error naming both files.
TEST_F(TlsTest, KeyOfAnotherCertificateIsRefusedAtStart) {
  const CertFiles other = WriteSelfSignedCert(dir_, "other");
  ServerOptions options = Options(cert_);
  options.http.tls_key_file = other.key;
  options.data_dir = (dir_ / "data2").string();
  auto s = Server::Start(options);
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message().find("TLS key " + other.key + " (for the certificate " + cert_.cert +
                                     "): key values mismatch"),
            std::string::npos)
      << s.error().message();
}

}  // namespace
}  // namespace tessera

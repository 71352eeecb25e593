// TeamClusterTest: a real server on 127.0.0.1 with one team's namespace
// ("team"), a ResourceFlavor "gpu", a ClusterQueue "cq" of 8 GPUs, the
// namespace's LocalQueue "default", and one registered node of 8 A100s, for
// server-level tests of controllers where the test acts as the node's agent.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "agent/node_registration.h"
#include "client/api_client.h"
#include "server/api/api_handler.h"
#include "server/server.h"
#include "tests/testing/api_polling.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"

namespace tessera::testing {

class TeamClusterTest : public ::testing::Test {
 protected:
  explicit TeamClusterTest(std::string dir_prefix) : dir_prefix_(std::move(dir_prefix)) {}

  void SetUp() override {
    using nlohmann::json;
    dir_ = FreshTestDir(dir_prefix_);
    server_ = StartLocalServer(dir_.string(), server_options_);
    ASSERT_NE(server_, nullptr);
    client_ = std::make_unique<ApiClient>(server_->url(), server_->admin_token());
    Create({{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team"}}}});
    Create({{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "ResourceFlavor"}, {"metadata", {{"name", "gpu"}}}});
    Create({{"apiVersion", "kueue.x-k8s.io/v1beta1"},
            {"kind", "ClusterQueue"},
            {"metadata", {{"name", "cq"}}},
            {"spec",
             {{"namespaceSelector", json::object()},
              {"resourceGroups",
               {{{"coveredResources", {"nvidia.com/gpu"}},
                 {"flavors",
                  {{{"name", "gpu"}, {"resources", {{{"name", "nvidia.com/gpu"}, {"nominalQuota", 8}}}}}}}}}}}}});
    Create({{"apiVersion", "kueue.x-k8s.io/v1beta1"},
            {"kind", "LocalQueue"},
            {"metadata", {{"name", "default"}, {"namespace", "team"}}},
            {"spec", {{"clusterQueue", "cq"}}}});
    Node n{.name = "node-1", .cpu_milli = 64000, .memory_bytes = int64_t{512} << 30};
    for (int g = 0; g < 8; ++g) {
      n.gpus.push_back(GpuDevice{.index = g, .uuid = "gpu" + std::to_string(g), .model = "A100-80GB",
                                 .memory_bytes = int64_t{80} << 30});
    }
    Create(NodeObject(n, true, Rfc3339Now()));
  }
  void TearDown() override {
    client_.reset();
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  void Create(const nlohmann::json& obj) {
    auto r = client_->Request("POST", ObjectPath(obj, false), obj.dump());
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 201) << obj.dump() << "\n" << r->body;
  }
  nlohmann::json WaitFor(const std::string& path, const std::function<bool(const nlohmann::json&)>& ready) {
    return WaitForObject(*client_, path, ready);
  }

  std::string dir_prefix_;
  ServerOptions server_options_;  // what a fixture sets before SetUp (its data_dir is dir_)
  std::filesystem::path dir_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ApiClient> client_;
};

}  // namespace tessera::testing

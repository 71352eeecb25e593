// The Services' variables a pod gets, in the kubelet's names and order.
#include "agent/service_env.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

using nlohmann::json;

json Service(const std::string& name, const std::string& ip, json ports) {
  return json{{"apiVersion", "v1"},
              {"kind", "Service"},
              {"metadata", {{"name", name}, {"namespace", "team-a"}}},
              {"spec", {{"clusterIP", ip}, {"ports", std::move(ports)}}}};
}

TEST(ServiceEnvTest, VariablesAreTheKubeletsForEveryServiceWithAClusterIp) {
  const std::vector<json> services = {
      Service("redis-primary", "10.96.0.11", json::array({{{"name", "redis"}, {"port", 6379}}})),
      Service("headless", "None", json::array({{{"port", 80}}})),
      Service("api", "10.96.0.12",
              json::array({{{"name", "http"}, {"port", 80}, {"protocol", "TCP"}},
                           {{"name", "dns"}, {"port", 53}, {"protocol", "UDP"}}}))};
  const auto vars = ServiceLinkVariables(services);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"API_SERVICE_HOST", "10.96.0.12"},
      {"API_SERVICE_PORT", "80"},
      {"API_SERVICE_PORT_HTTP", "80"},
      {"API_SERVICE_PORT_DNS", "53"},
      {"API_PORT", "tcp://10.96.0.12:80"},
      {"API_PORT_80_TCP", "tcp://10.96.0.12:80"},
      {"API_PORT_80_TCP_PROTO", "tcp"},
      {"API_PORT_80_TCP_PORT", "80"},
      {"API_PORT_80_TCP_ADDR", "10.96.0.12"},
      {"API_PORT_53_UDP", "udp://10.96.0.12:53"},
      {"API_PORT_53_UDP_PROTO", "udp"},
      {"API_PORT_53_UDP_PORT", "53"},
      {"API_PORT_53_UDP_ADDR", "10.96.0.12"},
      {"REDIS_PRIMARY_SERVICE_HOST", "10.96.0.11"},
      {"REDIS_PRIMARY_SERVICE_PORT", "6379"},
      {"REDIS_PRIMARY_SERVICE_PORT_REDIS", "6379"},
      {"REDIS_PRIMARY_PORT", "tcp://10.96.0.11:6379"},
      {"REDIS_PRIMARY_PORT_6379_TCP", "tcp://10.96.0.11:6379"},
      {"REDIS_PRIMARY_PORT_6379_TCP_PROTO", "tcp"},
      {"REDIS_PRIMARY_PORT_6379_TCP_PORT", "6379"},
      {"REDIS_PRIMARY_PORT_6379_TCP_ADDR", "10.96.0.11"}};
  EXPECT_EQ(vars, want);
}

TEST(ServiceEnvTest, TheContainersOwnVariablesWinAndComeAfter) {
  json pod{{"spec",
            {{"containers",
              json::array({{{"name", "main"},
                            {"env", json::array({{{"name", "API_SERVICE_HOST"}, {"value", "mine"}},
                                                 {{"name", "URL"}, {"value", "http://$(API_SERVICE_HOST)"}}})}}})}}}};
  const std::vector<json> services = {Service("api", "10.96.0.12", json::array({{{"port", 80}}}))};
  const json out = WithServiceLinks(pod, services);
  const json& env = out["spec"]["containers"][0]["env"];
  ASSERT_TRUE(env.is_array());
  EXPECT_EQ(env[0]["name"], "API_SERVICE_PORT") << env.dump();
  int host = 0;
  for (const json& e : env) host += e["name"] == "API_SERVICE_HOST";
  EXPECT_EQ(host, 1);
  EXPECT_EQ(env[env.size() - 2]["value"], "mine");
  EXPECT_EQ(env.back()["name"], "URL");
  EXPECT_EQ(WithServiceLinks(pod, {}), pod);
}

}  // namespace
}  // namespace tessera

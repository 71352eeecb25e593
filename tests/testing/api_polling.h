// Reaching objects through the API in end-to-end tests: their paths, and waiting
// on them (the controllers and agents work in the background, so a test polls
// until what it expects holds).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "api/kinds.h"
#include "client/api_client.h"

namespace tessera {

// GETs `path` until `ready` holds for the object, and returns it; on timeout,
// records a failure naming the path and the last object seen.
inline nlohmann::json WaitForObject(ApiClient& client, const std::string& path,
                                    const std::function<bool(const nlohmann::json&)>& ready,
                                    std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  nlohmann::json last;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = client.Request("GET", path);
    if (r && r->status == 200) {
      last = nlohmann::json::parse(r->body);
      if (ready(last)) return last;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ADD_FAILURE() << "timed out waiting on " << path << "; last: " << last.dump();
  return last;
}

// The REST path of an object's collection (item false) or of the object itself,
// from its apiVersion, kind, namespace (default: "default") and name.
inline std::string ObjectPath(const nlohmann::json& obj, bool item) {
  const KindInfo* k = FindKindByApiVersion(obj.value("apiVersion", ""), obj.value("kind", ""));
  EXPECT_NE(k, nullptr) << obj.dump();
  if (k == nullptr) return "/";
  std::string p = k->group.empty() ? "/api/" + std::string(k->version)
                                   : "/apis/" + std::string(k->group) + "/" + std::string(k->version);
  if (k->namespaced) p += "/namespaces/" + obj["metadata"].value("namespace", std::string("default"));
  p += "/" + std::string(k->plural);
  if (item) p += "/" + obj["metadata"]["name"].get<std::string>();
  return p;
}

// A field ("status", "reason", "message") of condition `type` in obj.status.conditions; "" when absent.
inline std::string ConditionField(const nlohmann::json& obj, const std::string& type, const char* field) {
  for (const nlohmann::json& c : obj.value("status", nlohmann::json::object()).value("conditions", nlohmann::json::array())) {
    if (c.value("type", "") == type) return c.value(field, "");
  }
  return "";
}

}  // namespace tessera

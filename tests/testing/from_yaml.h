// One manifest, YAML text to JSON, for tests that write their objects as
// users do; a parse failure fails the test and gives null.
#pragma once

#include <string_view>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api/manifest.h"

namespace tessera::testing {

inline nlohmann::json FromYaml(std::string_view text) {
  auto obj = ParseSingleObject(text, ManifestFormat::kYaml);
  EXPECT_TRUE(obj.has_value()) << obj.error().ToString();
  return obj ? *obj : nlohmann::json();
}

}  // namespace tessera::testing

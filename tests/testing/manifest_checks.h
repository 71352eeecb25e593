// The validation tests' helpers: one manifest from YAML text (a parse failure
// fails the test and gives null), and the error validation gives an object it
// must refuse (accepting it fails the test).
#pragma once

#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api/manifest.h"
#include "api/validation.h"

namespace tessera::testing {

inline nlohmann::json FromYaml(std::string_view text) {
  auto obj = ParseSingleObject(text, ManifestFormat::kYaml);
  EXPECT_TRUE(obj.has_value()) << obj.error().ToString();
  return obj ? *obj : nlohmann::json();
}

inline std::string ErrorOf(const nlohmann::json& object) {
  auto kind = ValidateManifest(object);
  EXPECT_FALSE(kind.has_value()) << "accepted: " << object.dump();
  if (kind) return "";
  EXPECT_EQ(kind.error().code(), StatusCode::kInvalidArgument);
  return kind.error().message();
}

}  // namespace tessera::testing

#include "pipeline/digests.h"

#include <openssl/evp.h>

#include <array>

#include "common/check.h"

namespace tessera::pipeline {

std::string Sha256Hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  // EVP_Digest fails only on allocation failure or a missing algorithm: a broken
  // installation, not something a user can cause.
  const int ok = EVP_Digest(bytes.data(), bytes.size(), digest.data(), &size, EVP_sha256(), nullptr);
  TESSERA_CHECK(ok == 1 && size == 32, "EVP_Digest(SHA-256) failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xf]);
  }
  return out;
}

std::string CanonicalJson(const nlohmann::json& doc) {
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string CacheKey(const DagNode& node, const OutputDigests& upstream_output_digests) {
  nlohmann::json inputs = nlohmann::json::object();
  for (const std::string& input : node.inputs) {
    auto it = upstream_output_digests.find(input);
    inputs[input] = it == upstream_output_digests.end() ? "" : it->second;
  }
  nlohmann::json bindings = nlohmann::json::object();
  for (const auto& [key, value] : node.bindings) bindings[key] = value;
  const nlohmann::json material = {
      {"key", "tessera.dev/pipeline-cache/v1"},
      {"template", node.pod_template},
      {"when", node.when},
      {"bindings", bindings},
      {"inputs", inputs},
  };
  return Sha256Hex(CanonicalJson(material));
}

std::string SpecDigest(const nlohmann::json& spec) { return Sha256Hex(CanonicalJson(spec)); }

std::string SpecDigest(const PipelineSpec& spec) { return SpecDigest(spec.source); }

}  // namespace tessera::pipeline

#include "client/kubeconfig.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

namespace tessera {
namespace {

std::string Base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(n < 0 ? 0 : static_cast<size_t>(n));
  return out;
}

}  // namespace

Result<std::string> KubeconfigYaml(const ClientConfig& config, const KubeconfigOptions& options) {
  if (!config.server.starts_with("https://")) {
    return Err(Status::InvalidArgument(fmt::format(
        "the server {} is plain HTTP, and kubectl sends no credentials over it: use the server's https:// URL "
        "(`tessera up` serves both on one port; its CA is in the data directory's pki/ca.crt): --server "
        "https://HOST:PORT --certificate-authority CA_FILE",
        config.server)));
  }
  if (config.token.empty()) {
    return Err(Status::InvalidArgument(
        "no token to put in the kubeconfig: give --token-file FILE (or use a context that has one)"));
  }
  YAML::Node cluster;
  cluster["server"] = config.server;
  if (config.tls.insecure_skip_tls_verify) {
    cluster["insecure-skip-tls-verify"] = true;
  } else if (!config.tls.certificate_authority.empty()) {
    std::ifstream in(config.tls.certificate_authority, std::ios::binary);
    std::stringstream pem;
    pem << in.rdbuf();
    if (!in || pem.str().empty()) {
      return Err(Status::InvalidArgument(
          fmt::format("cannot read the CA file {}: give the server's CA with --certificate-authority FILE",
                      config.tls.certificate_authority)));
    }
    cluster["certificate-authority-data"] = Base64(pem.str());
  }
  const std::string ns = !options.ns.empty() ? options.ns : !config.ns.empty() ? config.ns : "default";
  YAML::Node root;
  root["apiVersion"] = "v1";
  root["kind"] = "Config";
  YAML::Node c;
  c["name"] = options.name;
  c["cluster"] = cluster;
  root["clusters"].push_back(c);
  YAML::Node u;
  u["name"] = options.name;
  u["user"]["token"] = config.token;
  root["users"].push_back(u);
  YAML::Node x;
  x["name"] = options.name;
  x["context"]["cluster"] = options.name;
  x["context"]["user"] = options.name;
  x["context"]["namespace"] = ns;
  root["contexts"].push_back(x);
  root["current-context"] = options.name;
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

}  // namespace tessera

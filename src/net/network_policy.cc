#include "net/network_policy.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <array>
#include <nlohmann/json.hpp>

#include "common/json_fields.h"

namespace tessera::net {
namespace {

using nlohmann::json;

Status Invalid(std::string_view path, std::string_view what) {
  return Status::InvalidArgument(fmt::format("{}: {}", path, what));
}

// "A.B.C.D/P" with host bits allowed (Kubernetes' ParseCIDRSloppy reads
// "10.0.0.1/24" as 10.0.0.0/24); nullopt for anything else.
std::optional<Ipv4Cidr> ParseSloppyIpv4Cidr(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos || slash + 1 == text.size() || text.size() - slash - 1 > 2) return std::nullopt;
  auto address = ParseIpv4Cidr(fmt::format("{}/32", text.substr(0, slash)));
  if (!address) return std::nullopt;
  int prefix = 0;
  for (char c : text.substr(slash + 1)) {
    if (c < '0' || c > '9') return std::nullopt;
    prefix = prefix * 10 + (c - '0');
  }
  if (prefix > 32 || (text.size() - slash - 1 == 2 && text[slash + 1] == '0')) return std::nullopt;
  Ipv4Cidr cidr{0, static_cast<uint8_t>(prefix)};
  cidr.network = address->network & cidr.Mask();
  return cidr;
}

// An IPv6 CIDR: the address (16 bytes) and prefix, host bits cleared.
struct Ipv6Cidr {
  std::array<uint8_t, 16> bytes{};
  int prefix = 0;
  bool Contains(const Ipv6Cidr& o) const {
    if (o.prefix < prefix) return false;
    for (int bit = 0; bit < prefix; ++bit) {
      const int mask = 0x80 >> (bit % 8);
      if ((bytes[bit / 8] & mask) != (o.bytes[bit / 8] & mask)) return false;
    }
    return true;
  }
};

std::optional<Ipv6Cidr> ParseIpv6Cidr(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos || slash + 1 == text.size() || text.size() - slash - 1 > 3) return std::nullopt;
  Ipv6Cidr c;
  const std::string address(text.substr(0, slash));
  if (::inet_pton(AF_INET6, address.c_str(), c.bytes.data()) != 1) return std::nullopt;
  for (char ch : text.substr(slash + 1)) {
    if (ch < '0' || ch > '9') return std::nullopt;
    c.prefix = c.prefix * 10 + (ch - '0');
  }
  if (c.prefix > 128) return std::nullopt;
  for (int bit = c.prefix; bit < 128; ++bit) c.bytes[bit / 8] &= static_cast<uint8_t>(~(0x80 >> (bit % 8)));
  return c;
}

Result<IpBlock> ParseIpBlock(const json& object, const std::string& path) {
  IpBlock block;
  ASSIGN_OR_RETURN(block.text, ReadJsonString(object, "cidr", path, /*required=*/true));
  ASSIGN_OR_RETURN(std::vector<std::string> except, ReadJsonStringList(object, "except", path));
  const std::string cidr_path = JoinJsonPath(path, "cidr");
  std::optional<Ipv6Cidr> v6;
  if (auto v4 = ParseSloppyIpv4Cidr(block.text)) {
    block.cidr = *v4;
  } else if ((v6 = ParseIpv6Cidr(block.text))) {
    block.ipv6 = true;
  } else {
    return Err(Invalid(cidr_path, fmt::format("\"{}\" is not a CIDR: write an address and a prefix length, "
                                              "\"10.0.0.0/16\" (or IPv6 \"fd00::/64\")",
                                              block.text)));
  }
  for (size_t i = 0; i < except.size(); ++i) {
    const std::string item_path = fmt::format("{}.except[{}]", path, i);
    if (!block.ipv6) {
      auto e = ParseSloppyIpv4Cidr(except[i]);
      if (!e) return Err(Invalid(item_path, fmt::format("\"{}\" is not an IPv4 CIDR (cidr is {})", except[i], block.text)));
      if (e->prefix <= block.cidr.prefix || !block.cidr.Contains(e->network)) {
        return Err(Invalid(item_path, fmt::format("{} must be a strict subset of cidr {}", except[i], block.text)));
      }
      block.except.push_back(*e);
    } else {
      auto e = ParseIpv6Cidr(except[i]);
      if (!e) return Err(Invalid(item_path, fmt::format("\"{}\" is not an IPv6 CIDR (cidr is {})", except[i], block.text)));
      if (e->prefix <= v6->prefix || !v6->Contains(*e)) {
        return Err(Invalid(item_path, fmt::format("{} must be a strict subset of cidr {}", except[i], block.text)));
      }
    }
  }
  return block;
}

Result<PolicyPeer> ParsePeer(const json& object, const std::string& path) {
  PolicyPeer peer;
  if (const json* s = JsonFind(object, "podSelector")) {
    ASSIGN_OR_RETURN(peer.pod_selector, LabelSelectorTermsFromJson(*s, JoinJsonPath(path, "podSelector")));
  }
  if (const json* s = JsonFind(object, "namespaceSelector")) {
    ASSIGN_OR_RETURN(peer.namespace_selector, LabelSelectorTermsFromJson(*s, JoinJsonPath(path, "namespaceSelector")));
  }
  if (const json* b = JsonFind(object, "ipBlock")) {
    const std::string block_path = JoinJsonPath(path, "ipBlock");
    if (!b->is_object()) return Err(JsonTypeError(block_path, "an object", *b));
    ASSIGN_OR_RETURN(peer.ip_block, ParseIpBlock(*b, block_path));
  }
  if (!peer.pod_selector && !peer.namespace_selector && !peer.ip_block) {
    return Err(Invalid(path, "must specify a peer: podSelector, namespaceSelector (or both), or ipBlock"));
  }
  if (peer.ip_block && (peer.pod_selector || peer.namespace_selector)) {
    return Err(Invalid(path, "may not specify more than 1 peer type: ipBlock stands alone; write the selectors "
                             "as another peer of the list"));
  }
  return peer;
}

// IANA_SVC_NAME (Kubernetes' IsValidPortName): at most 15 of [a-z0-9-], at
// least one letter, no '-' at either end nor two in a row.
bool IsPortName(std::string_view s) {
  if (s.empty() || s.size() > 15 || s.front() == '-' || s.back() == '-') return false;
  bool letter = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c >= 'a' && c <= 'z') {
      letter = true;
    } else if (!(c >= '0' && c <= '9') && c != '-') {
      return false;
    }
    if (c == '-' && i > 0 && s[i - 1] == '-') return false;
  }
  return letter;
}

Result<uint16_t> PortNumber(const json& v, const std::string& path) {
  if (!v.is_number_integer()) return Err(JsonTypeError(path, "an integer or a port name", v));
  const int64_t n = v.get<int64_t>();
  if (n < 1 || n > 65535) return Err(Invalid(path, fmt::format("must be between 1 and 65535, not {}", n)));
  return static_cast<uint16_t>(n);
}

Result<PolicyPort> ParsePort(const json& object, const std::string& path) {
  PolicyPort port;
  ASSIGN_OR_RETURN(std::string protocol, ReadJsonString(object, "protocol", path, /*required=*/false));
  if (!protocol.empty()) {
    auto p = ParseProtocol(protocol);
    if (!p) return Err(Invalid(JoinJsonPath(path, "protocol"), fmt::format("must be TCP, UDP or SCTP, not \"{}\"", protocol)));
    port.protocol = *p;
  }
  if (const json* v = JsonFind(object, "port")) {
    const std::string port_path = JoinJsonPath(path, "port");
    if (v->is_string()) {
      const std::string& name = v->get_ref<const std::string&>();
      if (!IsPortName(name)) {
        return Err(Invalid(port_path, fmt::format("\"{}\" is neither a number nor a port name (at most 15 lowercase "
                                                  "letters, digits and '-', at least one letter): write 80 or \"http\"",
                                                  name)));
      }
      port.named = name;
    } else {
      ASSIGN_OR_RETURN(port.port, PortNumber(*v, port_path));
    }
  }
  if (const json* v = JsonFind(object, "endPort")) {
    const std::string end_path = JoinJsonPath(path, "endPort");
    if (!port.port) return Err(Invalid(end_path, "needs a numeric port: endPort ends the range that port starts"));
    ASSIGN_OR_RETURN(uint16_t end, PortNumber(*v, end_path));
    if (end < *port.port) return Err(Invalid(end_path, fmt::format("must be at least port ({}), not {}", *port.port, end)));
    port.end_port = end;
  }
  return port;
}

Result<std::vector<PolicyRule>> ParseRules(const json& spec, const char* key, const char* peers_key) {
  std::vector<PolicyRule> rules;
  const std::string list_path = JoinJsonPath("spec", key);
  ASSIGN_OR_RETURN(const json* list, ReadJsonObjectList(spec, key, "spec"));
  if (list == nullptr) return rules;
  for (size_t i = 0; i < list->size(); ++i) {
    const json& item = (*list)[i];
    const std::string rule_path = fmt::format("{}[{}]", list_path, i);
    PolicyRule rule;
    ASSIGN_OR_RETURN(const json* peers, ReadJsonObjectList(item, peers_key, rule_path));
    if (peers != nullptr) {
      for (size_t j = 0; j < peers->size(); ++j) {
        ASSIGN_OR_RETURN(PolicyPeer peer, ParsePeer((*peers)[j], fmt::format("{}.{}[{}]", rule_path, peers_key, j)));
        rule.peers.push_back(std::move(peer));
      }
    }
    ASSIGN_OR_RETURN(const json* ports, ReadJsonObjectList(item, "ports", rule_path));
    if (ports != nullptr) {
      for (size_t j = 0; j < ports->size(); ++j) {
        ASSIGN_OR_RETURN(PolicyPort port, ParsePort((*ports)[j], fmt::format("{}.ports[{}]", rule_path, j)));
        rule.ports.push_back(std::move(port));
      }
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

}  // namespace

std::string_view ProtocolName(Protocol p) {
  switch (p) {
    case Protocol::kTCP:
      return "TCP";
    case Protocol::kUDP:
      return "UDP";
    case Protocol::kSCTP:
      return "SCTP";
  }
  return "TCP";
}

std::optional<Protocol> ParseProtocol(std::string_view text) {
  if (text == "TCP") return Protocol::kTCP;
  if (text == "UDP") return Protocol::kUDP;
  if (text == "SCTP") return Protocol::kSCTP;
  return std::nullopt;
}

bool IpBlock::Contains(uint32_t address) const {
  if (ipv6 || !cidr.Contains(address)) return false;
  for (const Ipv4Cidr& e : except) {
    if (e.Contains(address)) return false;
  }
  return true;
}

Result<NetworkPolicy> ParseNetworkPolicy(const json& object) {
  if (!object.is_object()) return Err(JsonTypeError("NetworkPolicy", "an object", object));
  NetworkPolicy policy;
  ASSIGN_OR_RETURN(std::string kind, ReadJsonString(object, "kind", "", /*required=*/false));
  if (!kind.empty() && kind != "NetworkPolicy") {
    return Err(Invalid("kind", fmt::format("must be NetworkPolicy, not \"{}\"", kind)));
  }
  const json* metadata = JsonFind(object, "metadata");
  if (metadata == nullptr) return Err(Invalid("metadata", "is required"));
  if (!metadata->is_object()) return Err(JsonTypeError("metadata", "an object", *metadata));
  ASSIGN_OR_RETURN(policy.ns, ReadJsonString(*metadata, "namespace", "metadata", /*required=*/true));
  ASSIGN_OR_RETURN(policy.name, ReadJsonString(*metadata, "name", "metadata", /*required=*/true));
  const std::string context = fmt::format("NetworkPolicy {}/{}", policy.ns, policy.name);
  auto with_context = [&](const Status& s) { return s.WithContext(context); };

  static const json kEmpty = json::object();
  const json* spec = JsonFind(object, "spec");
  if (spec == nullptr) spec = &kEmpty;
  if (!spec->is_object()) return Err(with_context(JsonTypeError("spec", "an object", *spec)));

  if (const json* s = JsonFind(*spec, "podSelector")) {
    auto selector = LabelSelectorTermsFromJson(*s, "spec.podSelector");
    if (!selector) return Err(with_context(selector.error()));
    policy.pod_selector = std::move(*selector);
  }
  auto ingress = ParseRules(*spec, "ingress", "from");
  if (!ingress) return Err(with_context(ingress.error()));
  policy.ingress = std::move(*ingress);
  auto egress = ParseRules(*spec, "egress", "to");
  if (!egress) return Err(with_context(egress.error()));
  policy.egress = std::move(*egress);

  auto types = ReadJsonStringList(*spec, "policyTypes", "spec");
  if (!types) return Err(with_context(types.error()));
  if (types->empty()) {
    // SetDefaults_NetworkPolicySpec.
    policy.ingress_type = true;
    policy.egress_type = !policy.egress.empty();
  } else {
    if (types->size() > 2) {
      return Err(with_context(Invalid("spec.policyTypes", "may not specify more than two policyTypes")));
    }
    policy.ingress_type = false;
    policy.egress_type = false;
    for (size_t i = 0; i < types->size(); ++i) {
      const std::string& t = (*types)[i];
      if (t == "Ingress") {
        policy.ingress_type = true;
      } else if (t == "Egress") {
        policy.egress_type = true;
      } else {
        return Err(with_context(
            Invalid(fmt::format("spec.policyTypes[{}]", i), fmt::format("must be Ingress or Egress, not \"{}\"", t))));
      }
    }
  }
  return policy;
}

}  // namespace tessera::net

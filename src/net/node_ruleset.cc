// The node ruleset compiler (see node_ruleset.h for what the rules do).
//
// Steps of RenderNodeRuleset:
//   1. Index the view: pods by address (an address held twice is ambiguous),
//      policies sorted by namespace and name, namespaces' labels.
//   2. For each local pod, lowest address first: its PodInfo, the policies
//      that pick it for ingress and for egress, and whether it is isolated.
//   3. For each rule of those policies, once: the interval set of its peers'
//      addresses, and for egress rules with named ports the set of
//      (pod, protocol, port) they resolve to.
//   4. Print the tables: sets, the hook chains, one chain per isolated pod and
//      direction, the Services' DNAT chains; every list sorted.
#include "net/node_ruleset.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "net/policy_match.h"

namespace tessera::net {
namespace {

// A closed range of addresses or ports.
struct Range {
  uint32_t lo = 0;
  uint32_t hi = 0;
  friend auto operator<=>(const Range&, const Range&) = default;
};

// Sorted, with overlapping and adjacent ranges merged (nft refuses
// overlapping elements in an interval set).
std::vector<Range> Normalize(std::vector<Range> ranges) {
  std::sort(ranges.begin(), ranges.end());
  std::vector<Range> out;
  for (const Range& r : ranges) {
    if (!out.empty() && (out.back().hi == std::numeric_limits<uint32_t>::max() || r.lo <= out.back().hi + 1)) {
      out.back().hi = std::max(out.back().hi, r.hi);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

// cidr minus every except entry, as ranges.
std::vector<Range> BlockRanges(const IpBlock& block) {
  if (block.ipv6) return {};
  std::vector<Range> excepts;
  for (const Ipv4Cidr& e : block.except) excepts.push_back({e.network, e.Last()});
  excepts = Normalize(std::move(excepts));
  std::vector<Range> out;
  uint64_t next = block.cidr.network;  // the lowest address not yet decided
  const uint64_t last = block.cidr.Last();
  for (const Range& e : excepts) {
    if (e.lo > next) out.push_back({static_cast<uint32_t>(next), e.lo - 1});
    next = std::max<uint64_t>(next, uint64_t{e.hi} + 1);
  }
  if (next <= last) out.push_back({static_cast<uint32_t>(next), static_cast<uint32_t>(last)});
  return out;
}

std::string_view NftProtocol(Protocol p) {
  switch (p) {
    case Protocol::kTCP:
      return "tcp";
    case Protocol::kUDP:
      return "udp";
    case Protocol::kSCTP:
      return "sctp";
  }
  return "tcp";
}

std::string FormatRange(const Range& r) {
  return r.lo == r.hi ? FormatIpv4(r.lo) : fmt::format("{}-{}", FormatIpv4(r.lo), FormatIpv4(r.hi));
}

std::string FormatPortRange(const Range& r) { return r.lo == r.hi ? fmt::format("{}", r.lo) : fmt::format("{}-{}", r.lo, r.hi); }

// "a_b_c_d": an address as a chain-name fragment.
std::string AddressName(uint32_t ip) {
  return fmt::format("{}_{}_{}_{}", ip >> 24, (ip >> 16) & 0xff, (ip >> 8) & 0xff, ip & 0xff);
}

// Text safe inside an nft comment: the characters of Kubernetes names, the rest '_'.
std::string CommentText(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 120)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '.' || c == '/' || c == '[' || c == ']' || c == ' ' || c == '_';
    out.push_back(ok ? c : '_');
  }
  return out;
}

bool IsInterfaceName(std::string_view name) {
  if (name.empty() || name.size() > 15) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// "elements = { a, b, ... }" lines, 8 to a line; nothing for an empty list.
void AppendElements(std::string& out, const std::vector<std::string>& elements) {
  if (elements.empty()) return;
  out += "\t\telements = { ";
  for (size_t i = 0; i < elements.size(); ++i) {
    if (i > 0) out += (i % 8 == 0) ? ",\n\t\t\t     " : ", ";
    out += elements[i];
  }
  out += " }\n";
}

// Protocol and port ranges, merged per protocol, printed "tcp . 80, udp . 1000-2000".
class PortSet {
 public:
  void Add(Protocol p, uint32_t lo, uint32_t hi) { ranges_[p].push_back({lo, hi}); }
  bool empty() const { return ranges_.empty(); }
  std::string Render() const {
    std::vector<std::string> parts;
    for (const auto& [protocol, ranges] : ranges_) {
      for (const Range& r : Normalize(ranges)) parts.push_back(fmt::format("{} . {}", NftProtocol(protocol), FormatPortRange(r)));
    }
    return fmt::format("{}", fmt::join(parts, ", "));
  }

 private:
  std::map<Protocol, std::vector<Range>> ranges_;
};

// What one policy rule compiles to, shared by every local pod it applies to.
struct CompiledRule {
  bool any_peer = false;         // `from`/`to` empty
  std::string peer_set;          // the set's name; "" when no address matches (and !any_peer)
  std::string named_set;         // egress: the (ip . proto . port) set of named ports; "" when none
};

class Compiler {
 public:
  Compiler(const ClusterView& view, const NodeNetwork& node) : view_(view), node_(node), namespaces_(view) {
    for (const PodInfo& pod : view.pods) {
      if (pod.host_network) continue;
      if (auto ip = ParseIpv4(pod.ip)) pods_by_ip_[*ip].push_back(&pod);
    }
    for (const NetworkPolicy& p : view.policies) policies_.push_back(&p);
    std::sort(policies_.begin(), policies_.end(), [](const NetworkPolicy* a, const NetworkPolicy* b) {
      return std::tie(a->ns, a->name) < std::tie(b->ns, b->name);
    });
  }

  std::string Render();

 private:
  // The pod with address `ip`, when exactly one pod has it.
  const PodInfo* UniquePod(uint32_t ip) const {
    auto it = pods_by_ip_.find(ip);
    return it != pods_by_ip_.end() && it->second.size() == 1 ? it->second.front() : nullptr;
  }
  const CompiledRule& Compile(size_t policy, bool ingress, size_t rule);
  std::string PodChain(uint32_t ip, const PodInfo* pod, bool ingress);
  void RenderServices(std::string& chains, std::vector<std::string>& cluster_ips, std::vector<std::string>& service_map);

  const ClusterView& view_;
  const NodeNetwork& node_;
  NamespaceIndex namespaces_;
  std::map<uint32_t, std::vector<const PodInfo*>> pods_by_ip_;
  std::vector<const NetworkPolicy*> policies_;
  std::map<std::tuple<size_t, bool, size_t>, CompiledRule> compiled_;
  std::string set_definitions_;
};

const CompiledRule& Compiler::Compile(size_t policy_index, bool ingress, size_t rule_index) {
  auto key = std::make_tuple(policy_index, ingress, rule_index);
  if (auto it = compiled_.find(key); it != compiled_.end()) return it->second;
  const NetworkPolicy& policy = *policies_[policy_index];
  const PolicyRule& rule = (ingress ? policy.ingress : policy.egress)[rule_index];
  const std::string base = fmt::format("p{}_{}{}", policy_index, ingress ? "in" : "eg", rule_index);
  const std::string comment =
      CommentText(fmt::format("{}/{} {}[{}]", policy.ns, policy.name, ingress ? "ingress" : "egress", rule_index));
  CompiledRule c;
  c.any_peer = rule.peers.empty();

  auto peer_matches = [&](const PodInfo& pod) {
    if (rule.peers.empty()) return true;
    for (const PolicyPeer& peer : rule.peers) {
      if (PeerMatches(namespaces_, policy.ns, peer, Peer::Pod(pod))) return true;
    }
    return false;
  };

  if (!c.any_peer) {
    std::vector<Range> ranges;
    for (const PolicyPeer& peer : rule.peers) {
      if (peer.ip_block) {
        for (const Range& r : BlockRanges(*peer.ip_block)) ranges.push_back(r);
        continue;
      }
      for (const auto& [ip, pods] : pods_by_ip_) {
        if (pods.size() == 1 && PeerMatches(namespaces_, policy.ns, peer, Peer::Pod(*pods.front()))) {
          ranges.push_back({ip, ip});
        }
      }
    }
    ranges = Normalize(std::move(ranges));
    if (!ranges.empty()) {
      c.peer_set = base;
      std::vector<std::string> elements;
      for (const Range& r : ranges) elements.push_back(FormatRange(r));
      set_definitions_ += fmt::format("\tset {} {{\n\t\ttype ipv4_addr; flags interval;\n\t\tcomment \"{}\"\n", base, comment);
      AppendElements(set_definitions_, elements);
      set_definitions_ += "\t}\n";
    }
  }

  if (!ingress) {
    std::set<std::tuple<uint32_t, Protocol, uint16_t>> named;
    for (const PolicyPort& port : rule.ports) {
      if (port.named.empty()) continue;
      for (const auto& [ip, pods] : pods_by_ip_) {
        if (pods.size() != 1 || !peer_matches(*pods.front())) continue;
        if (auto n = NamedPort(*pods.front(), port.named, port.protocol)) named.insert({ip, port.protocol, *n});
      }
    }
    if (!named.empty()) {
      c.named_set = base + "_named";
      std::vector<std::string> elements;
      for (const auto& [ip, protocol, port] : named) {
        elements.push_back(fmt::format("{} . {} . {}", FormatIpv4(ip), NftProtocol(protocol), port));
      }
      set_definitions_ += fmt::format("\tset {} {{\n\t\ttype ipv4_addr . inet_proto . inet_service;\n\t\tcomment \"{} named ports\"\n",
                                      c.named_set, comment);
      AppendElements(set_definitions_, elements);
      set_definitions_ += "\t}\n";
    }
  }
  return compiled_.emplace(key, std::move(c)).first->second;
}

// The chain of a local pod isolated for ingress (egress): a rule per policy
// rule that picks it, then drop. `pod` is nullptr for an unknown pod.
std::string Compiler::PodChain(uint32_t ip, const PodInfo* pod, bool ingress) {
  const std::string verdict = ingress ? "accept" : "return";
  const std::string_view addr = ingress ? "ip saddr" : "ip daddr";
  std::vector<std::string> lines;
  auto add = [&](std::string line) {
    if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(std::move(line));
  };
  for (size_t i = 0; pod != nullptr && i < policies_.size(); ++i) {
    const NetworkPolicy& policy = *policies_[i];
    if (!(ingress ? policy.ingress_type : policy.egress_type) || !Selects(policy, *pod)) continue;
    const auto& rules = ingress ? policy.ingress : policy.egress;
    for (size_t r = 0; r < rules.size(); ++r) {
      const PolicyRule& rule = rules[r];
      const CompiledRule& c = Compile(i, ingress, r);
      if (!c.any_peer && c.peer_set.empty() && c.named_set.empty()) continue;  // no peer exists
      // The address match: none for every peer; nullopt when no address matches.
      std::optional<std::string> peers;
      if (c.any_peer) {
        peers = "";
      } else if (!c.peer_set.empty()) {
        peers = fmt::format("{} @{} ", addr, c.peer_set);
      }
      PortSet ports;
      for (const PolicyPort& p : rule.ports) {
        if (p.port) {
          ports.Add(p.protocol, *p.port, p.end_port.value_or(*p.port));
        } else if (p.named.empty()) {
          ports.Add(p.protocol, 0, 65535);
        } else if (ingress) {
          if (auto n = NamedPort(*pod, p.named, p.protocol)) ports.Add(p.protocol, *n, *n);
        }
      }
      if (peers && rule.ports.empty()) {
        add(fmt::format("{}{}", *peers, verdict));
      } else if (peers && !ports.empty()) {
        add(fmt::format("{}meta l4proto . th dport {{ {} }} {}", *peers, ports.Render(), verdict));
      }
      if (!ingress && !c.named_set.empty()) {
        add(fmt::format("ip daddr . meta l4proto . th dport @{} {}", c.named_set, verdict));
      }
    }
  }
  std::string out = fmt::format("\tchain pod_{}_{} {{\n", AddressName(ip), ingress ? "ingress" : "egress");
  if (pod != nullptr) {
    out += fmt::format("\t\tcomment \"{}/{}\"\n", CommentText(pod->ns), CommentText(pod->name));
  } else {
    out += "\t\tcomment \"no pod of the view has this address: isolated\"\n";
  }
  for (const std::string& line : lines) out += fmt::format("\t\t{}\n", line);
  out += "\t\tdrop\n\t}\n";
  return out;
}

void Compiler::RenderServices(std::string& chains, std::vector<std::string>& cluster_ips,
                              std::vector<std::string>& service_map) {
  std::vector<const ServiceInfo*> services;
  for (const ServiceInfo& s : view_.services) services.push_back(&s);
  std::sort(services.begin(), services.end(), [](const ServiceInfo* a, const ServiceInfo* b) {
    return std::tie(a->ns, a->name) < std::tie(b->ns, b->name);
  });
  std::set<uint32_t> ips;
  std::map<std::tuple<uint32_t, Protocol, uint16_t>, std::string> keys;  // sorted map keys, each once
  for (const ServiceInfo* s : services) {
    auto vip = ParseIpv4(s->cluster_ip);
    if (!vip) continue;
    ips.insert(*vip);
    std::set<uint32_t> endpoints;
    for (const std::string& e : s->ready_endpoint_ips) {
      if (auto ip = ParseIpv4(e)) endpoints.insert(*ip);
    }
    if (endpoints.empty()) continue;  // rejected
    for (const ServicePort& port : s->ports) {
      auto key = std::make_tuple(*vip, port.protocol, port.port);
      if (keys.contains(key) || port.port == 0 || port.target_port == 0) continue;  // first Service wins
      const std::string chain = fmt::format("svc_{}_{}_{}", AddressName(*vip), NftProtocol(port.protocol), port.port);
      keys.emplace(key, chain);
      std::vector<std::string> targets;
      size_t i = 0;
      for (uint32_t e : endpoints) targets.push_back(fmt::format("{} : {} . {}", i++, FormatIpv4(e), port.target_port));
      chains += fmt::format(
          "\tchain {} {{\n\t\tcomment \"{}/{} {}/{}\"\n\t\tmeta l4proto {} dnat ip to numgen random mod {} map {{ {} }}\n\t}}\n",
          chain, CommentText(s->ns), CommentText(s->name), NftProtocol(port.protocol), port.port,
          NftProtocol(port.protocol), endpoints.size(), fmt::join(targets, ", "));
    }
  }
  for (uint32_t ip : ips) cluster_ips.push_back(FormatIpv4(ip));
  for (const auto& [key, chain] : keys) {
    const auto& [ip, protocol, port] = key;
    service_map.push_back(fmt::format("{} . {} . {} : goto {}", FormatIpv4(ip), NftProtocol(protocol), port, chain));
  }
}

std::string Compiler::Render() {
  const std::string bridge = node_.bridge;
  const std::string pod_cidr = node_.pod_cidr.ToString();

  // Steps 2 and 3: the local pods' chains (compiling the rules they use).
  std::vector<LocalPod> local = node_.pods;
  std::sort(local.begin(), local.end(), [](const LocalPod& a, const LocalPod& b) { return a.ip < b.ip; });
  std::string pod_chains;
  std::vector<std::string> ingress_map, egress_map, hairpin, port_names, port_addresses;
  for (const LocalPod& lp : local) {
    const PodInfo* pod = UniquePod(lp.ip);
    const bool unknown = pod == nullptr;
    const bool isolated_in = unknown || IsolatedForIngress(view_, *pod);
    const bool isolated_out = unknown || IsolatedForEgress(view_, *pod);
    const std::string name = AddressName(lp.ip);
    const std::string ip = FormatIpv4(lp.ip);
    hairpin.push_back(fmt::format("{} . {}", ip, ip));
    if (isolated_out) {
      pod_chains += PodChain(lp.ip, pod, /*ingress=*/false);
      egress_map.push_back(fmt::format("{} : jump pod_{}_egress", ip, name));
    }
    if (isolated_in) {
      pod_chains += PodChain(lp.ip, pod, /*ingress=*/true);
      ingress_map.push_back(fmt::format("{} : jump pod_{}_ingress", ip, name));
    }
    if (!lp.veth.empty()) {
      port_names.push_back(fmt::format("\"{}\"", lp.veth));
      port_addresses.push_back(fmt::format("\"{}\" . {}", lp.veth, ip));
    }
  }
  std::string service_chains;
  std::vector<std::string> cluster_ips, service_map;
  RenderServices(service_chains, cluster_ips, service_map);

  // Step 4.
  std::string out;
  out += "# Tessera's node ruleset: NetworkPolicy and Services (generated by tessera::net; do not edit).\n";
  out += RenderDeleteTables(node_.table);
  out += fmt::format("table inet {} {{\n", node_.table);
  out += "\tmap egress_pods {\n\t\ttype ipv4_addr : verdict;\n";
  AppendElements(out, egress_map);
  out += "\t}\n\tmap ingress_pods {\n\t\ttype ipv4_addr : verdict;\n";
  AppendElements(out, ingress_map);
  out += "\t}\n\tset hairpin {\n\t\ttype ipv4_addr . ipv4_addr;\n";
  AppendElements(out, hairpin);
  out += "\t}\n\tset cluster_ips {\n\t\ttype ipv4_addr;\n";
  AppendElements(out, cluster_ips);
  out += "\t}\n\tmap services {\n\t\ttype ipv4_addr . inet_proto . inet_service : verdict;\n";
  AppendElements(out, service_map);
  out += "\t}\n";
  out += set_definitions_;
  out += fmt::format(
      "\tchain forward {{\n"
      "\t\ttype filter hook forward priority filter; policy accept;\n"
      "\t\tct state established,related accept\n"
      "\t\tct state invalid drop\n"
      "\t\tiifname \"{0}\" meta nfproto ipv6 drop\n"
      "\t\toifname \"{0}\" meta nfproto ipv6 drop\n"
      "\t\tiifname \"{0}\" ip saddr != {1} drop\n"
      "\t\tip saddr . ip daddr @hairpin accept\n"
      "\t\tip saddr vmap @egress_pods\n"
      "\t\tip daddr vmap @ingress_pods\n"
      "\t}}\n"
      "\tchain input {{\n"
      "\t\ttype filter hook input priority filter; policy accept;\n"
      "\t\tiifname != \"{0}\" accept\n"
      "\t\tct state established,related accept\n"
      "\t\tct state invalid drop\n"
      "\t\tmeta nfproto ipv6 drop\n"
      "\t\tip saddr != {1} drop\n"
      "\t\tip saddr vmap @egress_pods\n"
      "\t}}\n"
      "\tchain services_prerouting {{\n"
      "\t\ttype nat hook prerouting priority -100; policy accept;\n"
      "\t\tip daddr . meta l4proto . th dport vmap @services\n"
      "\t}}\n"
      "\tchain services_output {{\n"
      "\t\ttype nat hook output priority -100; policy accept;\n"
      "\t\tip daddr . meta l4proto . th dport vmap @services\n"
      "\t}}\n"
      "\tchain services_reject_prerouting {{\n"
      "\t\ttype filter hook prerouting priority -90; policy accept;\n"
      "\t\tip daddr @cluster_ips reject with icmpx type port-unreachable\n"
      "\t}}\n"
      "\tchain services_reject_output {{\n"
      "\t\ttype filter hook output priority -90; policy accept;\n"
      "\t\tip daddr @cluster_ips reject with icmpx type port-unreachable\n"
      "\t}}\n"
      "\tchain postrouting {{\n"
      "\t\ttype nat hook postrouting priority 100; policy accept;\n"
      "\t\tct status dnat ip saddr . ip daddr @hairpin masquerade\n",
      bridge, node_.cluster_cidr.ToString());
  if (node_.masquerade_outside) {
    out += fmt::format("\t\tip saddr {} ip daddr != {} oifname != \"{}\" masquerade\n", pod_cidr,
                       node_.cluster_cidr.ToString(), bridge);
  }
  out += "\t}\n";
  out += pod_chains;
  out += service_chains;
  out += "}\n";
  if (!port_names.empty()) {
    out += fmt::format("table bridge {} {{\n", node_.table);
    out += "\tset pod_ports {\n\t\ttype ifname;\n";
    AppendElements(out, port_names);
    out += "\t}\n\tset pod_port_addresses {\n\t\ttype ifname . ipv4_addr;\n";
    AppendElements(out, port_addresses);
    out +=
        "\t}\n"
        "\tchain prerouting {\n"
        "\t\ttype filter hook prerouting priority -300; policy accept;\n"
        "\t\tiifname != @pod_ports accept\n"
        "\t\tether type ip6 drop\n"
        "\t\tether type ip iifname . ip saddr != @pod_port_addresses drop\n"
        "\t\tether type arp iifname . arp saddr ip != @pod_port_addresses drop\n"
        "\t}\n"
        "}\n";
  }
  return out;
}

}  // namespace

Status ValidateNodeNetwork(const NodeNetwork& node) {
  const bool table_ok = !node.table.empty() && node.table.size() <= 64 &&
                        std::isalpha(static_cast<unsigned char>(node.table[0])) &&
                        std::all_of(node.table.begin(), node.table.end(), [](char c) {
                          return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
                        });
  if (!table_ok) {
    return Status::InvalidArgument(
        fmt::format("table \"{}\": a letter then up to 63 of letters, digits, '-', '_' and '.'", node.table));
  }
  if (!IsInterfaceName(node.bridge)) {
    return Status::InvalidArgument(
        fmt::format("bridge \"{}\": an interface name is 1 to 15 of letters, digits, '-', '_' and '.'", node.bridge));
  }
  if (!node.cluster_cidr.Contains(node.pod_cidr)) {
    return Status::InvalidArgument(fmt::format("the node's pod CIDR {} is not inside the cluster CIDR {}",
                                               node.pod_cidr.ToString(), node.cluster_cidr.ToString()));
  }
  std::set<uint32_t> seen;
  for (const LocalPod& pod : node.pods) {
    if (!node.pod_cidr.Contains(pod.ip)) {
      return Status::InvalidArgument(fmt::format("local pod address {} is outside the node's pod CIDR {}",
                                                 FormatIpv4(pod.ip), node.pod_cidr.ToString()));
    }
    if (!seen.insert(pod.ip).second) {
      return Status::InvalidArgument(fmt::format("local pod address {} is listed twice", FormatIpv4(pod.ip)));
    }
    if (!pod.veth.empty() && !IsInterfaceName(pod.veth)) {
      return Status::InvalidArgument(fmt::format(
          "veth \"{}\" of {}: an interface name is 1 to 15 of letters, digits, '-', '_' and '.'", pod.veth,
          FormatIpv4(pod.ip)));
    }
  }
  return Status::Ok();
}

Result<std::string> RenderNodeRuleset(const ClusterView& view, const NodeNetwork& node) {
  RETURN_IF_ERROR(ValidateNodeNetwork(node));
  return Compiler(view, node).Render();
}

Result<std::string> RenderDenyAllRuleset(const NodeNetwork& node) {
  NodeNetwork checked = node;
  checked.pods.clear();
  RETURN_IF_ERROR(ValidateNodeNetwork(checked));
  return "# Tessera's node ruleset, failing closed: no pod traffic but established connections and the node's own.\n" +
         RenderDeleteTables(node.table) + fmt::format(
      "table inet {0} {{\n"
      "\tchain forward {{\n"
      "\t\ttype filter hook forward priority filter; policy accept;\n"
      "\t\tct state established,related accept\n"
      "\t\tiifname \"{1}\" drop\n"
      "\t\toifname \"{1}\" drop\n"
      "\t\tip saddr {2} drop\n"
      "\t\tip daddr {2} drop\n"
      "\t}}\n"
      "\tchain input {{\n"
      "\t\ttype filter hook input priority filter; policy accept;\n"
      "\t\tiifname != \"{1}\" accept\n"
      "\t\tct state established,related accept\n"
      "\t\tdrop\n"
      "\t}}\n"
      "}}\n",
      node.table, node.bridge, node.pod_cidr.ToString());
}

std::string RenderDeleteTables(std::string_view table) {
  return fmt::format("table inet {0} {{}}\ndelete table inet {0}\ntable bridge {0} {{}}\ndelete table bridge {0}\n",
                     table);
}

}  // namespace tessera::net

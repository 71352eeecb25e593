#include "agent/pod_network.h"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/bridge.h>
#include <netlink/route/link/veth.h>
#include <netlink/route/route.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/mounts.h"
#include "common/unique_fd.h"

namespace tessera {
namespace fs = std::filesystem;
namespace {

// rtm_protocol of the routes this agent makes, so that it removes only its own
// (iproute2 shows it as "proto 231").
constexpr uint8_t kRouteProtocol = 231;

template <typename T, void (*Free)(T*)>
struct NlDeleter {
  void operator()(T* p) const {
    if (p) Free(p);
  }
};
using SockPtr = std::unique_ptr<nl_sock, NlDeleter<nl_sock, nl_socket_free>>;
using LinkPtr = std::unique_ptr<rtnl_link, NlDeleter<rtnl_link, rtnl_link_put>>;
using AddrPtr = std::unique_ptr<rtnl_addr, NlDeleter<rtnl_addr, rtnl_addr_put>>;
using NlAddrPtr = std::unique_ptr<nl_addr, NlDeleter<nl_addr, nl_addr_put>>;
using RoutePtr = std::unique_ptr<rtnl_route, NlDeleter<rtnl_route, rtnl_route_put>>;
using CachePtr = std::unique_ptr<nl_cache, NlDeleter<nl_cache, nl_cache_free>>;

Status NlError(int err, std::string_view what) {
  return Status::Unavailable(fmt::format("{}: {}", what, nl_geterror(err)));
}

Result<SockPtr> Connect() {
  SockPtr sock(nl_socket_alloc());
  if (!sock) return Err(Status::Unavailable("netlink: out of memory"));
  if (int err = nl_connect(sock.get(), NETLINK_ROUTE); err < 0) return Err(NlError(err, "netlink: connect"));
  return sock;
}

NlAddrPtr Ipv4Addr(uint32_t address, int prefix) {
  const uint32_t net = htonl(address);
  NlAddrPtr addr(nl_addr_build(AF_INET, &net, sizeof(net)));
  if (addr) nl_addr_set_prefixlen(addr.get(), prefix);
  return addr;
}

Result<LinkPtr> GetLink(nl_sock* sock, const std::string& name) {
  rtnl_link* link = nullptr;
  if (int err = rtnl_link_get_kernel(sock, 0, name.c_str(), &link); err < 0) {
    return Err(NlError(err, fmt::format("link {}", name)));
  }
  return LinkPtr(link);
}

Status SetUp(nl_sock* sock, rtnl_link* link, uint32_t mtu) {
  LinkPtr change(rtnl_link_alloc());
  rtnl_link_set_flags(change.get(), IFF_UP);
  if (mtu > 0) rtnl_link_set_mtu(change.get(), mtu);
  if (int err = rtnl_link_change(sock, link, change.get(), 0); err < 0) {
    return NlError(err, fmt::format("link {}: set up", rtnl_link_get_name(link)));
  }
  return Status::Ok();
}

// Adds `address`/prefix to the link; an address already there is fine.
Status AddAddress(nl_sock* sock, int ifindex, uint32_t address, int prefix) {
  AddrPtr addr(rtnl_addr_alloc());
  NlAddrPtr local = Ipv4Addr(address, prefix);
  rtnl_addr_set_ifindex(addr.get(), ifindex);
  rtnl_addr_set_local(addr.get(), local.get());
  if (int err = rtnl_addr_add(sock, addr.get(), 0); err < 0 && err != -NLE_EXIST) {
    return NlError(err, fmt::format("address {}/{}", FormatIpv4(address), prefix));
  }
  return Status::Ok();
}

// Adds (or replaces) a route to `destination` through `gateway` (0: on the link).
Status ReplaceRoute(nl_sock* sock, const Ipv4Cidr& destination, uint32_t gateway, int ifindex, uint8_t protocol) {
  RoutePtr route(rtnl_route_alloc());
  NlAddrPtr dst = Ipv4Addr(destination.network, destination.prefix);
  rtnl_route_set_family(route.get(), AF_INET);
  rtnl_route_set_dst(route.get(), dst.get());
  rtnl_route_set_table(route.get(), RT_TABLE_MAIN);
  rtnl_route_set_protocol(route.get(), protocol);
  rtnl_nexthop* nh = rtnl_route_nh_alloc();
  NlAddrPtr via = gateway ? Ipv4Addr(gateway, 32) : nullptr;
  if (via) rtnl_route_nh_set_gateway(nh, via.get());
  if (ifindex > 0) rtnl_route_nh_set_ifindex(nh, ifindex);
  rtnl_route_add_nexthop(route.get(), nh);  // the route owns it now
  if (int err = rtnl_route_add(sock, route.get(), NLM_F_CREATE | NLM_F_REPLACE); err < 0) {
    return NlError(err, fmt::format("route {} via {}", destination.ToString(), FormatIpv4(gateway)));
  }
  return Status::Ok();
}

// Runs `fn` in the network namespace `netns_fd` (-1: a new one), on a thread
// of its own: a namespace belongs to a thread, and the caller's stays as it is.
Status InNetns(int netns_fd, const std::function<Status()>& fn) {
  Status result = Status::Ok();
  std::thread worker([&] {
    if (netns_fd < 0 ? ::unshare(CLONE_NEWNET) != 0 : ::setns(netns_fd, CLONE_NEWNET) != 0) {
      result = Status::Unavailable(fmt::format("cannot {} a network namespace: {}", netns_fd < 0 ? "create" : "enter",
                                               ErrnoText(errno)));
      return;
    }
    result = fn();
  });
  worker.join();
  return result;
}

// As `ip netns` does for /run/netns: the directory is a shared mount of its
// own, so that removing a namespace file reaches the pods' mount namespaces
// (they are slaves of the agent's) and the namespace is freed with it.
Status ShareDirectory(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (::mount("", dir.c_str(), "none", MS_SHARED | MS_REC, nullptr) == 0) return Status::Ok();
  if (errno != EINVAL) return Status::Unavailable(fmt::format("mount --make-shared {}: {}", dir.string(), ErrnoText(errno)));
  if (::mount(dir.c_str(), dir.c_str(), "none", MS_BIND | MS_REC, nullptr) != 0 ||
      ::mount("", dir.c_str(), "none", MS_SHARED | MS_REC, nullptr) != 0) {
    return Status::Unavailable(fmt::format("cannot make {} a shared mount for the pods' network namespaces: {}",
                                           dir.string(), ErrnoText(errno)));
  }
  return Status::Ok();
}

bool SafeId(const std::string& id) {
  if (id.empty() || id.size() > 200) return false;
  for (char c : id) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  }
  return id != "." && id != "..";
}

}  // namespace

std::string HostVethName(const std::string& id) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : id) h = (h ^ c) * 1099511628211ull;
  return fmt::format("tsr{:011x}", h & 0xfffffffffffull);
}

struct PodNetwork::Impl {
  PodNetworkOptions options;
  SockPtr sock;
  int bridge_index = 0;
  uint32_t gateway = 0;
  uint32_t last = 0;  // the address given last
  std::map<std::string, PodAttachment> pods;
  std::set<uint32_t> used;

  Result<uint32_t> NextAddress() {
    const Ipv4Cidr& cidr = options.pod_cidr;
    const uint32_t first = gateway + 1, end = cidr.Last();  // end: broadcast, not given
    if (end <= first) return Err(Status::Unavailable("the node's podCIDR has no address for pods"));
    uint32_t candidate = last < first || last >= end ? first : last + 1;
    for (uint32_t tries = 0; tries < end - first; ++tries) {
      if (candidate >= end) candidate = first;
      if (!used.contains(candidate)) return candidate;
      ++candidate;
    }
    return Err(Status::Unavailable(fmt::format(
        "no free pod address in {}: all {} are in use on this node", cidr.ToString(), end - first)));
  }

  void RemoveNamespaceFile(const std::string& path) { RemoveNamespace(PodAttachment{.netns_path = path}); }
};

void PodNetwork::RemoveNamespace(const PodAttachment& attachment) {
  if (attachment.netns_path.empty()) return;
  ::umount2(attachment.netns_path.c_str(), MNT_DETACH);
  ::unlink(attachment.netns_path.c_str());
}

PodNetwork::PodNetwork(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PodNetwork::~PodNetwork() = default;

Result<std::unique_ptr<PodNetwork>> PodNetwork::Open(PodNetworkOptions options) {
  if (options.pod_cidr.prefix > 30) {
    return Err(Status::InvalidArgument(
        fmt::format("podCIDR {} is too small for a pod network (at most /30)", options.pod_cidr.ToString())));
  }
  if (options.bridge.empty() || options.bridge.size() >= IFNAMSIZ) {
    return Err(Status::InvalidArgument(fmt::format("bridge name \"{}\" must have 1 to 15 bytes", options.bridge)));
  }
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  impl->gateway = impl->options.pod_cidr.network + 1;
  RETURN_IF_ERROR(ShareDirectory(impl->options.netns_dir));
  ASSIGN_OR_RETURN(impl->sock, Connect());
  nl_sock* sock = impl->sock.get();
  const std::string& name = impl->options.bridge;
  auto bridge = GetLink(sock, name);
  if (!bridge) {
    LinkPtr made(rtnl_link_bridge_alloc());
    rtnl_link_set_name(made.get(), name.c_str());
    if (int err = rtnl_link_add(sock, made.get(), NLM_F_CREATE); err < 0 && err != -NLE_EXIST) {
      return Err(NlError(err, fmt::format("cannot make the pod bridge {}", name)));
    }
    bridge = GetLink(sock, name);
    if (!bridge) return Err(bridge.error());
  }
  impl->bridge_index = rtnl_link_get_ifindex(bridge->get());
  RETURN_IF_ERROR(SetUp(sock, bridge->get(), 0));
  RETURN_IF_ERROR(AddAddress(sock, impl->bridge_index, impl->gateway, impl->options.pod_cidr.prefix));
  // Pods' traffic to other nodes is routed through this namespace.
  {
    UniqueFd fd(::open("/proc/sys/net/ipv4/ip_forward", O_WRONLY | O_CLOEXEC));
    if (fd.get() < 0 || ::write(fd.get(), "1\n", 2) != 2) {
      return Err(Status::Unavailable(fmt::format("cannot turn on IPv4 forwarding: {}", ErrnoText(errno))));
    }
  }
  return std::unique_ptr<PodNetwork>(new PodNetwork(std::move(impl)));
}

std::string PodNetwork::NetnsPath(const std::string& id) const {
  return (fs::path(impl_->options.netns_dir) / ("tsr-" + id)).string();
}

bool PodNetwork::Adopt(const std::string& id, const PodAttachment& attachment) {
  if (!IsMountPoint(attachment.netns_path)) return false;
  impl_->pods[id] = attachment;
  impl_->used.insert(attachment.ip);
  return true;
}

Result<PodAttachment> PodNetwork::Attach(const std::string& id) {
  if (!SafeId(id)) return Err(Status::InvalidArgument(fmt::format("pod id \"{}\" cannot name a network namespace", id)));
  if (auto it = impl_->pods.find(id); it != impl_->pods.end()) {
    if (IsMountPoint(it->second.netns_path)) return it->second;
    RETURN_IF_ERROR(Detach(id));
  }
  const std::string path = NetnsPath(id);
  const std::string veth = HostVethName(id);
  nl_sock* sock = impl_->sock.get();
  // What a previous attempt left.
  impl_->RemoveNamespaceFile(path);
  if (auto old = GetLink(sock, veth)) rtnl_link_delete(sock, old->get());

  ASSIGN_OR_RETURN(uint32_t ip, impl_->NextAddress());
  {
    UniqueFd file(::open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444));
    if (file.get() < 0) return Err(Status::Unavailable(fmt::format("cannot create {}: {}", path, ErrnoText(errno))));
  }
  Status made = InNetns(-1, [&] {
    if (::mount("/proc/thread-self/ns/net", path.c_str(), "none", MS_BIND, nullptr) != 0) {
      return Status::Unavailable(fmt::format("cannot bind the pod's network namespace to {}: {}", path, ErrnoText(errno)));
    }
    return Status::Ok();
  });
  const auto fail = [&](Status s) {
    if (auto link = GetLink(sock, veth)) rtnl_link_delete(sock, link->get());
    impl_->RemoveNamespaceFile(path);
    return Err(std::move(s));
  };
  if (!made.ok()) return fail(made);
  UniqueFd netns(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (netns.get() < 0) return fail(Status::Unavailable(fmt::format("cannot open {}: {}", path, ErrnoText(errno))));

  // The veth pair: one end on the bridge, the other the pod's eth0.
  LinkPtr pair(rtnl_link_veth_alloc());
  rtnl_link_set_name(pair.get(), veth.c_str());
  rtnl_link_set_mtu(pair.get(), impl_->options.mtu);
  rtnl_link* peer = rtnl_link_veth_get_peer(pair.get());
  rtnl_link_set_name(peer, "eth0");
  rtnl_link_set_mtu(peer, impl_->options.mtu);
  rtnl_link_set_ns_fd(peer, netns.get());
  rtnl_link_put(peer);
  if (int err = rtnl_link_add(sock, pair.get(), NLM_F_CREATE | NLM_F_EXCL); err < 0) {
    return fail(NlError(err, fmt::format("cannot make the pod's veth {}", veth)));
  }
  auto host = GetLink(sock, veth);
  if (!host) return fail(host.error());
  {
    LinkPtr change(rtnl_link_alloc());
    rtnl_link_set_master(change.get(), impl_->bridge_index);
    rtnl_link_set_flags(change.get(), IFF_UP);
    if (int err = rtnl_link_change(sock, host->get(), change.get(), 0); err < 0) {
      return fail(NlError(err, fmt::format("cannot put {} on bridge {}", veth, impl_->options.bridge)));
    }
  }
  {
    // Hairpin: a frame may leave by the port it came in, so that a pod
    // reaching its own Service (DNATed back to itself) gets its answer.
    LinkPtr port(rtnl_link_alloc());
    rtnl_link_set_ifindex(port.get(), rtnl_link_get_ifindex(host->get()));
    rtnl_link_set_family(port.get(), AF_BRIDGE);
    rtnl_link_bridge_set_flags(port.get(), RTNL_BRIDGE_HAIRPIN_MODE);
    if (int err = rtnl_link_change(sock, port.get(), port.get(), 0); err < 0) {
      return fail(NlError(err, fmt::format("cannot turn on hairpin mode on {}", veth)));
    }
  }
  // Inside: lo and eth0 up, the address, the default route through the bridge.
  const uint32_t gateway = impl_->gateway;
  const int prefix = impl_->options.pod_cidr.prefix;
  Status inside = InNetns(netns.get(), [&]() -> Status {
    ASSIGN_OR_RETURN(SockPtr pod, Connect());
    ASSIGN_OR_RETURN(LinkPtr lo, GetLink(pod.get(), "lo"));
    RETURN_IF_ERROR(SetUp(pod.get(), lo.get(), 0));
    ASSIGN_OR_RETURN(LinkPtr eth0, GetLink(pod.get(), "eth0"));
    const int index = rtnl_link_get_ifindex(eth0.get());
    RETURN_IF_ERROR(AddAddress(pod.get(), index, ip, prefix));
    RETURN_IF_ERROR(SetUp(pod.get(), eth0.get(), 0));
    return ReplaceRoute(pod.get(), Ipv4Cidr{0, 0}, gateway, index, RTPROT_BOOT);
  });
  if (!inside.ok()) return fail(inside);
  PodAttachment attachment{.netns_path = path, .ip = ip, .host_veth = veth};
  impl_->pods[id] = attachment;
  impl_->used.insert(ip);
  impl_->last = ip;
  return attachment;
}

Status PodNetwork::Detach(const std::string& id) {
  const std::string path = NetnsPath(id);
  nl_sock* sock = impl_->sock.get();
  if (auto link = GetLink(sock, HostVethName(id))) {
    if (int err = rtnl_link_delete(sock, link->get()); err < 0 && err != -NLE_NODEV && err != -NLE_OBJ_NOTFOUND) {
      return NlError(err, fmt::format("cannot delete the pod's veth {}", HostVethName(id)));
    }
  }
  impl_->RemoveNamespaceFile(path);
  if (auto it = impl_->pods.find(id); it != impl_->pods.end()) {
    impl_->used.erase(it->second.ip);
    impl_->pods.erase(it);
  }
  return Status::Ok();
}

namespace {

// The IPv4 address of eth0 in the pod namespace at `path`, if it has one.
std::optional<uint32_t> PodAddress(const std::string& path) {
  UniqueFd netns(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (netns.get() < 0) return std::nullopt;
  std::optional<uint32_t> found;
  (void)InNetns(netns.get(), [&]() -> Status {
    ASSIGN_OR_RETURN(SockPtr pod, Connect());
    ASSIGN_OR_RETURN(LinkPtr eth0, GetLink(pod.get(), "eth0"));
    nl_cache* cache = nullptr;
    if (rtnl_addr_alloc_cache(pod.get(), &cache) < 0) return Status::Ok();
    for (nl_object* o = nl_cache_get_first(cache); o != nullptr && !found; o = nl_cache_get_next(o)) {
      auto* addr = reinterpret_cast<rtnl_addr*>(o);
      nl_addr* local = rtnl_addr_get_local(addr);
      if (rtnl_addr_get_ifindex(addr) != rtnl_link_get_ifindex(eth0.get()) || rtnl_addr_get_family(addr) != AF_INET ||
          local == nullptr || nl_addr_get_len(local) != 4) {
        continue;
      }
      uint32_t net = 0;
      std::memcpy(&net, nl_addr_get_binary_addr(local), 4);
      found = ntohl(net);
    }
    nl_cache_free(cache);
    return Status::Ok();
  });
  return found;
}

}  // namespace

int PodNetwork::RemoveStale() {
  std::error_code ec;
  std::vector<std::string> stale;
  for (const auto& entry : fs::directory_iterator(impl_->options.netns_dir, ec)) {
    const std::string file = entry.path().filename().string();
    if (!file.starts_with("tsr-")) continue;
    const std::string id = file.substr(4);
    if (impl_->pods.contains(id)) continue;
    // Only a pod of this node: its veth a port of this bridge, in this
    // namespace, and its address in this node's range (nodes that share a
    // bridge each have their own range; other namespaces' pods share the directory).
    auto link = GetLink(impl_->sock.get(), HostVethName(id));
    if (!link || rtnl_link_get_master(link->get()) != impl_->bridge_index) continue;
    if (auto ip = PodAddress(entry.path().string()); ip && impl_->options.pod_cidr.Contains(*ip)) stale.push_back(id);
  }
  for (const std::string& id : stale) {
    if (Status s = Detach(id); !s.ok()) spdlog::warn("pod network: stale pod {}: {}", id, s.message());
  }
  return static_cast<int>(stale.size());
}

Status PodNetwork::SyncRoutes(const std::vector<PodRoute>& routes) {
  nl_sock* sock = impl_->sock.get();
  std::map<Ipv4Cidr, uint32_t> want;
  for (const PodRoute& r : routes) {
    if (r.destination.Overlaps(impl_->options.pod_cidr)) {
      return Status::InvalidArgument(fmt::format("route to {} overlaps this node's podCIDR {}",
                                                 r.destination.ToString(), impl_->options.pod_cidr.ToString()));
    }
    want[r.destination] = r.gateway;
  }
  // What is there now, of ours.
  std::map<Ipv4Cidr, uint32_t> have;
  nl_cache* raw = nullptr;
  if (int err = rtnl_route_alloc_cache(sock, AF_INET, 0, &raw); err < 0) return NlError(err, "netlink: list routes");
  CachePtr cache(raw);
  for (nl_object* o = nl_cache_get_first(cache.get()); o; o = nl_cache_get_next(o)) {
    auto* route = reinterpret_cast<rtnl_route*>(o);
    if (rtnl_route_get_protocol(route) != kRouteProtocol || rtnl_route_get_table(route) != RT_TABLE_MAIN) continue;
    nl_addr* dst = rtnl_route_get_dst(route);
    if (!dst || nl_addr_get_len(dst) != 4) continue;
    uint32_t net = 0;
    std::memcpy(&net, nl_addr_get_binary_addr(dst), 4);
    uint32_t gw = 0;
    if (rtnl_route_get_nnexthops(route) > 0) {
      if (nl_addr* g = rtnl_route_nh_get_gateway(rtnl_route_nexthop_n(route, 0)); g && nl_addr_get_len(g) == 4) {
        std::memcpy(&gw, nl_addr_get_binary_addr(g), 4);
      }
    }
    const Ipv4Cidr dst_cidr{ntohl(net), static_cast<uint8_t>(nl_addr_get_prefixlen(dst))};
    have[dst_cidr] = ntohl(gw);
    if (want.contains(dst_cidr)) continue;  // kept, or its gateway replaced below
    // Deleted as the kernel listed it (its scope, type and next hop), so that it matches.
    if (int err = rtnl_route_delete(sock, route, 0); err < 0 && err != -NLE_OBJ_NOTFOUND) {
      return NlError(err, fmt::format("cannot remove the route to {}", dst_cidr.ToString()));
    }
  }
  for (const auto& [dst, gw] : want) {
    if (auto it = have.find(dst); it != have.end() && it->second == gw) continue;
    RETURN_IF_ERROR(ReplaceRoute(sock, dst, gw, 0, kRouteProtocol));
  }
  return Status::Ok();
}

uint32_t PodNetwork::gateway() const { return impl_->gateway; }
const Ipv4Cidr& PodNetwork::pod_cidr() const { return impl_->options.pod_cidr; }
const std::string& PodNetwork::bridge() const { return impl_->options.bridge; }
std::set<uint32_t> PodNetwork::allocated() const { return impl_->used; }

}  // namespace tessera

#include "tests/sched/scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "domain/quantity.h"
#include "sched/apply_plan.h"
#include "sched/cycle.h"
#include "sched/invariants.h"
#include "sched/pending_reason.h"

namespace tessera::testing {
namespace {

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::vector<std::string> Words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

// key=value options after the positional words; a word without '=' is a flag.
struct Options {
  std::map<std::string, std::string> kv;
  std::set<std::string> flags;
  std::set<std::string> used;

  bool Has(const std::string& k) const { return kv.count(k) > 0; }
  std::string Get(const std::string& k, const std::string& def = "") {
    used.insert(k);
    auto it = kv.find(k);
    return it == kv.end() ? def : it->second;
  }
};

// A misspelt option must not be silently ignored.
Status AllUsed(const Options& o) {
  for (const auto& [k, v] : o.kv) {
    if (!o.used.count(k)) return Status::InvalidArgument(fmt::format("unknown option \"{}\"", k));
  }
  return Status::Ok();
}

Options ParseOptions(const std::vector<std::string>& words, size_t from) {
  Options o;
  for (size_t i = from; i < words.size(); ++i) {
    auto eq = words[i].find('=');
    if (eq == std::string::npos) {
      o.flags.insert(words[i]);
    } else {
      o.kv[words[i].substr(0, eq)] = words[i].substr(eq + 1);
    }
  }
  return o;
}

Result<Labels> ParseLabels(const std::string& s) {
  Labels l;
  if (s.empty()) return l;
  for (const std::string& kv : Split(s, ',')) {
    auto eq = kv.find('=');
    if (eq == std::string::npos) return Err(Status::InvalidArgument(fmt::format("label \"{}\" needs key=value", kv)));
    l.Set(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return l;
}

Result<TaintEffect> ParseEffect(const std::string& s) {
  if (s == "NoSchedule") return TaintEffect::kNoSchedule;
  if (s == "PreferNoSchedule") return TaintEffect::kPreferNoSchedule;
  if (s == "NoExecute") return TaintEffect::kNoExecute;
  return Err(Status::InvalidArgument(fmt::format("unknown taint effect \"{}\"", s)));
}

// key=value:Effect or key:Effect (Exists).
Result<std::vector<Toleration>> ParseTolerations(const std::string& s) {
  std::vector<Toleration> out;
  if (s.empty()) return out;
  for (const std::string& t : Split(s, ',')) {
    Toleration tol;
    std::string body = t;
    auto colon = t.find(':');
    if (colon != std::string::npos) {
      ASSIGN_OR_RETURN(tol.effect, ParseEffect(t.substr(colon + 1)));
      body = t.substr(0, colon);
    }
    auto eq = body.find('=');
    if (eq == std::string::npos) {
      tol.key = body;
      tol.op = Toleration::Operator::kExists;
    } else {
      tol.key = body.substr(0, eq);
      tol.value = body.substr(eq + 1);
    }
    out.push_back(tol);
  }
  return out;
}

Result<int64_t> ParseInt(const std::string& s) {
  try {
    size_t pos = 0;
    int64_t v = std::stoll(s, &pos);
    if (pos != s.size()) throw std::invalid_argument(s);
    return v;
  } catch (const std::exception&) {
    return Err(Status::InvalidArgument(fmt::format("\"{}\" is not an integer", s)));
  }
}

class Runner {
 public:
  Result<std::vector<std::string>> Run(const std::string& path);

 private:
  Status Line(const std::vector<std::string>& words, const std::string& raw);
  Status AddNode(const std::string& name, Options& o);
  Result<Workload> ParseWorkload(const std::string& key, Options& o);
  Status RunCycleAndCheck();
  void Fail(std::string msg) { failures_.push_back(fmt::format("{}:{}: {}", path_, line_no_, std::move(msg))); }
  int32_t WorkloadIndex(const std::string& key) const {
    for (size_t i = 0; i < snap_.workloads.size(); ++i) {
      if (snap_.workloads[i].Key() == key) return static_cast<int32_t>(i);
    }
    return -1;
  }
  template <typename Vec>
  static int32_t IndexByName(const Vec& v, const std::string& name) {
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i].name == name) return static_cast<int32_t>(i);
    }
    return -1;
  }
  int32_t NamespaceIndex(const std::string& name) {
    int32_t i = IndexByName(snap_.namespaces, name);
    if (i >= 0) return i;
    snap_.namespaces.push_back(Namespace{.name = name});
    return static_cast<int32_t>(snap_.namespaces.size() - 1);
  }

  std::string path_;
  int line_no_ = 0;
  ClusterSnapshot snap_;
  SchedulerConfig config_;
  Timestamp now_ = Timestamp::FromSeconds(0);
  std::map<std::string, PriorityClass> classes_;
  struct Expectation {
    int line;
    std::vector<std::string> words;
    std::string raw;
  };
  std::vector<Expectation> expectations_;
  std::vector<std::string> failures_;
  int cycles_ = 0;
};

Result<std::vector<std::string>> Runner::Run(const std::string& path) {
  path_ = path;
  for (const PriorityClass& pc : DefaultPriorityClasses()) classes_[pc.name] = pc;
  config_.check_invariants = true;
  std::ifstream in(path);
  if (!in) return Err(Status::NotFound(fmt::format("cannot open scenario {}", path)));
  std::string raw;
  while (std::getline(in, raw)) {
    ++line_no_;
    std::string line = raw.substr(0, raw.find('#'));
    // "expect message" keeps '#' characters in its text.
    if (raw.find("expect message") != std::string::npos) line = raw;
    auto words = Words(line);
    if (words.empty()) continue;
    Status s = Line(words, line);
    if (!s.ok()) return Err(s.WithContext(fmt::format("{}:{}", path, line_no_)));
  }
  if (!expectations_.empty()) {
    return Err(Status::InvalidArgument(fmt::format("{}: expectations after the last 'cycle' are never checked", path)));
  }
  if (cycles_ == 0) return Err(Status::InvalidArgument(fmt::format("{}: no 'cycle' command", path)));
  return failures_;
}

Status Runner::AddNode(const std::string& name, Options& o) {
  Node n;
  n.name = name;
  ASSIGN_OR_RETURN(int64_t gpus, ParseInt(o.Get("gpus", "0")));
  ASSIGN_OR_RETURN(int64_t mem_per_gpu, ParseUnits(o.Get("memory-per-gpu", "80Gi")));
  ASSIGN_OR_RETURN(n.cpu_milli, ParseMilli(o.Get("cpu", "64")));
  ASSIGN_OR_RETURN(n.memory_bytes, ParseUnits(o.Get("memory", "512Gi")));
  ASSIGN_OR_RETURN(n.labels, ParseLabels(o.Get("labels")));
  n.rack = o.Get("rack");
  n.ready = o.Get("ready", "true") == "true";
  n.unschedulable = o.Get("unschedulable", "false") == "true";
  std::vector<std::string> nvlink = o.Has("nvlink") ? Split(o.Get("nvlink"), ',') : std::vector<std::string>{};
  if (!nvlink.empty() && static_cast<int64_t>(nvlink.size()) != gpus) {
    return Status::InvalidArgument(fmt::format("node {}: nvlink lists {} domains for {} GPUs", name, nvlink.size(), gpus));
  }
  for (int64_t g = 0; g < gpus; ++g) {
    GpuDevice d{.index = static_cast<int32_t>(g),
                .uuid = fmt::format("GPU-{}-{}", name, g),
                .model = o.Get("model", "A100-80GB"),
                .memory_bytes = mem_per_gpu};
    if (!nvlink.empty()) {
      ASSIGN_OR_RETURN(int64_t dom, ParseInt(nvlink[g]));
      d.nvlink_domain = static_cast<int32_t>(dom);
    }
    n.gpus.push_back(d);
  }
  if (o.Has("taints")) {
    for (const std::string& t : Split(o.Get("taints"), ',')) {
      auto colon = t.find(':');
      if (colon == std::string::npos) return Status::InvalidArgument(fmt::format("taint \"{}\" needs :Effect", t));
      Taint taint;
      ASSIGN_OR_RETURN(taint.effect, ParseEffect(t.substr(colon + 1)));
      std::string kv = t.substr(0, colon);
      auto eq = kv.find('=');
      taint.key = kv.substr(0, eq);
      if (eq != std::string::npos) taint.value = kv.substr(eq + 1);
      n.taints.push_back(taint);
    }
  }
  snap_.nodes.push_back(std::move(n));
  return AllUsed(o);
}

Result<Workload> Runner::ParseWorkload(const std::string& key, Options& o) {
  Workload w;
  auto slash = key.find('/');
  if (slash == std::string::npos) return Err(Status::InvalidArgument(fmt::format("workload \"{}\" needs NS/NAME", key)));
  w.namespace_name = key.substr(0, slash);
  w.name = key.substr(slash + 1);
  w.local_queue_name = o.Get("queue");
  if (o.Has("priority")) {
    auto it = classes_.find(o.Get("priority"));
    if (it == classes_.end()) return Err(Status::InvalidArgument(fmt::format("unknown priority class {}", o.Get("priority"))));
    w.priority = it->second.value;
    w.priority_class = it->first;
    w.preemption_policy = it->second.preemption_policy;
    w.non_preemptible = it->second.non_preemptible;
  }
  ASSIGN_OR_RETURN(int64_t created, ParseInt(o.Get("created", "0")));
  w.creation_time = Timestamp::FromSeconds(created);
  if (o.Has("maxrun")) {
    ASSIGN_OR_RETURN(int64_t maxrun, ParseInt(o.Get("maxrun")));
    w.max_run = Duration::Seconds(maxrun);
  }
  PodSet ps;
  ps.name = o.Get("podset", "main");
  ASSIGN_OR_RETURN(int64_t count, ParseInt(o.Get("count", "1")));
  ASSIGN_OR_RETURN(int64_t min, ParseInt(o.Get("min", "0")));
  ps.count = static_cast<int32_t>(count);
  ps.min_count = static_cast<int32_t>(min);
  ASSIGN_OR_RETURN(int64_t gpu, ParseGpuMilli(o.Get("gpu", "0")));
  ASSIGN_OR_RETURN(int64_t gpumem, ParseUnits(o.Get("gpumem", "0")));
  ASSIGN_OR_RETURN(int64_t cpu, ParseMilli(o.Get("cpu", "1")));
  ASSIGN_OR_RETURN(int64_t memory, ParseUnits(o.Get("memory", "1Gi")));
  ps.requests.set(ResourceKind::kGpu, gpu);
  ps.requests.set(ResourceKind::kGpuMemory, gpumem);
  ps.requests.set(ResourceKind::kCpu, cpu);
  ps.requests.set(ResourceKind::kMemory, memory);
  ps.requests.set(ResourceKind::kPods, 1);
  ps.limits = ps.requests;
  ASSIGN_OR_RETURN(ps.node_selector, ParseLabels(o.Get("selector")));
  ASSIGN_OR_RETURN(ps.tolerations, ParseTolerations(o.Get("tolerations")));
  const std::string topo = o.Get("topology");
  if (topo == "spread") ps.topology = TopologyPreference::kSpread;
  if (topo == "node") ps.topology = TopologyPreference::kSameNode;
  if (topo == "rack") ps.topology = TopologyPreference::kSameRack;
  if (topo == "nvlink") ps.topology = TopologyPreference::kSameNvlink;
  const std::string from = o.Get("spreadfrom");
  for (size_t start = 0; start < from.size();) {
    const size_t comma = std::min(from.find(',', start), from.size());
    if (comma > start) ps.spread_from_nodes.push_back(from.substr(start, comma - start));
    start = comma + 1;
  }
  w.pod_sets.push_back(std::move(ps));
  return w;
}

Status Runner::Line(const std::vector<std::string>& words, const std::string& raw) {
  const std::string& cmd = words[0];
  auto need = [&](size_t n) {
    return words.size() >= n ? Status::Ok()
                              : Status::InvalidArgument(fmt::format("'{}' needs {} arguments", cmd, n - 1));
  };
  if (cmd == "flavor") {
    RETURN_IF_ERROR(need(2));
    Options o = ParseOptions(words, 2);
    ResourceFlavor f{.name = words[1]};
    ASSIGN_OR_RETURN(f.node_labels, ParseLabels(o.Get("labels")));
    ASSIGN_OR_RETURN(f.tolerations, ParseTolerations(o.Get("tolerations")));
    if (o.Has("price")) {
      ASSIGN_OR_RETURN(int64_t milli, ParseMilli(o.Get("price")));
      f.price_micro_per_gpu_hour = milli * 1000;
    }
    RETURN_IF_ERROR(AllUsed(o));
    snap_.flavors.push_back(std::move(f));
  } else if (cmd == "node") {
    RETURN_IF_ERROR(need(2));
    Options o = ParseOptions(words, 2);
    RETURN_IF_ERROR(AddNode(words[1], o));
  } else if (cmd == "nodes") {
    RETURN_IF_ERROR(need(3));
    ASSIGN_OR_RETURN(int64_t count, ParseInt(words[1]));
    for (int64_t i = 0; i < count; ++i) {
      Options o = ParseOptions(words, 3);
      RETURN_IF_ERROR(AddNode(fmt::format("{}{}", words[2], i), o));
    }
  } else if (cmd == "clusterqueue") {
    RETURN_IF_ERROR(need(2));
    Options o = ParseOptions(words, 2);
    ClusterQueue cq{.name = words[1]};
    if (o.Has("cohort")) {
      const std::string c = o.Get("cohort");
      int32_t id = IndexByName(snap_.cohorts, c);
      if (id < 0) {
        snap_.cohorts.push_back(Cohort{.name = c});
        id = static_cast<int32_t>(snap_.cohorts.size() - 1);
      }
      cq.cohort = CohortId(id);
    }
    if (o.Get("strategy") == "StrictFIFO") cq.queueing_strategy = QueueingStrategy::kStrictFIFO;
    if (o.Has("weight")) {
      ASSIGN_OR_RETURN(cq.fair_weight_milli, ParseMilli(o.Get("weight")));
    }
    const std::string within = o.Get("within", "Never");
    if (within == "LowerPriority") cq.preemption.within_cluster_queue = WithinClusterQueuePolicy::kLowerPriority;
    if (within == "LowerOrNewerEqualPriority") {
      cq.preemption.within_cluster_queue = WithinClusterQueuePolicy::kLowerOrNewerEqualPriority;
    }
    const std::string reclaim = o.Get("reclaim", "Never");
    if (reclaim == "LowerPriority") cq.preemption.reclaim_within_cohort = ReclaimWithinCohortPolicy::kLowerPriority;
    if (reclaim == "Any") cq.preemption.reclaim_within_cohort = ReclaimWithinCohortPolicy::kAny;
    if (o.Get("borrowwithin") == "LowerPriority") {
      cq.preemption.borrow_within_cohort = BorrowWithinCohortPolicy::kLowerPriority;
    }
    if (o.Has("threshold")) {
      ASSIGN_OR_RETURN(int64_t t, ParseInt(o.Get("threshold")));
      cq.preemption.borrow_max_priority_threshold = static_cast<int32_t>(t);
    }
    cq.stopped = o.Get("stopped") == "true";
    RETURN_IF_ERROR(AllUsed(o));
    snap_.cluster_queues.push_back(std::move(cq));
  } else if (cmd == "quota") {
    RETURN_IF_ERROR(need(4));
    const int32_t cq = IndexByName(snap_.cluster_queues, words[1]);
    const int32_t f = IndexByName(snap_.flavors, words[2]);
    if (cq < 0 || f < 0) return Status::InvalidArgument("quota names an unknown clusterqueue or flavor");
    ClusterQueue& q = snap_.cluster_queues[cq];
    if (q.resource_groups.empty()) q.resource_groups.emplace_back();
    ResourceGroup& g = q.resource_groups.front();
    FlavorQuotas fq{.flavor = FlavorId(f)};
    for (size_t i = 3; i < words.size(); ++i) {
      auto eq = words[i].find('=');
      if (eq == std::string::npos) return Status::InvalidArgument(fmt::format("quota \"{}\" needs resource=", words[i]));
      const std::string res = words[i].substr(0, eq);
      const std::vector<std::string> parts = Split(words[i].substr(eq + 1), '/');
      ResourceKind kind = res == "gpu" ? ResourceKind::kGpu
                          : res == "cpu" ? ResourceKind::kCpu
                          : res == "memory" ? ResourceKind::kMemory
                                            : ResourceKind::kPods;
      auto parse = [&](const std::string& v) -> Result<int64_t> {
        if (kind == ResourceKind::kGpu || kind == ResourceKind::kCpu) return ParseMilli(v);
        return ParseUnits(v);
      };
      ResourceQuotaSpec spec{.resource = kind};
      ASSIGN_OR_RETURN(spec.nominal, parse(parts[0]));
      if (parts.size() > 1 && parts[1] != "-") {
        ASSIGN_OR_RETURN(int64_t b, parse(parts[1]));
        spec.borrowing_limit = Limit::Of(b);
      }
      if (parts.size() > 2 && parts[2] != "-") {
        ASSIGN_OR_RETURN(int64_t l, parse(parts[2]));
        spec.lending_limit = Limit::Of(l);
      }
      fq.resources.push_back(spec);
      if (!g.Covers(kind)) g.covered_resources.push_back(kind);
    }
    g.flavors.push_back(std::move(fq));
  } else if (cmd == "localqueue") {
    RETURN_IF_ERROR(need(3));
    auto slash = words[1].find('/');
    LocalQueue lq{.namespace_name = words[1].substr(0, slash), .name = words[1].substr(slash + 1)};
    lq.cluster_queue_name = words[2];
    const int32_t cq = IndexByName(snap_.cluster_queues, words[2]);
    if (cq >= 0) lq.cluster_queue = ClusterQueueId(cq);
    NamespaceIndex(lq.namespace_name);
    snap_.local_queues.push_back(std::move(lq));
  } else if (cmd == "resourcequota") {
    RETURN_IF_ERROR(need(2));
    auto slash = words[1].find('/');
    const int32_t ns = NamespaceIndex(words[1].substr(0, slash));
    ResourceQuota rq{.name = words[1].substr(slash + 1)};
    for (size_t i = 2; i < words.size(); ++i) {
      auto eq = words[i].find('=');
      std::string key = words[i].substr(0, eq);
      const std::string value = words[i].substr(eq + 1);
      bool limits = false;
      if (key.starts_with("requests.")) key = key.substr(9);
      if (key.starts_with("limits.")) {
        key = key.substr(7);
        limits = true;
      }
      auto kind = ParseResourceName(key);
      if (!kind) return Status::InvalidArgument(fmt::format("resourcequota: unknown resource {}", key));
      int64_t v = 0;
      if (*kind == ResourceKind::kGpu) {
        ASSIGN_OR_RETURN(v, ParseMilli(value));
      } else if (*kind == ResourceKind::kCpu) {
        ASSIGN_OR_RETURN(v, ParseMilli(value));
      } else {
        ASSIGN_OR_RETURN(v, ParseUnits(value));
      }
      if (limits) {
        rq.SetLimit(*kind, v);
      } else {
        rq.SetRequest(*kind, v);
      }
    }
    // A later line with the same name replaces the quota (an admin editing it).
    auto& quotas = snap_.namespaces[ns].quotas;
    auto it = std::find_if(quotas.begin(), quotas.end(), [&](const ResourceQuota& q) { return q.name == rq.name; });
    if (it != quotas.end()) {
      *it = rq;
    } else {
      quotas.push_back(rq);
    }
  } else if (cmd == "budget") {
    // budget NS/NAME end=SECONDS [period=day|week|month] [cost=DOLLARS] [gpuhours=H] [usedcost=DOLLARS] [usedgpuhours=H]
    RETURN_IF_ERROR(need(2));
    const auto slash = words[1].find('/');
    if (slash == std::string::npos) return Status::InvalidArgument("budget: expected NS/NAME");
    const int32_t ns = NamespaceIndex(words[1].substr(0, slash));
    Options o = ParseOptions(words, 2);
    NamespaceBudget b{.name = words[1].substr(slash + 1)};
    const std::string period = o.Has("period") ? o.Get("period") : "month";
    if (period == "day") {
      b.period = BudgetPeriod::kDay;
    } else if (period == "week") {
      b.period = BudgetPeriod::kWeek;
    } else if (period != "month") {
      return Status::InvalidArgument(fmt::format("budget: period {}: day, week or month", period));
    }
    ASSIGN_OR_RETURN(int64_t end, ParseInt(o.Get("end")));
    b.period_end = Timestamp::FromSeconds(end);
    auto money = [&](const char* key) -> Result<std::optional<int64_t>> {
      if (!o.Has(key)) return std::optional<int64_t>();
      ASSIGN_OR_RETURN(int64_t milli, ParseMilli(o.Get(key)));
      return std::optional<int64_t>(milli * 1000);
    };
    auto hours = [&](const char* key) -> Result<std::optional<int64_t>> {
      if (!o.Has(key)) return std::optional<int64_t>();
      ASSIGN_OR_RETURN(int64_t milli, ParseMilli(o.Get(key)));  // thousandths of a GPU-hour
      return std::optional<int64_t>(milli * 3600);              // milli-GPU-seconds
    };
    ASSIGN_OR_RETURN(b.limit_cost_micro, money("cost"));
    ASSIGN_OR_RETURN(b.limit_gpu_milli_seconds, hours("gpuhours"));
    ASSIGN_OR_RETURN(auto used_cost, money("usedcost"));
    ASSIGN_OR_RETURN(auto used_hours, hours("usedgpuhours"));
    b.used_cost_micro = used_cost.value_or(0);
    b.used_gpu_milli_seconds = used_hours.value_or(0);
    RETURN_IF_ERROR(AllUsed(o));
    auto& budgets = snap_.namespaces[ns].budgets;
    auto it = std::find_if(budgets.begin(), budgets.end(), [&](const NamespaceBudget& x) { return x.name == b.name; });
    if (it != budgets.end()) {
      *it = b;
    } else {
      budgets.push_back(b);
    }
  } else if (cmd == "priorityclass") {
    RETURN_IF_ERROR(need(3));
    PriorityClass pc{.name = words[1]};
    ASSIGN_OR_RETURN(int64_t v, ParseInt(words[2]));
    pc.value = static_cast<int32_t>(v);
    Options o = ParseOptions(words, 3);
    if (o.flags.count("never")) pc.preemption_policy = PreemptionPolicy::kNever;
    pc.non_preemptible = o.flags.count("nonpreemptible") > 0;
    classes_[pc.name] = pc;
  } else if (cmd == "workload" || cmd == "running") {
    RETURN_IF_ERROR(need(2));
    Options o = ParseOptions(words, 2);
    ASSIGN_OR_RETURN(Workload w, ParseWorkload(words[1], o));
    if (cmd == "running") {
      // Placement: NODE:DEV[@MILLI],DEV;NODE:...  one segment per pod.
      const int32_t lq = [&] {
        for (size_t i = 0; i < snap_.local_queues.size(); ++i) {
          if (snap_.local_queues[i].namespace_name == w.namespace_name && snap_.local_queues[i].name == w.local_queue_name) {
            return static_cast<int32_t>(i);
          }
        }
        return -1;
      }();
      if (lq < 0 || !snap_.local_queues[lq].cluster_queue.valid()) {
        return Status::InvalidArgument("running workload needs a queue that maps to a clusterqueue");
      }
      const ClusterQueueId cq = snap_.local_queues[lq].cluster_queue;
      PodSetAssignment a;
      if (o.Has("flavor")) {
        a.flavor = FlavorId(IndexByName(snap_.flavors, o.Get("flavor")));
      } else {
        a.flavor = snap_.cluster_queue(cq).resource_groups.front().flavors.front().flavor;
      }
      const int64_t gpu = w.pod_sets[0].requests.gpu();
      for (const std::string& seg : Split(o.Get("on"), ';')) {
        auto colon = seg.find(':');
        const int32_t node = IndexByName(snap_.nodes, seg.substr(0, colon));
        if (node < 0) return Status::InvalidArgument(fmt::format("running: unknown node in \"{}\"", seg));
        PodPlacement pod{.node = NodeId(node)};
        if (colon != std::string::npos && colon + 1 < seg.size()) {
          for (const std::string& dev : Split(seg.substr(colon + 1), ',')) {
            auto at = dev.find('@');
            ASSIGN_OR_RETURN(int64_t d, ParseInt(dev.substr(0, at)));
            int64_t milli = gpu >= 1000 ? 1000 : gpu;
            if (at != std::string::npos) {
              ASSIGN_OR_RETURN(milli, ParseMilli(dev.substr(at + 1)));
            }
            pod.gpus.push_back(DeviceShare{.device = static_cast<int32_t>(d), .milli = milli});
          }
        }
        a.pods.push_back(std::move(pod));
      }
      a.count = static_cast<int32_t>(a.pods.size());
      if (!o.Has("count")) w.pod_sets[0].count = a.count;
      w.admission = Admission{.cluster_queue = cq, .pod_sets = {a}};
      ASSIGN_OR_RETURN(int64_t started, ParseInt(o.Get("started", "0")));
      w.start_time = Timestamp::FromSeconds(started);
      if (o.Has("checkpoint")) {
        ASSIGN_OR_RETURN(int64_t ck, ParseInt(o.Get("checkpoint")));
        w.last_checkpoint = Timestamp::FromSeconds(ck);
      }
      w.evicting = o.Get("evicting") == "true";
    }
    RETURN_IF_ERROR(AllUsed(o));
    w.ns = NamespaceId(NamespaceIndex(w.namespace_name));
    snap_.workloads.push_back(std::move(w));
  } else if (cmd == "repeat") {
    RETURN_IF_ERROR(need(3));
    ASSIGN_OR_RETURN(int64_t n, ParseInt(words[1]));
    for (int64_t i = 0; i < n; ++i) {
      std::vector<std::string> sub(words.begin() + 2, words.end());
      for (std::string& s : sub) {
        for (size_t p; (p = s.find("{i}")) != std::string::npos;) s.replace(p, 3, fmt::format("{}", i));
      }
      RETURN_IF_ERROR(Line(sub, raw));
    }
  } else if (cmd == "config") {
    Options o = ParseOptions(words, 1);
    for (const auto& [k, v] : o.kv) {
      const bool on = v == "on";
      if (k == "preemption") config_.enable_preemption = on;
      else if (k == "backfill") config_.enable_backfill = on;
      else if (k == "sharing") config_.enable_gpu_sharing = on;
      else if (k == "borrowing") config_.enable_borrowing = on;
      else if (k == "fairsharing") config_.enable_fair_sharing = on;
      else return Status::InvalidArgument(fmt::format("unknown config key {}", k));
    }
  } else if (cmd == "now" || cmd == "advance") {
    RETURN_IF_ERROR(need(2));
    ASSIGN_OR_RETURN(int64_t s, ParseInt(words[1]));
    now_ = cmd == "now" ? Timestamp::FromSeconds(s) : now_ + Duration::Seconds(s);
  } else if (cmd == "finish") {
    RETURN_IF_ERROR(need(2));
    const int32_t w = WorkloadIndex(words[1]);
    if (w < 0 || !snap_.workloads[w].admitted()) return Status::InvalidArgument(fmt::format("{} is not running", words[1]));
    snap_.workloads.erase(snap_.workloads.begin() + w);
  } else if (cmd == "expect") {
    RETURN_IF_ERROR(need(2));
    expectations_.push_back(Expectation{line_no_, words, raw});
  } else if (cmd == "cycle") {
    return RunCycleAndCheck();
  } else {
    return Status::InvalidArgument(fmt::format("unknown command \"{}\"", cmd));
  }
  return Status::Ok();
}

Status Runner::RunCycleAndCheck() {
  ++cycles_;
  RETURN_IF_ERROR(ValidateSnapshot(snap_));
  // Ids in the snapshot are positions; re-resolve local queues after edits.
  for (Workload& w : snap_.workloads) {
    w.local_queue = LocalQueueId();
    for (size_t i = 0; i < snap_.local_queues.size(); ++i) {
      if (snap_.local_queues[i].namespace_name == w.namespace_name && snap_.local_queues[i].name == w.local_queue_name) {
        w.local_queue = LocalQueueId(static_cast<int32_t>(i));
      }
    }
  }
  const Plan plan = RunCycle(snap_, config_, now_);
  Status inv = CheckPlanInvariants(snap_, plan, config_);
  if (!inv.ok()) Fail(inv.ToString());

  const int saved_line = line_no_;
  auto admission_of = [&](const std::string& key) -> const Admission* {
    for (const AdmitDecision& a : plan.admissions) {
      if (snap_.workload(a.workload).Key() == key) return &a.admission;
    }
    return nullptr;
  };
  auto pending_of = [&](const std::string& key) -> const PendingDecision* {
    for (const PendingDecision& p : plan.pending) {
      if (snap_.workload(p.workload).Key() == key) return &p;
    }
    return nullptr;
  };
  auto device_of = [&](const std::string& key) -> std::optional<std::pair<int32_t, int32_t>> {
    const Admission* a = admission_of(key);
    if (a == nullptr) {
      const int32_t w = WorkloadIndex(key);
      if (w >= 0 && snap_.workloads[w].admitted()) a = &*snap_.workloads[w].admission;
    }
    if (a == nullptr || a->pod_sets.empty() || a->pod_sets[0].pods.size() != 1 || a->pod_sets[0].pods[0].gpus.size() != 1) {
      return std::nullopt;
    }
    return std::pair{a->pod_sets[0].pods[0].node.value(), a->pod_sets[0].pods[0].gpus[0].device};
  };

  for (const Expectation& e : expectations_) {
    line_no_ = e.line;
    const std::string& what = e.words[1];
    const std::string key = e.words.size() > 2 ? e.words[2] : "";
    Options o = ParseOptions(e.words, 3);
    if (what == "admitted") {
      const Admission* a = admission_of(key);
      if (a == nullptr) {
        const PendingDecision* p = pending_of(key);
        Fail(fmt::format("{} not admitted{}", key,
                         p ? ": " + DescribePending(snap_, p->workload, p->reason, now_) : std::string(" (not in plan)")));
        continue;
      }
      if (o.Has("flavor") && snap_.flavor(a->pod_sets[0].flavor).name != o.Get("flavor")) {
        Fail(fmt::format("{} admitted in flavor {}, expected {}", key, snap_.flavor(a->pod_sets[0].flavor).name,
                         o.Get("flavor")));
      }
      std::vector<std::string> nodes, devices;
      for (const PodSetAssignment& ps : a->pod_sets) {
        for (const PodPlacement& pod : ps.pods) {
          const std::string node = snap_.node(pod.node).name;
          nodes.push_back(node);
          std::vector<std::string> devs;
          for (const DeviceShare& d : pod.gpus) devs.push_back(fmt::format("{}", d.device));
          devices.push_back(fmt::format("{}:{}", node, fmt::join(devs, ",")));
        }
      }
      if (o.Has("nodes") && fmt::format("{}", fmt::join(nodes, ",")) != o.Get("nodes")) {
        Fail(fmt::format("{} placed on nodes {}, expected {}", key, fmt::join(nodes, ","), o.Get("nodes")));
      }
      if (o.Has("devices") && fmt::format("{}", fmt::join(devices, ";")) != o.Get("devices")) {
        Fail(fmt::format("{} placed on devices {}, expected {}", key, fmt::join(devices, ";"), o.Get("devices")));
      }
      if (o.Has("count") && fmt::format("{}", a->pod_sets[0].count) != o.Get("count")) {
        Fail(fmt::format("{} admitted with {} pods, expected {}", key, a->pod_sets[0].count, o.Get("count")));
      }
    } else if (what == "pending") {
      const PendingDecision* p = pending_of(key);
      if (p == nullptr) {
        Fail(fmt::format("{} not pending (admitted: {})", key, admission_of(key) != nullptr));
        continue;
      }
      if (o.Has("reason") && PendingReasonName(p->reason.code) != o.Get("reason")) {
        Fail(fmt::format("{} pending for {} ({}), expected {}", key, PendingReasonName(p->reason.code),
                         DescribePending(snap_, p->workload, p->reason, now_), o.Get("reason")));
      }
    } else if (what == "message" || what == "message-contains") {
      const PendingDecision* p = pending_of(key);
      const std::string marker = key + " ";
      const size_t at = e.raw.find(marker, e.raw.find(what) + what.size());
      std::string text = at == std::string::npos ? "" : e.raw.substr(at + marker.size());
      while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.pop_back();
      if (p == nullptr) {
        Fail(fmt::format("{} not pending", key));
        continue;
      }
      const std::string got = DescribePending(snap_, p->workload, p->reason, now_);
      if (what == "message" ? got != text : got.find(text) == std::string::npos) {
        Fail(fmt::format("{} explanation:\n    got:      {}\n    expected: {}", key, got, text));
      }
    } else if (what == "preempted" || what == "not-preempted") {
      const PreemptDecision* found = nullptr;
      for (const PreemptDecision& d : plan.preemptions) {
        if (snap_.workload(d.victim).Key() == key) found = &d;
      }
      if (what == "not-preempted") {
        if (found) Fail(fmt::format("{} was preempted", key));
        continue;
      }
      if (found == nullptr) {
        Fail(fmt::format("{} was not preempted", key));
        continue;
      }
      if (o.Has("by") && snap_.workload(found->preemptor).Key() != o.Get("by")) {
        Fail(fmt::format("{} preempted by {}, expected {}", key, snap_.workload(found->preemptor).Key(), o.Get("by")));
      }
      static const char* kReasons[] = {"InClusterQueue", "ReclaimWithinCohort", "BorrowWithinCohort"};
      if (o.Has("reason") && kReasons[static_cast<int>(found->reason)] != o.Get("reason")) {
        Fail(fmt::format("{} preempted for {}, expected {}", key, kReasons[static_cast<int>(found->reason)], o.Get("reason")));
      }
    } else if (what == "reservation") {
      const Reservation* r = nullptr;
      for (const Reservation& x : plan.reservations) {
        if (snap_.workload(x.workload).Key() == key) r = &x;
      }
      if (r == nullptr) {
        Fail(fmt::format("{} holds no reservation", key));
      } else if (o.Has("start") && fmt::format("{}", r->start.seconds()) != o.Get("start")) {
        Fail(fmt::format("{} reservation starts at {}, expected {}", key, r->start.seconds(), o.Get("start")));
      }
    } else if (what == "counts") {
      Options c = ParseOptions(e.words, 2);
      auto check = [&](const char* name, size_t got) {
        if (c.Has(name) && fmt::format("{}", got) != c.Get(name)) {
          Fail(fmt::format("{} = {}, expected {}", name, got, c.Get(name)));
        }
      };
      check("admitted", plan.admissions.size());
      check("pending", plan.pending.size());
      check("preempted", plan.preemptions.size());
      check("reservations", plan.reservations.size());
    } else if (what == "queue-admitted") {
      int admitted = 0;
      for (const AdmitDecision& a : plan.admissions) {
        if (snap_.cluster_queue(a.admission.cluster_queue).name == key) ++admitted;
      }
      const std::string want = e.words.size() > 3 ? e.words[3] : "";
      if (fmt::format("{}", admitted) != want) Fail(fmt::format("{} admitted {}, expected {}", key, admitted, want));
    } else if (what == "free-gpus") {
      auto want = ParseMilli(key);
      if (!want || *want != plan.fragmentation.free_gpu_milli) {
        Fail(fmt::format("free GPUs {}, expected {}", FormatMilliDecimal(plan.fragmentation.free_gpu_milli), key));
      }
    } else if (what == "same-device" || what == "different-device") {
      const std::string other = e.words.size() > 3 ? e.words[3] : "";
      auto a = device_of(key), b = device_of(other);
      if (!a || !b) {
        Fail(fmt::format("{} or {} is not a placed single-device pod", key, other));
      } else if ((what == "same-device") != (*a == *b)) {
        Fail(fmt::format("{} on node {} device {}, {} on node {} device {}", key, a->first, a->second, other, b->first,
                         b->second));
      }
    } else {
      line_no_ = saved_line;
      return Status::InvalidArgument(fmt::format("unknown expectation \"{}\" at line {}", what, e.line));
    }
  }
  line_no_ = saved_line;
  expectations_.clear();

  ApplyPlan(snap_, plan, now_);
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::string>> RunScenarioFile(const std::string& path) {
  Runner runner;
  return runner.Run(path);
}

}  // namespace tessera::testing

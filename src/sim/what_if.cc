#include "sim/what_if.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "api/convert.h"
#include "api/kinds.h"
#include "api/object_fields.h"
#include "api/validation.h"
#include "common/time_format.h"
#include "sim/history_trace.h"
#include "sim/sim_cluster.h"
#include "sim/sim_metrics.h"
#include "sim/simulator.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr std::string_view kPolicyKinds[] = {"ResourceFlavor", "ClusterQueue", "LocalQueue",
                                             "PriorityClass",  "Namespace",    "ResourceQuota"};
constexpr const char* kCurrent = "current";
constexpr const char* kObserved = "observed";

Status Invalid(const std::string& field, const std::string& message) {
  return Status::Invalid(fmt::format("{}: {}", field, message), {FieldCause{.field = field, .message = message}});
}

// "7d" back from now, or a date / RFC 3339 time.
Result<Timestamp> WindowBound(const json& spec, const char* key, Timestamp now, const std::string& field) {
  const std::string text = spec.value(key, "");
  if (auto d = ParseDuration(text)) return Timestamp::FromMillis(now.ms - d->ms);
  if (auto t = ParseDateOrRfc3339(text)) return *t;
  return Err(Invalid(field, fmt::format("Invalid value: \"{}\": give an offset back from now (like 7d or 12h) or a "
                                        "date or time (like 2026-12-01 or 2026-12-01T09:00:00Z)",
                                        text)));
}

// A stored object as a manifest: what the API server would take back on create.
json AsManifest(const json& stored) {
  json out = stored;
  out.erase("status");
  json meta = json::object();
  if (auto m = stored.find("metadata"); m != stored.end() && m->is_object()) {
    for (const char* k : {"name", "namespace", "labels", "annotations"}) {
      if (auto it = m->find(k); it != m->end()) meta[k] = *it;
    }
  }
  out["metadata"] = std::move(meta);
  return out;
}

std::string PolicyKey(const json& o) { return fmt::format("{}/{}/{}", TextAt(o, "kind"), NamespaceOf(o), NameOf(o)); }

json DistributionJson(const Distribution& d) {
  return {{"count", d.count}, {"mean", d.mean}, {"p50", d.p50}, {"p90", d.p90}, {"p99", d.p99}, {"max", d.max}};
}

// The series in at most kWhatIfSeriesPoints steps over [0, end]: per step, the
// largest value seen in it (a peak is never thinned away); the last sample kept.
json SeriesJson(const std::vector<SimSample>& samples, int64_t end_s) {
  json t = json::array(), allocated = json::array(), pending = json::array(), running = json::array();
  const int64_t step = std::max<int64_t>(1, (end_s + static_cast<int64_t>(kWhatIfSeriesPoints) - 1) /
                                                static_cast<int64_t>(kWhatIfSeriesPoints));
  int64_t bucket = -1;
  SimSample peak;
  auto flush = [&] {
    if (bucket < 0) return;
    t.push_back(bucket * step);
    allocated.push_back(peak.allocated_gpu_milli);
    pending.push_back(peak.pending);
    running.push_back(peak.running);
  };
  for (const SimSample& s : samples) {
    const int64_t b = s.t_s / step;
    if (b != bucket) {
      flush();
      bucket = b;
      peak = s;
      continue;
    }
    peak.allocated_gpu_milli = std::max(peak.allocated_gpu_milli, s.allocated_gpu_milli);
    peak.pending = std::max(peak.pending, s.pending);
    peak.running = std::max(peak.running, s.running);
  }
  flush();
  if (!samples.empty() && samples.back().t_s / step == bucket && bucket * step != samples.back().t_s) {
    t.push_back(samples.back().t_s);
    allocated.push_back(samples.back().allocated_gpu_milli);
    pending.push_back(samples.back().pending);
    running.push_back(samples.back().running);
  }
  return {{"t", std::move(t)}, {"allocatedGpuMilli", std::move(allocated)}, {"pending", std::move(pending)},
          {"running", std::move(running)}};
}

json ResultJson(const std::string& name, const SimCluster& cluster, const SimResult& r) {
  const PolicyMetrics m = ComputeMetrics(r);
  json teams = json::array();
  for (const TeamMetrics& t : m.teams) {
    teams.push_back({{"name", t.team},
                     {"nominalGpus", t.nominal_gpus},
                     {"jobs", t.jobs},
                     {"finished", t.finished},
                     {"jctSeconds", DistributionJson(t.jct_s)},
                     {"queueingSeconds", DistributionJson(t.queue_s)},
                     {"preemptions", t.preemptions},
                     {"gpuHoursReceived", t.gpu_hours_received},
                     {"gpuHoursLost", t.gpu_hours_lost},
                     {"share", t.share_received},
                     {"fairShare", t.share_deserved}});
  }
  return {{"name", name},
          {"nodes", cluster.base.nodes.size()},
          {"gpuMilli", cluster.TotalGpuMilli()},
          {"clusterQueues", cluster.base.cluster_queues.size()},
          {"summary",
           {{"jobs", m.jobs},
            {"finished", m.finished},
            {"unfinished", m.unfinished},
            {"leftOut", m.left_out},
            {"allocationPercent", m.allocation_pct},
            {"fragmentationPercent", m.fragmentation_pct},
            {"makespanSeconds", m.makespan_s},
            {"jctSeconds", DistributionJson(m.jct_s)},
            {"queueingSeconds", DistributionJson(m.queue_s)},
            {"preemptions", m.preemptions},
            {"lostGpuHours", m.gpu_hours_lost},
            {"fairness", m.jain_index},
            {"cycles", m.cycles}}},
          {"teams", std::move(teams)},
          {"warnings", r.warnings},
          {"series", SeriesJson(r.samples, r.end_s)}};
}

// What really happened to the jobs replayed: their GPUs held over time and their waits.
json ObservedJson(const HistoryTrace& trace, Timestamp now) {
  std::map<int64_t, int64_t> delta;  // seconds from the origin -> change in milli-GPU held
  std::vector<int64_t> waits, jcts;
  for (const HistoryJob& j : trace.observed) {
    const Timestamp end = j.last_end.never() ? now : j.last_end;
    delta[(j.first_start.ms - trace.origin.ms) / 1000] += j.gpu_milli;
    delta[(end.ms - trace.origin.ms) / 1000] -= j.gpu_milli;
    waits.push_back((j.first_start.ms - j.submitted.ms) / 1000);
    if (!j.last_end.never()) jcts.push_back((j.last_end.ms - j.submitted.ms) / 1000);
  }
  std::vector<SimSample> samples;
  int64_t held = 0;
  for (const auto& [t, d] : delta) {
    held += d;
    samples.push_back(SimSample{.t_s = t, .allocated_gpu_milli = held});
  }
  const int64_t end_s = samples.empty() ? 0 : samples.back().t_s;
  json series = SeriesJson(samples, end_s);
  series.erase("pending");
  series.erase("running");
  return {{"jobs", trace.observed.size()},
          {"queueingSeconds", DistributionJson(Summarize(std::move(waits)))},
          {"jctSeconds", DistributionJson(Summarize(std::move(jcts)))},
          {"series", std::move(series)}};
}

Result<std::vector<Node>> CurrentNodes(const WhatIfInputs& in) {
  std::vector<Node> nodes;
  for (const json& o : in.nodes) {
    auto n = NodeFromJson(o);
    if (!n) continue;  // a node the scheduler would not take either
    n->ready = true;
    nodes.push_back(std::move(*n));
  }
  return nodes;
}

// The current nodes as the scenario at `field` changes them.
Result<std::vector<Node>> ScenarioNodes(const json& scenario, const std::string& field, std::vector<Node> nodes) {
  const std::string name = scenario.value("name", "");
  if (std::string spec = scenario.value("cluster", ""); !spec.empty()) {
    auto replaced = SimNodesFromShorthand(spec, name + "-");
    if (!replaced) return Err(Invalid(field + ".cluster", fmt::format("Invalid value: {}", replaced.error().message())));
    nodes = std::move(*replaced);
  }
  for (const json& removed : scenario.value("removeNodes", json::array())) {
    const std::string node = removed.get<std::string>();
    const size_t before = nodes.size();
    std::erase_if(nodes, [&](const Node& n) { return n.name == node; });
    if (nodes.size() == before) {
      return Err(Invalid(field + ".removeNodes",
                         fmt::format("Not found: \"{}\": no such node in the cluster (tessera get nodes lists them)", node)));
    }
  }
  if (std::string spec = scenario.value("addNodes", ""); !spec.empty()) {
    auto added = SimNodesFromShorthand(spec, name + "-added-");
    if (!added) return Err(Invalid(field + ".addNodes", fmt::format("Invalid value: {}", added.error().message())));
    for (Node& n : *added) nodes.push_back(std::move(n));
  }
  if (nodes.empty()) return Err(Invalid(field, "the scenario leaves no node: add some with addNodes or cluster"));
  return nodes;
}

// The current policy's manifests, with the scenario's objects replacing or added.
Result<std::string> ScenarioPolicy(const json* scenario, const std::string& field, const std::vector<json>& current) {
  std::vector<json> objects = current;
  if (scenario != nullptr) {
    size_t i = 0;
    for (const json& o : scenario->value("policy", json::array())) {
      const std::string at = fmt::format("{}.policy[{}]", field, i++);
      auto kind = ValidateManifest(o);
      if (!kind) {
        std::vector<FieldCause> causes;
        for (const FieldCause& c : kind.error().causes()) {
          causes.push_back({.field = c.field.empty() ? at : at + "." + c.field, .message = c.message});
        }
        if (causes.empty()) causes.push_back({.field = at, .message = kind.error().message()});
        return Err(Status::Invalid(fmt::format("{}: {}", at, kind.error().message()), std::move(causes)));
      }
      if (std::find(std::begin(kPolicyKinds), std::end(kPolicyKinds), (*kind)->kind) == std::end(kPolicyKinds)) {
        return Err(Invalid(at + ".kind", fmt::format("Unsupported value: \"{}\": a scenario changes ResourceFlavors, "
                                                     "ClusterQueues, LocalQueues, PriorityClasses, Namespaces and "
                                                     "ResourceQuotas",
                                                     (*kind)->kind)));
      }
      json manifest = AsManifest(o);
      const std::string key = PolicyKey(manifest);
      auto same = std::find_if(objects.begin(), objects.end(), [&](const json& c) { return PolicyKey(c) == key; });
      if (same != objects.end()) {
        *same = std::move(manifest);
      } else {
        objects.push_back(std::move(manifest));
      }
    }
  }
  return json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(objects)}}.dump();
}

}  // namespace

Result<json> RunWhatIf(const json& spec, const WhatIfInputs& in) {
  ASSIGN_OR_RETURN(Timestamp since, WindowBound(spec, "since", in.now, "spec.since"));
  Timestamp until = in.now;
  if (spec.contains("until")) {
    ASSIGN_OR_RETURN(until, WindowBound(spec, "until", in.now, "spec.until"));
  }
  until = std::min(until, in.now);
  if (since >= until) {
    return Err(Invalid("spec.since", fmt::format("Invalid value: \"{}\": the period must begin before it ends ({}) and "
                                                 "before now",
                                                 FormatRfc3339(since), FormatRfc3339(until))));
  }
  Duration checkpoint = Duration::Seconds(1800);
  if (spec.contains("checkpointInterval")) {
    auto d = ParseDuration(spec.value("checkpointInterval", ""));
    if (!d) return Err(Invalid("spec.checkpointInterval", "Invalid value: give a duration like 30m (0: from the start)"));
    checkpoint = *d;
  }
  const json scenarios = spec.value("scenarios", json::array());
  std::set<std::string> names{kCurrent, kObserved};
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const std::string name = scenarios[i].value("name", "");
    if (!names.insert(name).second) {
      return Err(Invalid(fmt::format("spec.scenarios[{}].name", i),
                         fmt::format("Duplicate value: \"{}\": each scenario needs its own name, other than \"{}\" and "
                                     "\"{}\"",
                                     name, kCurrent, kObserved)));
    }
  }

  HistoryTrace trace = TraceFromHistory(in.usage_records, in.workloads, since, until, in.now);
  if (trace.jobs.size() > kWhatIfMaxJobs) {
    return Err(Invalid("spec.since", fmt::format("{} jobs ran in this period, more than the {} a review replays: "
                                                 "choose a later since or an earlier until",
                                                 trace.jobs.size(), kWhatIfMaxJobs)));
  }
  std::vector<json> current;
  for (const json& o : in.policy) current.push_back(AsManifest(o));
  ASSIGN_OR_RETURN(std::vector<Node> nodes, CurrentNodes(in));
  ASSIGN_OR_RETURN(SimPolicy policy, BuiltinPolicy("configured", JobOrder::kFifo));
  const SimOptions options{.checkpoint_interval = checkpoint};

  json results = json::array();
  std::vector<std::string> warnings;
  auto run = [&](const std::string& name, const json* scenario, const std::string& field) -> Status {
    std::vector<Node> fleet = nodes;
    if (scenario != nullptr) {
      ASSIGN_OR_RETURN(fleet, ScenarioNodes(*scenario, field, std::move(fleet)));
    }
    ASSIGN_OR_RETURN(std::string manifests, ScenarioPolicy(scenario, field, current));
    auto cluster = SimClusterFromManifests(std::move(fleet), manifests);
    if (!cluster && scenario != nullptr) {
      return Invalid(field + ".policy", fmt::format("the changed policy: {}", cluster.error().message()));
    }
    if (!cluster) {  // nothing the review can fix
      return Status::Unavailable(fmt::format("the platform's policy cannot be simulated: {}", cluster.error().message()));
    }
    auto r = Simulate(*cluster, trace.jobs, policy, options);
    if (!r) return r.error().WithContext(name);
    results.push_back(ResultJson(name, *cluster, *r));
    return Status::Ok();
  };
  RETURN_IF_ERROR(run(kCurrent, nullptr, "spec"));
  for (size_t i = 0; i < scenarios.size(); ++i) {
    RETURN_IF_ERROR(run(scenarios[i].value("name", ""), &scenarios[i], fmt::format("spec.scenarios[{}]", i)));
  }
  if (trace.never_ran > 0) {
    warnings.push_back(fmt::format("{} workloads submitted in the period never ran, so their run time is unknown: "
                                   "they are left out",
                                   trace.never_ran));
  }
  if (trace.still_running > 0) {
    warnings.push_back(fmt::format("{} jobs still run: each is replayed with its run time so far", trace.still_running));
  }
  if (trace.reshaped > 0) {
    warnings.push_back(fmt::format("{} jobs held a fraction of a GPU on each of several pods, which the simulator "
                                   "does not model: they are replayed with whole GPUs",
                                   trace.reshaped));
  }
  return json{{"since", FormatRfc3339(since)},
              {"until", FormatRfc3339(until)},
              {"origin", FormatRfc3339(trace.origin)},
              {"jobs", trace.jobs.size()},
              {"neverRan", trace.never_ran},
              {"stillRunning", trace.still_running},
              {"warnings", std::move(warnings)},
              {"observed", ObservedJson(trace, in.now)},
              {"results", std::move(results)}};
}

}  // namespace tessera

#include "sim/history_trace.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "api/convert.h"
#include "api/object_fields.h"
#include "common/time_format.h"

namespace tessera {
namespace {

using nlohmann::json;

int64_t Integer(const json& obj, std::string_view path) {
  const json* v = Find(obj, path);
  return v != nullptr && v->is_number_integer() ? v->get<int64_t>() : 0;
}

std::optional<Timestamp> TimeAt(const json& obj, std::string_view path) {
  auto t = ParseRfc3339(TextAt(obj, path));
  if (!t) return std::nullopt;
  return *t;
}

// What the stored Workload says of its pods: how many, and their CPU and memory
// summed (as Kubernetes charges a pod); nothing when it does not parse.
struct Pods {
  int32_t count = 0;
  int64_t cpu_milli = 0, memory_bytes = 0;
};

Pods PodsOf(const json* workload) {
  if (workload == nullptr) return {};
  json spec_only = *workload;
  spec_only.erase("status");  // its admission names flavors and nodes this parse does not know
  auto w = WorkloadFromJson(
      spec_only, [](std::string_view) -> const PriorityClass* { return nullptr; }, nullptr,
      [](std::string_view) { return ClusterQueueId(); }, [](std::string_view) { return FlavorId(); },
      [](std::string_view) { return NodeId(); });
  if (!w) return {};
  Pods out;
  for (const PodSet& ps : w->pod_sets) {
    out.count += ps.count;
    out.cpu_milli += ps.requests.cpu() * ps.count;
    out.memory_bytes += ps.requests.memory() * ps.count;
  }
  return out;
}

// Per-pod GPUs the simulator takes: 0, a fraction (< 1000) on one pod, or whole GPUs.
// Returns false when `total` over `pods` is none of these (then: one pod's worth
// rounded up to whole GPUs on each).
bool Shape(int64_t total, int32_t pods, TraceJob& job) {
  job.pods = std::max(pods, 1);
  if (total % job.pods == 0) {
    const int64_t per = total / job.pods;
    if (per % 1000 == 0 || (per < 1000 && job.pods == 1)) {
      job.gpu_milli = per;
      return true;
    }
  }
  job.gpu_milli = (total / job.pods + 999) / 1000 * 1000;
  return false;
}

}  // namespace

HistoryTrace TraceFromHistory(std::span<const json> usage_records, std::span<const json> workloads, Timestamp since,
                              Timestamp until, Timestamp now) {
  // The Workloads still stored, by UID.
  std::map<std::string, const json*> by_uid;
  for (const json& w : workloads) {
    if (std::string uid = TextAt(w, "metadata.uid"); !uid.empty()) by_uid.emplace(std::move(uid), &w);
  }
  // Each workload's admissions, by UID (else namespace/name).
  std::map<std::string, std::vector<const json*>> admissions;
  for (const json& r : usage_records) {
    std::string key = TextAt(r, "spec.workloadUID");
    if (key.empty()) key = TextAt(r, "metadata.namespace") + "/" + TextAt(r, "spec.workload");
    admissions[key].push_back(&r);
  }

  struct Row {
    TraceJob job;
    HistoryJob observed;
  };
  std::vector<Row> rows;
  HistoryTrace out;
  for (const auto& [key, records] : admissions) {
    auto wit = by_uid.find(key);
    const json* workload = wit == by_uid.end() ? nullptr : wit->second;
    const json& first = *records.front();
    Row row;
    HistoryJob& seen = row.observed;
    seen.first_start = Timestamp::Never();
    bool open = false;
    int64_t run_ms = 0;
    for (const json* r : records) {
      auto start = TimeAt(*r, "spec.start");
      if (!start) continue;
      auto end = TimeAt(*r, "spec.end");
      if (!end) open = true;
      const Timestamp stop = end ? *end : now;
      run_ms += std::max<int64_t>(stop.ms - start->ms, 0);
      seen.first_start = std::min(seen.first_start, *start);
      seen.last_end = end && !open ? std::max(seen.last_end, *end) : Timestamp::Never();
      seen.gpu_milli = std::max(seen.gpu_milli, Integer(*r, "spec.gpuMilli"));
    }
    if (seen.first_start.never()) continue;  // no record with a start
    std::optional<Timestamp> submitted = TimeAt(first, "spec.submitted");
    if (!submitted && workload != nullptr) submitted = TimeAt(*workload, "metadata.creationTimestamp");
    seen.submitted = submitted ? std::min(*submitted, seen.first_start) : seen.first_start;
    if (seen.submitted < since || seen.submitted >= until) continue;

    TraceJob& job = row.job;
    const std::string ns = TextAt(first, "metadata.namespace");
    job.name = ns + "/" + TextAt(first, "spec.workload");
    job.team = ns;
    job.user = TextAt(first, "spec.user");
    job.duration_s = run_ms / 1000;
    const Pods pods = PodsOf(workload);
    if (workload != nullptr) {
      job.queue = TextAt(*workload, "spec.queueName");
      job.priority_class = TextAt(*workload, "spec.priorityClassName");
    }
    if (job.queue.empty()) job.queue = TextAt(first, "spec.queue");
    if (job.priority_class.empty()) job.priority_class = TextAt(first, "spec.priorityClass");
    int32_t count = pods.count;
    if (count <= 0) count = static_cast<int32_t>(std::max<int64_t>(Integer(first, "spec.pods"), 1));
    if (!Shape(seen.gpu_milli, count, job)) ++out.reshaped;
    if (pods.count > 0) {
      job.cpu_milli = pods.cpu_milli / pods.count;
      job.memory_bytes = pods.memory_bytes / pods.count;
    }
    if (open) ++out.still_running;
    rows.push_back(std::move(row));
  }
  // Submitted in the window, never admitted (no record): their run time is unknown.
  for (const json& w : workloads) {
    auto created = TimeAt(w, "metadata.creationTimestamp");
    if (!created || *created < since || *created >= until) continue;
    const std::string uid = TextAt(w, "metadata.uid");
    const std::string by_name = TextAt(w, "metadata.namespace") + "/" + TextAt(w, "metadata.name");
    if (!admissions.contains(uid) && !admissions.contains(by_name)) ++out.never_ran;
  }

  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::tie(a.observed.submitted.ms, a.job.name) < std::tie(b.observed.submitted.ms, b.job.name);
  });
  out.origin = rows.empty() ? since : rows.front().observed.submitted;
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].job.line = static_cast<int64_t>(i) + 1;
    rows[i].job.submit_s = (rows[i].observed.submitted.ms - out.origin.ms) / 1000;
    out.jobs.push_back(std::move(rows[i].job));
    out.observed.push_back(rows[i].observed);
  }
  return out;
}

}  // namespace tessera

#include "server/controllers/usage_recorder.h"

#include <fmt/format.h>

#include <map>
#include <string>

#include "api/convert.h"
#include "common/time_format.h"
#include "server/controllers/job_controller.h"
#include "server/object_json.h"

namespace tessera {
namespace {

using nlohmann::json;

// How often a running admission's GPU time used is brought up to date.
constexpr Duration kUseRefresh = Duration::Seconds(60);

std::string AdmittedAt(const json& workload) { return StringAt(workload, {"status", "admission", "admittedAt"}); }

json RecordFor(const StoredObject& w, const std::string& name, const std::string& now_text) {
  const json& admission = ObjectAt(w.object, {"status", "admission"});
  int64_t milli = 0;
  std::vector<std::string> devices;
  std::string flavor;
  int64_t pods = 0;
  for (const json& psa : admission.value("podSetAssignments", json::array())) {
    pods += static_cast<int64_t>(psa.value("placements", json::array()).size());
    if (flavor.empty()) {
      const json flavors = psa.value("flavors", json::object());
      for (const auto& [resource, f] : flavors.items()) {
        if (f.is_string()) flavor = f.get<std::string>();
        if (resource == "nvidia.com/gpu") break;
      }
    }
    for (const json& pod : psa.value("placements", json::array())) {
      for (const json& d : pod.value("devices", json::array())) {
        const int64_t m = d.value("milli", int64_t{0});
        milli += m;
        devices.push_back(fmt::format("{}/{}={}", pod.value("node", ""), d.value("index", 0), m));
      }
    }
  }
  std::string user = StringAt(w.object, {"metadata", "annotations", kCreatedByAnnotation.data()});
  if (user.empty()) user = "unknown";
  return json{{"apiVersion", "tessera.dev/v1"},
              {"kind", "UsageRecord"},
              {"metadata", {{"name", name}, {"namespace", w.key.ns}, {"creationTimestamp", now_text}}},
              {"spec",
               {{"workload", w.key.name},
                {"workloadUID", StringAt(w.object, {"metadata", "uid"})},
                {"clusterQueue", admission.value("clusterQueue", "")},
                {"flavor", flavor},
                {"gpuMilli", milli},
                {"devices", devices},
                {"user", user},
                {"submitted", StringAt(w.object, {"metadata", "creationTimestamp"})},
                {"queue", StringAt(w.object, {"spec", "queueName"})},
                {"priorityClass", StringAt(w.object, {"spec", "priorityClassName"})},
                {"pods", pods},
                {"start", AdmittedAt(w.object)}}}};
}

// The record with its GPU time used (allocation x its devices' utilisation in the
// latest samples) integrated from usedUpdatedAt (else start) to `until`.
json WithUseUntil(const json& record, const GpuUsageByDevice& usage, Timestamp until) {
  json next = record;
  json& spec = next["spec"];
  std::string from_text = spec.value("usedUpdatedAt", "");
  if (from_text.empty()) from_text = spec.value("start", "");
  auto from = ParseRfc3339(from_text);
  const int64_t dt_ms = from ? std::max<int64_t>(until.ms - from->ms, 0) : 0;
  double busy_milli = 0;
  for (const json& d : spec.value("devices", json::array())) {
    const std::string text = d.is_string() ? d.get<std::string>() : "";
    const size_t slash = text.rfind('/'), eq = text.rfind('=');
    if (slash == std::string::npos || eq == std::string::npos || eq < slash) continue;
    const auto index = static_cast<int32_t>(std::strtol(text.substr(slash + 1, eq - slash - 1).c_str(), nullptr, 10));
    auto it = usage.find({text.substr(0, slash), index});
    if (it != usage.end()) busy_milli += static_cast<double>(std::strtoll(text.c_str() + eq + 1, nullptr, 10)) * it->second.utilization;
  }
  spec["usedGpuMilliSeconds"] =
      spec.value("usedGpuMilliSeconds", int64_t{0}) + static_cast<int64_t>(busy_milli * static_cast<double>(dt_ms) / 1000.0);
  spec["usedUpdatedAt"] = FormatRfc3339(until);
  return next;
}

}  // namespace

void ReconcileUsageRecords(const ObjectCache& cache, const ObjectCache::Active& admitted, const GpuUsageByDevice& usage,
                           Timestamp now, BatchedWriter& writer) {
  const std::string now_text = FormatRfc3339(now);
  // Open records by (namespace, workload UID); closed ones are settled in the cache.
  std::map<std::pair<std::string, std::string>, const StoredObject*> open;
  for (const auto& [unused, r] : cache.ActiveOf(kUsageRecordKind)) {
    open[{r->key.ns, StringAt(r->object, {"spec", "workloadUID"})}] = r;
  }
  auto close = [&](const StoredObject& record, const std::string& end) {
    auto end_time = ParseRfc3339(end);
    json next = WithUseUntil(record.object, usage, end_time ? std::min(*end_time, now) : now);
    next["spec"]["end"] = end;
    writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = record.key, .object = std::move(next),
                       .expected_revision = record.revision},
               fmt::format("close usage record {}/{}", record.key.ns, record.key.name));
  };
  // Workloads holding an admission (finished ones, and those whose admission
  // ended, have their open records closed below).
  for (const auto& [key, held] : admitted) {
    const StoredObject& w = *held;
    const std::string admitted_at = AdmittedAt(w.object);
    const bool holding = !admitted_at.empty();
    auto it = open.find({w.key.ns, StringAt(w.object, {"metadata", "uid"})});
    if (it != open.end()) {
      const StoredObject& record = *it->second;
      open.erase(it);
      const bool same = StringAt(record.object, {"spec", "start"}) == admitted_at;
      if (same && holding) {  // still running: bring its GPU time used up to date every kUseRefresh
        auto updated = ParseRfc3339(StringAt(record.object, {"spec", "usedUpdatedAt"}));
        if (!updated) updated = ParseRfc3339(admitted_at);
        if (updated && now - *updated >= kUseRefresh) {
          writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = record.key,
                             .object = WithUseUntil(record.object, usage, now), .expected_revision = record.revision},
                     fmt::format("usage record {}/{}", record.key.ns, record.key.name));
        }
        continue;
      }
      close(record, now_text);  // its admission ended, or a new one began
    }
    if (!holding) continue;
    // A record for this admission, unless one exists already (closed: it ended).
    auto start = ParseRfc3339(admitted_at);
    const std::string name = fmt::format("{}-{}", w.key.name, start ? start->seconds() : int64_t{0});
    if (cache.Find(ObjectKey{kUsageRecordKind, w.key.ns, name}) != nullptr) continue;
    writer.Add(WriteOp{.op = WriteOp::Kind::kCreate, .key = ObjectKey{kUsageRecordKind, w.key.ns, name},
                       .object = RecordFor(w, name, now_text)},
               fmt::format("usage record {}/{}", w.key.ns, name));
  }
  // The rest belong to workloads that finished (their record ends when they did),
  // lost their admission or are gone (it ends now).
  for (const auto& [ns_uid, record] : open) {
    std::string end = now_text;
    const std::string workload_name = StringAt(record->object, {"spec", "workload"});
    const StoredObject* w = cache.Find(ObjectKey{kWorkloadKind, ns_uid.first, workload_name});
    if (w != nullptr && StringAt(w->object, {"metadata", "uid"}) == ns_uid.second && ConditionTrue(w->object, "Finished") &&
        StringAt(record->object, {"spec", "start"}) == AdmittedAt(w->object)) {
      const std::string finished_at = ConditionValue(w->object, "Finished", "lastTransitionTime");
      if (!finished_at.empty()) end = finished_at;
    }
    close(*record, end);
  }
}

}  // namespace tessera

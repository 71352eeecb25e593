#include "server/usage_recorder.h"

#include <fmt/format.h>

#include <map>
#include <string>

#include "api/convert.h"
#include "common/time_format.h"
#include "server/job_controller.h"
#include "server/object_json.h"

namespace tessera {
namespace {

using nlohmann::json;

std::string AdmittedAt(const json& workload) { return StringAt(workload, {"status", "admission", "admittedAt"}); }

json RecordFor(const StoredObject& w, const std::string& name, const std::string& now_text) {
  const json& admission = w.object["status"]["admission"];
  int64_t milli = 0;
  std::vector<std::string> devices;
  std::string flavor;
  for (const json& psa : admission.value("podSetAssignments", json::array())) {
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
  const json labels = w.object["metadata"].value("labels", json::object());
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
                {"user", labels.value(std::string(kUserLabel), "unknown")},
                {"start", AdmittedAt(w.object)}}}};
}

}  // namespace

void ReconcileUsageRecords(const ObjectCache& cache, Timestamp now, BatchedWriter& writer) {
  const std::string now_text = FormatRfc3339(now);
  // Open records by (namespace, workload UID).
  std::map<std::pair<std::string, std::string>, const StoredObject*> open;
  for (const auto& [unused, r] : cache.Of(kUsageRecordKind)) {
    if (r.object["spec"].contains("end")) continue;
    open[{r.key.ns, StringAt(r.object, {"spec", "workloadUID"})}] = &r;
  }
  auto close = [&](const StoredObject& record, const std::string& end) {
    json next = record.object;
    next["spec"]["end"] = end;
    writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = record.key, .object = std::move(next),
                       .expected_revision = record.revision},
               fmt::format("close usage record {}/{}", record.key.ns, record.key.name));
  };
  for (const auto& [key, w] : cache.Of(kWorkloadKind)) {
    const std::string uid = StringAt(w.object, {"metadata", "uid"});
    const bool finished = ConditionTrue(w.object, "Finished");
    const std::string admitted_at = AdmittedAt(w.object);
    const bool holding = !admitted_at.empty() && !finished;
    auto it = open.find({w.key.ns, uid});
    if (it != open.end()) {
      const StoredObject& record = *it->second;
      open.erase(it);
      const bool same = StringAt(record.object, {"spec", "start"}) == admitted_at;
      if (same && holding) continue;  // still running
      std::string end = now_text;
      if (same && finished) {
        const std::string finished_at = ConditionValue(w.object, "Finished", "lastTransitionTime");
        if (!finished_at.empty()) end = finished_at;
      }
      close(record, end);
      if (same || !holding) continue;
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
  // Records of workloads that are gone end now.
  for (const auto& [unused, record] : open) close(*record, now_text);
}

}  // namespace tessera

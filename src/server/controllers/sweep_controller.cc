#include "server/controllers/sweep_controller.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/convert.h"
#include "api/kinds.h"
#include "api/validation.h"
#include "server/object_json.h"
#include "sweep/early_stopping.h"
#include "sweep/observations.h"
#include "sweep/suggest_trials.h"
#include "sweep/sweep_spec.h"
#include "sweep/sweep_status.h"
#include "sweep/trial_objective.h"

namespace tessera {

using nlohmann::json;

namespace {

constexpr const char* kStoppedState = "Stopped";  // still running when the sweep ended

// FNV-1a of the uid: the sweep's own seed, stable across passes and restarts.
uint64_t SeedOf(std::string_view uid) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : uid) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::optional<sweep::TrialState> StateFromName(std::string_view name) {
  for (auto s : {sweep::TrialState::kRunning, sweep::TrialState::kSucceeded, sweep::TrialState::kFailed,
                 sweep::TrialState::kEarlyStopped}) {
    if (sweep::TrialStateName(s) == name) return s;
  }
  return std::nullopt;
}

// One entry of status.trialList beside its typed record.
struct Trial {
  sweep::TrialRecord record;
  json entry;
};

// The history from status.trialList; entries that no longer read back (the
// spec was changed under them) are kept as they are but left out of the record.
std::vector<Trial> ReadTrials(const sweep::SweepSpec& spec, const json& sweep_object) {
  std::vector<Trial> out;
  const json& list = ArrayAt(sweep_object, {"status", "trialList"});
  for (size_t i = 0; i < list.size(); ++i) {
    const json& e = list[i];
    if (!e.is_object()) continue;
    Trial t{.entry = e};
    t.record.name = e.value("name", "");
    auto state = StateFromName(e.value("state", ""));
    t.record.state = state.value_or(sweep::TrialState::kFailed);
    const std::string path = fmt::format("status.trialList[{}]", i);
    if (auto it = e.find("parameterAssignments"); it != e.end()) {
      if (auto a = sweep::ParseAssignment(spec, *it, path + ".parameterAssignments")) t.record.assignment = *a;
    }
    if (auto it = e.find("observations"); it != e.end()) {
      if (auto o = sweep::ObservationsFromJson(*it, path + ".observations")) t.record.observations = std::move(*o);
    }
    out.push_back(std::move(t));
  }
  return out;
}

// The observations on the newest pod of the trial's Job that has them.
std::optional<sweep::Observations> PodObservations(const PodIndex& pods, const std::string& ns,
                                                   const std::string& job_name) {
  auto it = pods.find({ns, WorkloadNameForJob(false, job_name)});
  if (it == pods.end()) return std::nullopt;
  const StoredObject* newest = nullptr;
  std::string newest_at;
  for (const StoredObject* p : it->second) {
    if (StringAt(p->object, {"metadata", "annotations", kMetricsAnnotation}).empty()) continue;
    std::string at = StringAt(p->object, {"metadata", "creationTimestamp"});
    if (newest == nullptr || at > newest_at || (at == newest_at && p->key.name > newest->key.name)) {
      newest = p;
      newest_at = std::move(at);
    }
  }
  if (newest == nullptr) return std::nullopt;
  json doc = json::parse(StringAt(newest->object, {"metadata", "annotations", kMetricsAnnotation}), nullptr, false);
  if (doc.is_discarded()) return std::nullopt;
  auto o = sweep::ObservationsFromJson(doc, "metadata.annotations[tessera.dev/metrics]");
  if (!o) return std::nullopt;
  return std::move(*o);
}

// The trial's Job: the rendered template in the Job form it was written in.
Result<json> TrialJob(const sweep::SweepSpec& spec, const sweep::Assignment& assignment, const StoredObject& sw,
                      const std::string& trial_name, bool batch_class_exists, const std::string& now_text) {
  ASSIGN_OR_RETURN(json rendered, sweep::RenderTrial(spec, assignment, "spec"));
  json job{{"apiVersion", "batch/v1"}, {"kind", "Job"}};
  json job_spec;
  json labels = json::object();
  json annotations = json::object();
  if (auto it = rendered.find("trialSpec"); it != rendered.end()) {
    job_spec = it->value("spec", json::object());
    if (auto m = it->find("metadata"); m != it->end() && m->is_object()) {
      labels = m->value("labels", json::object());
      annotations = m->value("annotations", json::object());
    }
  } else if (auto it2 = rendered.find("jobSpec"); it2 != rendered.end()) {
    job_spec = *it2;
  } else if (auto it3 = rendered.find("template"); it3 != rendered.end()) {
    job_spec = json{{"template", *it3}, {"backoffLimit", 0}};
    json& pod_spec = job_spec["template"]["spec"];
    if (!pod_spec.contains("restartPolicy")) pod_spec["restartPolicy"] = "Never";
  }
  if (!job_spec.is_object()) job_spec = json::object();
  const std::string ns = sw.key.ns;
  labels[kSweepLabel] = sw.key.name;
  labels[kTrialLabel] = trial_name;
  const std::string queue = StringAt(sw.object, {"spec", "queueName"});
  if (!queue.empty()) labels["kueue.x-k8s.io/queue-name"] = queue;
  annotations[kTrialAssignmentAnnotation] = sweep::AssignmentToJson(assignment).dump();
  if (job_spec.contains("template") && job_spec["template"].is_object()) {
    json& pod_template = job_spec["template"];
    // The pods carry the trial's labels: the agent collects metrics of trial pods only.
    pod_template["metadata"]["labels"][kSweepLabel] = sw.key.name;
    pod_template["metadata"]["labels"][kTrialLabel] = trial_name;
    json& pod_spec = pod_template["spec"];
    if (batch_class_exists && pod_spec.is_object() && !pod_spec.contains("priorityClassName")) {
      pod_spec["priorityClassName"] = "batch";
    }
  }
  job["metadata"] = {{"name", trial_name},
                     {"namespace", ns},
                     {"labels", labels},
                     {"annotations", annotations},
                     {"creationTimestamp", now_text},
                     {"ownerReferences",
                      {{{"apiVersion", "tessera.dev/v1"},
                        {"kind", "Sweep"},
                        {"name", sw.key.name},
                        {"uid", StringAt(sw.object, {"metadata", "uid"})},
                        {"controller", true},
                        {"blockOwnerDeletion", true}}}}};
  job["spec"] = std::move(job_spec);
  ASSIGN_OR_RETURN(const KindInfo* kind, ValidateManifest(job));
  (void)kind;
  return job;
}

json ObjectiveJson(std::optional<double> v) { return v ? json(*v) : json(nullptr); }

// Katib's observation: {metrics: [{name, min, max, latest}]}.
json ObservationSummary(const sweep::Observations& observations) {
  json metrics = json::array();
  for (const auto& [name, series] : observations) {
    if (series.empty()) continue;
    metrics.push_back({{"name", name},
                       {"min", series.min() ? json(series.min()->value) : json(nullptr)},
                       {"max", series.max() ? json(series.max()->value) : json(nullptr)},
                       {"latest", series.latest() ? json(series.latest()->value) : json(nullptr)}});
  }
  return json{{"metrics", metrics}};
}

}  // namespace

void SweepController::Reconcile(PassContext& pass) {
  const bool batch_class = pass.cache.Find(ObjectKey{"scheduling.k8s.io/PriorityClass", "", "batch"}) != nullptr;
  for (const auto& [unused, active] : pass.cache.ActiveOf(kSweepKind)) {
    const StoredObject& sw = *active;
    json next = sw.object;
    std::vector<WriteOp> unit;
    const std::string& now = pass.now_text;
    auto spec = sweep::ParseSweepSpec(ObjectAt(sw.object, {"spec"}), "spec");
    if (!spec) {
      SetCondition(next, "Failed", true, "SpecInvalid", spec.error().message(), now);
      SetCondition(next, "Running", false, "SpecInvalid", spec.error().message(), now);
    } else {
      SetCondition(next, "Created", true, "SweepCreated", "the sweep was accepted", now);
      std::vector<Trial> trials = ReadTrials(*spec, sw.object);
      // 1. Running trials: their Jobs' outcome and their observations.
      for (Trial& t : trials) {
        if (t.record.state != sweep::TrialState::kRunning) continue;
        if (auto o = PodObservations(pass.pods, sw.key.ns, t.record.name)) t.record.observations = std::move(*o);
        const StoredObject* job = pass.cache.Find(ObjectKey{kJobKind, sw.key.ns, t.record.name});
        if (job == nullptr) {
          t.record.state = sweep::TrialState::kFailed;
          t.entry["reason"] = "JobDeleted";
        } else if (ConditionTrue(job->object, "Complete")) {
          t.record.state = sweep::TrialState::kSucceeded;
          t.entry["reason"] = "JobComplete";
        } else if (ConditionTrue(job->object, "Failed")) {
          t.record.state = sweep::TrialState::kFailed;
          t.entry["reason"] = ConditionValue(job->object, "Failed", "reason");
        }
      }
      std::vector<sweep::TrialRecord> history;
      history.reserve(trials.size());
      for (const Trial& t : trials) history.push_back(t.record);
      // 2. Early stopping.
      for (const sweep::StopDecision& d : sweep::EarlyStopDecisions(*spec, history)) {
        for (size_t i = 0; i < trials.size(); ++i) {
          if (trials[i].record.name != d.trial) continue;
          trials[i].record.state = history[i].state = sweep::TrialState::kEarlyStopped;
          trials[i].entry["reason"] = "EarlyStopped";
          trials[i].entry["message"] = d.reason;
          unit.push_back(WriteOp{.op = WriteOp::Kind::kDelete, .key = ObjectKey{kJobKind, sw.key.ns, d.trial}});
          pass.events.Record(pass.writer, sw, EventRecorder::Type::kNormal, "TrialEarlyStopped",
                             fmt::format("trial {}: {}", d.trial, d.reason), pass.now);
        }
      }
      // 3. The verdict.
      const sweep::SweepVerdict verdict = sweep::EvaluateSweep(*spec, history);
      if (verdict.phase != sweep::SweepPhase::kRunning) {
        const bool succeeded = verdict.phase == sweep::SweepPhase::kSucceeded;
        SetCondition(next, succeeded ? "Succeeded" : "Failed", true, verdict.reason, verdict.message, now);
        SetCondition(next, "Running", false, verdict.reason, verdict.message, now);
        for (Trial& t : trials) {
          if (t.record.state != sweep::TrialState::kRunning) continue;
          t.entry["state"] = kStoppedState;
          t.entry["reason"] = "SweepEnded";
          unit.push_back(WriteOp{.op = WriteOp::Kind::kDelete, .key = ObjectKey{kJobKind, sw.key.ns, t.record.name}});
        }
      } else {
        SetCondition(next, "Running", true, "SweepRunning", "the sweep is running its trials", now);
        // 4. New trials.
        const int want = sweep::TrialsToCreate(*spec, history);
        const uint64_t seed = SeedOf(StringAt(sw.object, {"metadata", "uid"}) + "/" + sw.key.ns + "/" + sw.key.name);
        for (const sweep::Assignment& a : sweep::SuggestTrials(*spec, history, want, seed)) {
          const std::string trial_name = fmt::format("{}-{}", sw.key.name, trials.size() + 1);
          auto job = TrialJob(*spec, a, sw, trial_name, batch_class, now);
          if (!job) {
            SetCondition(next, "Failed", true, "TrialTemplateInvalid",
                         fmt::format("trial {}: {}", trial_name, job.error().message()), now);
            SetCondition(next, "Running", false, "TrialTemplateInvalid", job.error().message(), now);
            break;
          }
          unit.push_back(WriteOp{.op = WriteOp::Kind::kCreate, .key = ObjectKey{kJobKind, sw.key.ns, trial_name},
                                 .object = std::move(*job)});
          Trial t;
          t.record.name = trial_name;
          t.record.assignment = a;
          t.entry = json{{"name", trial_name}, {"createdAt", now}};
          trials.push_back(std::move(t));
          history.push_back(trials.back().record);
        }
      }
      // 5. Status.
      json list = json::array();
      for (Trial& t : trials) {
        if (t.entry.value("state", "") != kStoppedState) {
          t.entry["state"] = std::string(sweep::TrialStateName(t.record.state));
        }
        t.entry["parameterAssignments"] = sweep::AssignmentToJson(t.record.assignment);
        t.entry["objectiveValue"] = ObjectiveJson(sweep::TrialObjective(spec->objective, t.record));
        t.entry["observations"] = sweep::ObservationsToJson(t.record.observations);
        list.push_back(t.entry);
      }
      sweep::TrialCounts counts = sweep::CountTrials(history);
      int stopped = 0;  // Running in the history, Stopped in the status
      for (const Trial& t : trials) stopped += t.entry.value("state", "") == kStoppedState ? 1 : 0;
      counts.running -= stopped;
      json& status = next["status"];
      status["trialList"] = std::move(list);
      status["trials"] = static_cast<int>(trials.size());
      status["trialsRunning"] = counts.running;
      status["trialsSucceeded"] = counts.succeeded;
      status["trialsFailed"] = counts.failed;
      status["trialsEarlyStopped"] = counts.early_stopped;
      if (stopped > 0) status["trialsStopped"] = stopped;
      if (auto best = sweep::FindBestTrial(*spec, history)) {
        const sweep::TrialRecord& b = history[best->index];
        status["currentOptimalTrial"] = {{"bestTrialName", b.name},
                                         {"parameterAssignments", sweep::AssignmentToJson(b.assignment)},
                                         {"objectiveValue", best->value},
                                         {"observation", ObservationSummary(b.observations)}};
      }
      if (verdict.phase != sweep::SweepPhase::kRunning && !status.contains("completionTime")) {
        status["completionTime"] = now;
      }
      if (!status.contains("startTime")) status["startTime"] = now;
    }
    if (next == sw.object && unit.empty()) continue;
    unit.insert(unit.begin(), WriteOp{.op = WriteOp::Kind::kUpdate, .key = sw.key, .object = std::move(next),
                                      .expected_revision = sw.revision});
    pass.writer.Add(std::move(unit), fmt::format("sweep {}/{}", sw.key.ns, sw.key.name));
    // The job controller (earlier in the pass) turns new Jobs into Workloads in
    // the next pass: ask for it now rather than at the resync.
    pass.WakeAt(pass.now);
  }
  DeleteOrphanTrials(pass);
}

void SweepController::DeleteOrphanTrials(PassContext& pass) {
  const uint64_t removals = pass.cache.removals(kSweepKind);
  if (orphans_checked_at_ == removals) return;
  orphans_checked_at_ = removals;
  std::set<std::pair<std::string, std::string>> sweeps;  // (ns, name) held
  for (const auto& [key, sw] : pass.cache.Of(kSweepKind)) sweeps.insert(key);
  for (const auto& [key, job] : pass.cache.Of(kJobKind)) {
    const std::string owner = StringAt(job.object, {"metadata", "labels", kSweepLabel});
    if (owner.empty() || sweeps.count({key.first, owner})) continue;
    pass.writer.Add(WriteOp{.op = WriteOp::Kind::kDelete, .key = job.key},
                    fmt::format("delete trial {}/{} of a deleted sweep", key.first, key.second));
  }
}

}  // namespace tessera

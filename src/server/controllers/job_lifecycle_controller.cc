#include "server/controllers/job_lifecycle_controller.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "api/convert.h"
#include "common/time_format.h"
#include "server/controllers/workload_lifecycle.h"
#include "server/object_json.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr Duration kBackoffBase = Duration::Seconds(10);
constexpr Duration kBackoffMax = Duration::Seconds(360);

std::optional<int64_t> IntAt(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

int64_t AnnotationInt(const json& obj, const char* key, int64_t fallback) {
  const std::string text = StringAt(obj, {"metadata", "annotations", key});
  if (text.empty()) return fallback;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  return end != nullptr && *end == '\0' ? v : fallback;
}

// "0-3,5,7-8", as Kubernetes writes completedIndexes.
std::string IndexRanges(const std::set<int64_t>& indexes) {
  std::string out;
  for (auto it = indexes.begin(); it != indexes.end();) {
    int64_t first = *it, last = *it;
    while (++it != indexes.end() && *it == last + 1) last = *it;
    if (!out.empty()) out += ',';
    out += first == last ? std::to_string(first) : fmt::format("{}-{}", first, last);
  }
  return out;
}

struct Spec {
  std::optional<int64_t> completions;
  int64_t backoff_limit = kDefaultBackoffLimit;
  bool indexed = false;
  const json* failure_rules = nullptr;  // spec.podFailurePolicy.rules
};

Spec SpecOf(const json& job) {
  const json& spec = ObjectAt(job, {"spec"});
  Spec s;
  s.completions = IntAt(spec, "completions");
  s.backoff_limit = IntAt(spec, "backoffLimit").value_or(kDefaultBackoffLimit);
  s.indexed = StringAt(job, {"spec", "completionMode"}) == "Indexed";
  const json& rules = ArrayAt(job, {"spec", "podFailurePolicy", "rules"});
  if (!rules.empty()) s.failure_rules = &rules;
  return s;
}

const json* Terminated(const json& container_status) {
  const json& t = ObjectAt(container_status, {"state", "terminated"});
  return t.empty() ? nullptr : &t;
}

enum class FailureAction { kCount, kIgnore, kFailJob };

struct Verdict {
  FailureAction action = FailureAction::kCount;
  std::string message;  // for FailJob, in Kubernetes' words
};

bool ExitCodeMatches(const json& on_exit, const json& pod) {
  const std::string container = on_exit.value("containerName", "");
  const bool in = on_exit.value("operator", "In") == "In";
  const json& values = on_exit.contains("values") && on_exit["values"].is_array() ? on_exit["values"] : json::array();
  for (const json& cs : ArrayAt(pod, {"status", "containerStatuses"})) {
    if (!container.empty() && cs.value("name", "") != container) continue;
    const json* t = Terminated(cs);
    if (t == nullptr) continue;
    const int64_t code = t->value("exitCode", 0);
    if (code == 0 && !in) continue;  // NotIn never matches a container that succeeded
    const bool listed = std::any_of(values.begin(), values.end(), [&](const json& v) {
      return v.is_number_integer() && v.get<int64_t>() == code;
    });
    if (listed == in) return true;
  }
  return false;
}

bool PodConditionMatches(const json& on_conditions, const json& pod) {
  if (!on_conditions.is_array()) return false;
  for (const json& want : on_conditions) {
    if (!want.is_object()) continue;
    const std::string type = want.value("type", "");
    const std::string status = want.value("status", "True");
    for (const json& c : ArrayAt(pod, {"status", "conditions"})) {
      if (c.value("type", "") == type && c.value("status", "") == status) return true;
    }
  }
  return false;
}

// The first rule of the pod failure policy that matches the failed pod.
Verdict Judge(const Spec& spec, const StoredObject& pod) {
  if (spec.failure_rules == nullptr) return {};
  for (size_t i = 0; i < spec.failure_rules->size(); ++i) {
    const json& rule = (*spec.failure_rules)[i];
    if (!rule.is_object()) continue;
    const bool matches = (rule.contains("onExitCodes") && ExitCodeMatches(rule["onExitCodes"], pod.object)) ||
                         (rule.contains("onPodConditions") && PodConditionMatches(rule["onPodConditions"], pod.object));
    if (!matches) continue;
    const std::string action = rule.value("action", "Count");
    if (action == "Ignore") return {FailureAction::kIgnore, ""};
    if (action == "FailJob" || action == "FailIndex") {
      std::string container = "main";
      int64_t code = 0;
      for (const json& cs : ArrayAt(pod.object, {"status", "containerStatuses"})) {
        if (const json* t = Terminated(cs); t != nullptr && t->value("exitCode", 0) != 0) {
          container = cs.value("name", container);
          code = t->value("exitCode", 0);
          break;
        }
      }
      return {FailureAction::kFailJob,
              fmt::format("Container {} for pod {}/{} failed with exit code {} matching FailJob rule at index {}",
                          container, pod.key.ns, pod.key.name, code, i)};
    }
    return {};
  }
  return {};
}

std::optional<Timestamp> FinishedAt(const json& pod) {
  for (const json& cs : ArrayAt(pod, {"status", "containerStatuses"})) {
    if (const json* t = Terminated(cs)) {
      if (auto at = ParseRfc3339(t->value("finishedAt", "")); at) return *at;
    }
  }
  return std::nullopt;
}

bool Deleting(const StoredObject& pod) { return ObjectAt(pod.object, {"metadata"}).contains("deletionTimestamp"); }

// One slot's pods: the current one is its newest attempt.
struct Slot {
  int64_t number = 0;
  const StoredObject* current = nullptr;
  int64_t attempt = -1;
};

// A replacement for `pod` in its slot: the same placement (node, devices) and
// template, a fresh status, the next attempt's name.
json Replacement(const StoredObject& pod, int64_t slot, int64_t attempt, std::optional<int64_t> index,
                 const std::string& now_text) {
  json next = pod.object;
  json& meta = next["metadata"];
  const std::string base = StringAt(pod.object, {"metadata", "annotations", "tessera.dev/base-name"});
  const std::string first = base.empty() ? pod.key.name : base;
  meta["name"] = fmt::format("{}-{}", first, attempt);
  for (const char* k : {"uid", "resourceVersion", "deletionTimestamp", "generation"}) meta.erase(k);
  meta["creationTimestamp"] = now_text;
  meta["annotations"]["tessera.dev/base-name"] = first;
  meta["annotations"][kAttemptAnnotation] = std::to_string(attempt);
  meta["annotations"][kSlotAnnotation] = std::to_string(slot);
  if (index) SetCompletionIndex(next, *index);
  next["status"] = {{"phase", "Pending"}};
  return next;
}

}  // namespace

Duration JobBackoff(int64_t failures) {
  Duration d = kBackoffBase;
  for (int64_t i = 1; i < failures && d < kBackoffMax; ++i) d = Duration::Millis(d.ms * 2);
  return std::min(d, kBackoffMax);
}

void SetCompletionIndex(json& pod, int64_t index) {
  const std::string text = std::to_string(index);
  pod["metadata"]["annotations"][kCompletionIndexAnnotation] = text;
  pod["metadata"]["labels"][kCompletionIndexAnnotation] = text;
  json& containers = pod["spec"]["containers"];
  if (!containers.is_array()) return;
  for (json& c : containers) {
    json& env = c["env"];
    if (!env.is_array()) env = json::array();
    env.erase(std::remove_if(env.begin(), env.end(),
                             [](const json& e) { return e.is_object() && e.value("name", "") == "JOB_COMPLETION_INDEX"; }),
              env.end());
    env.push_back({{"name", "JOB_COMPLETION_INDEX"}, {"value", text}});
  }
}

std::optional<Timestamp> WorkloadDeadline(const json& workload) {
  const int64_t seconds = AnnotationInt(workload, std::string(kMaxRunSecondsAnnotation).c_str(), 0);
  if (seconds <= 0 || !ConditionTrue(workload, "Admitted")) return std::nullopt;
  auto since = ParseRfc3339(ConditionValue(workload, "Admitted", "lastTransitionTime"));
  if (!since) return std::nullopt;
  return *since + Duration::Seconds(seconds);
}

void JobLifecycleController::Reconcile(PassContext& pass) {
  // For each admitted Workload of a batch/v1 Job: 1. tally its pods by slot;
  // 2. decide: failed (policy, back-off limit, deadline), succeeded, or
  // running, and which slots get a new pod now (or when, for a back-off);
  // 3. write the Workload's end, the new pods and the Job's status.
  for (const auto& [key, held] : pass.workloads.admitted()) {
    const StoredObject& w = *held;
    if (!IsBatchJobWorkload(w.object) || ConditionTrue(w.object, "Evicted")) continue;
    const StoredObject* job =
        pass.cache.Find(ObjectKey{kJobKind, w.key.ns, StringAt(w.object, {"metadata", "labels", "tessera.dev/job-name"})});
    if (job == nullptr) continue;  // the Job controller deletes the orphan
    const Spec spec = SpecOf(job->object);
    static const std::vector<const StoredObject*> kNoPods;
    auto found = pass.pods.find(key);
    const std::vector<const StoredObject*>& pods = found == pass.pods.end() ? kNoPods : found->second;

    // 1. Tally.
    std::map<int64_t, Slot> slots;
    int64_t succeeded = 0, failed = 0, active = 0, ready = 0;
    std::set<int64_t> completed, running_indexes;
    std::optional<Verdict> fail_job;
    const StoredObject* last_failed = nullptr;
    for (const StoredObject* pod : pods) {
      const int64_t slot = AnnotationInt(pod->object, kSlotAnnotation, 0);
      const int64_t attempt = AnnotationInt(pod->object, kAttemptAnnotation, 0);
      Slot& s = slots[slot];
      s.number = slot;
      if (attempt > s.attempt) {
        s.attempt = attempt;
        s.current = pod;
      }
      const std::string phase = StringAt(pod->object, {"status", "phase"});
      const int64_t index = AnnotationInt(pod->object, kCompletionIndexAnnotation, -1);
      if (phase == "Succeeded") {
        ++succeeded;
        if (index >= 0) completed.insert(index);
      } else if (phase == "Failed") {
        const Verdict v = Judge(spec, *pod);
        if (v.action == FailureAction::kFailJob && !fail_job) fail_job = v;
        if (v.action != FailureAction::kIgnore) {
          ++failed;
          last_failed = pod;
        }
      } else if (!Deleting(*pod)) {
        ++active;
        if (phase == "Running") ++ready;
        if (index >= 0) running_indexes.insert(index);
      }
    }

    // 2. Decide.
    std::string fail_reason, fail_message, detail;
    const std::optional<Timestamp> deadline = WorkloadDeadline(w.object);
    if (fail_job) {
      fail_reason = "PodFailurePolicy";
      fail_message = fail_job->message;
    } else if (failed > spec.backoff_limit) {
      fail_reason = "BackoffLimitExceeded";
      fail_message = "Job has reached the specified backoff limit";
      detail = PodFailureMessage(*last_failed);
    } else if (deadline && pass.now >= *deadline) {
      fail_reason = "DeadlineExceeded";
      fail_message = "Job was active longer than specified deadline";
    } else if (deadline) {
      pass.WakeAt(*deadline);
    }
    bool complete = false;
    if (fail_reason.empty()) {
      if (spec.indexed && spec.completions) {
        complete = static_cast<int64_t>(completed.size()) >= *spec.completions;
      } else if (spec.completions) {
        complete = succeeded >= *spec.completions;
      } else {
        complete = succeeded > 0 && active == 0;
      }
    }

    // 3. Write.
    std::vector<WriteOp> unit;
    if (!fail_reason.empty() || complete) {
      json next = w.object;
      const std::string message =
          complete ? fmt::format("{} pods succeeded", succeeded)
                   : fmt::format("{}: {}{}", fail_reason, fail_message, detail.empty() ? "" : "; last " + detail);
      SetCondition(next, "Finished", true, complete ? "Succeeded" : "Failed", message, pass.now_text);
      unit.push_back(WriteOp{.op = WriteOp::Kind::kUpdate, .key = w.key, .object = std::move(next),
                             .expected_revision = w.revision});
      // What still runs stops (a deadline, a failed Job; a completed one has none).
      for (const StoredObject* pod : pods) {
        const std::string phase = StringAt(pod->object, {"status", "phase"});
        if (phase == "Succeeded" || phase == "Failed" || Deleting(*pod)) continue;
        json stop = pod->object;
        stop["metadata"]["deletionTimestamp"] = pass.now_text;
        stop["status"]["reason"] = fail_reason;
        unit.push_back(WriteOp{.op = WriteOp::Kind::kUpdate, .key = pod->key, .object = std::move(stop),
                               .expected_revision = pod->revision});
      }
      pass.events.Record(pass.writer, w, complete ? EventRecorder::Type::kNormal : EventRecorder::Type::kWarning,
                         complete ? "Completed" : fail_reason, complete ? "Job completed" : fail_message, pass.now);
    } else {
      // Slots whose pod ended get the next piece of work, if any remains.
      int64_t started = 0;  // pods started this pass (non-indexed completions)
      int64_t next_index = 0;
      auto take_index = [&]() -> std::optional<int64_t> {
        while (next_index < spec.completions.value_or(0) &&
               (completed.count(next_index) || running_indexes.count(next_index))) {
          ++next_index;
        }
        if (next_index >= spec.completions.value_or(0)) return std::nullopt;
        running_indexes.insert(next_index);
        return next_index;
      };
      for (const auto& [number, slot] : slots) {
        const StoredObject& pod = *slot.current;
        const std::string phase = StringAt(pod.object, {"status", "phase"});
        if (Deleting(pod) || (phase != "Succeeded" && phase != "Failed")) continue;
        std::optional<int64_t> index;
        if (phase == "Failed") {
          const Verdict v = Judge(spec, pod);
          if (v.action != FailureAction::kIgnore) {
            const Timestamp due = FinishedAt(pod.object).value_or(pass.now) + JobBackoff(std::max<int64_t>(failed, 1));
            if (pass.now < due) {
              pass.WakeAt(due);
              continue;
            }
          }
          const int64_t own = AnnotationInt(pod.object, kCompletionIndexAnnotation, -1);
          if (spec.indexed) index = own >= 0 ? std::optional<int64_t>(own) : take_index();
        } else if (spec.indexed) {
          index = take_index();
          if (!index) continue;  // every index is done or running
        } else if (!spec.completions || succeeded + active + started >= *spec.completions) {
          continue;  // no completions left to start
        }
        ++started;
        json pod_next = Replacement(pod, number, slot.attempt + 1, index, pass.now_text);
        ObjectKey pod_key{kPodKind, w.key.ns, StringAt(pod_next, {"metadata", "name"})};
        unit.push_back(WriteOp{.op = WriteOp::Kind::kCreate, .key = std::move(pod_key), .object = std::move(pod_next)});
      }
      active += started;
    }

    // The Job's status, as the Kubernetes Job controller writes it.
    json job_next = job->object;
    json& status = job_next["status"];
    if (auto since = ConditionValue(w.object, "Admitted", "lastTransitionTime"); !since.empty() && !status.contains("startTime")) {
      status["startTime"] = since;
    }
    status["active"] = complete || !fail_reason.empty() ? 0 : active;
    status["ready"] = complete || !fail_reason.empty() ? 0 : ready;
    status["succeeded"] = succeeded;
    status["failed"] = failed;
    if (spec.indexed) status["completedIndexes"] = IndexRanges(completed);
    if (complete) status["completionTime"] = pass.now_text;
    if (complete || !fail_reason.empty()) {
      SetCondition(job_next, complete ? "Complete" : "Failed", true, complete ? "Completed" : fail_reason,
                   complete ? "" : fail_message, pass.now_text);
    }
    if (job_next != job->object) {
      unit.push_back(WriteOp{.op = WriteOp::Kind::kUpdate, .key = job->key, .object = std::move(job_next),
                             .expected_revision = job->revision});
    }
    if (!unit.empty()) pass.writer.Add(std::move(unit), fmt::format("job {}/{}", job->key.ns, job->key.name));
  }
}

}  // namespace tessera

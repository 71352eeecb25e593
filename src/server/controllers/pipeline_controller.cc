#include "server/controllers/pipeline_controller.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/kinds.h"
#include "api/validation.h"
#include "common/time_format.h"
#include "pipeline/dag.h"
#include "pipeline/dag_scheduler.h"
#include "pipeline/digests.h"
#include "pipeline/parameters.h"
#include "pipeline/pipeline_spec.h"
#include "pipeline/resume.h"
#include "server/object_json.h"
#include "server/pod_index.h"

namespace tessera {

using nlohmann::json;
namespace pl = pipeline;

namespace {

std::string Str(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const json& Member(const json& obj, const char* key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it != obj.end() ? *it : kNull;
}

// status.nodes -> what the pipeline library reads.
struct Known {
  pl::NodeStates states;
  pl::NodeResults results;
  pl::OutputDigests digests;
};

Known ReadNodes(const json& nodes) {
  Known k;
  if (!nodes.is_object()) return k;
  for (const auto& [name, n] : nodes.items()) {
    if (!n.is_object()) continue;
    pl::NodeStatus s;
    s.state = pl::ParseNodeState(Str(n, "phase")).value_or(pl::NodeState::kPending);
    s.attempts = n.value("attempts", 0);
    if (auto t = ParseRfc3339(Str(n, "finishedAt"))) s.finished_at = *t;
    s.permanent = n.value("permanent", false);
    s.message = Str(n, "message");
    if (std::string from = Str(n, "resumedFrom"); !from.empty()) s.resumed_from = from;
    k.states[name] = s;
    k.results[name] = Str(n, "result");
    k.digests[name] = Str(n, "outputDigest");
  }
  return k;
}

void SetNode(json& node, const pl::NodeStatus& s) {
  node["phase"] = std::string(pl::NodeStateName(s.state));
  node["attempts"] = s.attempts;
  if (s.message.empty()) {
    node.erase("message");
  } else {
    node["message"] = s.message;
  }
  if (s.permanent) node["permanent"] = true;
  if (s.resumed_from) node["resumedFrom"] = *s.resumed_from;
}

// A Succeeded (or Cached) node with `key` in another PipelineRun of `ns`:
// (run, node, its node status), or nullopt.
std::optional<std::pair<std::string, json>> FindCacheHit(const ObjectCache& cache, const std::string& ns,
                                                          const std::string& self, const std::string& key) {
  for (const auto& [k, run] : cache.Of(kPipelineRunKind)) {
    if (k.first != ns || k.second == self) continue;
    const json& nodes = Member(Member(run.object, "status"), "nodes");
    if (!nodes.is_object()) continue;
    for (const auto& [name, n] : nodes.items()) {
      if (!n.is_object() || Str(n, "cacheKey") != key) continue;
      const std::string phase = Str(n, "phase");
      if (phase == "Succeeded" || phase == "Cached") return std::make_pair(k.second + "/" + name, n);
    }
  }
  return std::nullopt;
}

json JobFor(const StoredObject& run, const std::string& job_name, const std::string& node, json pod_template,
            const std::string& now_text) {
  const std::string run_name = run.key.name;
  json labels = {{kPipelineRunLabel, run_name}, {kPipelineStepLabel, node}};
  const std::string queue = StringAt(run.object, {"spec", "queueName"});
  if (!queue.empty()) labels["kueue.x-k8s.io/queue-name"] = queue;
  if (!pod_template.is_object()) pod_template = json::object();
  json& pod_spec = pod_template["spec"];
  if (!pod_spec.is_object()) pod_spec = json::object();
  if (!pod_spec.contains("restartPolicy")) pod_spec["restartPolicy"] = "Never";
  json meta{{"name", job_name},
            {"namespace", run.key.ns},
            {"labels", labels},
            {"creationTimestamp", now_text},
            {"ownerReferences",
             {{{"apiVersion", "tessera.dev/v1"},
               {"kind", "PipelineRun"},
               {"name", run_name},
               {"uid", StringAt(run.object, {"metadata", "uid"})},
               {"controller", true},
               {"blockOwnerDeletion", true}}}}};
  return json{{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", std::move(meta)},
              {"spec", {{"backoffLimit", 0}, {"template", std::move(pod_template)}}}};
}

// Step 1: the spec, parameters and carried-over nodes, into `status`. An
// error is the run's end (Failed) or, for a Pipeline not there yet, a wait.
enum class Resolved { kReady, kWaiting, kFailed };

Resolved Resolve(const ObjectCache& cache, const StoredObject& run, json& status) {
  const json& spec = Member(run.object, "spec");
  json pipeline_spec = Member(spec, "pipelineSpec");
  std::string field = "spec.pipelineSpec";
  if (pipeline_spec.is_null()) {
    const std::string ref = StringAt(spec, {"pipelineRef", "name"});
    const auto& pipelines = cache.Of(kPipelineKind);
    auto it = pipelines.find({run.key.ns, ref});
    if (it == pipelines.end()) {
      status["phase"] = "Pending";
      status["message"] = fmt::format("spec.pipelineRef.name: Pipeline \"{}\" not found in namespace \"{}\"; create it",
                                      ref, run.key.ns);
      return Resolved::kWaiting;
    }
    pipeline_spec = Member(it->second.object, "spec");
    field = fmt::format("Pipeline {}: spec", ref);
  }
  auto fail = [&](const std::string& message) {
    status["phase"] = "Failed";
    status["message"] = message;
    return Resolved::kFailed;
  };
  auto parsed = pl::ParsePipelineSpec(pipeline_spec, field);
  if (!parsed) return fail(parsed.error().message());
  auto values = pl::ResolveParameters(*parsed, Member(spec, "parameters"));
  if (!values) return fail(values.error().message());
  auto dag = pl::Expand(*parsed, *values);
  if (!dag) return fail(dag.error().message());
  status["pipelineSpec"] = pipeline_spec;
  status["specDigest"] = pl::SpecDigest(pipeline_spec);
  status["parameters"] = json::object();
  for (const auto& [name, value] : *values) status["parameters"][name] = value;
  status["nodes"] = json::object();
  if (const std::string from = StringAt(spec, {"resumeFrom"}); !from.empty()) {
    const auto& runs = cache.Of(kPipelineRunKind);
    auto it = runs.find({run.key.ns, from});
    if (it == runs.end()) return fail(fmt::format("spec.resumeFrom: PipelineRun \"{}\" not found", from));
    pl::PreviousRun previous{.name = from};
    const json& nodes = Member(Member(it->second.object, "status"), "nodes");
    if (nodes.is_object()) {
      for (const auto& [name, n] : nodes.items()) {
        if (!n.is_object()) continue;
        pl::PreviousNode p{.state = pl::ParseNodeState(Str(n, "phase")).value_or(pl::NodeState::kPending),
                           .cache_key = Str(n, "cacheKey"),
                           .output_digest = Str(n, "outputDigest"),
                           .result = Str(n, "result")};
        if (std::string r = Str(n, "resumedFrom"); !r.empty()) p.resumed_from = r;
        previous.nodes[name] = std::move(p);
      }
    }
    const pl::ResumePlan plan = pl::ResumeStates(*dag, previous);
    for (const auto& [name, s] : plan.states) {
      json& node = status["nodes"][name];
      SetNode(node, s);
      if (auto r = plan.results.find(name); r != plan.results.end()) node["result"] = r->second;
      if (auto d = plan.output_digests.find(name); d != plan.output_digests.end()) node["outputDigest"] = d->second;
      if (auto c = plan.cache_keys.find(name); c != plan.cache_keys.end()) node["cacheKey"] = c->second;
    }
  }
  status["phase"] = "Running";
  status.erase("message");
  return Resolved::kReady;
}

}  // namespace

void PipelineController::Reconcile(PassContext& pass) {
  for (const auto& [unused, active] : pass.cache.ActiveOf(kPipelineRunKind)) {
    const StoredObject& run = *active;
    const json& old_status = Member(run.object, "status");
    json status = old_status.is_object() ? old_status : json::object();
    std::vector<WriteOp> unit;

    if (!status.contains("pipelineSpec")) {
      const Resolved r = Resolve(pass.cache, run, status);
      if (r != Resolved::kWaiting && !status.contains("startedAt")) status["startedAt"] = pass.now_text;
      if (r == Resolved::kFailed) status["finishedAt"] = pass.now_text;
      if (r != Resolved::kReady) {
        if (status != old_status) {
          json next = run.object;
          next["status"] = std::move(status);
          pass.writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = run.key, .object = std::move(next),
                                  .expected_revision = run.revision},
                          fmt::format("pipelinerun {}/{}", run.key.ns, run.key.name));
        }
        continue;
      }
    }

    // The recorded spec: parsed and expanded again each pass (pure, cheap next to a Job).
    auto parsed = pl::ParsePipelineSpec(status["pipelineSpec"]);
    if (!parsed) {
      spdlog::warn("pipelinerun {}/{}: recorded spec: {}", run.key.ns, run.key.name, parsed.error().message());
      continue;
    }
    pl::ParameterValues values;
    for (const auto& [name, value] : Member(status, "parameters").items()) {
      if (value.is_string()) values[name] = value.get<std::string>();
    }
    auto dag = pl::Expand(*parsed, values);
    if (!dag) {
      spdlog::warn("pipelinerun {}/{}: {}", run.key.ns, run.key.name, dag.error().message());
      continue;
    }
    json& nodes = status["nodes"];
    if (!nodes.is_object()) nodes = json::object();
    Known known = ReadNodes(nodes);

    // 2. The Running nodes' Jobs.
    const auto& jobs = pass.cache.Of(kJobKind);
    for (auto& [name, s] : known.states) {
      if (s.state != pl::NodeState::kRunning) continue;
      json& node = nodes[name];
      const std::string job_name = Str(node, "job");
      auto it = jobs.find({run.key.ns, job_name});
      if (it == jobs.end()) {
        // Created this pass or the last: the cache has it once the writer flushed.
        if (Str(node, "startedAt") == pass.now_text) continue;
        s.state = pl::NodeState::kFailed;
        s.message = fmt::format("its Job {} was deleted", job_name);
      } else if (ConditionTrue(it->second.object, "Complete")) {
        s.state = pl::NodeState::kSucceeded;
        s.message.clear();
      } else if (ConditionTrue(it->second.object, "Failed")) {
        s.state = pl::NodeState::kFailed;
        const std::string why = ConditionValue(it->second.object, "Failed", "message");
        s.message = why.empty() ? fmt::format("Job {} failed", job_name) : why;
      } else {
        continue;
      }
      s.finished_at = pass.now;
      SetNode(node, s);
      node["finishedAt"] = pass.now_text;
    }

    // 3. Next, applied until no cache hit lets more nodes start.
    pl::Decision d;
    for (bool again = true; again;) {
      again = false;
      d = pl::Next(*dag, known.states, known.results, pass.now);
      auto mark = [&](const pl::NodeMark& m, pl::NodeState state, bool permanent) {
        pl::NodeStatus& s = known.states[m.node];
        s.state = state;
        s.message = m.reason;
        s.permanent = permanent;
        if (state == pl::NodeState::kFailed) s.finished_at = pass.now;
        json& node = nodes[m.node];
        SetNode(node, s);
        node["finishedAt"] = pass.now_text;
        if (state == pl::NodeState::kSkipped) {
          const auto id = dag->Find(m.node);
          if (id) node["cacheKey"] = pl::CacheKey(dag->node(*id), known.digests);
        }
      };
      for (const pl::NodeMark& m : d.skip) mark(m, pl::NodeState::kSkipped, false);
      for (const pl::NodeMark& m : d.omit) mark(m, pl::NodeState::kOmitted, false);
      for (const pl::NodeMark& m : d.fail) mark(m, pl::NodeState::kFailed, true);
      std::vector<std::string> starts = d.start;
      starts.insert(starts.end(), d.retry.begin(), d.retry.end());
      for (const std::string& name : starts) {
        const auto id = dag->Find(name);
        if (!id) continue;
        const pl::DagNode& dn = dag->node(*id);
        const std::string key = pl::CacheKey(dn, known.digests);
        pl::NodeStatus& s = known.states[name];
        json& node = nodes[name];
        node["cacheKey"] = key;
        if (dn.cache) {
          if (auto hit = FindCacheHit(pass.cache, run.key.ns, run.key.name, key)) {
            s.state = pl::NodeState::kCached;
            s.message = fmt::format("cache hit: {}", hit->first);
            s.finished_at = pass.now;
            SetNode(node, s);
            node["startedAt"] = pass.now_text;
            node["finishedAt"] = pass.now_text;
            node["result"] = Str(hit->second, "result");
            node["outputDigest"] = Str(hit->second, "outputDigest");
            known.results[name] = Str(hit->second, "result");
            known.digests[name] = Str(hit->second, "outputDigest");
            again = true;
            continue;
          }
        }
        s.attempts += 1;
        const std::string job_name = fmt::format("{}-{}-{}", run.key.name, name, s.attempts);
        json job = JobFor(run, job_name, name, pl::FinalTemplate(*dag, *id, known.states, known.results),
                          pass.now_text);
        node["job"] = job_name;
        node["startedAt"] = pass.now_text;
        // The Job is written past the API's checks: check it as the API would,
        // so that a template the substitution made invalid fails its node for
        // good instead of leaving a Job no Workload can come from.
        if (Status valid = ValidateObject(*FindKindByStoreKey(kJobKind), job); !valid.ok()) {
          s.state = pl::NodeState::kFailed;
          s.permanent = true;
          s.finished_at = pass.now;
          s.message = fmt::format("its Job {} was refused: {}", job_name, valid.message());
          SetNode(node, s);
          node["finishedAt"] = pass.now_text;
          again = true;
          continue;
        }
        s.state = pl::NodeState::kRunning;
        s.message.clear();
        SetNode(node, s);
        node.erase("finishedAt");
        unit.push_back(WriteOp{.op = WriteOp::Kind::kCreate,
                               .key = ObjectKey{kJobKind, run.key.ns, job_name},
                               .object = std::move(job)});
      }
    }
    // Every node of the DAG appears in the status, Pending until it starts.
    for (const pl::DagNode& dn : dag->nodes) {
      if (!nodes.contains(dn.name)) nodes[dn.name] = {{"phase", "Pending"}, {"attempts", 0}};
    }
    if (d.phase != pl::RunPhase::kRunning) {
      status["phase"] = std::string(pl::RunPhaseName(d.phase));
      status["finishedAt"] = pass.now_text;
      if (d.message.empty()) {
        status.erase("message");
      } else {
        status["message"] = d.message;
      }
    }
    if (!d.next_retry_at.never()) pass.WakeAt(d.next_retry_at);
    // New Jobs get their Workloads from the job controller, which ran before
    // this one: ask for the next pass now rather than at the resync.
    if (!unit.empty()) pass.WakeAt(pass.now);

    // 4. One unit: the run's status and its new Jobs.
    if (status == old_status && unit.empty()) continue;
    json next = run.object;
    next["status"] = std::move(status);
    unit.insert(unit.begin(), WriteOp{.op = WriteOp::Kind::kUpdate, .key = run.key, .object = std::move(next),
                                      .expected_revision = run.revision});
    pass.writer.Add(std::move(unit), fmt::format("pipelinerun {}/{}", run.key.ns, run.key.name));
  }
  DeleteOrphanJobs(pass);
}

void PipelineController::DeleteOrphanJobs(PassContext& pass) {
  const uint64_t removals = pass.cache.removals(kPipelineRunKind);
  if (orphans_checked_at_ == removals) return;
  orphans_checked_at_ = removals;
  const auto& runs = pass.cache.Of(kPipelineRunKind);
  for (const auto& [key, job] : pass.cache.Of(kJobKind)) {
    const std::string run = StringAt(job.object, {"metadata", "labels", kPipelineRunLabel});
    if (run.empty()) continue;
    // A run of the same name made again is another run: its uid tells them apart.
    auto owner = runs.find({key.first, run});
    const json& refs = ArrayAt(job.object, {"metadata", "ownerReferences"});
    const std::string owner_uid = refs.empty() || !refs[0].is_object() ? std::string() : Str(refs[0], "uid");
    if (owner != runs.end() && StringAt(owner->second.object, {"metadata", "uid"}) == owner_uid) continue;
    pass.writer.Add(WriteOp{.op = WriteOp::Kind::kDelete, .key = job.key},
                    fmt::format("delete job {}/{} of a deleted pipelinerun", key.first, key.second));
  }
}

}  // namespace tessera

#include "server/controllers/pipeline_controller.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "api/kinds.h"
#include "api/validation.h"
#include "common/time_format.h"
#include "domain/quantity.h"
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
namespace fs = std::filesystem;
namespace pl = pipeline;

namespace {

constexpr const char* kClaimKind = "/PersistentVolumeClaim";
// What of OUTPUT/result becomes the node's result: Kubernetes' limit on a
// container's termination message.
constexpr size_t kMaxResultBytes = 4096;

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

// Where a node's outputs are: `path` in claim `claim` (uid `claim_uid`).
struct ArtifactsRef {
  std::string claim;
  std::string claim_uid;
  std::string path;
};

std::optional<ArtifactsRef> ReadArtifacts(const json& node) {
  const json& a = Member(node, "artifacts");
  ArtifactsRef r{.claim = Str(a, "claim"), .claim_uid = Str(a, "claimUid"), .path = Str(a, "path")};
  if (r.claim.empty() || r.claim_uid.empty() || r.path.empty()) return std::nullopt;
  return r;
}

json ArtifactsJson(const ArtifactsRef& r) {
  return json{{"claim", r.claim}, {"claimUid", r.claim_uid}, {"path", r.path}};
}

// The claim's directory on the share, as the agent names it (agent/pod_volumes.h).
fs::path ClaimDir(const std::string& root, const std::string& ns, const ArtifactsRef& r) {
  return fs::path(root) / fmt::format("{}-{}-{}", ns, r.claim, r.claim_uid);
}

// STEP, or STEP/ITEM for a node of a fanned-out step: where its outputs go in
// the run's claim, and the name its dependents find them under.
std::string NodePath(const pl::Dag& dag, const pl::DagNode& n) {
  const std::string& step = dag.steps[n.step].name;
  return n.item ? fmt::format("{}/{}", step, *n.item) : step;
}

// The identity of a node's outputs, what its dependents' cache keys hash.
std::string ArtifactsDigest(const ArtifactsRef& r) {
  return pl::Sha256Hex("tessera.dev/pipeline-artifacts/v1:" + r.claim_uid + "/" + r.path);
}

// DIR/result: its first kMaxResultBytes, trailing white space dropped; "" when
// there is none. A link is not followed (the pod wrote it; the server reads it).
std::string ReadResult(const fs::path& dir) {
  const int fd = ::open((dir / "result").c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    text.resize(kMaxResultBytes);
    size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    text.resize(got);
  }
  ::close(fd);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

// Before an attempt: its output directory made empty (mode 0777: the pod runs
// as its namespace's user, not the server's) and its input directory made
// afresh, one link per upstream node (`inputs`: name -> that node's outputs).
Status PrepareArtifacts(const fs::path& out, const fs::path& in,
                        const std::vector<std::pair<std::string, fs::path>>& inputs) {
  std::error_code ec;
  for (const fs::path& dir : {out, in}) {
    fs::remove_all(dir, ec);
    if (!ec) fs::create_directories(dir, ec);
    if (ec) return Status::Unavailable(fmt::format("cannot make {}: {}", dir.string(), ec.message()));
  }
  ::chmod(out.c_str(), 0777);
  for (const auto& [name, target] : inputs) {
    const fs::path link = in / name;
    fs::create_directories(link.parent_path(), ec);
    if (!ec) fs::create_directory_symlink(target, link, ec);
    if (ec) return Status::Unavailable(fmt::format("cannot link {}: {}", link.string(), ec.message()));
  }
  return Status::Ok();
}

// Gives the pod its artifacts (see the header): for a process pod, the node
// paths in its variables; for a container pod, the claims as volumes, mounted
// at /tessera/outputs and /tessera/inputs/NAME. The variables come first in
// each container's env, so that one the template sets wins.
void AddArtifacts(json& pod_template, const ArtifactsRef& own, const fs::path& out, const fs::path& in,
                  const std::vector<std::pair<std::string, ArtifactsRef>>& inputs) {
  json& spec = pod_template["spec"];
  json& containers = spec["containers"];
  if (!containers.is_array()) return;
  const bool image = !containers.empty() && containers[0].is_object() && !Str(containers[0], "image").empty();
  json env = json::array({{{"name", "TESSERA_OUTPUT_DIR"}, {"value", image ? kArtifactsOutputsPath : out.string()}},
                          {{"name", "TESSERA_INPUT_DIR"}, {"value", image ? kArtifactsInputsPath : in.string()}}});
  json mounts = json::array();
  if (image) {
    std::map<std::string, std::string> volumes;  // claim -> volume
    auto volume = [&](const std::string& claim) {
      auto [it, added] = volumes.emplace(claim, volumes.empty() ? std::string("tessera-artifacts")
                                                                : fmt::format("tessera-artifacts-{}", volumes.size()));
      if (added) {
        if (!spec["volumes"].is_array()) spec["volumes"] = json::array();
        spec["volumes"].push_back({{"name", it->second}, {"persistentVolumeClaim", {{"claimName", claim}}}});
      }
      return it->second;
    };
    mounts.push_back({{"name", volume(own.claim)}, {"mountPath", kArtifactsOutputsPath}, {"subPath", own.path}});
    for (const auto& [name, ref] : inputs) {
      mounts.push_back({{"name", volume(ref.claim)},
                        {"mountPath", fmt::format("{}/{}", kArtifactsInputsPath, name)},
                        {"subPath", ref.path},
                        {"readOnly", true}});
    }
  }
  for (json& c : containers) {
    if (!c.is_object()) continue;
    json merged = env;
    if (c.contains("env") && c["env"].is_array()) {
      for (const json& e : c["env"]) merged.push_back(e);
    }
    c["env"] = std::move(merged);
    if (image) {
      if (!c["volumeMounts"].is_array()) c["volumeMounts"] = json::array();
      for (const json& m : mounts) c["volumeMounts"].push_back(m);
    }
  }
}

json ArtifactClaim(const StoredObject& run, const std::string& name, const std::string& uid,
                   const std::string& now_text) {
  return json{{"apiVersion", "v1"},
              {"kind", "PersistentVolumeClaim"},
              {"metadata",
               {{"name", name},
                {"namespace", run.key.ns},
                {"uid", uid},
                {"labels", {{kPipelineRunLabel, run.key.name}}},
                {"annotations",
                 {{"volume.kubernetes.io/storage-provisioner", "tessera.dev/volume-root"},
                  {"pv.kubernetes.io/bind-completed", "yes"}}},
                {"creationTimestamp", now_text},
                {"ownerReferences",
                 {{{"apiVersion", "tessera.dev/v1"},
                   {"kind", "PipelineRun"},
                   {"name", run.key.name},
                   {"uid", StringAt(run.object, {"metadata", "uid"})},
                   {"controller", true},
                   {"blockOwnerDeletion", true}}}}}},
              {"spec",
               {{"accessModes", {"ReadWriteMany"}},
                {"volumeMode", "Filesystem"},
                {"volumeName", "pvc-" + uid},
                {"resources", {{"requests", {{"storage", "0"}}}}}}},
              {"status", {{"phase", "Bound"}, {"accessModes", {"ReadWriteMany"}}, {"capacity", {{"storage", "0"}}}}}};
}

// As claim admission counts a create (api/claim_admission.h): the quota
// message when one more claim in `ns` would take it past a ResourceQuota's
// `persistentvolumeclaims`, else "". (The run's claim requests no storage, so
// `requests.storage` cannot be exceeded by it.)
std::string ClaimQuotaExceeded(const ObjectCache& cache, const std::string& ns) {
  int64_t used = 0;
  for (const auto& [k, claim] : cache.Of(kClaimKind)) used += k.first == ns ? 1 : 0;
  for (const auto& [k, quota] : cache.Of("/ResourceQuota")) {
    if (k.first != ns) continue;
    const json& hard = ObjectAt(quota.object, {"spec", "hard"});
    auto it = hard.find("persistentvolumeclaims");
    if (it == hard.end()) continue;
    auto limit = ParseUnits(it->is_string() ? it->get<std::string>() : it->dump());
    if (limit && used + 1 > *limit) {
      return fmt::format(
          "exceeded quota: {}, requested: persistentvolumeclaims=1, used: persistentvolumeclaims={}, limited: "
          "persistentvolumeclaims={}",
          k.second, used, *limit);
    }
  }
  return "";
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

struct ArtifactsContext {
  const std::string& volume_root;  // empty: no artifacts
  UuidGenerator& uuids;
  std::vector<WriteOp>& unit;  // the claim's create goes there
  const std::string& now_text;
};

Resolved Resolve(const ObjectCache& cache, const StoredObject& run, json& status, const ArtifactsContext& artifacts) {
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
  const std::string claim_name = run.key.name + "-artifacts";
  if (!artifacts.volume_root.empty()) {
    const auto& claims = cache.Of(kClaimKind);
    if (auto it = claims.find({run.key.ns, claim_name}); it != claims.end()) {
      if (StringAt(it->second.object, {"metadata", "labels", kPipelineRunLabel}) == run.key.name) {
        status["phase"] = "Pending";
        status["message"] = fmt::format(
            "waiting for PersistentVolumeClaim {} of an earlier PipelineRun {} to be deleted", claim_name, run.key.name);
        return Resolved::kWaiting;
      }
      return fail(fmt::format(
          "PersistentVolumeClaim {} exists and is not this run's: the run keeps its artifacts in a claim of that name; "
          "delete the claim or give the run another name",
          claim_name));
    }
    // Its claim is made here, not through the API: counted as the API would.
    if (const std::string exceeded = ClaimQuotaExceeded(cache, run.key.ns); !exceeded.empty()) {
      status["phase"] = "Pending";
      status["message"] = fmt::format(
          "its artifacts need a PersistentVolumeClaim {}: {}; it waits until the namespace has room for one more claim",
          claim_name, exceeded);
      return Resolved::kWaiting;
    }
  }
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
      // Its outputs stay where the run that made them keeps them.
      if (auto a = ReadArtifacts(Member(nodes, name.c_str()))) node["artifacts"] = ArtifactsJson(*a);
      if (auto r = plan.results.find(name); r != plan.results.end()) node["result"] = r->second;
      if (auto d = plan.output_digests.find(name); d != plan.output_digests.end()) node["outputDigest"] = d->second;
      if (auto c = plan.cache_keys.find(name); c != plan.cache_keys.end()) node["cacheKey"] = c->second;
    }
  }
  if (!artifacts.volume_root.empty()) {
    const std::string uid = artifacts.uuids.Next();
    status["artifacts"] = {{"claimName", claim_name}, {"claimUid", uid}};
    artifacts.unit.push_back(WriteOp{.op = WriteOp::Kind::kCreate,
                                     .key = ObjectKey{kClaimKind, run.key.ns, claim_name},
                                     .object = ArtifactClaim(run, claim_name, uid, artifacts.now_text)});
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
      const Resolved r = Resolve(pass.cache, run, status,
                                 ArtifactsContext{.volume_root = volume_root_, .uuids = uuids_, .unit = unit,
                                                  .now_text = pass.now_text});
      if (r != Resolved::kWaiting && !status.contains("startedAt")) status["startedAt"] = pass.now_text;
      if (r == Resolved::kFailed) status["finishedAt"] = pass.now_text;
      if (r != Resolved::kReady) {
        unit.clear();
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
    // The run's claim, when it keeps artifacts.
    const std::string claim_name = StringAt(status, {"artifacts", "claimName"});
    const std::string claim_uid = StringAt(status, {"artifacts", "claimUid"});
    const bool artifacts = !volume_root_.empty() && !claim_name.empty() && !claim_uid.empty();

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
        if (auto a = artifacts ? ReadArtifacts(node) : std::nullopt) {
          known.results[name] = ReadResult(ClaimDir(volume_root_, run.key.ns, *a) / a->path);
          known.digests[name] = ArtifactsDigest(*a);
          node["result"] = known.results[name];
          node["outputDigest"] = known.digests[name];
        }
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
            if (auto a = ReadArtifacts(hit->second)) node["artifacts"] = ArtifactsJson(*a);
            known.results[name] = Str(hit->second, "result");
            known.digests[name] = Str(hit->second, "outputDigest");
            again = true;
            continue;
          }
        }
        s.attempts += 1;
        const std::string job_name = fmt::format("{}-{}-{}", run.key.name, name, s.attempts);
        json pod_template = pl::FinalTemplate(*dag, *id, known.states, known.results);
        // Made once the Job passed the API's checks.
        std::optional<std::tuple<fs::path, fs::path, std::vector<std::pair<std::string, fs::path>>>> prepare;
        if (artifacts) {
          const ArtifactsRef own{.claim = claim_name, .claim_uid = claim_uid, .path = NodePath(*dag, dn)};
          const fs::path claim_dir = ClaimDir(volume_root_, run.key.ns, own);
          const fs::path out = claim_dir / own.path;
          const fs::path in = claim_dir / ".inputs" / name;
          std::vector<std::pair<std::string, ArtifactsRef>> inputs;
          std::vector<std::pair<std::string, fs::path>> links;
          for (pl::NodeId dep : dn.deps) {
            const pl::DagNode& up = dag->node(dep);
            // A Skipped upstream node ran nothing and so has no outputs.
            if (auto a = ReadArtifacts(Member(nodes, up.name.c_str()))) {
              inputs.emplace_back(NodePath(*dag, up), *a);
              links.emplace_back(NodePath(*dag, up), ClaimDir(volume_root_, run.key.ns, *a) / a->path);
            }
          }
          if (!pod_template.is_object()) pod_template = json::object();
          AddArtifacts(pod_template, own, out, in, inputs);
          node["artifacts"] = ArtifactsJson(own);
          prepare.emplace(out, in, std::move(links));
        }
        json job = JobFor(run, job_name, name, std::move(pod_template), pass.now_text);
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
        const Status prepared =
            prepare ? PrepareArtifacts(std::get<0>(*prepare), std::get<1>(*prepare), std::get<2>(*prepare))
                    : Status::Ok();
        if (!prepared.ok()) {
          // The share failed us: a failed attempt, retried as any other.
          s.state = pl::NodeState::kFailed;
          s.finished_at = pass.now;
          s.message = fmt::format("its artifacts could not be prepared: {}", prepared.message());
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
  DeleteOrphans(pass);
}

void PipelineController::DeleteOrphans(PassContext& pass) {
  const uint64_t removals = pass.cache.removals(kPipelineRunKind);
  if (orphans_checked_at_ == removals) return;
  orphans_checked_at_ = removals;
  const auto& runs = pass.cache.Of(kPipelineRunKind);
  for (const std::string_view kind : {std::string_view(kJobKind), std::string_view(kClaimKind)}) {
    for (const auto& [key, object] : pass.cache.Of(std::string(kind))) {
      const std::string run = StringAt(object.object, {"metadata", "labels", kPipelineRunLabel});
      if (run.empty()) continue;
      // A run of the same name made again is another run: its uid tells them apart.
      auto owner = runs.find({key.first, run});
      const json& refs = ArrayAt(object.object, {"metadata", "ownerReferences"});
      const std::string owner_uid = refs.empty() || !refs[0].is_object() ? std::string() : Str(refs[0], "uid");
      if (owner != runs.end() && StringAt(owner->second.object, {"metadata", "uid"}) == owner_uid) continue;
      pass.writer.Add(WriteOp{.op = WriteOp::Kind::kDelete, .key = object.key},
                      fmt::format("delete {} {}/{} of a deleted pipelinerun", kind == kJobKind ? "job" : "claim",
                                  key.first, key.second));
    }
  }
}

}  // namespace tessera

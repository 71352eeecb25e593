#include "sim/simulator.h"

#include <algorithm>
#include <limits>
#include <map>
#include <queue>
#include <tuple>

#include <fmt/format.h>

#include "sched/cycle.h"
#include "sim/sim_metrics.h"

namespace tessera {
namespace {

// Preemptions at one instant make the core run again at that instant (the
// preemptor takes the freed room); this bounds a pathological cascade.
constexpr int kMaxCyclesPerInstant = 64;

enum class JobState : uint8_t { kNotArrived, kPending, kRunning, kDone, kDropped };

struct Job {
  LocalQueueId local_queue;
  NamespaceId ns;
  int32_t cq = -1;
  int64_t remaining_ms = 0;
  int64_t run_start_ms = 0;
  int32_t slot = -1;  // in the snapshot's workloads, while admitted or in a cycle
  uint32_t generation = 0;  // completion events of older admissions are stale
  JobState state = JobState::kNotArrived;
  bool listed = false;  // in pending_ (possibly a stale entry)
  // Refused by its queue's quota at the last evaluation, when its quota group
  // (QuotaGroup) was at this epoch: nothing it could use has changed since.
  bool quota_blocked = false;
  uint64_t quota_epoch = 0;
  bool waiting_for_victims = false;  // a preemptor: admitted once its victims are gone
};

struct Completion {
  int64_t end_ms;
  int32_t job;
  uint32_t generation;
  bool operator>(const Completion& o) const { return std::tie(end_ms, job) > std::tie(o.end_ms, o.job); }
};

bool PreemptionConfigured(const PreemptionConfig& p) {
  return p.within_cluster_queue != WithinClusterQueuePolicy::kNever ||
         p.reclaim_within_cohort != ReclaimWithinCohortPolicy::kNever ||
         p.borrow_within_cohort != BorrowWithinCohortPolicy::kNever;
}

class Engine {
 public:
  Engine(const SimCluster& cluster, const std::vector<TraceJob>& trace, const SimPolicy& policy,
         const SimOptions& options)
      : cluster_(cluster), trace_(trace), policy_(policy), options_(options), snap_(cluster.base) {}

  Result<SimResult> Run();

 private:
  Status ResolveQueues();
  Workload MakeWorkload(int32_t j) const;
  void Arrive(int32_t j);
  void RunCyclesAt(int64_t now);
  std::vector<int32_t> SelectPending(bool full) const;
  void Admit(int32_t j, const Admission& admission, int64_t now);
  void Preempt(int32_t j, int64_t now);
  void Complete(int32_t j, int64_t now);
  void ChangeDevices(const Admission& admission, int sign);
  void AddPending(int32_t j);
  void CompactPending();
  void Sample(int64_t now);

  const SimCluster& cluster_;
  const std::vector<TraceJob>& trace_;
  const SimPolicy& policy_;
  const SimOptions& options_;
  ClusterSnapshot snap_;
  SimResult result_;

  std::vector<Job> jobs_;                     // by trace index
  std::vector<int32_t> record_of_;            // trace index -> index in result_.jobs, -1 left out
  std::vector<Workload> held_;                // by trace index: the workload while outside the snapshot
  std::vector<int32_t> slot_job_;             // snapshot slot -> trace index
  std::vector<int32_t> pending_;              // trace indices, with stale entries (state != kPending)
  int64_t pending_alive_ = 0;
  std::vector<int32_t> arrivals_;             // pending since the last cycle
  std::vector<int32_t> reserved_;             // holding a reservation after the last cycle
  bool state_freed_ = true;                   // something released resources since the last cycle
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> completions_;

  // A node selector matches labels, not a choice of models: each set of several
  // allowed models in the trace gets a label that the nodes of those models carry.
  void LabelModelSets();
  std::map<std::vector<std::string>, std::string> model_set_label_;
  Status CheckTrace() const;

  std::vector<int32_t> device_base_;          // node -> index of its first device
  std::vector<int64_t> device_used_;
  // The quota a queue's pending work competes for changes with every admission or
  // release in its cohort (with borrowing) or in the queue itself (without).
  int32_t QuotaGroup(int32_t cq) const;
  void TouchQuota(int32_t cq) { ++quota_epoch_[QuotaGroup(cq)]; }
  std::vector<uint64_t> quota_epoch_;  // per quota group: queues, then cohorts
  std::vector<int64_t> cq_used_gpu_;
  std::vector<int64_t> cq_nominal_gpu_;
  // Per team: GPU held by running work, and asked for by pending work.
  void Integrate(int64_t now);
  std::vector<int64_t> team_allocated_, team_pending_;
  int64_t integrated_until_ = 0;
  double jain_area_ = 0;
  int64_t allocated_ = 0;
  int64_t stranded_ = 0;
  int32_t running_ = 0;
};

Status Engine::ResolveQueues() {
  // Per team name: the LocalQueue in the namespace of that name (first by name),
  // else a LocalQueue of that name, else the policy's only LocalQueue.
  std::map<std::string, int32_t> by_namespace, by_name;
  std::map<std::pair<std::string, std::string>, int32_t> by_key;
  for (size_t i = 0; i < snap_.local_queues.size(); ++i) {
    const LocalQueue& lq = snap_.local_queues[i];
    by_key.emplace(std::pair{lq.namespace_name, lq.name}, static_cast<int32_t>(i));
    auto it = by_namespace.find(lq.namespace_name);
    if (it == by_namespace.end() || lq.name < snap_.local_queues[it->second].name) {
      by_namespace[lq.namespace_name] = static_cast<int32_t>(i);
    }
    by_name.emplace(lq.name, static_cast<int32_t>(i));
  }
  std::map<std::string, int32_t> team_index;
  std::map<std::string, int64_t> left_out;
  jobs_.resize(trace_.size());
  record_of_.assign(trace_.size(), -1);
  for (size_t j = 0; j < trace_.size(); ++j) {
    const std::string team = QueueNameForTeam(trace_[j].team);
    int32_t lq = -1;
    // Its named queue when the policy has it, else the team's.
    if (auto named = by_key.find({team, trace_[j].queue}); !trace_[j].queue.empty() && named != by_key.end()) {
      lq = named->second;
    } else if (auto it = by_namespace.find(team); it != by_namespace.end()) {
      lq = it->second;
    } else if (auto it2 = by_name.find(team); it2 != by_name.end()) {
      lq = it2->second;
    } else if (snap_.local_queues.size() == 1) {
      lq = 0;
    }
    if (lq < 0 || !snap_.local_queues[lq].cluster_queue.valid()) {
      ++left_out[team];
      continue;
    }
    auto [it, inserted] = team_index.emplace(team, static_cast<int32_t>(result_.teams.size()));
    if (inserted) {
      result_.teams.push_back(team);
      result_.team_nominal_gpu_milli.push_back(cq_nominal_gpu_[snap_.local_queues[lq].cluster_queue.value()]);
    }
    Job& job = jobs_[j];
    job.local_queue = LocalQueueId(lq);
    job.cq = snap_.local_queues[lq].cluster_queue.value();
    for (size_t n = 0; n < snap_.namespaces.size(); ++n) {
      if (snap_.namespaces[n].name == snap_.local_queues[lq].namespace_name) job.ns = NamespaceId(static_cast<int32_t>(n));
    }
    job.remaining_ms = trace_[j].duration_s * 1000;
    record_of_[j] = static_cast<int32_t>(result_.jobs.size());
    JobRecord r;
    r.trace_index = static_cast<int32_t>(j);
    r.team = it->second;
    r.submit_s = trace_[j].submit_s;
    r.gpu_milli = trace_[j].TotalGpuMilli();
    r.duration_s = trace_[j].duration_s;
    result_.jobs.push_back(r);
  }
  std::map<std::string, int64_t> unknown_classes;
  for (size_t j = 0; j < trace_.size(); ++j) {
    const std::string& pc = trace_[j].priority_class;
    if (record_of_[j] >= 0 && !pc.empty() && cluster_.FindPriorityClass(pc) == nullptr) ++unknown_classes[pc];
  }
  for (const auto& [name, count] : unknown_classes) {
    result_.warnings.push_back(fmt::format(
        "{} jobs name priority class \"{}\", which the policy does not define: they run at priority 0", count,
        name));
  }
  for (const auto& [team, count] : left_out) {
    result_.jobs_left_out += count;
    result_.warnings.push_back(fmt::format(
        "{} jobs of team \"{}\" left out: no LocalQueue in namespace {} or named {} in the policy", count, team,
        team, team));
  }
  return Status::Ok();
}

Workload Engine::MakeWorkload(int32_t j) const {
  const TraceJob& t = trace_[j];
  const Job& job = jobs_[j];
  const LocalQueue& lq = snap_.local_queues[job.local_queue.value()];
  Workload w;
  w.namespace_name = lq.namespace_name;
  w.name = t.name;
  w.ns = job.ns;
  w.local_queue = job.local_queue;
  w.local_queue_name = lq.name;
  const PriorityClass* pc =
      t.priority_class.empty() ? cluster_.DefaultPriorityClass() : cluster_.FindPriorityClass(t.priority_class);
  if (pc != nullptr) {
    w.priority_class = pc->name;
    w.priority = pc->value;
    w.preemption_policy = pc->preemption_policy;
    w.non_preemptible = pc->non_preemptible;
  }
  // SJF: within a priority the core orders by creation time, so the run time
  // stands in for it (the oracle's order; ties by position, i.e. submission).
  w.creation_time = policy_.order == JobOrder::kSjf ? Timestamp::FromSeconds(t.duration_s)
                                                    : Timestamp::FromSeconds(t.submit_s);
  PodSet ps;
  ps.count = t.pods;
  ps.requests.set(ResourceKind::kGpu, t.gpu_milli);
  ps.requests.set(ResourceKind::kCpu, t.cpu_milli);
  ps.requests.set(ResourceKind::kMemory, t.memory_bytes);
  ps.requests.set(ResourceKind::kPods, 1);
  ps.limits = ps.requests;
  if (t.gpu_models.size() == 1) {
    ps.node_selector.Set(std::string(kGpuProductLabel), t.gpu_models[0]);
  } else if (t.gpu_models.size() > 1) {
    ps.node_selector.Set(model_set_label_.at(t.gpu_models), "true");
  }
  w.pod_sets.push_back(std::move(ps));
  return w;
}

void Engine::AddPending(int32_t j) {
  jobs_[j].state = JobState::kPending;
  ++pending_alive_;
  if (!jobs_[j].listed) {
    jobs_[j].listed = true;
    pending_.push_back(j);
  }
}

void Engine::CompactPending() {
  if (pending_.size() < 64 || static_cast<int64_t>(pending_.size()) < 2 * pending_alive_) return;
  std::erase_if(pending_, [&](int32_t j) {
    if (jobs_[j].state == JobState::kPending) return false;
    jobs_[j].listed = false;
    return true;
  });
}

void Engine::Arrive(int32_t j) {
  team_pending_[result_.jobs[record_of_[j]].team] += trace_[j].TotalGpuMilli();
  held_[j] = MakeWorkload(j);
  if (options_.runtime_limits) held_[j].max_run = Duration::Millis(jobs_[j].remaining_ms);
  AddPending(j);
  arrivals_.push_back(j);
}

std::vector<int32_t> Engine::SelectPending(bool full) const {
  std::vector<int32_t> out;
  if (full) {
    for (int32_t j : pending_) {
      const Job& job = jobs_[j];
      if (job.state != JobState::kPending) continue;
      // A refusal by quota stands while its quota group is unchanged (StrictFIFO
      // heads are kept: leaving one out would let the work behind it pass).
      if (job.quota_blocked && job.quota_epoch == quota_epoch_[QuotaGroup(job.cq)] &&
          snap_.cluster_queues[job.cq].queueing_strategy != QueueingStrategy::kStrictFIFO) {
        continue;
      }
      out.push_back(j);
    }
    return out;
  }
  // Only arrivals since the last cycle: the rest was refused on a state that has
  // only filled since, unless it could now preempt one of the new jobs.
  out = arrivals_;
  for (int32_t j : reserved_) {
    if (jobs_[j].state == JobState::kPending) out.push_back(j);
  }
  if (policy_.config.enable_preemption && !arrivals_.empty()) {
    int32_t lowest = std::numeric_limits<int32_t>::max();
    for (int32_t j : arrivals_) lowest = std::min(lowest, held_[j].priority);
    for (int32_t j : pending_) {
      if (jobs_[j].state != JobState::kPending) continue;
      const ClusterQueue& cq = snap_.cluster_queues[jobs_[j].cq];
      const bool may_reclaim = cq.preemption.reclaim_within_cohort != ReclaimWithinCohortPolicy::kNever &&
                               cq_used_gpu_[jobs_[j].cq] < cq_nominal_gpu_[jobs_[j].cq];
      if (held_[j].priority > lowest || may_reclaim) out.push_back(j);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int32_t Engine::QuotaGroup(int32_t cq) const {
  const ClusterQueue& q = snap_.cluster_queues[cq];
  if (policy_.config.enable_borrowing && q.cohort.valid()) {
    return static_cast<int32_t>(snap_.cluster_queues.size()) + q.cohort.value();
  }
  return cq;
}

void Engine::ChangeDevices(const Admission& admission, int sign) {
  for (const PodSetAssignment& psa : admission.pod_sets) {
    for (const PodPlacement& pod : psa.pods) {
      for (const DeviceShare& d : pod.gpus) {
        int64_t& used = device_used_[device_base_[pod.node.value()] + d.device];
        auto stranded = [](int64_t u) { return u > 0 && u < 1000 ? 1000 - u : 0; };
        stranded_ -= stranded(used);
        used += sign * d.milli;
        allocated_ += sign * d.milli;
        stranded_ += stranded(used);
      }
    }
  }
}

int64_t HeldMilli(const Admission& admission) {
  int64_t milli = 0;
  for (const PodSetAssignment& psa : admission.pod_sets) {
    for (const PodPlacement& pod : psa.pods) {
      for (const DeviceShare& d : pod.gpus) milli += d.milli;
    }
  }
  return milli;
}

void Engine::Admit(int32_t j, const Admission& admission, int64_t now) {
  Job& job = jobs_[j];
  JobRecord& r = result_.jobs[record_of_[j]];
  Workload& w = snap_.workloads[job.slot];
  w.admission = admission;
  w.start_time = Timestamp::FromMillis(now);
  w.last_checkpoint.reset();
  w.evicting = false;
  job.state = JobState::kRunning;
  --pending_alive_;
  job.run_start_ms = now;
  if (r.first_start_s < 0) r.first_start_s = now / 1000;
  r.held_gpu_milli = HeldMilli(admission);
  ChangeDevices(admission, +1);
  cq_used_gpu_[job.cq] += r.held_gpu_milli;
  team_allocated_[r.team] += r.held_gpu_milli;
  team_pending_[r.team] -= r.gpu_milli;
  TouchQuota(job.cq);
  ++running_;
  completions_.push({now + job.remaining_ms, j, job.generation});
}

void Engine::Preempt(int32_t j, int64_t now) {
  Job& job = jobs_[j];
  JobRecord& r = result_.jobs[record_of_[j]];
  Workload& w = snap_.workloads[job.slot];
  const int64_t elapsed = now - job.run_start_ms;
  const int64_t interval = options_.checkpoint_interval.ms;
  const int64_t kept = interval > 0 ? elapsed / interval * interval : 0;
  job.remaining_ms -= kept;
  r.lost_gpu_milli_s += r.held_gpu_milli * (elapsed - kept) / 1000;
  r.run_gpu_milli_s += r.held_gpu_milli * elapsed / 1000;
  ++r.preemptions;
  ++result_.preemptions;
  ++job.generation;
  ChangeDevices(*w.admission, -1);
  cq_used_gpu_[job.cq] -= r.held_gpu_milli;
  team_allocated_[r.team] -= r.held_gpu_milli;
  team_pending_[r.team] += r.gpu_milli;
  TouchQuota(job.cq);
  --running_;
  w.admission.reset();
  if (options_.runtime_limits) w.max_run = Duration::Millis(job.remaining_ms);
  AddPending(j);
  state_freed_ = true;
}

void Engine::Complete(int32_t j, int64_t now) {
  Job& job = jobs_[j];
  JobRecord& r = result_.jobs[record_of_[j]];
  r.run_gpu_milli_s += r.held_gpu_milli * (now - job.run_start_ms) / 1000;
  r.end_s = now / 1000;
  job.state = JobState::kDone;
  ChangeDevices(*snap_.workloads[job.slot].admission, -1);
  cq_used_gpu_[job.cq] -= r.held_gpu_milli;
  team_allocated_[r.team] -= r.held_gpu_milli;
  TouchQuota(job.cq);
  --running_;
  // Between cycles the snapshot holds only running work: swap the last one in.
  const int32_t slot = job.slot;
  const int32_t last = static_cast<int32_t>(snap_.workloads.size()) - 1;
  if (slot != last) {
    snap_.workloads[slot] = std::move(snap_.workloads[last]);
    slot_job_[slot] = slot_job_[last];
    jobs_[slot_job_[slot]].slot = slot;
  }
  snap_.workloads.pop_back();
  slot_job_.pop_back();
  job.slot = -1;
  state_freed_ = true;
}

void Engine::RunCyclesAt(int64_t now) {
  for (int round = 0; round < kMaxCyclesPerInstant; ++round) {
    if (pending_alive_ == 0) return;
    std::vector<int32_t> selected = SelectPending(state_freed_ || round > 0);
    if (selected.empty()) return;
    const auto running = static_cast<int32_t>(snap_.workloads.size());
    for (int32_t j : selected) {
      jobs_[j].slot = static_cast<int32_t>(snap_.workloads.size());
      snap_.workloads.push_back(std::move(held_[j]));
      slot_job_.push_back(j);
    }
    if (policy_.config.enable_preemption && options_.checkpoint_interval.ms > 0) {
      // The core picks victims that lose the least work since their last checkpoint.
      const int64_t interval = options_.checkpoint_interval.ms;
      for (int32_t s = 0; s < running; ++s) {
        Workload& w = snap_.workloads[s];
        const int64_t elapsed = now - w.start_time.ms;
        if (elapsed >= interval) w.last_checkpoint = Timestamp::FromMillis(w.start_time.ms + elapsed / interval * interval);
      }
    }
    const Plan plan = RunCycle(snap_, policy_.config, Timestamp::FromMillis(now));
    ++result_.cycles;
    for (const AdmitDecision& a : plan.admissions) Admit(slot_job_[a.workload.value()], a.admission, now);
    // A refusal stands against this cycle's admissions (they only add usage) but
    // not against its preemptions, which release quota once the victims stop: the
    // epoch is read between the two.
    for (const PendingDecision& d : plan.pending) {
      Job& job = jobs_[slot_job_[d.workload.value()]];
      job.quota_blocked = d.reason.code == PendingCode::kClusterQueueQuota;
      job.waiting_for_victims = d.reason.code == PendingCode::kWaitingForPreemption;
      job.quota_epoch = quota_epoch_[QuotaGroup(job.cq)];
    }
    for (const PreemptDecision& p : plan.preemptions) Preempt(slot_job_[p.victim.value()], now);
    reserved_.clear();
    for (const Reservation& r : plan.reservations) reserved_.push_back(slot_job_[r.workload.value()]);
    // Keep the running work in the snapshot; everything else goes back to held_.
    int32_t out = 0;
    for (int32_t s = 0; s < static_cast<int32_t>(snap_.workloads.size()); ++s) {
      const int32_t j = slot_job_[s];
      if (jobs_[j].state == JobState::kRunning) {
        if (out != s) {
          snap_.workloads[out] = std::move(snap_.workloads[s]);
          slot_job_[out] = j;
        }
        jobs_[j].slot = out++;
      } else {
        held_[j] = std::move(snap_.workloads[s]);
        jobs_[j].slot = -1;
      }
    }
    snap_.workloads.resize(out);
    slot_job_.resize(out);
    state_freed_ = false;
    arrivals_.clear();
    if (options_.drop_unschedulable) {
      for (int32_t j : selected) {
        if (jobs_[j].state != JobState::kPending || jobs_[j].waiting_for_victims) continue;
        jobs_[j].state = JobState::kDropped;
        --pending_alive_;
        JobRecord& r = result_.jobs[record_of_[j]];
        r.dropped = true;
        team_pending_[r.team] -= r.gpu_milli;
      }
    }
    CompactPending();
    if (plan.preemptions.empty()) return;
  }
  result_.warnings.push_back(fmt::format(
      "at {} s the core was still preempting after {} cycles; the instant was cut short", now / 1000,
      kMaxCyclesPerInstant));
}

void Engine::Integrate(int64_t now) {
  const int64_t dt_ms = now - integrated_until_;
  integrated_until_ = now;
  if (dt_ms <= 0) return;
  const auto dt = static_cast<double>(dt_ms) / 1000.0;
  const size_t teams = result_.teams.size();
  bool contended = false;
  double total = 0;
  std::vector<double> weights(teams), demands(teams);
  bool any_weight = false;
  for (size_t i = 0; i < teams; ++i) {
    contended = contended || team_pending_[i] > 0;
    total += static_cast<double>(team_allocated_[i]);
    weights[i] = static_cast<double>(result_.team_nominal_gpu_milli[i]);
    any_weight = any_weight || weights[i] > 0;
    demands[i] = static_cast<double>(team_allocated_[i] + team_pending_[i]);
    result_.team_allocated_gpu_milli_s[i] += static_cast<double>(team_allocated_[i]) * dt;
  }
  if (!any_weight) std::fill(weights.begin(), weights.end(), 1.0);
  const std::vector<double> fair = WeightedMaxMinShares(total, weights, demands);
  std::vector<double> ratio;
  for (size_t i = 0; i < teams; ++i) {
    result_.team_fair_gpu_milli_s[i] += fair[i] * dt;
    if (fair[i] > 0) ratio.push_back(static_cast<double>(team_allocated_[i]) / fair[i]);
  }
  if (contended && total > 0) {
    jain_area_ += JainIndex(ratio) * dt;
    result_.contended_s += dt_ms / 1000;
  }
}

void Engine::Sample(int64_t now) {
  SimSample s{.t_s = now / 1000,
              .allocated_gpu_milli = allocated_,
              .stranded_gpu_milli = stranded_,
              .running = running_,
              .pending = static_cast<int32_t>(pending_alive_)};
  if (!result_.samples.empty()) {
    SimSample& last = result_.samples.back();
    if (last.allocated_gpu_milli == s.allocated_gpu_milli && last.stranded_gpu_milli == s.stranded_gpu_milli &&
        last.running == s.running && last.pending == s.pending) {
      return;
    }
    if (last.t_s == s.t_s) {
      last = s;
      return;
    }
  }
  result_.samples.push_back(s);
}

void Engine::LabelModelSets() {
  for (const TraceJob& t : trace_) {
    if (t.gpu_models.size() > 1 && !model_set_label_.contains(t.gpu_models)) {
      model_set_label_.emplace(t.gpu_models, fmt::format("sim.tessera.dev/gpu-models-{}", model_set_label_.size()));
    }
  }
  for (Node& n : snap_.nodes) {
    if (n.gpus.empty()) continue;
    for (const auto& [models, label] : model_set_label_) {
      if (std::find(models.begin(), models.end(), n.gpus[0].model) != models.end()) n.labels.Set(label, "true");
    }
  }
}

Status Engine::CheckTrace() const {
  for (size_t j = 0; j < trace_.size(); ++j) {
    const TraceJob& t = trace_[j];
    auto bad = [&](std::string_view what) {
      return Status::InvalidArgument(fmt::format("job \"{}\" (line {}): {}", t.name, t.line, what));
    };
    if (j > 0 && t.submit_s < trace_[j - 1].submit_s) {
      return bad("submitted before the job ahead of it; jobs must come in submission order (as ReadTrace returns them)");
    }
    if (t.duration_s < 0) return bad("negative duration");
    if (t.pods < 1) return bad("a job needs at least one pod");
    if (t.gpu_milli < 0 || (t.gpu_milli > 1000 && t.gpu_milli % 1000 != 0)) {
      return bad(fmt::format("{} milli-GPU per pod: a pod takes a fraction of one GPU or whole GPUs", t.gpu_milli));
    }
  }
  return Status::Ok();
}

Result<SimResult> Engine::Run() {
  RETURN_IF_ERROR(CheckTrace());
  LabelModelSets();
  result_.policy = policy_.name;
  result_.total_gpu_milli = cluster_.TotalGpuMilli();
  if (policy_.default_preemption) {
    for (ClusterQueue& cq : snap_.cluster_queues) {
      if (PreemptionConfigured(cq.preemption)) continue;
      cq.preemption.within_cluster_queue = WithinClusterQueuePolicy::kLowerPriority;
      cq.preemption.reclaim_within_cohort = ReclaimWithinCohortPolicy::kAny;
    }
  }
  cq_used_gpu_.assign(snap_.cluster_queues.size(), 0);
  quota_epoch_.assign(snap_.cluster_queues.size() + snap_.cohorts.size(), 0);
  cq_nominal_gpu_.assign(snap_.cluster_queues.size(), 0);
  for (size_t c = 0; c < snap_.cluster_queues.size(); ++c) {
    for (const ResourceGroup& g : snap_.cluster_queues[c].resource_groups) {
      for (const FlavorQuotas& f : g.flavors) {
        if (const ResourceQuotaSpec* q = f.Find(ResourceKind::kGpu)) cq_nominal_gpu_[c] += q->nominal;
      }
    }
  }
  for (const Node& n : snap_.nodes) {
    device_base_.push_back(static_cast<int32_t>(device_used_.size()));
    device_used_.resize(device_used_.size() + n.gpus.size(), 0);
  }
  RETURN_IF_ERROR(ResolveQueues());
  held_.resize(trace_.size());
  team_allocated_.assign(result_.teams.size(), 0);
  team_pending_.assign(result_.teams.size(), 0);
  result_.team_allocated_gpu_milli_s.assign(result_.teams.size(), 0);
  result_.team_fair_gpu_milli_s.assign(result_.teams.size(), 0);
  const int64_t horizon_ms = options_.horizon_s < 0 ? std::numeric_limits<int64_t>::max() : options_.horizon_s * 1000;
  size_t next = 0;
  auto next_arrival = [&]() -> int64_t {
    while (next < trace_.size() && record_of_[next] < 0) ++next;
    return next < trace_.size() ? trace_[next].submit_s * 1000 : std::numeric_limits<int64_t>::max();
  };
  int64_t now = 0;
  for (;;) {
    const int64_t arrival = next_arrival();
    const int64_t completion = completions_.empty() ? std::numeric_limits<int64_t>::max() : completions_.top().end_ms;
    const int64_t t = std::min(arrival, completion);
    if (t == std::numeric_limits<int64_t>::max() || t > horizon_ms) break;
    now = t;
    Integrate(now);
    while (!completions_.empty() && completions_.top().end_ms == now) {
      const Completion c = completions_.top();
      completions_.pop();
      if (jobs_[c.job].state == JobState::kRunning && jobs_[c.job].generation == c.generation) Complete(c.job, now);
    }
    while (next_arrival() == now) Arrive(static_cast<int32_t>(next++));
    RunCyclesAt(now);
    Sample(now);
  }
  result_.end_s = now / 1000;
  if (result_.contended_s > 0) result_.fairness_jain = jain_area_ / static_cast<double>(result_.contended_s);
  // Work still running at the end counts up to the end.
  for (size_t j = 0; j < jobs_.size(); ++j) {
    if (jobs_[j].state != JobState::kRunning) continue;
    JobRecord& r = result_.jobs[record_of_[j]];
    r.run_gpu_milli_s += r.held_gpu_milli * (now - jobs_[j].run_start_ms) / 1000;
  }
  return std::move(result_);
}

}  // namespace

Result<SimResult> Simulate(const SimCluster& cluster, const std::vector<TraceJob>& jobs, const SimPolicy& policy,
                           const SimOptions& options) {
  Engine engine(cluster, jobs, policy, options);
  return engine.Run();
}

Result<SimPolicy> BuiltinPolicy(std::string_view name, JobOrder order) {
  SimPolicy p;
  p.name = std::string(name);
  p.order = order;
  if (name == "static") {
    p.config.enable_borrowing = false;
    p.config.enable_gpu_sharing = false;
    p.config.enable_preemption = false;
  } else if (name == "borrowing") {
    p.config.enable_gpu_sharing = false;
    p.config.enable_preemption = false;
  } else if (name == "fractional") {
    p.config.enable_preemption = false;
  } else if (name == "preemption") {
    p.default_preemption = true;
  } else if (name != "configured") {
    return Err(Status::InvalidArgument(fmt::format(
        "unknown policy \"{}\": use static, borrowing, fractional, preemption or configured", name)));
  }
  return p;
}

}  // namespace tessera

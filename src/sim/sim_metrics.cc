#include "sim/sim_metrics.h"

#include <algorithm>
#include <numeric>

namespace tessera {
namespace {

constexpr double kMilliSecondsPerGpuHour = 1000.0 * 3600.0;  // milli-GPU x s in one GPU-hour

}  // namespace

Distribution Summarize(std::vector<int64_t> values) {
  Distribution d;
  d.count = static_cast<int64_t>(values.size());
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  auto rank = [&](int pct) {
    // Nearest rank: the smallest value with at least pct % of values at or below it.
    size_t r = (values.size() * static_cast<size_t>(pct) + 99) / 100;
    return values[std::max<size_t>(r, 1) - 1];
  };
  d.mean = static_cast<double>(std::accumulate(values.begin(), values.end(), int64_t{0})) /
           static_cast<double>(values.size());
  d.p50 = rank(50);
  d.p90 = rank(90);
  d.p99 = rank(99);
  d.max = values.back();
  return d;
}

std::vector<double> WeightedMaxMinShares(double total, const std::vector<double>& weights,
                                         const std::vector<double>& demands) {
  // Water-filling: claimants in order of demand per unit of weight; each takes
  // its demand while that is below its weighted part of what is left, and the
  // rest share what remains by weight.
  const size_t n = weights.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  auto level = [&](size_t i) { return weights[i] > 0 ? demands[i] / weights[i] : 0.0; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return level(a) < level(b); });
  std::vector<double> share(n, 0);
  double left = total;
  double weight_left = std::accumulate(weights.begin(), weights.end(), 0.0);
  for (size_t i : order) {
    if (weights[i] <= 0 || weight_left <= 0) continue;
    const double part = left * weights[i] / weight_left;
    share[i] = std::min(demands[i], part);
    left -= share[i];
    weight_left -= weights[i];
  }
  return share;
}

double JainIndex(const std::vector<double>& x) {
  if (x.empty()) return 1;
  double sum = 0, squares = 0;
  for (double v : x) {
    sum += v;
    squares += v * v;
  }
  return squares == 0 ? 1 : sum * sum / (static_cast<double>(x.size()) * squares);
}

PolicyMetrics ComputeMetrics(const SimResult& result) {
  PolicyMetrics m;
  m.policy = result.policy;
  m.left_out = result.jobs_left_out;
  m.preemptions = result.preemptions;
  m.cycles = result.cycles;
  const size_t teams = result.teams.size();
  m.teams.resize(teams);
  std::vector<std::vector<int64_t>> team_jct(teams), team_queue(teams);
  std::vector<int64_t> jct, queue;
  double lost_milli_s = 0;
  std::vector<double> received(teams, 0), demand(teams, 0);
  for (const JobRecord& j : result.jobs) {
    TeamMetrics& t = m.teams[j.team];
    ++m.jobs;
    ++t.jobs;
    t.preemptions += j.preemptions;
    received[j.team] += static_cast<double>(j.run_gpu_milli_s);
    demand[j.team] += static_cast<double>(j.gpu_milli) * static_cast<double>(j.duration_s);
    t.gpu_hours_lost += static_cast<double>(j.lost_gpu_milli_s) / kMilliSecondsPerGpuHour;
    lost_milli_s += static_cast<double>(j.lost_gpu_milli_s);
    if (j.dropped) {
      ++m.dropped;
    } else if (j.end_s < 0) {
      ++m.unfinished;
    } else {
      ++m.finished;
      ++t.finished;
      jct.push_back(j.end_s - j.submit_s);
      queue.push_back(j.first_start_s - j.submit_s);
      team_jct[j.team].push_back(j.end_s - j.submit_s);
      team_queue[j.team].push_back(j.first_start_s - j.submit_s);
      m.makespan_s = std::max(m.makespan_s, j.end_s);
    }
  }
  if (m.unfinished > 0) m.makespan_s = std::max(m.makespan_s, result.end_s);
  m.jct_s = Summarize(jct);
  m.queue_s = Summarize(queue);
  m.gpu_hours_lost = lost_milli_s / kMilliSecondsPerGpuHour;

  // Time-weighted allocation and fragmentation over [0, makespan].
  double alloc_area = 0, frag_area = 0, free_area = 0;
  for (size_t i = 0; i < result.samples.size(); ++i) {
    const SimSample& s = result.samples[i];
    if (s.t_s >= m.makespan_s) break;
    const int64_t until = i + 1 < result.samples.size() ? std::min(result.samples[i + 1].t_s, m.makespan_s)
                                                        : m.makespan_s;
    const auto dt = static_cast<double>(until - s.t_s);
    alloc_area += static_cast<double>(s.allocated_gpu_milli) * dt;
    frag_area += static_cast<double>(s.stranded_gpu_milli) * dt;
    free_area += static_cast<double>(result.total_gpu_milli - s.allocated_gpu_milli) * dt;
  }
  if (m.makespan_s > 0 && result.total_gpu_milli > 0) {
    m.allocation_pct = 100.0 * alloc_area / (static_cast<double>(result.total_gpu_milli) * static_cast<double>(m.makespan_s));
  }
  if (free_area > 0) m.fragmentation_pct = 100.0 * frag_area / free_area;

  // A result built by hand may lack the per-team integrals: they count as zero.
  auto at = [](const std::vector<double>& v, size_t i) { return i < v.size() ? v[i] : 0.0; };
  double total_allocated = 0, total_fair = 0;
  for (size_t i = 0; i < teams; ++i) {
    total_allocated += at(result.team_allocated_gpu_milli_s, i);
    total_fair += at(result.team_fair_gpu_milli_s, i);
  }
  for (size_t i = 0; i < teams; ++i) {
    TeamMetrics& t = m.teams[i];
    t.team = result.teams[i];
    t.jct_s = Summarize(std::move(team_jct[i]));
    t.queue_s = Summarize(std::move(team_queue[i]));
    t.gpu_hours_demand = demand[i] / kMilliSecondsPerGpuHour;
    t.gpu_hours_received = received[i] / kMilliSecondsPerGpuHour;
    t.nominal_gpus = static_cast<double>(result.team_nominal_gpu_milli[i]) / 1000.0;
    if (total_allocated > 0) t.share_received = at(result.team_allocated_gpu_milli_s, i) / total_allocated;
    if (total_fair > 0) t.share_deserved = at(result.team_fair_gpu_milli_s, i) / total_fair;
  }
  m.jain_index = result.fairness_jain;
  return m;
}

}  // namespace tessera

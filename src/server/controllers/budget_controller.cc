#include "server/controllers/budget_controller.h"

#include <fmt/format.h>

#include <chrono>

#include "api/convert.h"
#include "api/validation.h"
#include "common/time_format.h"
#include "domain/quantity.h"
#include "server/object_json.h"
#include "server/controllers/usage_recorder.h"
#include "server/controllers/workload_lifecycle.h"

namespace tessera {
namespace {

using nlohmann::json;
namespace chr = std::chrono;

constexpr Duration kStatusEvery = Duration::Seconds(5);

Timestamp At(chr::sys_days day) {
  return Timestamp::FromSeconds(chr::duration_cast<chr::seconds>(day.time_since_epoch()).count());
}

BudgetPeriod PeriodOf(const json& budget) {
  const std::string period = StringAt(budget, {"spec", "period"});
  if (period == "Daily") return BudgetPeriod::kDay;
  if (period == "Weekly") return BudgetPeriod::kWeek;
  return BudgetPeriod::kMonth;
}

// A decimal amount of the spec ("5000", "2.10") in thousandths; nullopt when absent.
std::optional<int64_t> Thousandths(const json& budget, const char* field) {
  auto spec = budget.find("spec");
  if (spec == budget.end() || !spec->is_object()) return std::nullopt;
  auto v = spec->find(field);
  if (v == spec->end()) return std::nullopt;
  auto text = QuantityText(*v);
  if (!text) return std::nullopt;
  auto milli = ParseMilli(*text);
  return milli ? std::optional<int64_t>(*milli) : std::nullopt;
}

std::optional<Timestamp> TimeField(const json& obj, std::initializer_list<const char*> path) {
  const std::string text = StringAt(obj, path);
  if (text.empty()) return std::nullopt;
  auto t = ParseRfc3339(text);
  return t ? std::optional<Timestamp>(*t) : std::nullopt;
}

int64_t GpuMilli(const json& record) {
  auto spec = record.find("spec");
  if (spec == record.end() || !spec->is_object()) return 0;
  auto m = spec->find("gpuMilli");
  return m != spec->end() && m->is_number_integer() ? m->get<int64_t>() : 0;
}

// Seconds of [a, b) inside [lo, hi).
int64_t Overlap(Timestamp a, Timestamp b, Timestamp lo, Timestamp hi) {
  const Timestamp from = std::max(a, lo), to = std::min(b, hi);
  return to > from ? (to - from).ms / 1000 : 0;
}

// "12.5" GPU-hours from milli-GPU-seconds (a tenth, rounded up).
std::string HoursText(int64_t milli_gpu_seconds) {
  const int64_t tenths = (milli_gpu_seconds + 359'999) / 360'000;
  return fmt::format("{}.{}", tenths / 10, tenths % 10);
}

// "4210.50" from micro-units (to the cent, rounded up).
std::string MoneyText(int64_t micro) {
  const int64_t cents = (micro + 9'999) / 10'000;
  return fmt::format("{}.{:02}", cents / 100, cents % 100);
}

}  // namespace

std::pair<Timestamp, Timestamp> BudgetPeriodAround(BudgetPeriod kind, Timestamp now) {
  const chr::sys_days today = chr::floor<chr::days>(chr::sys_time<chr::milliseconds>(chr::milliseconds(now.ms)));
  switch (kind) {
    case BudgetPeriod::kDay: return {At(today), At(today + chr::days(1))};
    case BudgetPeriod::kWeek: {
      const chr::weekday wd(today);
      const chr::sys_days monday = today - (wd - chr::Monday);
      return {At(monday), At(monday + chr::days(7))};
    }
    case BudgetPeriod::kMonth: {
      const chr::year_month_day ymd(today);
      const chr::sys_days first = chr::sys_days(ymd.year() / ymd.month() / 1);
      const chr::year_month next = chr::year_month(ymd.year(), ymd.month()) + chr::months(1);
      return {At(first), At(chr::sys_days(next / 1))};
    }
  }
  return {now, now};
}

BudgetController::BudgetController(ObjectCache& cache) {
  cache.Observe(kUsageRecordKind, [this](const std::pair<std::string, std::string>& key, const StoredObject* now) {
    auto& records = closed_[key.first];
    const std::optional<Timestamp> start = now ? TimeField(now->object, {"spec", "start"}) : std::nullopt;
    const std::optional<Timestamp> end = now ? TimeField(now->object, {"spec", "end"}) : std::nullopt;
    const bool had = records.erase(key.second) > 0;
    if (start && end) {
      records[key.second] = Closed{*start, *end, GpuMilli(now->object), StringAt(now->object, {"spec", "flavor"})};
    } else if (!had) {
      return;  // an open record: counted every pass, nothing cached changes
    }
    std::erase_if(closed_sums_, [&](const auto& e) { return std::get<0>(e.first) == key.first; });
  });
}

BudgetController::Sum BudgetController::ClosedSum(const std::string& ns, Timestamp start, Timestamp end,
                                                  const std::map<std::string, int64_t>& prices) {
  auto [it, fresh] = closed_sums_.try_emplace({ns, start.ms, end.ms});
  if (!fresh) return it->second;
  Sum& sum = it->second;
  if (auto records = closed_.find(ns); records != closed_.end()) {
    for (const auto& [name, r] : records->second) {
      const int64_t seconds = Overlap(r.start, r.end, start, end);
      if (seconds == 0) continue;
      sum.gpu_milli_seconds += r.gpu_milli * seconds;
      auto price = prices.find(r.flavor);
      sum.cost_micro += GpuCostMicro(r.gpu_milli, seconds, price == prices.end() ? 0 : price->second);
    }
  }
  return sum;
}

void BudgetController::Reconcile(const ObjectCache& cache, Timestamp now, BatchedWriter& writer) {
  budgets_.clear();
  const ObjectCache::Objects& budget_objects = cache.Of(kBudgetKind);
  if (budget_objects.empty()) return;
  std::map<std::string, int64_t> prices;
  std::string price_text;
  for (const auto& [unused, f] : cache.Of("kueue.x-k8s.io/ResourceFlavor")) {
    prices[f.key.name] = FlavorPriceMicro(f.object);
    price_text += fmt::format("{}={};", f.key.name, prices[f.key.name]);
  }
  if (const uint64_t hash = std::hash<std::string>{}(price_text); hash != prices_hash_) {
    prices_hash_ = hash;
    closed_sums_.clear();
  }
  // The namespaces with budgets: their open records (the work admitted now).
  std::map<std::string, std::vector<const StoredObject*>> open;
  for (const auto& [key, unused] : budget_objects) open[key.first];
  for (const auto& [key, record] : cache.ActiveOf(kUsageRecordKind)) {
    if (auto it = open.find(key.first); it != open.end()) it->second.push_back(record);
  }
  for (const auto& [key, b] : budget_objects) {
    const std::string& ns = key.first;
    NamespaceBudget budget{.name = key.second, .period = PeriodOf(b.object)};
    std::tie(budget.period_start, budget.period_end) = BudgetPeriodAround(budget.period, now);
    if (auto cost = Thousandths(b.object, "cost")) budget.limit_cost_micro = *cost * 1000;
    if (auto hours = Thousandths(b.object, "gpuHours")) budget.limit_gpu_milli_seconds = *hours * 3600;
    const Sum closed = ClosedSum(ns, budget.period_start, budget.period_end, prices);
    budget.used_gpu_milli_seconds = closed.gpu_milli_seconds;
    budget.used_cost_micro = closed.cost_micro;
    for (const StoredObject* r : open[ns]) {
      const std::optional<Timestamp> start = TimeField(r->object, {"spec", "start"});
      if (!start) continue;
      // So far, then what its run-time limit (or the period's end) still allows.
      const StoredObject* workload =
          cache.Find(ObjectKey{kWorkloadKind, ns, StringAt(r->object, {"spec", "workload"})});
      Timestamp until = budget.period_end;
      if (workload != nullptr) {
        const std::string max_run = StringAt(workload->object, {"metadata", "annotations", kMaxRunSecondsAnnotation.data()});
        if (!max_run.empty()) until = std::min(until, *start + Duration::Seconds(std::atoll(max_run.c_str())));
      }
      const int64_t seconds = Overlap(*start, std::max(until, now), budget.period_start, budget.period_end);
      const int64_t gpu = GpuMilli(r->object);
      auto price = prices.find(StringAt(r->object, {"spec", "flavor"}));
      budget.used_gpu_milli_seconds += gpu * seconds;
      budget.used_cost_micro += GpuCostMicro(gpu, seconds, price == prices.end() ? 0 : price->second);
    }
    budgets_[ns].push_back(budget);

    // The status people read.
    json status{{"periodStart", FormatRfc3339(budget.period_start)},
                {"periodEnd", FormatRfc3339(budget.period_end)},
                {"usedGpuHours", HoursText(budget.used_gpu_milli_seconds)},
                {"usedCost", MoneyText(budget.used_cost_micro)}};
    const bool exceeded = (budget.limit_cost_micro && budget.used_cost_micro >= *budget.limit_cost_micro) ||
                          (budget.limit_gpu_milli_seconds &&
                           budget.used_gpu_milli_seconds >= *budget.limit_gpu_milli_seconds);
    const json current = b.object.value("status", json::object());
    bool same = true;
    for (const auto& [k, v] : status.items()) same = same && current.value(k, json()) == v;
    const bool was_exceeded = ConditionTrue(b.object, "Exceeded");
    auto& written = status_written_[{ns, key.second}];
    if ((same && exceeded == was_exceeded) || (now - written < kStatusEvery && exceeded == was_exceeded)) continue;
    written = now;
    json next = b.object;
    for (const auto& [k, v] : status.items()) next["status"][k] = v;
    SetCondition(next, "Exceeded", exceeded, exceeded ? "BudgetSpent" : "WithinBudget",
                 exceeded ? fmt::format("{} has used all of its budget {} ({})", ns, key.second,
                                        BudgetPeriodText(budget.period))
                          : fmt::format("within budget {}", BudgetPeriodText(budget.period)),
                 FormatRfc3339(Timestamp::FromSeconds(now.seconds())));
    writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = b.key, .object = std::move(next), .expected_revision = b.revision},
               fmt::format("budget {}/{} status", ns, key.second));
  }
}

GaugeFamily BudgetController::Gauge() const {
  GaugeFamily g{.name = "tessera_budget_used_ratio",
                .help = "What a namespace's Budget has used this period (counting admitted work to its run-time "
                        "limit), as a fraction of its limit"};
  for (const auto& [ns, list] : budgets_) {
    for (const NamespaceBudget& b : list) {
      if (b.limit_cost_micro && *b.limit_cost_micro > 0) {
        g.samples.push_back({{{"namespace", ns}, {"budget", b.name}, {"measure", "cost"}},
                             static_cast<double>(b.used_cost_micro) / static_cast<double>(*b.limit_cost_micro)});
      }
      if (b.limit_gpu_milli_seconds && *b.limit_gpu_milli_seconds > 0) {
        g.samples.push_back({{{"namespace", ns}, {"budget", b.name}, {"measure", "gpu_hours"}},
                             static_cast<double>(b.used_gpu_milli_seconds) /
                                 static_cast<double>(*b.limit_gpu_milli_seconds)});
      }
    }
  }
  return g;
}

}  // namespace tessera

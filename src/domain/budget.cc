#include "domain/budget.h"

#include <fmt/format.h>

#include <limits>

namespace tessera {

std::string_view BudgetPeriodText(BudgetPeriod period) {
  switch (period) {
    case BudgetPeriod::kDay: return "today";
    case BudgetPeriod::kWeek: return "this week";
    case BudgetPeriod::kMonth: return "this month";
  }
  return "this period";
}

int64_t GpuCostMicro(int64_t gpu_milli, int64_t seconds, int64_t price_micro_per_gpu_hour) {
  if (gpu_milli <= 0 || seconds <= 0 || price_micro_per_gpu_hour <= 0) return 0;
  // cost = milli / 1000 GPUs x seconds / 3600 hours x price
  const __int128 numerator = static_cast<__int128>(gpu_milli) * seconds * price_micro_per_gpu_hour;
  const __int128 cost = (numerator + 3'600'000 - 1) / 3'600'000;
  return cost > std::numeric_limits<int64_t>::max() ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(cost);
}

std::string FormatMoney(int64_t micro) {
  const bool negative = micro < 0;
  const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(micro) : static_cast<uint64_t>(micro);
  const uint64_t cents = (magnitude + 9'999) / 10'000;
  // Thousands separated by commas.
  const std::string digits = std::to_string(cents / 100);
  std::string whole;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) whole += ',';
    whole += digits[i];
  }
  if (cents % 100 == 0) return fmt::format("{}${}", negative ? "-" : "", whole);
  return fmt::format("{}${}.{:02}", negative ? "-" : "", whole, cents % 100);
}

}  // namespace tessera

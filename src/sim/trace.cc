// Trace readers. Assumptions and steps:
//   1. libcsv splits the input into rows of fields (it handles quoting and CR LF).
//      The input is fed to it one physical line at a time, so that the line a row
//      starts on is known for messages; blank lines are skipped but still counted.
//   2. The first row is the header: each column the format knows is found by name.
//   3. Each data row becomes one TraceJob, or a message that says what is wrong
//      with it (a warning and the row is skipped, or the error in strict mode).
//   4. Submit times are shifted so that the earliest is 0, and jobs are stably
//      sorted by them.
// Numbers are parsed with std::from_chars (no locale); exact quantities (GPUs,
// CPUs, memory of the csv format) with integer arithmetic, never through double.
#include "sim/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <expected>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <span>
#include <utility>

#include "common/csv_rows.h"

namespace tessera {
namespace {

// A reason a row is malformed, without its "line N: " prefix.
using RowResult = std::expected<TraceJob, std::string>;

// Larger counts are refused: no trace has them, and they keep the arithmetic
// below far from overflow.
constexpr int64_t kMaxGpusPerJob = 1'000'000;
constexpr int64_t kMaxPods = std::numeric_limits<int32_t>::max();
constexpr double kMaxSeconds = 1e15;  // ~31 million years: exact in a double

// ---------------------------------------------------------------------------
// Text helpers.

// "A|B||C " -> {"A", "B", "C"}.
std::vector<std::string> SplitModels(std::string_view text) {
  std::vector<std::string> models;
  while (!text.empty()) {
    size_t bar = text.find('|');
    std::string_view model = TrimCsvField(text.substr(0, bar));
    if (!model.empty()) models.emplace_back(model);
    if (bar == std::string_view::npos) break;
    text.remove_prefix(bar + 1);
  }
  return models;
}

// A whole-string integer ("12", "-3"); "2.0" is not one (see ParseCount).
std::optional<int64_t> ParseInteger(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

// A whole-string finite decimal ("66.0", "-1.5", "4.63e6").
std::optional<double> ParseDouble(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::string NotANumber(std::string_view column, std::string_view text) {
  if (text.empty()) return fmt::format("{}: empty, expected a number", column);
  return fmt::format("{}: \"{}\" is not a number", column, text);
}

// Seconds, decimal allowed, rounded to the nearest second (halves away from 0).
std::expected<int64_t, std::string> ParseSeconds(std::string_view column, std::string_view text) {
  std::optional<double> value = ParseDouble(text);
  if (!value) return std::unexpected(NotANumber(column, text));
  if (std::fabs(*value) > kMaxSeconds) {
    return std::unexpected(fmt::format("{}: \"{}\" is too large", column, text));
  }
  return std::llround(*value);
}

// A non-negative duration in seconds.
std::expected<int64_t, std::string> ParseDuration(std::string_view column, std::string_view text) {
  auto seconds = ParseSeconds(column, text);
  if (seconds && *seconds < 0) {
    return std::unexpected(fmt::format("{}: \"{}\" is negative", column, text));
  }
  return seconds;
}

// A whole count between `min` and `max`, written "3" or "3.0" (PAI writes inst_num
// as a float).
std::expected<int64_t, std::string> ParseCount(std::string_view column, std::string_view text,
                                               int64_t min, int64_t max) {
  std::optional<int64_t> value = ParseInteger(text);
  if (!value) {
    std::optional<double> d = ParseDouble(text);
    if (!d) return std::unexpected(NotANumber(column, text));
    if (*d != std::trunc(*d)) {
      return std::unexpected(fmt::format("{}: \"{}\" is not a whole number", column, text));
    }
    // Clamped into [min - 1, max + 1] so that the checks below report it.
    value = *d < static_cast<double>(min) ? min - 1
            : *d > static_cast<double>(max) ? max + 1
                                            : static_cast<int64_t>(*d);
  }
  if (*value < min) {
    return std::unexpected(fmt::format("{}: \"{}\" must be at least {}", column, text, min));
  }
  if (*value > max) {
    return std::unexpected(fmt::format("{}: \"{}\" is too large (at most {})", column, text, max));
  }
  return *value;
}

// An exact non-negative decimal times `multiplier`, divided by 10^fraction digits:
// "0.25" x 1000 = 250. `round_up` rounds a remainder up (bytes, as Kubernetes
// does); otherwise a remainder is an error ("0.0001" GPUs is not 0).
enum class Inexact { kError, kRoundUp };
std::expected<int64_t, std::string> ParseExact(std::string_view column, std::string_view text,
                                               std::string_view number, int64_t multiplier,
                                               Inexact inexact, std::string_view unit) {
  if (!number.empty() && number.front() == '-') {
    return std::unexpected(fmt::format("{}: \"{}\" is negative", column, text));
  }
  if (!number.empty() && number.front() == '+') number.remove_prefix(1);
  __int128 mantissa = 0;
  __int128 divisor = 1;
  bool digits = false;
  bool point = false;
  for (char c : number) {
    if (c == '.' && !point) {
      point = true;
    } else if (c >= '0' && c <= '9') {
      digits = true;
      if (mantissa >= (__int128{1} << 60) || divisor >= (__int128{1} << 60)) {  // x multiplier (< 2^61) fits in 128 bits
        return std::unexpected(fmt::format("{}: \"{}\" has too many digits", column, text));
      }
      mantissa = mantissa * 10 + (c - '0');
      if (point) divisor *= 10;
    } else {
      return std::unexpected(NotANumber(column, text));
    }
  }
  if (!digits) return std::unexpected(NotANumber(column, text));
  __int128 scaled = mantissa * multiplier;
  __int128 value = scaled / divisor;
  if (scaled % divisor != 0) {
    if (inexact == Inexact::kError) {
      return std::unexpected(fmt::format("{}: \"{}\" is finer than 1 {}", column, text, unit));
    }
    ++value;
  }
  if (value > std::numeric_limits<int64_t>::max()) {
    return std::unexpected(fmt::format("{}: \"{}\" is too large", column, text));
  }
  return static_cast<int64_t>(value);
}

// CPU cores as milli-cores: "2" -> 2000, "0.5" -> 500, "500m" -> 500.
std::expected<int64_t, std::string> ParseCpuMilli(std::string_view column, std::string_view text) {
  if (text.ends_with('m')) {
    return ParseExact(column, text, text.substr(0, text.size() - 1), 1, Inexact::kError, "millicore");
  }
  return ParseExact(column, text, text, 1000, Inexact::kError, "millicore");
}

// Bytes: plain ("1048576") or with a Kubernetes suffix ("16Gi", "1.5G", "512Ki");
// a fraction of a byte rounds up.
std::expected<int64_t, std::string> ParseBytes(std::string_view column, std::string_view text) {
  struct Suffix {
    std::string_view text;
    int64_t multiplier;
  };
  static constexpr std::array<Suffix, 12> kSuffixes = {{
      {"Ki", int64_t{1} << 10}, {"Mi", int64_t{1} << 20}, {"Gi", int64_t{1} << 30},
      {"Ti", int64_t{1} << 40}, {"Pi", int64_t{1} << 50}, {"Ei", int64_t{1} << 60},
      {"k", 1'000}, {"M", 1'000'000}, {"G", 1'000'000'000}, {"T", 1'000'000'000'000},
      {"P", 1'000'000'000'000'000}, {"E", 1'000'000'000'000'000'000},
  }};
  for (const Suffix& suffix : kSuffixes) {
    if (text.ends_with(suffix.text)) {
      return ParseExact(column, text, text.substr(0, text.size() - suffix.text.size()),
                        suffix.multiplier, Inexact::kRoundUp, "byte");
    }
  }
  if (!text.empty() && ((text.back() >= 'a' && text.back() <= 'z') || (text.back() >= 'A' && text.back() <= 'Z'))) {
    return std::unexpected(fmt::format(
        "{}: \"{}\" has an unknown unit (use bytes or a suffix Ki, Mi, Gi, Ti, k, M, G, T)", column, text));
  }
  return ParseExact(column, text, text, 1, Inexact::kRoundUp, "byte");
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;                                    // [0, 399]
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;  // [0, 365]
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;           // [0, 146096]
  return era * 146097 + doe - 719468;
}

// "2017-10-09 07:01:55" (UTC; 'T' also accepted between date and time) as Unix seconds.
std::expected<int64_t, std::string> ParsePhillyTimestamp(std::string_view column, std::string_view text) {
  auto bad = [&] {
    return std::unexpected(
        fmt::format("{}: \"{}\" is not a time like \"2017-10-09 07:01:55\"", column, text));
  };
  if (text.size() != 19 || text[4] != '-' || text[7] != '-' || (text[10] != ' ' && text[10] != 'T') ||
      text[13] != ':' || text[16] != ':') {
    return bad();
  }
  auto number = [&](size_t pos, size_t len) -> int64_t {
    int64_t v = 0;
    for (size_t i = pos; i < pos + len; ++i) {
      if (text[i] < '0' || text[i] > '9') return -1;
      v = v * 10 + (text[i] - '0');
    }
    return v;
  };
  const int64_t year = number(0, 4), month = number(5, 2), day = number(8, 2);
  const int64_t hour = number(11, 2), minute = number(14, 2), second = number(17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 ||
      minute > 59 || second < 0 || second > 59) {
    return bad();
  }
  static constexpr std::array<int, 12> kDaysInMonth = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (day > kDaysInMonth[month - 1] + (month == 2 && leap ? 1 : 0)) return bad();
  return DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
}

// A job asking for more whole GPUs per pod than `max` becomes a gang: pods of d
// GPUs, d the largest divisor of the count with d <= max (16 -> 2 x 8, 12 -> 2 x 6,
// a prime 13 -> 13 x 1), so that the gang's total stays the count asked for.
std::optional<std::string> SplitGang(TraceJob& job, int32_t max) {
  if (job.gpu_milli < 1000) return std::nullopt;
  const int64_t gpus = job.gpu_milli / 1000;
  if (gpus <= max) return std::nullopt;
  int64_t d = max;
  while (gpus % d != 0) --d;
  const int64_t pods = static_cast<int64_t>(job.pods) * (gpus / d);
  if (pods > kMaxPods) return fmt::format("a gang of {} pods is too large", pods);
  job.pods = static_cast<int32_t>(pods);
  job.gpu_milli = d * 1000;
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Columns of each format. The first `required` names are required.

struct FormatSpec {
  std::span<const std::string_view> columns;
  size_t required;
};

enum PhillyColumn { kPhTimestamp, kPhDuration, kPhNumGpus, kPhCluster };
constexpr std::string_view kPhillyColumns[] = {"timestamp", "duration", "num_gpus", "cluster"};

enum OpenbColumn {
  kObName, kObCpuMilli, kObMemoryMib, kObNumGpu, kObGpuMilli,  // required
  kObGpuSpec, kObQos, kObCreationTime, kObDeletionTime, kObScheduledTime,
};
constexpr std::string_view kOpenbColumns[] = {
    "name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli",
    "gpu_spec", "qos", "creation_time", "deletion_time", "scheduled_time"};

enum PaiColumn {
  kPaiJobName, kPaiTaskName, kPaiInstNum, kPaiStartTime, kPaiEndTime,
  kPaiPlanCpu, kPaiPlanMem, kPaiPlanGpu, kPaiGpuType,  // required
  kPaiUser,
};
constexpr std::string_view kPaiColumns[] = {
    "job_name", "task_name", "inst_num", "start_time", "end_time",
    "plan_cpu", "plan_mem", "plan_gpu", "gpu_type", "user"};

enum CsvColumn {
  kCsvSubmitTime, kCsvDuration,  // required
  kCsvName, kCsvGpus, kCsvPods, kCsvTeam, kCsvUser, kCsvPriorityClass, kCsvCpu, kCsvMemory,
  kCsvGpuModel, kCsvQueue,
};
constexpr std::string_view kCsvColumns[] = {
    "submit_time", "duration", "name", "gpus", "pods", "team", "user",
    "priority_class", "cpu", "memory", "gpu_model", "queue"};

FormatSpec SpecOf(TraceFormat format) {
  switch (format) {
    case TraceFormat::kPhilly: return {kPhillyColumns, 4};
    case TraceFormat::kOpenb: return {kOpenbColumns, 5};
    case TraceFormat::kAlibabaPai: return {kPaiColumns, 9};
    case TraceFormat::kCsv: return {kCsvColumns, 2};
  }
  return {kCsvColumns, 2};
}

// One data row, its fields looked up by the format's column number.
class Row {
 public:
  Row(std::span<const std::string_view> fields, std::span<const int> index)
      : fields_(fields), index_(index) {}
  // "" when the header has no such column.
  std::string_view operator[](int column) const {
    const int i = index_[column];
    return i < 0 ? std::string_view() : fields_[i];
  }
  bool Has(int column) const { return index_[column] >= 0; }

 private:
  std::span<const std::string_view> fields_;
  std::span<const int> index_;
};

// Assigns `lhs` the value of an expected<T, std::string>, or returns its message.
#define TRACE_ASSIGN(lhs, expr)                                   \
  do {                                                            \
    auto trace_value_ = (expr);                                   \
    if (!trace_value_) return std::unexpected(std::move(trace_value_).error()); \
    lhs = *trace_value_;                                          \
  } while (0)

RowResult ParsePhilly(const Row& row, int64_t line) {
  TraceJob job;
  job.name = fmt::format("philly-{}", line);
  job.team = std::string(row[kPhCluster]);
  TRACE_ASSIGN(job.submit_s, ParsePhillyTimestamp("timestamp", row[kPhTimestamp]));
  TRACE_ASSIGN(job.duration_s, ParseDuration("duration", row[kPhDuration]));
  int64_t gpus = 0;
  TRACE_ASSIGN(gpus, ParseCount("num_gpus", row[kPhNumGpus], 0, kMaxGpusPerJob));
  job.gpu_milli = gpus * 1000;  // 0: a CPU-only job
  return job;
}

RowResult ParseOpenb(const Row& row, int64_t line) {
  TraceJob job;
  job.name = row[kObName].empty() ? fmt::format("job-{}", line) : std::string(row[kObName]);
  job.priority_class = std::string(row[kObQos]);
  job.gpu_models = SplitModels(row[kObGpuSpec]);
  TRACE_ASSIGN(job.cpu_milli, ParseCount("cpu_milli", row[kObCpuMilli], 0, int64_t{1} << 40));
  int64_t mib = 0;
  TRACE_ASSIGN(mib, ParseCount("memory_mib", row[kObMemoryMib], 0, int64_t{1} << 40));
  job.memory_bytes = mib << 20;
  int64_t num_gpu = 0;
  int64_t share = 0;  // per GPU, in 1/1000
  TRACE_ASSIGN(num_gpu, ParseCount("num_gpu", row[kObNumGpu], 0, kMaxGpusPerJob));
  TRACE_ASSIGN(share, ParseCount("gpu_milli", row[kObGpuMilli], 0, 1000));
  if (num_gpu == 0) {
    job.gpu_milli = 0;
  } else if (share == 1000) {
    job.gpu_milli = num_gpu * 1000;
  } else if (share == 0) {
    return std::unexpected(fmt::format("gpu_milli: \"{}\" with num_gpu {} (a GPU pod needs 1..1000)",
                                       row[kObGpuMilli], num_gpu));
  } else if (num_gpu > 1) {
    return std::unexpected(fmt::format(
        "gpu_milli: \"{}\" with num_gpu {} (a share below 1000 needs num_gpu 1)", row[kObGpuMilli], num_gpu));
  } else {
    job.gpu_milli = share;  // a fraction of one GPU
  }

  // Times: submit = creation; lifetime = deletion - scheduled, or deletion -
  // creation for a pod never scheduled; 0 when the file has no times.
  std::string_view creation = row[kObCreationTime];
  std::string_view deletion = row[kObDeletionTime];
  std::string_view scheduled = row[kObScheduledTime];
  int64_t created = 0;
  if (!creation.empty()) TRACE_ASSIGN(created, ParseSeconds("creation_time", creation));
  job.submit_s = created;
  if (!deletion.empty()) {
    int64_t deleted = 0;
    TRACE_ASSIGN(deleted, ParseSeconds("deletion_time", deletion));
    int64_t start = created;
    int start_column = kObCreationTime;
    if (!scheduled.empty()) {
      TRACE_ASSIGN(start, ParseSeconds("scheduled_time", scheduled));
      start_column = kObScheduledTime;
    } else if (creation.empty()) {
      return std::unexpected(std::string("deletion_time without creation_time or scheduled_time"));
    }
    if (deleted < start) {
      return std::unexpected(fmt::format("deletion_time \"{}\" is before {} \"{}\"", deletion,
                                         kOpenbColumns[start_column], row[start_column]));
    }
    job.duration_s = deleted - start;
  }
  return job;
}

RowResult ParsePai(const Row& row, int64_t /*line*/) {
  TraceJob job;
  job.name = fmt::format("{}/{}", row[kPaiJobName], row[kPaiTaskName]);
  job.user = std::string(row[kPaiUser]);
  int64_t pods = 0;
  TRACE_ASSIGN(pods, ParseCount("inst_num", row[kPaiInstNum], 1, kMaxPods));
  job.pods = static_cast<int32_t>(pods);
  std::string_view start = row[kPaiStartTime];
  std::string_view end = row[kPaiEndTime];
  if (start.empty()) return std::unexpected(std::string("start_time: empty (the task never started)"));
  if (end.empty()) return std::unexpected(std::string("end_time: empty (the task never ended)"));
  int64_t start_s = 0, end_s = 0;
  TRACE_ASSIGN(start_s, ParseSeconds("start_time", start));
  TRACE_ASSIGN(end_s, ParseSeconds("end_time", end));
  if (end_s < start_s) {
    return std::unexpected(fmt::format("end_time \"{}\" is before start_time \"{}\"", end, start));
  }
  job.submit_s = start_s;
  job.duration_s = end_s - start_s;

  // Percent of a core / of a GPU: x 10 gives milli. Empty = none asked.
  auto percent_milli = [&](int column, std::string_view name) -> std::expected<int64_t, std::string> {
    std::string_view text = row[column];
    if (text.empty()) return 0;
    std::optional<double> value = ParseDouble(text);
    if (!value) return std::unexpected(NotANumber(name, text));
    if (*value < 0) return std::unexpected(fmt::format("{}: \"{}\" is negative", name, text));
    if (*value > static_cast<double>(kMaxGpusPerJob) * 100) {
      return std::unexpected(fmt::format("{}: \"{}\" is too large", name, text));
    }
    return std::llround(*value * 10);
  };
  TRACE_ASSIGN(job.cpu_milli, percent_milli(kPaiPlanCpu, "plan_cpu"));
  TRACE_ASSIGN(job.gpu_milli, percent_milli(kPaiPlanGpu, "plan_gpu"));
  // More than one GPU but not whole (150 %): a pod gets a fraction of one GPU or
  // whole GPUs, so round up to whole GPUs.
  if (job.gpu_milli > 1000) job.gpu_milli = (job.gpu_milli + 999) / 1000 * 1000;

  // plan_mem in GB, taken as GiB (2^30 bytes: the trace's values are like 29.296875 = 30000 MiB).
  if (std::string_view mem = row[kPaiPlanMem]; !mem.empty()) {
    std::optional<double> gb = ParseDouble(mem);
    if (!gb) return std::unexpected(NotANumber("plan_mem", mem));
    if (*gb < 0) return std::unexpected(fmt::format("plan_mem: \"{}\" is negative", mem));
    if (*gb > 1e9) return std::unexpected(fmt::format("plan_mem: \"{}\" is too large", mem));
    job.memory_bytes = static_cast<int64_t>(std::ceil(*gb * static_cast<double>(int64_t{1} << 30)));
  }
  std::string_view type = TrimCsvField(row[kPaiGpuType]);
  if (!type.empty() && type != "MISC") job.gpu_models.emplace_back(type);
  return job;
}

RowResult ParseCsv(const Row& row, int64_t line) {
  TraceJob job;
  job.name = row[kCsvName].empty() ? fmt::format("job-{}", line) : std::string(row[kCsvName]);
  job.team = std::string(row[kCsvTeam]);
  job.queue = std::string(row[kCsvQueue]);
  job.user = std::string(row[kCsvUser]);
  job.priority_class = std::string(row[kCsvPriorityClass]);
  job.gpu_models = SplitModels(row[kCsvGpuModel]);
  TRACE_ASSIGN(job.submit_s, ParseSeconds("submit_time", row[kCsvSubmitTime]));
  TRACE_ASSIGN(job.duration_s, ParseDuration("duration", row[kCsvDuration]));
  if (std::string_view pods = row[kCsvPods]; !pods.empty()) {
    int64_t n = 0;
    TRACE_ASSIGN(n, ParseCount("pods", pods, 1, kMaxPods));
    job.pods = static_cast<int32_t>(n);
  }
  if (std::string_view gpus = row[kCsvGpus]; !gpus.empty()) {
    TRACE_ASSIGN(job.gpu_milli, ParseExact("gpus", gpus, gpus, 1000, Inexact::kError, "milli-GPU"));
    if (job.gpu_milli > kMaxGpusPerJob * 1000) {
      return std::unexpected(fmt::format("gpus: \"{}\" is too large", gpus));
    }
    if (job.gpu_milli > 1000 && job.gpu_milli % 1000 != 0) {
      return std::unexpected(fmt::format(
          "gpus: \"{}\" is more than one GPU but not a whole number (a pod takes a fraction of one GPU or "
          "whole GPUs)", gpus));
    }
    if (job.gpu_milli > 0 && job.gpu_milli < 1000 && job.pods > 1) {
      return std::unexpected(fmt::format(
          "gpus: \"{}\" is a fraction of a GPU in a gang of {} pods (a gang's pods take whole GPUs)", gpus,
          job.pods));
    }
  }
  if (std::string_view cpu = row[kCsvCpu]; !cpu.empty()) TRACE_ASSIGN(job.cpu_milli, ParseCpuMilli("cpu", cpu));
  if (std::string_view memory = row[kCsvMemory]; !memory.empty()) {
    TRACE_ASSIGN(job.memory_bytes, ParseBytes("memory", memory));
  }
  return job;
}

#undef TRACE_ASSIGN

// ---------------------------------------------------------------------------
// The reader: each row (csv_rows.h) becomes a job, or a message, at once.

class TraceReader {
 public:
  explicit TraceReader(const TraceReadOptions& options) : options_(options), spec_(SpecOf(options.format)) {}

  Result<TraceRead> Read(std::istream& in) {
    // The whole input at once: its line count sizes the job vector, so that the
    // jobs are not moved again and again as it grows.
    std::string text;
    if (const std::streampos here = in.tellg(); here != std::streampos(-1)) {
      in.seekg(0, std::ios::end);
      const std::streampos end = in.tellg();
      in.clear();  // a stream that cannot seek is still read below
      in.seekg(here);
      if (end != std::streampos(-1) && end > here) text.reserve(static_cast<size_t>(end - here));
    }
    char chunk[1 << 16];
    while (in) {
      in.read(chunk, sizeof chunk);
      text.append(chunk, static_cast<size_t>(in.gcount()));
    }
    if (in.bad()) return Err(Status::IoError("reading the trace failed"));
    read_.jobs.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')));

    RETURN_IF_ERROR(ForEachCsvRow(
        text, [&](CsvFields header) { return HandleHeader(header); },
        [&](int64_t line, CsvFields fields) { return HandleRow(line, fields); }));
    Normalise();
    return std::move(read_);
  }

 private:
  Status HandleRow(int64_t line, CsvFields fields) {
    ++read_.rows;
    RowResult job = fields.size() != header_size_
                        ? std::unexpected(fmt::format("{} field{} where the header has {}", fields.size(),
                                                      fields.size() == 1 ? "" : "s", header_size_))
                        : ParseRow(Row(fields, index_), line);
    if (job) {
      if (auto problem = SplitGang(*job, options_.max_gpus_per_pod)) job = std::unexpected(std::move(*problem));
    }
    if (job) {
      job->line = line;
      read_.jobs.push_back(std::move(*job));
    } else if (options_.strict) {
      return Status::InvalidArgument(fmt::format("line {}: {}", line, job.error()));
    } else {
      read_.warnings.push_back(fmt::format("line {}: {}; row skipped", line, job.error()));
    }
    return Status::Ok();
  }

  RowResult ParseRow(const Row& row, int64_t line) const {
    switch (options_.format) {
      case TraceFormat::kPhilly: return ParsePhilly(row, line);
      case TraceFormat::kOpenb: return ParseOpenb(row, line);
      case TraceFormat::kAlibabaPai: return ParsePai(row, line);
      case TraceFormat::kCsv: return ParseCsv(row, line);
    }
    return std::unexpected(std::string("unknown trace format"));
  }

  Status HandleHeader(CsvFields header) {
    header_size_ = header.size();
    std::vector<std::string_view> names(header.begin(), header.end());
    if (!names.empty() && names[0].starts_with("\xEF\xBB\xBF")) names[0].remove_prefix(3);  // BOM
    index_.assign(spec_.columns.size(), -1);
    for (size_t c = 0; c < spec_.columns.size(); ++c) {
      if (auto i = FindCsvColumn(names, spec_.columns[c])) index_[c] = static_cast<int>(*i);
    }
    for (size_t c = 0; c < spec_.required; ++c) {
      if (index_[c] >= 0) continue;
      std::string needed;
      for (size_t r = 0; r < spec_.required; ++r) {
        if (r > 0) needed += ',';
        needed += spec_.columns[r];
      }
      return Status::InvalidArgument(fmt::format("missing column \"{}\" (the {} format needs {})",
                                                 spec_.columns[c], TraceFormatName(options_.format), needed));
    }
    return Status::Ok();
  }

  // The earliest job at 0; stable sort by submit time (ties keep file order).
  void Normalise() {
    std::vector<TraceJob>& jobs = read_.jobs;
    if (jobs.empty()) return;
    int64_t earliest = jobs.front().submit_s;
    bool sorted = true;
    for (size_t i = 0; i < jobs.size(); ++i) {
      earliest = std::min(earliest, jobs[i].submit_s);
      if (i > 0 && jobs[i].submit_s < jobs[i - 1].submit_s) sorted = false;
    }
    for (TraceJob& job : jobs) job.submit_s -= earliest;
    // Philly's times are wall-clock seconds since the epoch; the others are relative.
    if (options_.format == TraceFormat::kPhilly) read_.origin_unix_ms = earliest * 1000;
    if (sorted) return;
    // Sort positions, not jobs (a job is ~200 bytes), then move each job once
    // into place by following the permutation's cycles.
    std::vector<uint32_t> order(jobs.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return jobs[a].submit_s < jobs[b].submit_s; });
    // order[k] = the job that belongs at k; a placed position gets order[k] = k.
    for (uint32_t start = 0; start < order.size(); ++start) {
      if (order[start] == start) continue;
      TraceJob held = std::move(jobs[start]);
      uint32_t k = start;
      while (order[k] != start) {
        const uint32_t from = order[k];
        jobs[k] = std::move(jobs[from]);
        order[k] = k;
        k = from;
      }
      jobs[k] = std::move(held);
      order[k] = k;
    }
  }

  const TraceReadOptions& options_;
  const FormatSpec spec_;
  TraceRead read_;
  size_t header_size_ = 0;
  std::vector<int> index_;  // column of the format -> field of the row, -1 when absent
};

}  // namespace

Result<TraceFormat> ParseTraceFormat(std::string_view name) {
  for (TraceFormat format : {TraceFormat::kPhilly, TraceFormat::kOpenb, TraceFormat::kAlibabaPai, TraceFormat::kCsv}) {
    if (name == TraceFormatName(format)) return format;
  }
  return Err(Status::InvalidArgument(
      fmt::format("unknown trace format \"{}\" (valid: philly, openb, alibaba-pai, csv)", name)));
}

std::string_view TraceFormatName(TraceFormat format) {
  switch (format) {
    case TraceFormat::kPhilly: return "philly";
    case TraceFormat::kOpenb: return "openb";
    case TraceFormat::kAlibabaPai: return "alibaba-pai";
    case TraceFormat::kCsv: return "csv";
  }
  return "unknown";
}

Result<TraceRead> ReadTrace(std::istream& in, const TraceReadOptions& options) {
  if (options.max_gpus_per_pod < 1) {
    return Err(Status::InvalidArgument(
        fmt::format("max_gpus_per_pod is {}; it must be at least 1", options.max_gpus_per_pod)));
  }
  TraceReader reader(options);
  return reader.Read(in);
}

Result<TraceRead> ReadTraceFile(const std::string& path, const TraceReadOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Err(Status::InvalidArgument(fmt::format("trace file \"{}\" is a directory", path)));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) {
    const int error = errno;
    if (error == ENOENT) return Err(Status::NotFound(fmt::format("trace file \"{}\" does not exist", path)));
    return Err(Status::IoError(fmt::format("cannot open trace file \"{}\": {}", path, std::strerror(error))));
  }
  Result<TraceRead> read = ReadTrace(in, options);
  if (!read) return Err(read.error().WithContext(path));
  return read;
}

}  // namespace tessera

#include "sim/trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace tessera {
namespace {

using ::testing::ElementsAre;

// Reads `text` in `format`; the test fails when reading fails.
TraceRead ReadOk(TraceFormat format, const std::string& text, bool strict = false, int32_t max_gpus = 8) {
  std::istringstream in(text);
  TraceReadOptions options;
  options.format = format;
  options.strict = strict;
  options.max_gpus_per_pod = max_gpus;
  Result<TraceRead> read = ReadTrace(in, options);
  EXPECT_TRUE(read.has_value()) << read.error().ToString();
  return read.has_value() ? std::move(*read) : TraceRead{};
}

Status ReadError(TraceFormat format, const std::string& text, bool strict = true) {
  std::istringstream in(text);
  TraceReadOptions options;
  options.format = format;
  options.strict = strict;
  Result<TraceRead> read = ReadTrace(in, options);
  EXPECT_FALSE(read.has_value());
  return read.has_value() ? Status::Ok() : read.error();
}

// The only malformed row's warning, in non-strict mode, and the error in strict mode.
std::string NonStrictWarning(TraceFormat format, const std::string& text) {
  TraceRead read = ReadOk(format, text);
  EXPECT_EQ(read.warnings.size(), 1u);
  return read.warnings.empty() ? std::string() : read.warnings.front();
}

// ../shared/traces next to the repository, or empty.
std::filesystem::path TracesDir() {
  namespace fs = std::filesystem;
  for (fs::path candidate : {fs::path(TESSERA_SOURCE_DIR) / ".." / "shared" / "traces",
                             fs::path("..") / "shared" / "traces"}) {
    std::error_code ec;
    if (fs::is_directory(candidate, ec)) return candidate;
  }
  return {};
}

// Reads a real trace file, or skips the test when the shared traces are absent.
#define READ_SHARED_OR_SKIP(var, relative, trace_format)                                         \
  std::filesystem::path var##_path = TracesDir() / (relative);                            \
  if (TracesDir().empty() || !std::filesystem::exists(var##_path)) {                      \
    GTEST_SKIP() << "no " << (relative) << " under ../shared/traces";                     \
  }                                                                                        \
  TraceReadOptions var##_options;                                                          \
  var##_options.format = (trace_format);                                                   \
  Result<TraceRead> var##_result = ReadTraceFile(var##_path.string(), var##_options);      \
  ASSERT_TRUE(var##_result.has_value()) << var##_result.error().ToString();               \
  const TraceRead& var = *var##_result

// ---------------------------------------------------------------------------
// Format names.

TEST(TraceFormatTest, NamesRoundTrip) {
  // Every format's name parses back to it.
  for (TraceFormat f : {TraceFormat::kPhilly, TraceFormat::kOpenb, TraceFormat::kAlibabaPai, TraceFormat::kCsv}) {
    Result<TraceFormat> parsed = ParseTraceFormat(TraceFormatName(f));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, f);
  }
  EXPECT_EQ(TraceFormatName(TraceFormat::kAlibabaPai), "alibaba-pai");
}

TEST(TraceFormatTest, UnknownNameListsTheValidOnes) {
  Result<TraceFormat> parsed = ParseTraceFormat("helios");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.error().message(), "unknown trace format \"helios\" (valid: philly, openb, alibaba-pai, csv)");
}

// ---------------------------------------------------------------------------
// philly

TEST(PhillyTraceTest, ReadsEachColumn) {
  // Two jobs an hour apart; the second in the file is the earlier, so it comes first at 0.
  TraceRead read = ReadOk(TraceFormat::kPhilly,
                          "timestamp,duration,num_gpus,gpu_time,cluster\n"
                          "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
                          "2017-10-09 06:01:55,2951.4,4,11805.6,6214e9\n");
  EXPECT_EQ(read.rows, 2);
  EXPECT_TRUE(read.warnings.empty());
  ASSERT_EQ(read.jobs.size(), 2u);
  const TraceJob& first = read.jobs[0];
  EXPECT_EQ(first.line, 3);
  EXPECT_EQ(first.name, "philly-3");
  EXPECT_EQ(first.team, "6214e9");
  EXPECT_EQ(first.user, "");
  EXPECT_EQ(first.submit_s, 0);
  EXPECT_EQ(first.duration_s, 2951);  // 2951.4 rounded
  EXPECT_EQ(first.pods, 1);
  EXPECT_EQ(first.gpu_milli, 4000);
  EXPECT_EQ(first.cpu_milli, 0);
  EXPECT_EQ(first.memory_bytes, 0);
  EXPECT_TRUE(first.gpu_models.empty());
  const TraceJob& second = read.jobs[1];
  EXPECT_EQ(second.name, "philly-2");
  EXPECT_EQ(second.team, "11cb48");
  EXPECT_EQ(second.submit_s, 3600);  // 07:01:55 - 06:01:55
  EXPECT_EQ(second.duration_s, 66);
  EXPECT_EQ(second.gpu_milli, 1000);
}

TEST(PhillyTraceTest, TimestampsAcrossMonthsAndLeapDays) {
  // 2016-02-28 23:59:59 -> 2016-03-01 00:00:01 is 1 s + a leap day (86400 s) + 1 s.
  TraceRead read = ReadOk(TraceFormat::kPhilly,
                          "timestamp,duration,num_gpus,cluster\n"
                          "2016-02-28 23:59:59,1,1,a\n"
                          "2016-03-01 00:00:01,1,1,a\n");
  ASSERT_EQ(read.jobs.size(), 2u);
  EXPECT_EQ(read.jobs[1].submit_s, 86400 + 2);
  // Time 0 is the first submission's wall-clock time: 2016-02-28T23:59:59Z.
  EXPECT_EQ(read.origin_unix_ms, int64_t{1456703999} * 1000);
}

TEST(OpenbTraceTest, RelativeTimesHaveNoOrigin) {
  TraceRead read = ReadOk(TraceFormat::kOpenb,
                          "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\n"
                          "p0,1000,1024,1,1000,5,10,5\n");
  EXPECT_EQ(read.origin_unix_ms, -1);
}

TEST(PhillyTraceTest, DurationRoundsToNearestSecond) {
  TraceRead read = ReadOk(TraceFormat::kPhilly,
                          "timestamp,duration,num_gpus,cluster\n"
                          "2017-10-09 07:01:55,0.5,1,a\n"
                          "2017-10-09 07:01:55,10.49,1,a\n");
  ASSERT_EQ(read.jobs.size(), 2u);
  EXPECT_EQ(read.jobs[0].duration_s, 1);   // halves round away from zero
  EXPECT_EQ(read.jobs[1].duration_s, 10);
}

TEST(PhillyTraceTest, ZeroGpusIsACpuOnlyJob) {
  TraceRead read = ReadOk(TraceFormat::kPhilly, "timestamp,duration,num_gpus,cluster\n2017-10-09 07:01:55,5,0,a\n");
  ASSERT_EQ(read.jobs.size(), 1u);
  EXPECT_EQ(read.jobs[0].gpu_milli, 0);
  EXPECT_EQ(read.jobs[0].pods, 1);
}

TEST(PhillyTraceTest, LargeJobsBecomeGangsOfTheLargestDivisor) {
  // 16 = 2 x 8; 12 = 2 x 6 (8 does not divide 12); 128 = 16 x 8; 24 = 3 x 8;
  // 13 is prime: 13 x 1; 8 stays one pod.
  TraceRead read = ReadOk(TraceFormat::kPhilly,
                          "timestamp,duration,num_gpus,cluster\n"
                          "2017-10-09 07:00:00,1,16,a\n"
                          "2017-10-09 07:00:01,1,12,a\n"
                          "2017-10-09 07:00:02,1,128,a\n"
                          "2017-10-09 07:00:03,1,24,a\n"
                          "2017-10-09 07:00:04,1,13,a\n"
                          "2017-10-09 07:00:05,1,8,a\n");
  ASSERT_EQ(read.jobs.size(), 6u);
  std::vector<std::pair<int32_t, int64_t>> shapes;
  for (const TraceJob& job : read.jobs) shapes.emplace_back(job.pods, job.gpu_milli);
  EXPECT_THAT(shapes, ElementsAre(std::pair<int32_t, int64_t>{2, 8000}, std::pair<int32_t, int64_t>{2, 6000},
                                  std::pair<int32_t, int64_t>{16, 8000}, std::pair<int32_t, int64_t>{3, 8000},
                                  std::pair<int32_t, int64_t>{13, 1000}, std::pair<int32_t, int64_t>{1, 8000}));
  EXPECT_EQ(read.jobs[2].TotalGpuMilli(), 128000);  // 16 pods x 8000
}

TEST(PhillyTraceTest, GangSplitFollowsMaxGpusPerPod) {
  // With 4 GPUs a pod, 12 = 3 x 4 and 6 = 2 x 3.
  TraceRead read = ReadOk(TraceFormat::kPhilly,
                          "timestamp,duration,num_gpus,cluster\n"
                          "2017-10-09 07:00:00,1,12,a\n"
                          "2017-10-09 07:00:01,1,6,a\n",
                          /*strict=*/false, /*max_gpus=*/4);
  ASSERT_EQ(read.jobs.size(), 2u);
  EXPECT_EQ(read.jobs[0].pods, 3);
  EXPECT_EQ(read.jobs[0].gpu_milli, 4000);
  EXPECT_EQ(read.jobs[1].pods, 2);
  EXPECT_EQ(read.jobs[1].gpu_milli, 3000);
}

TEST(PhillyTraceTest, MaxGpusPerPodBelowOneIsAnError) {
  std::istringstream in("timestamp,duration,num_gpus,cluster\n");
  TraceReadOptions options;
  options.format = TraceFormat::kPhilly;
  options.max_gpus_per_pod = 0;
  Result<TraceRead> read = ReadTrace(in, options);
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().message(), "max_gpus_per_pod is 0; it must be at least 1");
}

TEST(PhillyTraceTest, MissingColumnNamesItAndTheFormatsColumns) {
  Status error = ReadError(TraceFormat::kPhilly, "timestamp,num_gpus,gpu_time,cluster\n", /*strict=*/false);
  EXPECT_EQ(error.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(error.message(),
            "missing column \"duration\" (the philly format needs timestamp,duration,num_gpus,cluster)");
}

TEST(PhillyTraceTest, BadDurationIsSkippedWithItsLine) {
  // Line 3 is malformed; lines 2 and 4 are read.
  const std::string text =
      "timestamp,duration,num_gpus,cluster\n"
      "2017-10-09 07:01:55,66.0,1,a\n"
      "2017-10-09 07:01:56,abc,1,a\n"
      "2017-10-09 07:01:57,5,1,a\n";
  TraceRead read = ReadOk(TraceFormat::kPhilly, text);
  EXPECT_EQ(read.rows, 3);
  ASSERT_EQ(read.jobs.size(), 2u);
  EXPECT_EQ(read.jobs[1].line, 4);
  EXPECT_THAT(read.warnings, ElementsAre("line 3: duration: \"abc\" is not a number; row skipped"));
}

TEST(PhillyTraceTest, StrictModeFailsOnTheFirstMalformedRow) {
  Status error = ReadError(TraceFormat::kPhilly,
                           "timestamp,duration,num_gpus,cluster\n"
                           "2017-10-09 07:01:55,66.0,1,a\n"
                           "2017-10-09 07:01:56,abc,1,a\n"
                           "2017-10-09 07:01:57,-5,1,a\n");
  EXPECT_EQ(error.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(error.message(), "line 3: duration: \"abc\" is not a number");
}

TEST(PhillyTraceTest, MalformedRowsEachSayWhatIsWrong) {
  const std::string header = "timestamp,duration,num_gpus,cluster\n";
  EXPECT_EQ(NonStrictWarning(TraceFormat::kPhilly, header + "2017-10-09 07:01:55,-5,1,a\n"),
            "line 2: duration: \"-5\" is negative; row skipped");
  EXPECT_EQ(NonStrictWarning(TraceFormat::kPhilly, header + "2017-10-09 07:01:55,5,-1,a\n"),
            "line 2: num_gpus: \"-1\" must be at least 0; row skipped");
  EXPECT_EQ(NonStrictWarning(TraceFormat::kPhilly, header + "2017-10-09 07:01:55,5,1.5,a\n"),
            "line 2: num_gpus: \"1.5\" is not a whole number; row skipped");
  EXPECT_EQ(NonStrictWarning(TraceFormat::kPhilly, header + "2017-13-09 07:01:55,5,1,a\n"),
            "line 2: timestamp: \"2017-13-09 07:01:55\" is not a time like \"2017-10-09 07:01:55\"; row skipped");
  EXPECT_EQ(NonStrictWarning(TraceFormat::kPhilly, header + "2017-02-29 07:01:55,5,1,a\n"),
            "line 2: timestamp: \"2017-02-29 07:01:55\" is not a time like \"2017-10-09 07:01:55\"; row skipped");
  EXPECT_EQ(NonStrictWarning(TraceFormat::kPhilly, header + "2017-10-09 07:01:55,5,1\n"),
            "line 2: 3 fields where the header has 4; row skipped");
  EXPECT_EQ(NonStrictWarning(TraceFormat::kPhilly, header + "2017-10-09 07:01:55,,1,a\n"),
            "line 2: duration: empty, expected a number; row skipped");
}

TEST(PhillyTraceTest, LineNumbersCountBlankLinesAndCrLf) {
  // Windows line ends and a blank line 3: the bad row is on physical line 4.
  TraceRead read = ReadOk(TraceFormat::kPhilly,
                          "timestamp,duration,num_gpus,cluster\r\n"
                          "2017-10-09 07:01:55,1,1,a\r\n"
                          "\r\n"
                          "2017-10-09 07:01:55,x,1,a\r\n"
                          "2017-10-09 07:01:55,1,1,b\r\n");
  EXPECT_EQ(read.rows, 3);
  ASSERT_EQ(read.jobs.size(), 2u);
  EXPECT_EQ(read.jobs[1].line, 5);
  EXPECT_EQ(read.jobs[1].team, "b");  // no CR left on the last field
  EXPECT_THAT(read.warnings, ElementsAre("line 4: duration: \"x\" is not a number; row skipped"));
}

// ---------------------------------------------------------------------------
// openb

constexpr char kOpenbHeader[] =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
    "scheduled_time\n";

TEST(OpenbTraceTest, ReadsEachColumn) {
  TraceRead read = ReadOk(TraceFormat::kOpenb, std::string(kOpenbHeader) +
                                                   "openb-pod-0000,12000,16384,1,1000,,LS,Running,100,1100,150\n"
                                                   "openb-pod-0001,6000,12288,1,460,G2|T4,BE,Running,200,500,210\n");
  ASSERT_EQ(read.jobs.size(), 2u);
  const TraceJob& whole = read.jobs[0];
  EXPECT_EQ(whole.line, 2);
  EXPECT_EQ(whole.name, "openb-pod-0000");
  EXPECT_EQ(whole.priority_class, "LS");
  EXPECT_EQ(whole.team, "");
  EXPECT_EQ(whole.submit_s, 0);        // creation 100, the earliest
  EXPECT_EQ(whole.duration_s, 950);    // deletion 1100 - scheduled 150
  EXPECT_EQ(whole.pods, 1);
  EXPECT_EQ(whole.gpu_milli, 1000);
  EXPECT_EQ(whole.cpu_milli, 12000);
  EXPECT_EQ(whole.memory_bytes, int64_t{16384} << 20);
  EXPECT_TRUE(whole.gpu_models.empty());
  const TraceJob& shared = read.jobs[1];
  EXPECT_EQ(shared.submit_s, 100);     // creation 200 - 100
  EXPECT_EQ(shared.duration_s, 290);   // 500 - 210
  EXPECT_EQ(shared.gpu_milli, 460);    // a fraction of one GPU
  EXPECT_EQ(shared.priority_class, "BE");
  EXPECT_THAT(shared.gpu_models, ElementsAre("G2", "T4"));
}

TEST(OpenbTraceTest, MultiGpuAndCpuOnlyPods) {
  // num_gpu 4 with gpu_milli 1000 is 4 whole GPUs in one pod; num_gpu 0 is CPU only.
  TraceRead read = ReadOk(TraceFormat::kOpenb, std::string(kOpenbHeader) +
                                                   "a,1000,1024,4,1000,,LS,Running,0,10,0\n"
                                                   "b,1000,1024,0,0,,BE,Running,0,10,0\n");
  ASSERT_EQ(read.jobs.size(), 2u);
  EXPECT_EQ(read.jobs[0].pods, 1);
  EXPECT_EQ(read.jobs[0].gpu_milli, 4000);
  EXPECT_EQ(read.jobs[1].gpu_milli, 0);
}

TEST(OpenbTraceTest, UnscheduledPodLivesFromCreation) {
  // A Pending pod has no scheduled_time: duration = deletion 900 - creation 400.
  TraceRead read = ReadOk(TraceFormat::kOpenb, std::string(kOpenbHeader) + "p,1000,1024,1,500,,LS,Pending,400,900,\n");
  ASSERT_EQ(read.jobs.size(), 1u);
  EXPECT_EQ(read.jobs[0].duration_s, 500);
}

TEST(OpenbTraceTest, FiveColumnListHasNoTimes) {
  // multigpu50's shape: no time columns, so every pod is at 0 with duration 0, in file order.
  TraceRead read = ReadOk(TraceFormat::kOpenb,
                          "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                          "openb-pod-0000,12000,16384,1,1000\n"
                          "openb-pod-0001,6000,12288,1,460\n"
                          "openb-pod-0002,6000,12288,8,1000\n");
  ASSERT_EQ(read.jobs.size(), 3u);
  for (size_t i = 0; i < read.jobs.size(); ++i) {
    EXPECT_EQ(read.jobs[i].line, static_cast<int64_t>(i) + 2);
    EXPECT_EQ(read.jobs[i].submit_s, 0);
    EXPECT_EQ(read.jobs[i].duration_s, 0);
    EXPECT_EQ(read.jobs[i].priority_class, "");
  }
  EXPECT_EQ(read.jobs[1].gpu_milli, 460);
  EXPECT_EQ(read.jobs[2].gpu_milli, 8000);
}

TEST(OpenbTraceTest, MalformedPods) {
  const std::string header = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\n";
  EXPECT_EQ(NonStrictWarning(TraceFormat::kOpenb, header + "p,1,1,2,500,0,1\n"),
            "line 2: gpu_milli: \"500\" with num_gpu 2 (a share below 1000 needs num_gpu 1); row skipped");
  EXPECT_EQ(NonStrictWarning(TraceFormat::kOpenb, header + "p,1,1,1,0,0,1\n"),
            "line 2: gpu_milli: \"0\" with num_gpu 1 (a GPU pod needs 1..1000); row skipped");
  EXPECT_EQ(NonStrictWarning(TraceFormat::kOpenb, header + "p,1,1,1,1500,0,1\n"),
            "line 2: gpu_milli: \"1500\" is too large (at most 1000); row skipped");
  EXPECT_EQ(NonStrictWarning(TraceFormat::kOpenb, header + "p,1,1,1,1000,10,5\n"),
            "line 2: deletion_time \"5\" is before creation_time \"10\"; row skipped");
  EXPECT_EQ(NonStrictWarning(TraceFormat::kOpenb, header + "p,x,1,1,1000,0,1\n"),
            "line 2: cpu_milli: \"x\" is not a number; row skipped");
}

TEST(OpenbTraceTest, MissingColumn) {
  Status error = ReadError(TraceFormat::kOpenb, "name,cpu_milli,num_gpu,gpu_milli\np,1,1,1000\n");
  EXPECT_EQ(error.message(),
            "missing column \"memory_mib\" (the openb format needs name,cpu_milli,memory_mib,num_gpu,gpu_milli)");
}

// ---------------------------------------------------------------------------
// alibaba-pai

constexpr char kPaiHeader[] =
    "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type,user\n";

TEST(PaiTraceTest, ConvertsPercentsAndGigabytes) {
  // plan_cpu 600 % = 6 cores; plan_gpu 50 % = 500 milli; plan_mem 29.296875 GiB = 30000 MiB.
  TraceRead read = ReadOk(TraceFormat::kAlibabaPai,
                          std::string(kPaiHeader) +
                              "j1,worker,2.0,Terminated,1000.0,1600.0,600.0,29.296875,50.0,V100,u1\n"
                              "j2,ps,1,Terminated,900,950,50,0.5,,,u2\n");
  ASSERT_EQ(read.jobs.size(), 2u);
  const TraceJob& ps = read.jobs[0];  // start 900, the earliest
  EXPECT_EQ(ps.name, "j2/ps");
  EXPECT_EQ(ps.submit_s, 0);
  EXPECT_EQ(ps.duration_s, 50);
  EXPECT_EQ(ps.cpu_milli, 500);
  EXPECT_EQ(ps.gpu_milli, 0);  // empty plan_gpu: CPU only
  EXPECT_EQ(ps.memory_bytes, int64_t{1} << 29);
  EXPECT_TRUE(ps.gpu_models.empty());
  const TraceJob& worker = read.jobs[1];
  EXPECT_EQ(worker.line, 2);
  EXPECT_EQ(worker.name, "j1/worker");
  EXPECT_EQ(worker.user, "u1");
  EXPECT_EQ(worker.team, "");
  EXPECT_EQ(worker.submit_s, 100);    // 1000 - 900
  EXPECT_EQ(worker.duration_s, 600);  // 1600 - 1000
  EXPECT_EQ(worker.pods, 2);          // inst_num "2.0"
  EXPECT_EQ(worker.cpu_milli, 6000);
  EXPECT_EQ(worker.gpu_milli, 500);
  EXPECT_EQ(worker.memory_bytes, int64_t{30000} << 20);
  EXPECT_THAT(worker.gpu_models, ElementsAre("V100"));
}

TEST(PaiTraceTest, GpuPercentAboveOneRoundsUpToWholeGpus) {
  // 200 % = 2 GPUs; 150 % = 2 GPUs (not a fraction above one); 100 % = 1; 25 % = 250 milli.
  TraceRead read = ReadOk(TraceFormat::kAlibabaPai, std::string(kPaiHeader) +
                                                        "a,t,1,x,0,1,100,1,200,MISC,u\n"
                                                        "b,t,1,x,0,1,100,1,150,P100,u\n"
                                                        "c,t,1,x,0,1,100,1,100,T4,u\n"
                                                        "d,t,1,x,0,1,100,1,25,,u\n");
  ASSERT_EQ(read.jobs.size(), 4u);
  EXPECT_EQ(read.jobs[0].gpu_milli, 2000);
  EXPECT_TRUE(read.jobs[0].gpu_models.empty());  // MISC = any model
  EXPECT_EQ(read.jobs[1].gpu_milli, 2000);
  EXPECT_EQ(read.jobs[2].gpu_milli, 1000);
  EXPECT_EQ(read.jobs[3].gpu_milli, 250);
}

TEST(PaiTraceTest, UserColumnIsOptional) {
  TraceRead read = ReadOk(TraceFormat::kAlibabaPai,
                          "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type\n"
                          "a,t,1,x,0,1,100,1,100,T4\n");
  ASSERT_EQ(read.jobs.size(), 1u);
  EXPECT_EQ(read.jobs[0].user, "");
}

TEST(PaiTraceTest, TasksWithoutBothTimesAreSkipped) {
  TraceRead read = ReadOk(TraceFormat::kAlibabaPai, std::string(kPaiHeader) +
                                                        "a,t,1,Running,10,,100,1,100,T4,u\n"
                                                        "b,t,1,Waiting,,,100,1,100,T4,u\n"
                                                        "c,t,1,Terminated,10,5,100,1,100,T4,u\n"
                                                        "d,t,0,Terminated,10,20,100,1,100,T4,u\n"
                                                        "e,t,1,Terminated,10,20,100,1,100,T4,u\n");
  EXPECT_EQ(read.rows, 5);
  ASSERT_EQ(read.jobs.size(), 1u);
  EXPECT_EQ(read.jobs[0].name, "e/t");
  EXPECT_THAT(read.warnings,
              ElementsAre("line 2: end_time: empty (the task never ended); row skipped",
                          "line 3: start_time: empty (the task never started); row skipped",
                          "line 4: end_time \"5\" is before start_time \"10\"; row skipped",
                          "line 5: inst_num: \"0\" must be at least 1; row skipped"));
}

TEST(PaiTraceTest, MissingColumn) {
  Status error = ReadError(TraceFormat::kAlibabaPai, "job_name,task_name,inst_num,start_time,end_time\n");
  EXPECT_EQ(error.message(),
            "missing column \"plan_cpu\" (the alibaba-pai format needs job_name,task_name,inst_num,start_time,"
            "end_time,plan_cpu,plan_mem,plan_gpu,gpu_type)");
}

// ---------------------------------------------------------------------------
// csv

TEST(CsvTraceTest, ReadsEachColumnInAnyOrder) {
  TraceRead read = ReadOk(TraceFormat::kCsv,
                          "team,name,duration,submit_time,gpus,pods,user,priority_class,cpu,memory,gpu_model,extra\n"
                          "ml,train,3600.4,10,4,2,alice,high,8,64Gi,A100|H100,ignored\n"
                          "cv,,60,5.5,0.25,,bob,,500m,512Mi,,\n");
  ASSERT_EQ(read.jobs.size(), 2u);
  const TraceJob& small = read.jobs[0];  // submit 5.5 -> 6 is the earliest
  EXPECT_EQ(small.name, "job-3");
  EXPECT_EQ(small.team, "cv");
  EXPECT_EQ(small.user, "bob");
  EXPECT_EQ(small.priority_class, "");
  EXPECT_EQ(small.submit_s, 0);
  EXPECT_EQ(small.duration_s, 60);
  EXPECT_EQ(small.pods, 1);  // default
  EXPECT_EQ(small.gpu_milli, 250);
  EXPECT_EQ(small.cpu_milli, 500);
  EXPECT_EQ(small.memory_bytes, int64_t{512} << 20);
  const TraceJob& train = read.jobs[1];
  EXPECT_EQ(train.name, "train");
  EXPECT_EQ(train.team, "ml");
  EXPECT_EQ(train.user, "alice");
  EXPECT_EQ(train.priority_class, "high");
  EXPECT_EQ(train.submit_s, 4);        // 10 - round(5.5) = 10 - 6
  EXPECT_EQ(train.duration_s, 3600);
  EXPECT_EQ(train.pods, 2);
  EXPECT_EQ(train.gpu_milli, 4000);
  EXPECT_EQ(train.TotalGpuMilli(), 8000);
  EXPECT_EQ(train.cpu_milli, 8000);
  EXPECT_EQ(train.memory_bytes, int64_t{64} << 30);
  EXPECT_THAT(train.gpu_models, ElementsAre("A100", "H100"));
}

TEST(CsvTraceTest, QuantitiesAreExact) {
  // gpus 0.57 is 570 milli (not 569); cpu 1.5 = 1500; memory 1.5Gi = 1610612736; 2G = 2e9;
  // 1k = 1000; 0.5Ki rounds to 512; plain bytes.
  TraceRead read = ReadOk(TraceFormat::kCsv,
                          "submit_time,duration,gpus,cpu,memory\n"
                          "0,1,0.57,1.5,1.5Gi\n"
                          "0,1,1,0.25,2G\n"
                          "0,1,0,2,1k\n"
                          "0,1,,,0.5Ki\n"
                          "0,1,,,123456\n");
  ASSERT_EQ(read.jobs.size(), 5u);
  EXPECT_EQ(read.jobs[0].gpu_milli, 570);
  EXPECT_EQ(read.jobs[0].cpu_milli, 1500);
  EXPECT_EQ(read.jobs[0].memory_bytes, 1610612736);
  EXPECT_EQ(read.jobs[1].gpu_milli, 1000);
  EXPECT_EQ(read.jobs[1].cpu_milli, 250);
  EXPECT_EQ(read.jobs[1].memory_bytes, 2'000'000'000);
  EXPECT_EQ(read.jobs[2].gpu_milli, 0);
  EXPECT_EQ(read.jobs[2].memory_bytes, 1000);
  EXPECT_EQ(read.jobs[3].memory_bytes, 512);
  EXPECT_EQ(read.jobs[4].memory_bytes, 123456);
}

TEST(CsvTraceTest, QuotedFieldsKeepTheirCommas) {
  // libcsv handles the quotes: "a,b" is one name.
  TraceRead read = ReadOk(TraceFormat::kCsv, "name,submit_time,duration\n\"a,b\",0,1\n");
  ASSERT_EQ(read.jobs.size(), 1u);
  EXPECT_EQ(read.jobs[0].name, "a,b");
}

TEST(CsvTraceTest, MalformedQuantities) {
  const std::string header = "submit_time,duration,gpus,pods,cpu,memory\n";
  EXPECT_EQ(NonStrictWarning(TraceFormat::kCsv, header + "0,1,1.5,1,,\n"),
            "line 2: gpus: \"1.5\" is more than one GPU but not a whole number (a pod takes a fraction of one "
            "GPU or whole GPUs); row skipped");
  EXPECT_EQ(NonStrictWarning(TraceFormat::kCsv, header + "0,1,0.5,2,,\n"),
            "line 2: gpus: \"0.5\" is a fraction of a GPU in a gang of 2 pods (a gang's pods take whole GPUs); "
            "row skipped");
  EXPECT_EQ(NonStrictWarning(TraceFormat::kCsv, header + "0,1,0.0001,1,,\n"),
            "line 2: gpus: \"0.0001\" is finer than 1 milli-GPU; row skipped");
  EXPECT_EQ(NonStrictWarning(TraceFormat::kCsv, header + "0,1,-1,1,,\n"),
            "line 2: gpus: \"-1\" is negative; row skipped");
  EXPECT_EQ(NonStrictWarning(TraceFormat::kCsv, header + "0,1,1,0,,\n"),
            "line 2: pods: \"0\" must be at least 1; row skipped");
  EXPECT_EQ(NonStrictWarning(TraceFormat::kCsv, header + "0,1,1,1,2x,\n"),
            "line 2: cpu: \"2x\" is not a number; row skipped");
  EXPECT_EQ(NonStrictWarning(TraceFormat::kCsv, header + "0,1,1,1,,4GB\n"),
            "line 2: memory: \"4GB\" has an unknown unit (use bytes or a suffix Ki, Mi, Gi, Ti, k, M, G, T); "
            "row skipped");
  EXPECT_EQ(NonStrictWarning(TraceFormat::kCsv, header + "x,1,1,1,,\n"),
            "line 2: submit_time: \"x\" is not a number; row skipped");
}

TEST(CsvTraceTest, WholeGpusAboveTheLimitBecomeAGang) {
  // gpus 16 with max 8 a pod: 2 pods of 8; pods 2 x gpus 16 -> 4 pods of 8.
  TraceRead read = ReadOk(TraceFormat::kCsv, "submit_time,duration,gpus,pods\n0,1,16,1\n0,1,16,2\n");
  ASSERT_EQ(read.jobs.size(), 2u);
  EXPECT_EQ(read.jobs[0].pods, 2);
  EXPECT_EQ(read.jobs[0].gpu_milli, 8000);
  EXPECT_EQ(read.jobs[1].pods, 4);
  EXPECT_EQ(read.jobs[1].gpu_milli, 8000);
}

TEST(CsvTraceTest, MissingColumn) {
  Status error = ReadError(TraceFormat::kCsv, "name,duration\n");
  EXPECT_EQ(error.message(), "missing column \"submit_time\" (the csv format needs submit_time,duration)");
}

// ---------------------------------------------------------------------------
// Every format: empty input, ordering.

TEST(TraceTest, EmptyInputAndHeaderOnlyAreEmptyTraces) {
  for (const char* text : {"", "submit_time,duration\n", "submit_time,duration", "\n\n"}) {
    TraceRead read = ReadOk(TraceFormat::kCsv, text);
    EXPECT_TRUE(read.jobs.empty()) << text;
    EXPECT_TRUE(read.warnings.empty()) << text;
    EXPECT_EQ(read.rows, 0) << text;
  }
}

TEST(TraceTest, LastRowWithoutNewlineIsRead) {
  TraceRead read = ReadOk(TraceFormat::kCsv, "submit_time,duration\n0,1\n5,2");
  ASSERT_EQ(read.jobs.size(), 2u);
  EXPECT_EQ(read.jobs[1].duration_s, 2);
  EXPECT_EQ(read.jobs[1].line, 3);
}

TEST(TraceTest, SortsBySubmitTimeKeepingFileOrderForTies) {
  // Submits 300, 100, 300, 100 -> 0 (line 3), 0 (line 5), 200 (line 2), 200 (line 4).
  TraceRead read = ReadOk(TraceFormat::kCsv,
                          "name,submit_time,duration\n"
                          "a,300,1\n"
                          "b,100,1\n"
                          "c,300,1\n"
                          "d,100,1\n");
  std::vector<std::pair<std::string, int64_t>> order;
  for (const TraceJob& job : read.jobs) order.emplace_back(job.name, job.submit_s);
  EXPECT_THAT(order, ElementsAre(std::pair<std::string, int64_t>{"b", 0}, std::pair<std::string, int64_t>{"d", 0},
                                 std::pair<std::string, int64_t>{"a", 200}, std::pair<std::string, int64_t>{"c", 200}));
}

TEST(TraceTest, SkippedRowsDoNotMoveTheOrigin) {
  // The malformed row would have been the earliest; the origin is the earliest read job.
  TraceRead read = ReadOk(TraceFormat::kCsv, "submit_time,duration\n50,-1\n100,1\n150,1\n");
  ASSERT_EQ(read.jobs.size(), 2u);
  EXPECT_EQ(read.jobs[0].submit_s, 0);
  EXPECT_EQ(read.jobs[1].submit_s, 50);
}

// A stream that cannot seek, like a pipe.
class UnseekableBuf : public std::stringbuf {
 public:
  using std::stringbuf::stringbuf;

 protected:
  pos_type seekoff(off_type, std::ios_base::seekdir, std::ios_base::openmode) override { return pos_type(-1); }
  pos_type seekpos(pos_type, std::ios_base::openmode) override { return pos_type(-1); }
};

TEST(TraceTest, ReadsAStreamThatCannotSeek) {
  UnseekableBuf buf("submit_time,duration\n0,1\n5,2\n");
  std::istream in(&buf);
  Result<TraceRead> read = ReadTrace(in, TraceReadOptions{});
  ASSERT_TRUE(read.has_value()) << read.error().ToString();
  EXPECT_EQ(read->jobs.size(), 2u);
}

TEST(TraceTest, HugeNumbersAreRefusedNotWrapped) {
  // 2^63 bytes does not fit; 10^30 GPUs neither.
  TraceRead read = ReadOk(TraceFormat::kCsv,
                          "submit_time,duration,gpus,memory\n"
                          "0,1,,8Ei\n"
                          "0,1,1000000000000000000000000000000,\n");
  EXPECT_TRUE(read.jobs.empty());
  EXPECT_THAT(read.warnings, ElementsAre("line 2: memory: \"8Ei\" is too large; row skipped",
                                         "line 3: gpus: \"1000000000000000000000000000000\" has too many digits; "
                                         "row skipped"));
}

TEST(TraceTest, MissingFileNamesThePath) {
  TraceReadOptions options;
  Result<TraceRead> read = ReadTraceFile("/nonexistent/trace.csv", options);
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().code(), StatusCode::kNotFound);
  EXPECT_EQ(read.error().message(), "trace file \"/nonexistent/trace.csv\" does not exist");
}

TEST(TraceTest, FileErrorsArePrefixedWithThePath) {
  std::filesystem::path path = std::filesystem::temp_directory_path() / "tessera_trace_test_bad.csv";
  {
    std::ofstream out(path);
    out << "submit_time,duration\n0,x\n";
  }
  TraceReadOptions options;
  options.strict = true;
  Result<TraceRead> read = ReadTraceFile(path.string(), options);
  std::filesystem::remove(path);
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().message(), path.string() + ": line 2: duration: \"x\" is not a number");
}

// ---------------------------------------------------------------------------
// The real traces in ../shared/traces.

TEST(SharedTraceTest, PhillyWholeFile) {
  // README: 82,247 jobs; by GPU count 1: 76,627, 2: 1818, 4: 1870, 8: 1643, 12: 7,
  // 16: 199, 24: 7, 32: 67, 64: 6, 128: 3; 2017-09-04 10:30:41 to 2017-12-22 08:02:11.
  const auto start = std::chrono::steady_clock::now();
  READ_SHARED_OR_SKIP(read, "philly-sia/philly.csv", TraceFormat::kPhilly);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "philly.csv read in " << seconds << " s\n";
  EXPECT_EQ(read.rows, 82247);
  EXPECT_TRUE(read.warnings.empty());
  ASSERT_EQ(read.jobs.size(), 82247u);
  std::map<int64_t, int> by_gpus;
  for (const TraceJob& job : read.jobs) ++by_gpus[job.TotalGpuMilli() / 1000];
  EXPECT_EQ(by_gpus, (std::map<int64_t, int>{{1, 76627}, {2, 1818}, {4, 1870}, {8, 1643}, {12, 7}, {16, 199},
                                             {24, 7}, {32, 67}, {64, 6}, {128, 3}}));
  EXPECT_EQ(read.jobs.front().submit_s, 0);
  EXPECT_EQ(read.jobs.back().submit_s, 1513929731 - 1504521041);  // last - first, Unix seconds
  // File line 2: "2017-10-09 07:01:55,66.0,1,66.0,11cb48".
  auto line2 = std::find_if(read.jobs.begin(), read.jobs.end(), [](const TraceJob& j) { return j.line == 2; });
  ASSERT_NE(line2, read.jobs.end());
  EXPECT_EQ(line2->name, "philly-2");
  EXPECT_EQ(line2->team, "11cb48");
  EXPECT_EQ(line2->duration_s, 66);
  EXPECT_EQ(line2->gpu_milli, 1000);
  EXPECT_EQ(line2->submit_s, 3011474);  // 2017-10-09 07:01:55 - 2017-09-04 10:30:41
  for (const TraceJob& job : read.jobs) {
    EXPECT_LE(job.gpu_milli, 8000) << job.name;
    if (job.pods > 1) {
      EXPECT_EQ(job.gpu_milli % 1000, 0) << job.name;
    }
  }
}

TEST(SharedTraceTest, OpenbDefaultPodList) {
  // README: 8,152 pods, 1088 CPU-only; GPU pods by count 6989 x 1, 16 x 2, 15 x 4, 44 x 8;
  // 3078 fractional; QoS LS 4647, BE 3398, Burstable 100, Guaranteed 7.
  READ_SHARED_OR_SKIP(read, "alibaba-openb-2023/openb_pod_list_default.csv", TraceFormat::kOpenb);
  EXPECT_EQ(read.rows, 8152);
  EXPECT_TRUE(read.warnings.empty());
  ASSERT_EQ(read.jobs.size(), 8152u);
  int cpu_only = 0, fractional = 0;
  std::map<int64_t, int> whole;
  std::map<std::string, int> qos;
  int64_t total_milli = 0;
  for (const TraceJob& job : read.jobs) {
    EXPECT_EQ(job.pods, 1);
    total_milli += job.TotalGpuMilli();
    ++qos[job.priority_class];
    if (job.gpu_milli == 0) ++cpu_only;
    else if (job.gpu_milli < 1000) ++fractional;
    else ++whole[job.gpu_milli / 1000];
  }
  EXPECT_EQ(cpu_only, 1088);
  EXPECT_EQ(fractional, 3078);
  EXPECT_EQ(whole[1] + fractional, 6989);
  EXPECT_EQ(whole[2], 16);
  EXPECT_EQ(whole[4], 15);
  EXPECT_EQ(whole[8], 44);
  EXPECT_EQ(total_milli, 6086800);  // "about 6087 GPUs"
  EXPECT_EQ(qos, (std::map<std::string, int>{{"BE", 3398}, {"Burstable", 100}, {"Guaranteed", 7}, {"LS", 4647}}));
  // First row: openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0 (the only pod created at 0).
  const TraceJob& first = read.jobs.front();
  EXPECT_EQ(first.line, 2);
  EXPECT_EQ(first.name, "openb-pod-0000");
  EXPECT_EQ(first.cpu_milli, 12000);
  EXPECT_EQ(first.memory_bytes, int64_t{16384} << 20);
  EXPECT_EQ(first.gpu_milli, 1000);
  EXPECT_EQ(first.priority_class, "LS");
  EXPECT_EQ(first.submit_s, 0);
  EXPECT_EQ(first.duration_s, 12537496);
  EXPECT_TRUE(first.gpu_models.empty());
}

TEST(SharedTraceTest, OpenbMultiGpu50HasOnlyFiveColumns) {
  // 9,061 pods, no times: all at 0, in file order.
  READ_SHARED_OR_SKIP(read, "alibaba-openb-2023/openb_pod_list_multigpu50.csv", TraceFormat::kOpenb);
  EXPECT_EQ(read.rows, 9061);
  EXPECT_TRUE(read.warnings.empty());
  ASSERT_EQ(read.jobs.size(), 9061u);
  for (size_t i = 0; i < read.jobs.size(); ++i) {
    ASSERT_EQ(read.jobs[i].line, static_cast<int64_t>(i) + 2);
    ASSERT_EQ(read.jobs[i].submit_s, 0);
    ASSERT_EQ(read.jobs[i].duration_s, 0);
  }
  EXPECT_EQ(read.jobs[1].name, "openb-pod-0001");
  EXPECT_EQ(read.jobs[1].gpu_milli, 460);
}

TEST(SharedTraceTest, EveryOpenbPodListReadsCleanly) {
  for (const char* file : {"openb_pod_list_cpu050.csv", "openb_pod_list_gpushare100.csv",
                           "openb_pod_list_gpushare40.csv", "openb_pod_list_gpuspec33.csv"}) {
    READ_SHARED_OR_SKIP(read, std::string("alibaba-openb-2023/") + file, TraceFormat::kOpenb);
    EXPECT_TRUE(read.warnings.empty()) << file;
    EXPECT_EQ(read.jobs.size(), static_cast<size_t>(read.rows)) << file;
    EXPECT_GT(read.rows, 7000) << file;
  }
}

TEST(SharedTraceTest, OpenbGpuSpecListsModels) {
  // gpuspec33: some pods name models, e.g. "A10|T4".
  READ_SHARED_OR_SKIP(read, "alibaba-openb-2023/openb_pod_list_gpuspec33.csv", TraceFormat::kOpenb);
  int constrained = 0;
  for (const TraceJob& job : read.jobs) {
    if (!job.gpu_models.empty()) ++constrained;
    for (const std::string& model : job.gpu_models) EXPECT_EQ(model.find('|'), std::string::npos);
  }
  EXPECT_GT(constrained, 0);
}

}  // namespace
}  // namespace tessera

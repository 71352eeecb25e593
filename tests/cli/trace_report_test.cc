// `tessera report trace`'s CSV: the platform's history written in the
// simulator's csv format reads back as the same jobs.
#include "cli/commands/trace_report.h"

#include <gtest/gtest.h>

#include <sstream>

#include "sim/trace.h"

namespace tessera {
namespace {

TraceJob Job(std::string name, int64_t submit, int64_t duration, int64_t gpu_milli, int32_t pods) {
  TraceJob j;
  j.name = std::move(name);
  j.submit_s = submit;
  j.duration_s = duration;
  j.gpu_milli = gpu_milli;
  j.pods = pods;
  j.team = "team-nlp";
  j.queue = "default";
  j.user = "alice";
  return j;
}

TEST(TraceReportTest, TheCsvReadsBackAsTheSameJobs) {
  HistoryTrace trace;
  trace.jobs = {Job("team-nlp/job-a", 0, 3600, 250, 1), Job("team-nlp/job-b", 60, 120, 8000, 2),
                Job("team-nlp/cpu", 61, 5, 0, 1)};
  trace.jobs[1].priority_class = "high";
  trace.jobs[1].cpu_milli = 4500;
  trace.jobs[1].memory_bytes = int64_t{16} << 30;
  trace.jobs[2].user = "carol, the admin";  // quoted
  const std::string csv = TraceCsv(trace);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "name,submit_time,duration,gpus,pods,team,queue,user,priority_class,cpu,memory");
  EXPECT_NE(csv.find("team-nlp/job-a,0,3600,0.25,1,team-nlp,default,alice,,,\n"), std::string::npos) << csv;
  std::istringstream in(csv);
  auto read = ReadTrace(in, TraceReadOptions{.format = TraceFormat::kCsv, .strict = true});
  ASSERT_TRUE(read.has_value()) << read.error().ToString();
  ASSERT_EQ(read->jobs.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const TraceJob& a = trace.jobs[i];
    const TraceJob& b = read->jobs[i];
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.submit_s, a.submit_s);
    EXPECT_EQ(b.duration_s, a.duration_s);
    EXPECT_EQ(b.gpu_milli, a.gpu_milli);
    EXPECT_EQ(b.pods, a.pods);
    EXPECT_EQ(b.team, a.team);
    EXPECT_EQ(b.queue, a.queue);
    EXPECT_EQ(b.user, a.user);
    EXPECT_EQ(b.priority_class, a.priority_class);
    EXPECT_EQ(b.cpu_milli, a.cpu_milli);
    EXPECT_EQ(b.memory_bytes, a.memory_bytes);
  }
}

}  // namespace
}  // namespace tessera

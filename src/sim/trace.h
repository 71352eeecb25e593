// Trace: the jobs of a recorded GPU-cluster trace, in one shape whatever the
// source format, and the readers of the formats `tessera sim --format` takes.
//
// Formats (docs/simulator.md has the columns of each):
//   philly       Microsoft Philly job CSV as Sia/Pollux ship it:
//                timestamp,duration,num_gpus,gpu_time,cluster
//                (timestamp "YYYY-MM-DD HH:MM:SS", UTC; cluster = team; duration
//                rounded to the second; num_gpus 0 = a CPU-only job; gpu_time is
//                not read; name = "philly-<line>").
//   openb        Alibaba GPU-sharing pod list (ATC'23, cluster-trace-gpu-v2023):
//                name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,qos,pod_phase,
//                creation_time,deletion_time,scheduled_time]
//                (one pod each; num_gpu 1 with gpu_milli < 1000 is a fraction of a GPU,
//                num_gpu k with gpu_milli 1000 is k whole GPUs; gpu_spec '|'-separated
//                models; qos = priority_class as written; submit = creation_time;
//                duration = deletion - scheduled, or deletion - creation when
//                scheduled_time is empty; without time columns, as in multigpu50,
//                every submit and duration is 0: the file gives no lifetimes).
//   alibaba-pai  Alibaba PAI 2020 task table (cluster-trace-gpu-v2020 pai_task_table):
//                job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,
//                plan_mem,plan_gpu,gpu_type[,user]  (plan_gpu in percent of a GPU,
//                plan_cpu in percent of a core, plan_mem in GB, read as GiB;
//                start/end in seconds). One job per task: name "job_name/task_name",
//                pods = inst_num, submit = start_time, duration = end - start (a
//                task without both is malformed); plan_gpu above 100 but not a
//                multiple of 100 rounds up to whole GPUs (150 -> 2); gpu_type
//                "MISC" or empty = any model; status is not read.
//   csv          Tessera's own: a header naming any of name,submit_time,duration,
//                gpus,pods,team,queue,user,priority_class,cpu,memory,gpu_model
//                (submit_time and duration required, seconds, rounded; gpus per
//                pod a decimal like 0.25 or 4, never 1.5, and a fraction only when
//                pods is 1; cpu in cores or "500m"; memory in bytes or with a
//                Kubernetes suffix, "16Gi"; gpu_model '|'-separated).
// Every format needs its header line; columns are found by name, so extra columns
// and any column order are accepted.
//
// Times: submit_s is seconds from the trace's first submission (the earliest job
// is at 0), whatever the format's clock; jobs come back sorted by submit time,
// ties in file order.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace tessera {

enum class TraceFormat { kPhilly, kOpenb, kAlibabaPai, kCsv };

// "philly", "openb", "alibaba-pai", "csv"; an error listing the valid names otherwise.
Result<TraceFormat> ParseTraceFormat(std::string_view name);
std::string_view TraceFormatName(TraceFormat format);

struct TraceJob {
  int64_t line = 0;         // 1-based line in the source file, for messages
  std::string name;         // from the trace, or "job-<line>" when it has none
  std::string team;         // queue / tenant ("" when the trace has none)
  // The LocalQueue's name in the team's namespace; "" (every format but csv's
  // `queue` column), or a queue the policy lacks: the team's queue as Simulate
  // resolves it.
  std::string queue;
  std::string user;         // "" when the trace has none
  std::string priority_class;  // "" when the trace has none
  int64_t submit_s = 0;     // seconds from the trace's first submission
  int64_t duration_s = 0;   // run time when it runs uninterrupted, >= 0
  int32_t pods = 1;         // pods of the gang, >= 1 (a multi-node job is a gang)
  int64_t gpu_milli = 0;    // per pod: 0 (CPU only), 1..999 (a fraction of one GPU), or k*1000
  int64_t cpu_milli = 0;    // per pod, 0 when the trace has none
  int64_t memory_bytes = 0; // per pod, 0 when the trace has none
  std::vector<std::string> gpu_models;  // allowed GPU models; empty = any

  int64_t TotalGpuMilli() const { return gpu_milli * pods; }
};

struct TraceReadOptions {
  TraceFormat format = TraceFormat::kCsv;
  // false: a malformed row is reported in TraceRead::warnings and skipped;
  // true: the first malformed row is an error ("line 17: duration: \"abc\" is not a number").
  bool strict = false;
  // A job asking for more GPUs per pod than this (any format) becomes a gang of
  // pods of at most this many GPUs each (philly: 16 GPUs -> 2 pods of 8; 12 -> 2
  // pods of 6: the largest divisor of the count not above it). Must be >= 1.
  int32_t max_gpus_per_pod = 8;
};

struct TraceRead {
  std::vector<TraceJob> jobs;
  std::vector<std::string> warnings;  // "line 17: ...; row skipped", in file order
  int64_t rows = 0;                   // data rows seen (header excluded)
  // The wall-clock time of submit_s == 0 (milliseconds since the Unix epoch) when
  // the format has a wall clock (philly), so that --since/--until can take dates;
  // -1 when it has only relative times.
  int64_t origin_unix_ms = -1;
};

// Reads a whole trace. An empty input, or a header with no rows, is an empty
// trace, not an error; a missing required column is an error naming it.
// A row with a different number of fields than the header is malformed.
// ReadTraceFile: NotFound naming the path when there is no such file; other
// errors are prefixed with the path.
Result<TraceRead> ReadTrace(std::istream& in, const TraceReadOptions& options);
Result<TraceRead> ReadTraceFile(const std::string& path, const TraceReadOptions& options);

}  // namespace tessera

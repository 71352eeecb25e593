// AuditLog: kube-apiserver's log backend for auditing, with its flag names
// (--audit-log-path, --audit-log-maxsize, --audit-log-maxbackup,
// --audit-log-maxage): one audit.k8s.io/v1 Event per line, as JSON, for every
// request that changed state and every request that was refused (401, 403,
// 429), at the Metadata level (who, what, where, the answer; never a request
// or response body, and never a credential).
//
// A line (fields as Kubernetes writes them; absent ones are left out):
//   {"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata",
//    "auditID":"6f0b...","stage":"ResponseComplete",
//    "requestURI":"/apis/batch/v1/namespaces/team-nlp/jobs","verb":"create",
//    "user":{"username":"alice","uid":"42","groups":["team-nlp","system:authenticated"]},
//    "sourceIPs":["127.0.0.1"],"userAgent":"tessera/0.1.0",
//    "objectRef":{"resource":"jobs","namespace":"team-nlp","name":"train",
//                 "apiGroup":"batch","apiVersion":"v1","subresource":"status"},
//    "responseStatus":{"metadata":{},"code":403,"status":"Failure","reason":"Forbidden",
//                      "message":"jobs.batch is forbidden: ..."},
//    "requestReceivedTimestamp":"2026-12-01T10:00:00.123000Z",
//    "stageTimestamp":"2026-12-01T10:00:00.125000Z",
//    "annotations":{"authorization.k8s.io/decision":"forbid","authorization.k8s.io/reason":"..."}}
// responseStatus carries status, reason and message only for a failure (code
// >= 400), as kube-apiserver's does; a success has {"metadata":{},"code":201}.
//
// Writing: Record never blocks on the disk. Events go to a queue that a
// background thread drains in batches (appending, then one flush per batch;
// fsync is not needed, as kube-apiserver's buffered backend does not sync
// either). A batch gathers for up to `batch_wait` (or until it holds
// `batch_events`, or Flush is called) after the one before it: a storm of
// requests then costs the file system tens of appends a second, not thousands,
// each of which dirties the inode and holds up the store's own writes on the
// same file system (api_scale, 2 cores: with a write per wake-up, 1.49-1.55
// cores were busy, against 1.74-1.76 with the data directory on tmpfs). When the queue holds `queue_limit` events, further ones are dropped
// and counted (dropped()), as kube-apiserver's buffered backend drops under
// overload rather than stall requests.
//
// Rotation (lumberjack's rules, which kube-apiserver uses): before a write
// would take the file past max_size_mb megabytes (1 MB = 1048576 bytes), the
// file is renamed to "<name>-<UTC time>.<ext>" beside it (audit.log ->
// audit-2026-12-01T10-00-00.000.log) and a new one started; then only the
// newest max_backups rotated files are kept (0: all) and, with max_age_days,
// none older than that. A line is never split across files.
//
// The file and its rotated copies are created mode 0600: they name users and
// objects.
//
// Thread-safety: Record, Flush and dropped may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "auth/user_info.h"
#include "common/result.h"
#include "common/time.h"

namespace tessera {

struct AuditLogOptions {
  std::string path;          // the log file; "-" writes to standard output (never rotated)
  int64_t max_size_mb = 0;   // 0: never rotate
  int max_backups = 0;       // rotated files kept; 0: all
  int max_age_days = 0;      // rotated files older than this are removed; 0: kept whatever their age
  size_t queue_limit = 10000;
  std::chrono::milliseconds batch_wait{20};
  size_t batch_events = 1000;
};

// What the API handler knows of one request, once answered.
struct AuditEvent {
  std::string audit_id;  // unique per request (a UUID)
  std::string request_uri;  // path and query, as received
  std::string verb;         // get list watch create update patch delete deletecollection; or, for a
                            // non-resource request, the lower-case HTTP method
  UserInfo user;            // "system:anonymous" when none was authenticated
  std::vector<std::string> source_ips;
  std::string user_agent;
  // objectRef, for a resource request (left out when resource is empty).
  std::string resource;
  std::string ns;
  std::string name;
  std::string api_group;
  std::string api_version;
  std::string subresource;
  // responseStatus.
  int code = 0;
  std::string status_reason;   // "Forbidden"; empty for a success
  std::string status_message;  // the Status message; empty for a success
  Timestamp received;
  Timestamp completed;
  // "authorization.k8s.io/decision" ("allow" or "forbid"), ".../reason", and
  // Tessera's own ("tessera.dev/approval" with who decided what) when set.
  std::vector<std::pair<std::string, std::string>> annotations;
};

// The JSON line for `event`, without the newline.
std::string AuditEventJson(const AuditEvent& event);

class AuditLog {
 public:
  // Opens (creating, mode 0600) the file, or fails with IoError saying why.
  static Result<std::unique_ptr<AuditLog>> Open(AuditLogOptions options);
  // Writes what was recorded, then stops the writer.
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  void Record(AuditEvent event);
  // Returns once every event recorded before the call is written (or dropped).
  void Flush();
  int64_t dropped() const { return dropped_.load(); }
  int64_t written() const { return written_.load(); }

 private:
  explicit AuditLog(AuditLogOptions options);
  void Run();

  AuditLogOptions options_;
  int fd_ = -1;
  int64_t size_ = 0;  // bytes in the current file
  std::mutex mu_;
  std::condition_variable cv_;       // the writer waits here for events
  std::condition_variable flushed_;  // Flush waits here
  std::deque<AuditEvent> queue_;
  uint64_t enqueued_ = 0;  // events taken by Record, ever (guarded by mu_)
  uint64_t done_ = 0;      // events written or dropped, ever (guarded by mu_)
  bool stop_ = false;
  int flush_waiters_ = 0;  // Flush calls waiting: the batch is written at once (guarded by mu_)
  std::atomic<int64_t> dropped_{0};
  std::atomic<int64_t> written_{0};
  std::thread writer_;
};

}  // namespace tessera

#include "server/api/audit_log.h"

#include <pthread.h>

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <utility>

#include "common/time_format.h"
#include "common/unique_fd.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
// Insertion-ordered, so that a line lists its fields in the order kube-apiserver writes them.

constexpr int64_t kBytesPerMb = 1048576;
constexpr int64_t kMillisPerDay = 86'400'000;
constexpr auto kErrorLogInterval = std::chrono::minutes(1);
// FormatRfc3339 writes years 0..9999 only: 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z.
constexpr int64_t kFirstFormattableMs = -62'167'219'200'000;
constexpr int64_t kLastFormattableMs = 253'402'300'799'999;
// "2026-12-01T10-00-00.000": a rotated file's time, as lumberjack writes it.
constexpr size_t kBackupTimeLength = 23;

bool Formattable(Timestamp t) { return t.ms >= kFirstFormattableMs && t.ms <= kLastFormattableMs; }

// "2026-12-01T10:00:00.123" with `digits` (3 or 6) fractional digits, without the zone.
// FormatRfc3339 writes "...:00Z" for a whole second and "...:00.123Z" otherwise.
// REQUIRES: Formattable(t).
std::string FixedFractionUtc(Timestamp t, int digits) {
  std::string out = FormatRfc3339(t);
  out.pop_back();  // 'Z'
  if (out.size() == 19) out += ".000";
  if (digits == 6) out += "000";  // milliseconds are all a Timestamp has
  return out;
}

// Kubernetes' MicroTime: RFC 3339 UTC with six fractional digits.
std::string MicroTime(Timestamp t) { return FixedFractionUtc(t, 6) + "Z"; }

// lumberjack's backup time: "2006-01-02T15-04-05.000" in UTC (':' is not portable in a file name).
std::string BackupTime(Timestamp t) {
  std::string out = FixedFractionUtc(t, 3);
  std::replace(out.begin(), out.end(), ':', '-');
  return out;
}

// The inverse of BackupTime; nullopt for any other text.
std::optional<Timestamp> ParseBackupTime(std::string_view text) {
  if (text.size() != kBackupTimeLength || text[13] != '-' || text[16] != '-' || text[19] != '.') return std::nullopt;
  std::string rfc3339(text);
  rfc3339[13] = ':';
  rfc3339[16] = ':';
  rfc3339 += 'Z';
  Result<Timestamp> t = ParseRfc3339(rfc3339);
  if (!t.has_value()) return std::nullopt;
  return *t;
}

// Builds one JSON object as text, fields in the order added. Strings are
// escaped by nlohmann (invalid UTF-8, as in a user-supplied name, becomes
// U+FFFD instead of throwing); the structure is written directly, which costs a
// tenth of building an ordered_json per request on the API's hot path.
class JsonLine {
 public:
  JsonLine() { out_.reserve(768); }
  JsonLine& Open(std::string_view key) {
    Key(key);
    out_ += '{';
    first_ = true;
    return *this;
  }
  JsonLine& Close() {
    out_ += '}';
    first_ = false;
    return *this;
  }
  JsonLine& String(std::string_view key, std::string_view value) {
    Key(key);
    Quote(value);
    return *this;
  }
  JsonLine& StringIfNotEmpty(std::string_view key, std::string_view value) {
    return value.empty() ? *this : String(key, value);
  }
  JsonLine& Number(std::string_view key, int64_t value) {
    Key(key);
    fmt::format_to(std::back_inserter(out_), "{}", value);
    return *this;
  }
  JsonLine& Strings(std::string_view key, const std::vector<std::string>& values) {
    Key(key);
    out_ += '[';
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) out_ += ',';
      Quote(values[i]);
    }
    out_ += ']';
    return *this;
  }
  std::string Take() {
    out_ += '}';
    return std::move(out_);
  }

 private:
  void Key(std::string_view key) {
    if (!first_) out_ += ',';
    first_ = false;
    if (!key.empty()) {
      Quote(key);
      out_ += ':';
    }
  }
  void Quote(std::string_view text) {
    // Nearly every string (names, verbs, groups, URIs) is printable ASCII with
    // nothing to escape: written as it is. Anything else goes through nlohmann,
    // which escapes it and replaces invalid UTF-8.
    const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
      return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
    });
    if (!plain) {
      out_ += nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      return;
    }
    out_ += '"';
    out_ += text;
    out_ += '"';
  }
  std::string out_ = "{";
  bool first_ = true;
};

// authentication/v1 UserInfo: every field omitempty.
void WriteUser(JsonLine& line, const UserInfo& user) {
  line.Open("user").StringIfNotEmpty("username", user.name).StringIfNotEmpty("uid", user.uid);
  if (!user.groups.empty()) line.Strings("groups", user.groups);
  if (!user.extra.empty()) {
    line.Open("extra");
    for (const auto& [key, values] : user.extra) line.Strings(key, values);
    line.Close();
  }
  line.Close();
}

// Opens (creating) the log file for appending, mode 0600 whatever the umask or the
// mode an existing file had. Returns -1 with errno set on failure.
int OpenLogFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  struct stat st {};
  // A FIFO or a character device (a test's pipe, /dev/null) keeps its mode.
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) != 0600 && ::fchmod(fd, 0600) != 0) {
    spdlog::warn("audit log \"{}\": cannot make it mode 0600: {}", path, ErrnoText(errno));
  }
  return fd;
}

// kube-apiserver creates the log's directory, mode 0700, when it is missing.
Status EnsureDirectory(const fs::path& dir) {
  if (dir.empty()) return Status::Ok();
  fs::path partial;
  for (const fs::path& part : dir) {
    partial /= part;
    if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::IoError(fmt::format("cannot create the directory \"{}\": {}", partial.string(), ErrnoText(errno)));
    }
  }
  return Status::Ok();
}

// The writer thread's view of the file: writing, rotating, pruning, and reporting
// errors at most once a minute. Only the writer thread uses one.
class Sink {
 public:
  Sink(const AuditLogOptions& options, int& fd, int64_t& size, std::atomic<int64_t>& dropped,
       std::atomic<int64_t>& written)
      : options_(options),
        fd_(fd),
        size_(size),
        dropped_(dropped),
        written_(written),
        rotates_(options.path != "-" && options.max_size_mb > 0),
        max_bytes_(options.max_size_mb * kBytesPerMb) {
    const fs::path path(options.path);
    dir_ = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    ext_ = path.filename().extension().string();
    prefix_ = path.filename().stem().string() + "-";
  }

  // Formats `batch`, writes it in as few write(2) calls as rotation allows, and
  // counts each event as written or dropped.
  void WriteBatch(const std::deque<AuditEvent>& batch) {
    rotation_failed_ = false;
    buffer_.clear();
    line_ends_.clear();
    for (const AuditEvent& event : batch) {
      const size_t start = buffer_.size();
      buffer_ += AuditEventJson(event);
      buffer_ += '\n';
      if (!rotates_) {
        line_ends_.push_back(buffer_.size());
        continue;
      }
      const auto line_size = static_cast<int64_t>(buffer_.size() - start);
      if (line_size > max_bytes_) {
        // As lumberjack refuses a write larger than the file may grow.
        buffer_.resize(start);
        dropped_.fetch_add(1);
        ReportError(fmt::format("an event of {} bytes is larger than --audit-log-maxsize ({} MB); dropped",
                                line_size, options_.max_size_mb));
        continue;
      }
      if (size_ + static_cast<int64_t>(start) + line_size > max_bytes_ && !rotation_failed_) {
        // The line would take the file past its limit: write what precedes it, then rotate.
        std::string line = buffer_.substr(start);
        buffer_.resize(start);
        WriteOut();
        Rotate();
        buffer_.assign(line);  // keeps the buffer's capacity
      }
      line_ends_.push_back(buffer_.size());
    }
    WriteOut();
  }

  // Keeps the newest max_backups rotated files (0: all) and, with max_age_days,
  // none whose name says it is older. Rotated files are recognised by name only:
  // "<stem>-<BackupTime>.<ext>" beside the log; anything else is left alone.
  void Prune() {
    if (options_.path == "-" || (options_.max_backups <= 0 && options_.max_age_days <= 0)) return;
    std::vector<std::pair<Timestamp, fs::path>> backups;
    std::error_code ec;
    fs::directory_iterator it(dir_, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.size() != prefix_.size() + kBackupTimeLength + ext_.size() || !name.starts_with(prefix_) ||
          !name.ends_with(ext_)) {
        continue;
      }
      const std::optional<Timestamp> t =
          ParseBackupTime(std::string_view(name).substr(prefix_.size(), kBackupTimeLength));
      std::error_code type_ec;
      if (t.has_value() && it->is_regular_file(type_ec)) backups.emplace_back(*t, it->path());
    }
    if (ec) {
      ReportError(fmt::format("cannot list \"{}\" to remove old rotated files: {}", dir_.string(), ec.message()));
      return;
    }
    std::sort(backups.begin(), backups.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    const Timestamp cutoff = SystemNow() + Duration::Millis(-int64_t{options_.max_age_days} * kMillisPerDay);
    for (size_t i = 0; i < backups.size(); ++i) {
      const bool surplus = options_.max_backups > 0 && i >= static_cast<size_t>(options_.max_backups);
      const bool expired = options_.max_age_days > 0 && backups[i].first < cutoff;
      if (!surplus && !expired) continue;
      if (::unlink(backups[i].second.c_str()) != 0 && errno != ENOENT) {
        ReportError(fmt::format("cannot remove the old rotated file \"{}\": {}", backups[i].second.string(),
                                ErrnoText(errno)));
      }
    }
  }

  // Warns, at most once a minute, when events were dropped since the last warning.
  void ReportDrops() {
    const int64_t dropped = dropped_.load();
    if (dropped == reported_dropped_) return;
    const auto now = std::chrono::steady_clock::now();
    if (warned_drops_ && now - last_drop_warning_ < kErrorLogInterval) return;
    spdlog::warn("audit log \"{}\": {} events dropped ({} in all): the queue of {} was full or a write failed",
                 options_.path, dropped - reported_dropped_, dropped, options_.queue_limit);
    reported_dropped_ = dropped;
    last_drop_warning_ = now;
    warned_drops_ = true;
  }

 private:
  // Writes buffer_ (whole lines, ends in line_ends_), then empties it.
  void WriteOut() {
    if (buffer_.empty()) return;
    if (torn_line_) {
      // An earlier write stopped inside a line: end it, so that it does not swallow the next one.
      buffer_.insert(buffer_.begin(), '\n');
      for (size_t& end : line_ends_) ++end;
    }
    size_t offset = 0;
    int error = 0;
    while (offset < buffer_.size()) {
      const ssize_t n = ::write(fd_, buffer_.data() + offset, buffer_.size() - offset);
      if (n < 0) {
        if (errno == EINTR) continue;
        error = errno;
        break;
      }
      offset += static_cast<size_t>(n);
    }
    size_ += static_cast<int64_t>(offset);
    const auto whole = static_cast<int64_t>(std::upper_bound(line_ends_.begin(), line_ends_.end(), offset) -
                                            line_ends_.begin());
    const auto lines = static_cast<int64_t>(line_ends_.size());
    written_.fetch_add(whole);
    if (error != 0) {
      dropped_.fetch_add(lines - whole);
      torn_line_ = offset > 0 && buffer_[offset - 1] != '\n';
      ReportError(fmt::format("cannot write to \"{}\": {}; {} events lost", options_.path, ErrnoText(error),
                              lines - whole));
    } else {
      torn_line_ = false;
    }
    buffer_.clear();
    line_ends_.clear();
  }

  // Renames the file to "<stem>-<now>.<ext>", starts a new one, and prunes. On
  // failure the current file is kept (grown past the limit rather than an event
  // lost), and rotation is tried again with the next batch.
  void Rotate() {
    // Two rotations within a millisecond must not overwrite each other's file.
    Timestamp t = SystemNow();
    fs::path backup;
    for (;;) {
      backup = dir_ / (prefix_ + BackupTime(t) + ext_);
      struct stat st {};
      if (::lstat(backup.c_str(), &st) != 0) break;  // free (or unreadable: rename will say why)
      t = t + Duration::Millis(1);
    }
    if (::rename(options_.path.c_str(), backup.c_str()) != 0) {
      rotation_failed_ = true;
      ReportError(fmt::format("cannot rename \"{}\" to \"{}\" to rotate it: {}", options_.path, backup.string(),
                              ErrnoText(errno)));
      return;
    }
    const int fd = OpenLogFile(options_.path);
    if (fd < 0) {
      const int error = errno;
      rotation_failed_ = true;
      ::rename(backup.c_str(), options_.path.c_str());  // best effort: keep appending to the old file
      ReportError(fmt::format("cannot open a new \"{}\" after rotating: {}", options_.path, ErrnoText(error)));
      return;
    }
    ::close(fd_);
    fd_ = fd;
    size_ = 0;
    torn_line_ = false;
    Prune();
  }

  void ReportError(const std::string& what) {
    ++errors_;
    const auto now = std::chrono::steady_clock::now();
    if (logged_error_ && now - last_error_log_ < kErrorLogInterval) return;
    spdlog::error("audit log: {} ({} errors in all; further ones are logged at most once a minute)", what, errors_);
    last_error_log_ = now;
    logged_error_ = true;
  }

  const AuditLogOptions& options_;
  int& fd_;
  int64_t& size_;
  std::atomic<int64_t>& dropped_;
  std::atomic<int64_t>& written_;
  const bool rotates_;
  const int64_t max_bytes_;
  fs::path dir_;
  std::string prefix_;  // "audit-"
  std::string ext_;     // ".log", or empty
  std::string buffer_;
  std::vector<size_t> line_ends_;  // offsets in buffer_ just past each line's '\n'
  bool torn_line_ = false;         // the file ends inside a line
  bool rotation_failed_ = false;   // in this batch
  int64_t errors_ = 0;
  bool logged_error_ = false;
  std::chrono::steady_clock::time_point last_error_log_;
  int64_t reported_dropped_ = 0;
  bool warned_drops_ = false;
  std::chrono::steady_clock::time_point last_drop_warning_;
};

}  // namespace

std::string AuditEventJson(const AuditEvent& event) {
  // Fields in audit.k8s.io/v1 Event's order; those Kubernetes marks omitempty are left out when empty.
  JsonLine line;
  line.String("kind", "Event")
      .String("apiVersion", "audit.k8s.io/v1")
      .String("level", "Metadata")
      .String("auditID", event.audit_id)
      .String("stage", "ResponseComplete")
      .String("requestURI", event.request_uri)
      .String("verb", event.verb);
  WriteUser(line, event.user);
  if (!event.source_ips.empty()) line.Strings("sourceIPs", event.source_ips);
  line.StringIfNotEmpty("userAgent", event.user_agent);
  if (!event.resource.empty()) {
    line.Open("objectRef")
        .String("resource", event.resource)
        .StringIfNotEmpty("namespace", event.ns)
        .StringIfNotEmpty("name", event.name)
        .StringIfNotEmpty("apiGroup", event.api_group)
        .StringIfNotEmpty("apiVersion", event.api_version)
        .StringIfNotEmpty("subresource", event.subresource)
        .Close();
  }
  // metav1.Status: metadata is always written (an empty ListMeta); status, message
  // and reason only for a failure, as kube-apiserver copies them from the Status it sent.
  line.Open("responseStatus").Open("metadata").Close();
  if (event.code >= 400) {
    line.String("status", "Failure")
        .StringIfNotEmpty("message", event.status_message)
        .StringIfNotEmpty("reason", event.status_reason);
  }
  line.Number("code", event.code).Close();
  // A time no RFC 3339 text can hold (Timestamp::Never) is left out rather than crash the server.
  if (Formattable(event.received)) line.String("requestReceivedTimestamp", MicroTime(event.received));
  if (Formattable(event.completed)) line.String("stageTimestamp", MicroTime(event.completed));
  if (!event.annotations.empty()) {
    line.Open("annotations");
    for (const auto& [key, value] : event.annotations) line.String(key, value);
    line.Close();
  }
  return line.Take();
}

Result<std::unique_ptr<AuditLog>> AuditLog::Open(AuditLogOptions options) {
  if (options.path.empty()) {
    return Err(Status::InvalidArgument("--audit-log-path is empty: name a file, or \"-\" for standard output"));
  }
  if (options.max_size_mb < 0 || options.max_backups < 0 || options.max_age_days < 0) {
    return Err(Status::InvalidArgument(fmt::format(
        "--audit-log-maxsize ({}), --audit-log-maxbackup ({}) and --audit-log-maxage ({}) must not be negative",
        options.max_size_mb, options.max_backups, options.max_age_days)));
  }
  if (options.max_size_mb > std::numeric_limits<int64_t>::max() / kBytesPerMb) {
    return Err(Status::InvalidArgument(fmt::format("--audit-log-maxsize {} MB is too large", options.max_size_mb)));
  }
  if (options.queue_limit == 0) return Err(Status::InvalidArgument("the audit log's queue limit must be at least 1"));

  int fd = STDOUT_FILENO;
  int64_t size = 0;
  if (options.path != "-") {
    const Status dir = EnsureDirectory(fs::path(options.path).parent_path());
    if (!dir.ok()) {
      return Err(Status::IoError(fmt::format("cannot open the audit log \"{}\": {}", options.path, dir.message())));
    }
    UniqueFd file(OpenLogFile(options.path));
    if (file.get() < 0) {
      return Err(Status::IoError(fmt::format("cannot open the audit log \"{}\": {} (check --audit-log-path)",
                                             options.path, ErrnoText(errno))));
    }
    struct stat st {};
    if (::fstat(file.get(), &st) != 0) {
      return Err(Status::IoError(fmt::format("cannot stat the audit log \"{}\": {}", options.path, ErrnoText(errno))));
    }
    if (S_ISDIR(st.st_mode)) {
      return Err(Status::IoError(fmt::format("the audit log \"{}\" is a directory", options.path)));
    }
    size = S_ISREG(st.st_mode) ? static_cast<int64_t>(st.st_size) : 0;
    fd = file.release();
  }
  std::unique_ptr<AuditLog> log(new AuditLog(std::move(options)));
  log->fd_ = fd;
  log->size_ = size;
  log->writer_ = std::thread([raw = log.get()] { raw->Run(); });
  return log;
}

AuditLog::AuditLog(AuditLogOptions options) : options_(std::move(options)) {}

AuditLog::~AuditLog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  if (writer_.joinable()) writer_.join();
  if (fd_ >= 0 && fd_ != STDOUT_FILENO) ::close(fd_);
}

void AuditLog::Record(AuditEvent event) {
  // enqueued_ counts only the events the queue took: with done_ counting those
  // written or lost in writing, both advance in queue order, so that Flush's
  // "done_ reached enqueued_" means every earlier event is out.
  bool was_empty = false;
  bool full = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.size() >= options_.queue_limit) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    was_empty = queue_.empty();
    queue_.push_back(std::move(event));
    ++enqueued_;
    full = queue_.size() == options_.batch_events;
  }
  // The writer sleeps on an empty queue, or lets a batch gather until it is
  // full (and takes the whole queue each time), so only the event that makes
  // it non-empty or full needs to wake it: at most two notifications a batch.
  if (was_empty || full) cv_.notify_one();
}

void AuditLog::Flush() {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = enqueued_;
  ++flush_waiters_;
  cv_.notify_one();  // a gathering batch is written now
  flushed_.wait(lock, [&] { return done_ >= target; });
  --flush_waiters_;
}

void AuditLog::Run() {
  // Steps, per batch: take the whole queue under the lock; format and write it
  // without the lock (rotating as it fills the file); count it done; wake Flush.
  pthread_setname_np(pthread_self(), "audit-writer");
  Sink sink(options_, fd_, size_, dropped_, written_);
  sink.Prune();  // as lumberjack does when it opens the file
  std::deque<AuditEvent> batch;
  auto last_write = std::chrono::steady_clock::now() - options_.batch_wait;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything is written
      cv_.wait_until(lock, last_write + options_.batch_wait, [this] {
        return stop_ || flush_waiters_ > 0 || queue_.size() >= options_.batch_events;
      });
      batch.swap(queue_);
    }
    last_write = std::chrono::steady_clock::now();
    sink.WriteBatch(batch);
    const uint64_t n = batch.size();
    batch.clear();
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ += n;
    }
    flushed_.notify_all();
    sink.ReportDrops();
  }
}

}  // namespace tessera

#include "server/api/audit_log.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/time_format.h"
#include "tests/testing/test_dirs.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int64_t kMb = 1048576;

// A create of a Job by alice, refused or not as the test sets; `id` names it.
AuditEvent MakeEvent(int id) {
  AuditEvent event;
  event.audit_id = "id-" + std::to_string(id);
  event.request_uri = "/apis/batch/v1/namespaces/team-nlp/jobs";
  event.verb = "create";
  event.user.name = "alice";
  event.user.uid = "42";
  event.user.groups = {"team-nlp", "system:authenticated"};
  event.source_ips = {"127.0.0.1"};
  event.user_agent = "tessera/0.1.0";
  event.resource = "jobs";
  event.ns = "team-nlp";
  event.name = "train";
  event.api_group = "batch";
  event.api_version = "v1";
  event.code = 201;
  event.received = Timestamp::FromMillis(1'796'119'200'123);  // 2026-12-01T10:00:00.123Z
  event.completed = Timestamp::FromMillis(1'796'119'200'125);
  return event;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The lines of `text`, each without its '\n'; a last line without one is kept too,
// so that a split line shows up as one that does not parse.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// The audit IDs of a file's lines, each parsed as JSON (a line that is not JSON fails the test).
std::vector<std::string> AuditIds(const fs::path& path) {
  std::vector<std::string> ids;
  for (const std::string& line : Lines(ReadFile(path))) {
    const json event = json::parse(line, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(event.is_object()) << "not a whole JSON line in " << path << ": " << line.substr(0, 200);
    if (event.is_object()) ids.push_back(event.value("auditID", ""));
  }
  return ids;
}

// The time in a rotated file's name, "audit-2026-12-01T10-00-00.000.log", or
// nullopt for any other name.
std::optional<Timestamp> BackupNameTime(const std::string& name) {
  static constexpr std::string_view kPattern = "dddd-dd-ddTdd-dd-dd.ddd";
  if (name.size() != 6 + kPattern.size() + 4 || !name.starts_with("audit-") || !name.ends_with(".log")) {
    return std::nullopt;
  }
  std::string text = name.substr(6, kPattern.size());
  for (size_t i = 0; i < kPattern.size(); ++i) {
    const bool ok =
        kPattern[i] == 'd' ? std::isdigit(static_cast<unsigned char>(text[i])) != 0 : text[i] == kPattern[i];
    if (!ok) return std::nullopt;
  }
  text[13] = ':';
  text[16] = ':';
  Result<Timestamp> t = ParseRfc3339(text + "Z");
  if (!t.has_value()) return std::nullopt;
  return *t;
}

// Rotated files beside `log`, oldest first (the names sort by time).
std::vector<fs::path> Backups(const fs::path& log) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(log.parent_path())) {
    if (BackupNameTime(entry.path().filename().string()).has_value()) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The name lumberjack would give a file rotated at `t`.
std::string BackupNameAt(Timestamp t) {
  std::string text = FormatRfc3339(t);  // "2026-12-01T10:00:00Z" or "...:00.123Z"
  text.pop_back();
  if (text.size() == 19) text += ".000";
  std::replace(text.begin(), text.end(), ':', '-');
  return "audit-" + text + ".log";
}

int FileMode(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return static_cast<int>(st.st_mode & 07777);
}

void Touch(const fs::path& path, const std::string& text = "{}\n") { std::ofstream(path) << text; }

class AuditLogTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::FreshTestDir("tessera-audit-log"); }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::unique_ptr<AuditLog> OpenLog(AuditLogOptions options) {
    Result<std::unique_ptr<AuditLog>> log = AuditLog::Open(std::move(options));
    EXPECT_TRUE(log.has_value()) << log.error().ToString();
    return log.has_value() ? std::move(*log) : nullptr;
  }
  AuditLogOptions Options() const {
    AuditLogOptions options;
    options.path = path().string();
    return options;
  }
  fs::path path() const { return dir_ / "audit.log"; }

  fs::path dir_;
};

// An event whose name takes about 8 KiB of its line: 127 of them fill a 1 MiB file.
AuditEvent BigEvent(int id) {
  AuditEvent event = MakeEvent(id);
  event.name = std::string(8 * 1024, 'n');
  return event;
}

TEST(AuditLogJsonTest, ARefusedRequestIsWrittenWithKubernetesFieldNamesAndShapes) {
  // A 403 on a Job's status: every field kube-apiserver writes at the Metadata level.
  AuditEvent event = MakeEvent(1);
  event.audit_id = "6f0b5d3a-0000-4000-8000-000000000001";
  event.subresource = "status";
  event.user.extra["authentication.kubernetes.io/credential-id"] = {"JTI=abc"};
  event.code = 403;
  event.status_reason = "Forbidden";
  event.status_message = "jobs.batch \"train\" is forbidden";
  event.annotations = {{"authorization.k8s.io/decision", "forbid"}, {"authorization.k8s.io/reason", ""}};

  const std::string line = AuditEventJson(event);
  const json expected = json::parse(R"({
    "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata",
    "auditID": "6f0b5d3a-0000-4000-8000-000000000001", "stage": "ResponseComplete",
    "requestURI": "/apis/batch/v1/namespaces/team-nlp/jobs", "verb": "create",
    "user": {"username": "alice", "uid": "42", "groups": ["team-nlp", "system:authenticated"],
             "extra": {"authentication.kubernetes.io/credential-id": ["JTI=abc"]}},
    "sourceIPs": ["127.0.0.1"], "userAgent": "tessera/0.1.0",
    "objectRef": {"resource": "jobs", "namespace": "team-nlp", "name": "train",
                  "apiGroup": "batch", "apiVersion": "v1", "subresource": "status"},
    "responseStatus": {"metadata": {}, "status": "Failure", "message": "jobs.batch \"train\" is forbidden",
                       "reason": "Forbidden", "code": 403},
    "requestReceivedTimestamp": "2026-12-01T10:00:00.123000Z",
    "stageTimestamp": "2026-12-01T10:00:00.125000Z",
    "annotations": {"authorization.k8s.io/decision": "forbid", "authorization.k8s.io/reason": ""}})");
  EXPECT_EQ(json::parse(line), expected);
  // One line, in Kubernetes' field order.
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_TRUE(line.starts_with(R"({"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":)"))
      << line;
}

TEST(AuditLogJsonTest, ASuccessHasOnlyMetadataAndCodeInItsResponseStatus) {
  // A 201: no status, reason or message, as kube-apiserver writes a success.
  const std::string line = AuditEventJson(MakeEvent(1));
  EXPECT_EQ(json::parse(line)["responseStatus"], json::parse(R"({"metadata":{},"code":201})"));
  EXPECT_NE(line.find(R"("responseStatus":{"metadata":{},"code":201})"), std::string::npos) << line;
}

TEST(AuditLogJsonTest, ANonResourceRequestHasNoObjectRef) {
  // GET /healthz names no resource: objectRef is left out, not written empty.
  AuditEvent request = MakeEvent(1);
  request.request_uri = "/healthz";
  request.verb = "get";
  request.resource.clear();
  request.ns.clear();
  request.name.clear();
  request.api_group.clear();
  request.api_version.clear();
  request.code = 200;
  const json event = json::parse(AuditEventJson(request));
  EXPECT_FALSE(event.contains("objectRef"));
  EXPECT_EQ(event["requestURI"], "/healthz");
  EXPECT_EQ(event["verb"], "get");
}

TEST(AuditLogJsonTest, AnObjectRefLeavesOutItsEmptyFields) {
  // A create of a cluster-scoped kind in the core group: no namespace, name, apiGroup or subresource.
  AuditEvent request = MakeEvent(1);
  request.resource = "namespaces";
  request.ns.clear();
  request.name.clear();
  request.api_group.clear();
  const json event = json::parse(AuditEventJson(request));
  EXPECT_EQ(event["objectRef"], json::parse(R"({"resource":"namespaces","apiVersion":"v1"})"));
}

TEST(AuditLogJsonTest, AnAnonymousRequestLeavesOutWhatItLacks) {
  // A 401 without credentials, user agent or source IPs: user has only a name and its group.
  AuditEvent request = MakeEvent(1);
  request.user = UserInfo{.name = std::string(kUserAnonymous), .groups = {std::string(kGroupUnauthenticated)}};
  request.source_ips.clear();
  request.user_agent.clear();
  request.code = 401;
  request.status_reason = "Unauthorized";
  request.status_message = "Unauthorized";
  const json event = json::parse(AuditEventJson(request));
  EXPECT_EQ(event["user"], json::parse(R"({"username":"system:anonymous","groups":["system:unauthenticated"]})"));
  EXPECT_FALSE(event.contains("sourceIPs"));
  EXPECT_FALSE(event.contains("userAgent"));
  EXPECT_FALSE(event.contains("annotations"));
  EXPECT_EQ(event["responseStatus"]["status"], "Failure");
}

TEST(AuditLogJsonTest, AnnotationsAreWrittenAsAnObjectOfStrings) {
  // An approval: Tessera's own annotation beside the authorizer's two.
  AuditEvent request = MakeEvent(1);
  request.annotations = {{"authorization.k8s.io/decision", "allow"},
                         {"authorization.k8s.io/reason", "RBAC: allowed by ClusterRoleBinding \"admins\""},
                         {"tessera.dev/approval", "bob approved"}};
  const json event = json::parse(AuditEventJson(request));
  EXPECT_EQ(event["annotations"], json::parse(R"({"authorization.k8s.io/decision":"allow",
      "authorization.k8s.io/reason":"RBAC: allowed by ClusterRoleBinding \"admins\"",
      "tessera.dev/approval":"bob approved"})"));
}

TEST(AuditLogJsonTest, TimestampsAreMicroTimeWithSixFractionalDigits) {
  // A whole second still has six digits: 2026-12-01T10:00:00Z -> "...:00.000000Z".
  AuditEvent request = MakeEvent(1);
  request.received = Timestamp::FromMillis(1'796'119'200'000);
  request.completed = Timestamp::FromMillis(1'796'119'201'007);  // one second and 7 ms later
  const json event = json::parse(AuditEventJson(request));
  EXPECT_EQ(event["requestReceivedTimestamp"], "2026-12-01T10:00:00.000000Z");
  EXPECT_EQ(event["stageTimestamp"], "2026-12-01T10:00:01.007000Z");
}

TEST(AuditLogJsonTest, InvalidUtf8InANameDoesNotThrowAndYieldsValidJson) {
  // A name with bytes that are not UTF-8 (0xff, a lone continuation byte): each becomes U+FFFD.
  AuditEvent request = MakeEvent(1);
  request.name = "train\xff\x80x";
  request.user.name = "\xc3";  // a truncated two-byte sequence
  std::string line;
  ASSERT_NO_THROW(line = AuditEventJson(request));
  const json event = json::parse(line, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(event.is_object()) << line;
  EXPECT_EQ(event["objectRef"]["name"], "train\xEF\xBF\xBD\xEF\xBF\xBDx");
  EXPECT_EQ(event["user"]["username"], "\xEF\xBF\xBD");
}

TEST(AuditLogJsonTest, QuotesBackslashesAndControlCharactersAreEscaped) {
  // Plain ASCII is written as it is; what JSON must escape is escaped, whatever the field.
  AuditEvent request = MakeEvent(1);
  request.request_uri = "/api/v1/namespaces/a/pods?labelSelector=app%3D\"x\"";
  request.user_agent = "curl\\8.0\t\x01\x7f";
  request.user.name = "alice";
  const std::string line = AuditEventJson(request);
  EXPECT_NE(line.find(R"("userAgent":"curl\\8.0\t\u0001)"), std::string::npos) << line;
  const json event = json::parse(line, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(event.is_object()) << line;
  EXPECT_EQ(event["requestURI"], request.request_uri);
  EXPECT_EQ(event["userAgent"], request.user_agent);
  EXPECT_EQ(event["user"]["username"], "alice");
}

TEST_F(AuditLogTest, FlushMakesEveryRecordedEventReadable) {
  // 100 events, then Flush: all 100 are in the file, in order, and counted as written.
  std::unique_ptr<AuditLog> log = OpenLog(Options());
  ASSERT_NE(log, nullptr);
  for (int i = 0; i < 100; ++i) log->Record(MakeEvent(i));
  log->Flush();
  const std::vector<std::string> ids = AuditIds(path());
  ASSERT_EQ(ids.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(ids[i], "id-" + std::to_string(i));
  EXPECT_EQ(log->written(), 100);
  EXPECT_EQ(log->dropped(), 0);
}

TEST_F(AuditLogTest, TheDestructorWritesWhatWasRecorded) {
  // 50 events and no Flush: closing the log still writes them all.
  {
    std::unique_ptr<AuditLog> log = OpenLog(Options());
    ASSERT_NE(log, nullptr);
    for (int i = 0; i < 50; ++i) log->Record(MakeEvent(i));
  }
  EXPECT_EQ(AuditIds(path()).size(), 50u);
}

TEST_F(AuditLogTest, ReopeningAppendsToTheExistingLog) {
  // A restart: the 3 lines of before are kept and the 2 new ones follow them.
  {
    std::unique_ptr<AuditLog> log = OpenLog(Options());
    for (int i = 0; i < 3; ++i) log->Record(MakeEvent(i));
  }
  {
    std::unique_ptr<AuditLog> log = OpenLog(Options());
    for (int i = 3; i < 5; ++i) log->Record(MakeEvent(i));
  }
  EXPECT_EQ(AuditIds(path()), (std::vector<std::string>{"id-0", "id-1", "id-2", "id-3", "id-4"}));
}

TEST_F(AuditLogTest, LinesFromManyThreadsRecordingAtOnceAreAllThereAndWhole) {
  // 8 threads x 2000 events: 16000 lines, each a whole JSON object, each ID once.
  constexpr int kThreads = 8;
  constexpr int kPerThread = 2000;
  AuditLogOptions options = Options();
  options.queue_limit = kThreads * kPerThread;  // nothing may be dropped here
  std::unique_ptr<AuditLog> log = OpenLog(options);
  ASSERT_NE(log, nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&log, t] {
      for (int i = 0; i < kPerThread; ++i) log->Record(MakeEvent(t * kPerThread + i));
    });
  }
  for (std::thread& thread : threads) thread.join();
  log->Flush();
  const std::vector<std::string> ids = AuditIds(path());
  EXPECT_EQ(ids.size(), static_cast<size_t>(kThreads * kPerThread));
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), static_cast<size_t>(kThreads * kPerThread));
  EXPECT_EQ(log->written(), kThreads * kPerThread);
}

TEST_F(AuditLogTest, RotationAtMaxSizeKeepsEachFileWithinTheLimitAndNoLineSplit) {
  // 400 events of about 8.4 KB (3.4 MB) with a 1 MiB limit: at least 3 rotations,
  // each rotated file named "audit-<UTC time of the rotation>.log", none over 1 MiB.
  AuditLogOptions options = Options();
  options.max_size_mb = 1;
  std::unique_ptr<AuditLog> log = OpenLog(options);
  ASSERT_NE(log, nullptr);
  const Timestamp before = SystemNow();
  for (int i = 0; i < 400; ++i) log->Record(BigEvent(i));
  log->Flush();
  const Timestamp after = SystemNow();

  const std::vector<fs::path> backups = Backups(path());
  ASSERT_GE(backups.size(), 3u);
  std::vector<std::string> ids;
  for (const fs::path& file : backups) {
    EXPECT_LE(static_cast<int64_t>(fs::file_size(file)), kMb) << file;
    // Within the run, or a few ms past it where two rotations shared a millisecond.
    const Timestamp rotated = BackupNameTime(file.filename().string()).value();
    EXPECT_GE(rotated, before) << file;
    EXPECT_LE(rotated, after + Duration::Seconds(1)) << file;
    EXPECT_EQ(ReadFile(file).back(), '\n') << file;
    // A full file: the next line would not have fitted.
    EXPECT_GT(static_cast<int64_t>(fs::file_size(file) + AuditEventJson(BigEvent(999)).size() + 1), kMb) << file;
    for (std::string& id : AuditIds(file)) ids.push_back(std::move(id));
  }
  EXPECT_LE(static_cast<int64_t>(fs::file_size(path())), kMb);
  for (std::string& id : AuditIds(path())) ids.push_back(std::move(id));
  // Every event once, in order, across the rotated files (oldest first) and the current one.
  ASSERT_EQ(ids.size(), 400u);
  for (int i = 0; i < 400; ++i) EXPECT_EQ(ids[i], "id-" + std::to_string(i));
  EXPECT_EQ(log->written(), 400);
}

TEST_F(AuditLogTest, ALineLargerThanMaxSizeIsDroppedAndCounted) {
  // A 1.5 MiB line can never fit a 1 MiB file: it is dropped (as lumberjack refuses
  // it), and the event after it is written.
  AuditLogOptions options = Options();
  options.max_size_mb = 1;
  std::unique_ptr<AuditLog> log = OpenLog(options);
  AuditEvent huge = MakeEvent(0);
  huge.name = std::string(kMb * 3 / 2, 'n');
  log->Record(std::move(huge));
  log->Record(MakeEvent(1));
  log->Flush();
  EXPECT_EQ(log->dropped(), 1);
  EXPECT_EQ(log->written(), 1);
  EXPECT_EQ(AuditIds(path()), std::vector<std::string>{"id-1"});
  EXPECT_TRUE(Backups(path()).empty());
}

TEST_F(AuditLogTest, MaxBackupsPrunesTheOldestRotatedFiles) {
  // 700 events of about 8.4 KB fill 5 or more files; with max_backups 2 only the two
  // newest rotated files stay. A rotated file from 2020 goes first; a file whose name
  // is no rotation time is left alone.
  Touch(dir_ / "audit-2020-01-01T00-00-00.000.log");
  Touch(dir_ / "audit-notes.log");
  AuditLogOptions options = Options();
  options.max_size_mb = 1;
  options.max_backups = 2;
  std::unique_ptr<AuditLog> log = OpenLog(options);
  ASSERT_NE(log, nullptr);
  for (int i = 0; i < 700; ++i) log->Record(BigEvent(i));
  log->Flush();

  const std::vector<fs::path> backups = Backups(path());
  ASSERT_EQ(backups.size(), 2u);
  EXPECT_FALSE(fs::exists(dir_ / "audit-2020-01-01T00-00-00.000.log"));
  EXPECT_TRUE(fs::exists(dir_ / "audit-notes.log"));
  // What is kept is the end of the run: the two backups and the current file hold
  // the last events, up to id-699, and not the first.
  const std::vector<std::string> oldest_kept = AuditIds(backups[0]);
  ASSERT_FALSE(oldest_kept.empty());
  EXPECT_NE(oldest_kept.front(), "id-0");
  EXPECT_EQ(AuditIds(path()).back(), "id-699");
}

TEST_F(AuditLogTest, MaxAgePrunesRotatedFilesByTheTimeInTheirName) {
  // max_age_days 7: at the rotation a file named for 2020 is removed, one named
  // for yesterday is kept, and so is the file just rotated. Modification times do
  // not matter: all three were written just now.
  const std::string yesterday = BackupNameAt(SystemNow() + Duration::Seconds(-86'400));
  Touch(dir_ / "audit-2020-01-01T00-00-00.000.log");
  Touch(dir_ / yesterday);
  AuditLogOptions options = Options();
  options.max_size_mb = 1;
  options.max_age_days = 7;
  std::unique_ptr<AuditLog> log = OpenLog(options);
  ASSERT_NE(log, nullptr);
  for (int i = 0; i < 150; ++i) log->Record(BigEvent(i));  // 1.26 MB: one rotation
  log->Flush();

  EXPECT_FALSE(fs::exists(dir_ / "audit-2020-01-01T00-00-00.000.log"));
  EXPECT_TRUE(fs::exists(dir_ / yesterday));
  EXPECT_EQ(Backups(path()).size(), 2u);  // yesterday's and the new one
}

TEST_F(AuditLogTest, OpeningPrunesRotatedFilesThatHaveExpired) {
  // As lumberjack mills when it opens the file: a rotated file from 2020 goes
  // before anything needs rotating.
  Touch(dir_ / "audit-2020-01-01T00-00-00.000.log");
  AuditLogOptions options = Options();
  options.max_size_mb = 100;
  options.max_age_days = 30;
  std::unique_ptr<AuditLog> log = OpenLog(options);
  log->Record(MakeEvent(0));
  log->Flush();  // the writer prunes before its first batch
  EXPECT_FALSE(fs::exists(dir_ / "audit-2020-01-01T00-00-00.000.log"));
}

TEST_F(AuditLogTest, TheLogAndItsRotatedFilesAreMode0600) {
  // Created under a permissive umask, rotated once: both files are 0600.
  const mode_t old_umask = ::umask(0);
  AuditLogOptions options = Options();
  options.max_size_mb = 1;
  std::unique_ptr<AuditLog> log = OpenLog(options);
  ::umask(old_umask);
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(FileMode(path()), 0600);
  for (int i = 0; i < 150; ++i) log->Record(BigEvent(i));
  log->Flush();
  const std::vector<fs::path> backups = Backups(path());
  ASSERT_EQ(backups.size(), 1u);
  EXPECT_EQ(FileMode(backups[0]), 0600);
  EXPECT_EQ(FileMode(path()), 0600);
}

TEST_F(AuditLogTest, AnExistingLogReadableByOthersIsMadeMode0600) {
  // A file left 0644 by another tool: opening it takes the others' access away.
  Touch(path());
  ::chmod(path().c_str(), 0644);
  std::unique_ptr<AuditLog> log = OpenLog(Options());
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(FileMode(path()), 0600);
}

TEST_F(AuditLogTest, AMissingDirectoryIsCreatedMode0700) {
  // As kube-apiserver does: --audit-log-path=/var/log/tessera/audit.log creates the directories.
  AuditLogOptions options = Options();
  options.path = (dir_ / "var" / "log" / "audit.log").string();
  std::unique_ptr<AuditLog> log = OpenLog(options);
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(FileMode(dir_ / "var" / "log"), 0700);
  EXPECT_TRUE(fs::exists(dir_ / "var" / "log" / "audit.log"));
}

TEST_F(AuditLogTest, AFullQueueDropsAndCountsEvents) {
  // The log is a FIFO that nobody reads yet (the test holds it open, so opening
  // does not wait). Its 64 KiB fill with the first 256 KiB event, the writer waits
  // in write(2), and the queue of 4 fills: the next events are dropped and counted.
  const fs::path fifo = dir_ / "audit.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  AuditLogOptions options;
  options.path = fifo.string();
  options.queue_limit = 4;
  std::unique_ptr<AuditLog> log = OpenLog(options);
  ASSERT_NE(log, nullptr);
  AuditEvent big = MakeEvent(0);
  big.name = std::string(kMb, 'n');
  log->Record(std::move(big));
  // The writer holds at most the big event and 3 more; 4 more fill the queue: a
  // drop comes within 9 records whatever the timing.
  int recorded = 1;
  while (log->dropped() == 0 && recorded < 10) log->Record(MakeEvent(recorded++));
  EXPECT_EQ(log->dropped(), 1);
  EXPECT_LE(recorded, 9);

  // Read the FIFO while Flush waits for the writer, until Flush returns and the pipe is empty.
  std::atomic<bool> flushed = false;
  std::thread flusher([&] {
    log->Flush();
    flushed = true;
  });
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(reader, buffer, sizeof buffer);
    if (n > 0) {
      text.append(buffer, static_cast<size_t>(n));
    } else if (flushed) {
      break;  // empty after Flush returned: everything is read
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  flusher.join();
  log.reset();
  ::close(reader);

  // Every event is either a whole line or a drop: recorded = written + dropped.
  size_t whole = 0;
  for (const std::string& line : Lines(text)) whole += json::parse(line, nullptr, false).is_object() ? 1 : 0;
  EXPECT_EQ(static_cast<int>(whole) + 1, recorded);  // the one drop
}

TEST_F(AuditLogTest, OpenOnAnUnwritablePathFailsWithIoErrorNamingIt) {
  // A path under a regular file can be neither a directory nor a file (even for root).
  Touch(dir_ / "plain");
  AuditLogOptions options;
  options.path = (dir_ / "plain" / "audit.log").string();
  Result<std::unique_ptr<AuditLog>> log = AuditLog::Open(options);
  ASSERT_FALSE(log.has_value());
  EXPECT_EQ(log.error().code(), StatusCode::kIoError);
  EXPECT_NE(log.error().message().find(options.path), std::string::npos) << log.error().message();
}

TEST_F(AuditLogTest, OpenOnADirectoryFailsWithIoErrorNamingIt) {
  // --audit-log-path pointing at a directory.
  AuditLogOptions options;
  options.path = dir_.string();
  Result<std::unique_ptr<AuditLog>> log = AuditLog::Open(options);
  ASSERT_FALSE(log.has_value());
  EXPECT_EQ(log.error().code(), StatusCode::kIoError);
  EXPECT_NE(log.error().message().find(options.path), std::string::npos) << log.error().message();
}

TEST_F(AuditLogTest, NegativeLimitsAreRefused) {
  // --audit-log-maxbackup=-1 is a mistake to report, not "all".
  AuditLogOptions options = Options();
  options.max_backups = -1;
  Result<std::unique_ptr<AuditLog>> log = AuditLog::Open(options);
  ASSERT_FALSE(log.has_value());
  EXPECT_EQ(log.error().code(), StatusCode::kInvalidArgument);
}

TEST_F(AuditLogTest, DashWritesToStandardOutputAndNeverRotates) {
  // "-": the lines go to fd 1 (pointed at a file here), however small max_size_mb.
  const fs::path captured = dir_ / "stdout.txt";
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  ASSERT_GE(saved, 0);
  const int file = ::open(captured.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(file, 0);
  ::dup2(file, STDOUT_FILENO);
  ::close(file);
  {
    AuditLogOptions options;
    options.path = "-";
    options.max_size_mb = 1;
    std::unique_ptr<AuditLog> log = OpenLog(options);
    for (int i = 0; i < 150; ++i) log->Record(BigEvent(i));  // 1.26 MB: past the limit, yet no rotation
  }
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  EXPECT_EQ(AuditIds(captured).size(), 150u);
  EXPECT_GT(static_cast<int64_t>(fs::file_size(captured)), kMb);
  // stdout stays open after the log is gone.
  EXPECT_NE(::fcntl(STDOUT_FILENO, F_GETFD), -1);
}

}  // namespace
}  // namespace tessera

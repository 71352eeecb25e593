// Per-pod log files: rotation under a cap, tails, following across rotations,
// and a real pod's output through its FIFO.
#include "agent/log_files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "agent/process_runner.h"
#include "tests/testing/read_file.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tessera-logs-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

using testing::ReadFile;

LogFileSet Files(const TempDir& dir, int64_t max_file_bytes, int max_rotated_files) {
  return {.dir = dir.path(), .max_file_bytes = max_file_bytes, .max_rotated_files = max_rotated_files};
}

// n bytes that differ from position to position: "0123456789012..."
std::string Pattern(int64_t begin, int64_t n) {
  std::string out;
  for (int64_t i = begin; i < begin + n; ++i) out += static_cast<char>('0' + i % 10);
  return out;
}

// Everything a follower has to give right now.
std::string Drain(LogFollower& follower, bool* gap = nullptr) {
  std::string out;
  while (true) {
    Result<LogChunk> chunk = follower.ReadNew();
    EXPECT_TRUE(chunk.has_value()) << chunk.error().ToString();
    if (!chunk) return out;
    if (gap != nullptr) *gap = *gap || chunk->gap;
    if (chunk->bytes.empty()) return out;
    out += chunk->bytes;
  }
}

// 1000 bytes through a 100-byte cap keeping 2 old files: each file is exactly
// full, the oldest are dropped, and the kept files are the stream's last bytes.
TEST(RotatingLogWriterTest, RotationKeepsTheCap) {
  TempDir dir;
  const LogFileSet files = Files(dir, 100, 2);
  Result<RotatingLogWriter> writer = RotatingLogWriter::Open(files);
  ASSERT_TRUE(writer.has_value()) << writer.error().ToString();
  for (int64_t at = 0; at < 1000; at += 37)
    ASSERT_TRUE(writer->Append(Pattern(at, std::min<int64_t>(37, 1000 - at))).ok());

  // 1000 / 100 = 10 files' worth; the live file is full (rotation waits for
  // the next byte), .1 and .2 are the two before it.
  EXPECT_EQ(ReadFile(files.Path(0)), Pattern(900, 100));
  EXPECT_EQ(ReadFile(files.Path(1)), Pattern(800, 100));
  EXPECT_EQ(ReadFile(files.Path(2)), Pattern(700, 100));
  EXPECT_FALSE(std::filesystem::exists(files.Path(3)));
  EXPECT_EQ(writer->live_file_bytes(), 100);

  ASSERT_TRUE(writer->Append("x").ok());  // the 1001st byte starts a new file
  EXPECT_EQ(ReadFile(files.Path(0)), "x");
  EXPECT_EQ(ReadFile(files.Path(2)), Pattern(800, 100));
}

// A writer opened again (an agent restart) appends to the live file and
// rotates at the same cap: 50 + 80 bytes at a 100-byte cap = 100 + 30.
TEST(RotatingLogWriterTest, ReopenedWriterContinuesTheLiveFile) {
  TempDir dir;
  const LogFileSet files = Files(dir, 100, 3);
  ASSERT_TRUE(RotatingLogWriter::Open(files)->Append(Pattern(0, 50)).ok());
  Result<RotatingLogWriter> reopened = RotatingLogWriter::Open(files);
  ASSERT_TRUE(reopened.has_value());
  EXPECT_EQ(reopened->live_file_bytes(), 50);
  ASSERT_TRUE(reopened->Append(Pattern(50, 80)).ok());
  EXPECT_EQ(ReadFile(files.Path(1)), Pattern(0, 100));
  EXPECT_EQ(ReadFile(files.Path(0)), Pattern(100, 30));
}

// Keeping no old files: a full live file is replaced.
TEST(RotatingLogWriterTest, ZeroRotatedFilesKeepsOnlyTheLiveFile) {
  TempDir dir;
  const LogFileSet files = Files(dir, 10, 0);
  Result<RotatingLogWriter> writer = RotatingLogWriter::Open(files);
  ASSERT_TRUE(writer->Append(Pattern(0, 25)).ok());
  EXPECT_EQ(ReadFile(files.Path(0)), Pattern(20, 5));  // 25 = 10 + 10 + 5
  EXPECT_FALSE(std::filesystem::exists(files.Path(1)));
}

TEST(RotatingLogWriterTest, RejectsANonPositiveCap) {
  TempDir dir;
  Result<RotatingLogWriter> writer = RotatingLogWriter::Open(Files(dir, 0, 1));
  ASSERT_FALSE(writer.has_value());
  EXPECT_EQ(writer.error().code(), StatusCode::kInvalidArgument);
}

// A follower reading while the writer rotates many times sees every byte once,
// in order. Writes of 1..50 bytes at a 64-byte cap rotate about every other
// write; one follower reads after each write (sometimes a few bytes at a time),
// another after every third; both stay within the 4 kept files (256 bytes).
TEST(LogFollowerTest, FollowAcrossRotationsReadsEveryByteOnce) {
  TempDir dir;
  const LogFileSet files = Files(dir, 64, 4);
  Result<RotatingLogWriter> writer = RotatingLogWriter::Open(files);
  ASSERT_TRUE(writer.has_value());
  Result<LogFollower> eager = LogFollower::Open(files, LogStart::Beginning());
  Result<LogFollower> lazy = LogFollower::Open(files, LogStart::Beginning());
  ASSERT_TRUE(eager.has_value() && lazy.has_value());

  std::mt19937 rng(42);
  std::string written;
  std::string eager_read;
  std::string lazy_read;
  bool gap = false;
  for (int i = 0; i < 400; ++i) {
    const int64_t n = std::uniform_int_distribution<int64_t>(1, 50)(rng);
    const std::string piece = Pattern(static_cast<int64_t>(written.size()), n);
    ASSERT_TRUE(writer->Append(piece).ok());
    written += piece;
    if (i % 2 == 0) {
      Result<LogChunk> small = eager->ReadNew(7);  // a few bytes: the rest waits for the next call
      ASSERT_TRUE(small.has_value());
      gap = gap || small->gap;
      eager_read += small->bytes;
    } else {
      eager_read += Drain(*eager, &gap);
    }
    if (i % 3 == 2) lazy_read += Drain(*lazy, &gap);
  }
  eager_read += Drain(*eager, &gap);
  lazy_read += Drain(*lazy, &gap);
  EXPECT_FALSE(gap);
  EXPECT_GT(written.size(), 64u * 100);  // well over a hundred rotations
  EXPECT_EQ(eager_read, written);
  EXPECT_EQ(lazy_read, written);
}

// The same with the writer and the follower in two threads, so the follower
// also meets files in the middle of a rotation (renamed, the new live file not
// yet created). The writer waits when it gets 4 files (4 KiB) ahead, well within
// the 8 kept, so the check is exactly-once rather than how fast threads run.
TEST(LogFollowerTest, ConcurrentFollowReadsEveryByteOnce) {
  TempDir dir;
  const LogFileSet files = Files(dir, 1024, 8);
  Result<RotatingLogWriter> writer = RotatingLogWriter::Open(files);
  Result<LogFollower> follower = LogFollower::Open(files, LogStart::Beginning());
  ASSERT_TRUE(writer.has_value() && follower.has_value());
  constexpr int64_t kTotal = 256 * 1024;  // 256 rotations
  std::atomic<int64_t> read_so_far{0};
  std::atomic<bool> writer_failed{false};
  std::thread writing([&] {
    std::mt19937 rng(7);
    int64_t written = 0;
    while (written < kTotal) {
      while (written - read_so_far.load() > 4 * 1024) std::this_thread::yield();
      const int64_t n = std::min<int64_t>(kTotal - written, std::uniform_int_distribution<int64_t>(1, 700)(rng));
      if (!writer->Append(Pattern(written, n)).ok()) writer_failed = true;
      written += n;
    }
  });
  std::string got;
  bool gap = false;
  std::mt19937 read_sizes(11);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (static_cast<int64_t>(got.size()) < kTotal && std::chrono::steady_clock::now() < deadline) {
    Result<LogChunk> chunk = follower->ReadNew(std::uniform_int_distribution<size_t>(1, 3000)(read_sizes));
    ASSERT_TRUE(chunk.has_value());
    gap = gap || chunk->gap;
    got += chunk->bytes;
    read_so_far = static_cast<int64_t>(got.size());
  }
  writing.join();
  EXPECT_FALSE(writer_failed);
  EXPECT_FALSE(gap);
  EXPECT_EQ(got.size(), static_cast<size_t>(kTotal));
  EXPECT_TRUE(got == Pattern(0, kTotal)) << "bytes differ from what was written";
}

// A follower that falls further behind than the kept files reports a gap, then
// carries on with the oldest byte still kept.
TEST(LogFollowerTest, FollowerThatFallsBehindReportsAGap) {
  TempDir dir;
  const LogFileSet files = Files(dir, 10, 1);
  Result<RotatingLogWriter> writer = RotatingLogWriter::Open(files);
  ASSERT_TRUE(writer->Append(Pattern(0, 5)).ok());
  Result<LogFollower> follower = LogFollower::Open(files, LogStart::Beginning());
  ASSERT_TRUE(follower.has_value());
  EXPECT_EQ(Drain(*follower), Pattern(0, 5));

  ASSERT_TRUE(writer->Append(Pattern(5, 95)).ok());  // 100 bytes: 10 files, 2 kept
  bool gap = false;
  // The rest of the file it holds open (5..9), then, after the gap, what is
  // kept: .1 = 80..89 and live = 90..99.
  EXPECT_EQ(Drain(*follower, &gap), Pattern(5, 5) + Pattern(80, 20));
  EXPECT_TRUE(gap);
}

// Starting at the end shows only what is written afterwards.
TEST(LogFollowerTest, FollowFromEndSeesOnlyNewOutput) {
  TempDir dir;
  const LogFileSet files = Files(dir, 100, 2);
  Result<RotatingLogWriter> writer = RotatingLogWriter::Open(files);
  ASSERT_TRUE(writer->Append("old\n").ok());
  Result<LogFollower> follower = LogFollower::Open(files, LogStart::End());
  ASSERT_TRUE(follower.has_value());
  EXPECT_EQ(Drain(*follower), "");
  ASSERT_TRUE(writer->Append("new\n").ok());
  EXPECT_EQ(Drain(*follower), "new\n");
}

// A follower opened before the pod wrote anything starts at the first byte.
TEST(LogFollowerTest, FollowerOpenedBeforeAnyOutputStartsAtTheFirstByte) {
  TempDir dir;
  const LogFileSet files = Files(dir, 10, 3);
  Result<LogFollower> follower = LogFollower::Open(files, LogStart::End());
  ASSERT_TRUE(follower.has_value());
  EXPECT_EQ(Drain(*follower), "");
  Result<RotatingLogWriter> writer = RotatingLogWriter::Open(files);
  ASSERT_TRUE(writer->Append(Pattern(0, 25)).ok());  // already rotated twice
  EXPECT_EQ(Drain(*follower), Pattern(0, 25));
}

// The last lines, across rotated files: 20 lines of 7 bytes at a 32-byte cap.
TEST(LogTailTest, LastLinesSpanRotatedFiles) {
  TempDir dir;
  const LogFileSet files = Files(dir, 32, 10);
  Result<RotatingLogWriter> writer = RotatingLogWriter::Open(files);
  std::string all;
  for (int i = 10; i < 30; ++i) all += "line" + std::to_string(i) + "\n";
  ASSERT_TRUE(writer->Append(all).ok());
  ASSERT_TRUE(std::filesystem::exists(files.Path(2)));  // 140 bytes / 32 = 5 files

  EXPECT_EQ(*ReadLogTail(files, 3), "line27\nline28\nline29\n");
  EXPECT_EQ(*ReadLogTail(files, 9), all.substr(11 * 7));  // lines 21..29, 7 bytes each
  EXPECT_EQ(*ReadLogTail(files, 100), all);               // fewer kept than asked: all
  EXPECT_EQ(*ReadLogTail(files, 0), "");
}

// An unfinished last line counts as a line, as with `tail -n`.
TEST(LogTailTest, UnfinishedLastLineCounts) {
  TempDir dir;
  const LogFileSet files = Files(dir, 1000, 1);
  ASSERT_TRUE(RotatingLogWriter::Open(files)->Append("a\nb\nc").ok());
  EXPECT_EQ(*ReadLogTail(files, 2), "b\nc");
}

// A follower can start some lines or bytes back and then keep following.
TEST(LogTailTest, FollowFromTheTailContinuesWithNewOutput) {
  TempDir dir;
  const LogFileSet files = Files(dir, 8, 5);
  Result<RotatingLogWriter> writer = RotatingLogWriter::Open(files);
  ASSERT_TRUE(writer->Append("one\ntwo\nthree\n").ok());
  Result<LogFollower> lines = LogFollower::Open(files, LogStart::LastLines(2));
  Result<LogFollower> bytes = LogFollower::Open(files, LogStart::LastBytes(8));
  ASSERT_TRUE(lines.has_value() && bytes.has_value());
  EXPECT_EQ(Drain(*lines), "two\nthree\n");
  EXPECT_EQ(Drain(*bytes), "o\nthree\n");
  ASSERT_TRUE(writer->Append("four\n").ok());
  EXPECT_EQ(Drain(*lines), "four\n");
  EXPECT_EQ(Drain(*bytes), "four\n");
}

// ---------------------------------------------------------------------------
// A real pod's output through its FIFO.

Timestamp Now() {
  return Timestamp::FromMillis(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

template <typename Condition>
bool Eventually(Condition condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

std::optional<ProcessExit> WaitForExit(ProcessRunner& runner, const ProcessIdentity& id) {
  std::optional<ProcessExit> exit;
  Eventually([&] {
    Result<std::optional<ProcessExit>> polled = runner.Poll(id, Now());
    exit = polled.value_or(std::nullopt);
    return !polled || exit.has_value();
  });
  return exit;
}

ProcessSpec PodWritingTo(const TempDir& dir, const LogFileSet& files, std::string script) {
  return {.argv = {"sh", "-c", std::move(script)}, .working_dir = dir.path(), .output_path = files.FifoPath()};
}

// Copies until a Pump finds nothing more, for a pod that has ended.
void PumpDry(LogPump& pump) {
  while (true) {
    Result<int64_t> copied = pump.Pump();
    ASSERT_TRUE(copied.has_value()) << copied.error().ToString();
    if (*copied == 0) return;
  }
}

// stdout and stderr go through the FIFO into rotated files. The pump is opened
// before the pod starts, so output written just before the pod exits is kept
// until it is copied, here entirely after the exit.
TEST(LogPumpTest, PodOutputReachesTheRotatedFiles) {
  TempDir dir;
  const LogFileSet files = Files(dir, 16, 10);
  ASSERT_TRUE(LogPump::CreateFifo(files.FifoPath()).ok());
  Result<LogPump> pump = LogPump::Open(files.FifoPath(), *RotatingLogWriter::Open(files));
  ASSERT_TRUE(pump.has_value()) << pump.error().ToString();
  ProcessRunner runner;
  Result<RunningProcess> pod =
      runner.Start(PodWritingTo(dir, files, "for i in 1 2 3 4 5 6; do echo out$i; echo err$i >&2; done"));
  ASSERT_TRUE(pod.has_value()) << pod.error().ToString();

  ASSERT_TRUE(WaitForExit(runner, pod->identity).has_value());
  PumpDry(*pump);
  // 6 * ("outN\n" + "errN\n") = 60 bytes at a 16-byte cap: 4 files.
  EXPECT_EQ(*ReadLogTail(files, 100), "out1\nerr1\nout2\nerr2\nout3\nerr3\nout4\nerr4\nout5\nerr5\nout6\nerr6\n");
  EXPECT_TRUE(std::filesystem::exists(files.Path(3)));
  for (int g = 0; g <= 3; ++g) EXPECT_LE(std::filesystem::file_size(files.Path(g)), 16u);
}

// The agent restarts while the pod runs: with no agent reading the FIFO, the
// pod neither dies of SIGPIPE nor loses output; the new agent's pump gets the rest.
TEST(LogPumpTest, PodSurvivesTheReaderGoingAway) {
  TempDir dir;
  const LogFileSet files = Files(dir, 1024, 1);
  ASSERT_TRUE(LogPump::CreateFifo(files.FifoPath()).ok());
  std::optional<LogPump> first(*LogPump::Open(files.FifoPath(), *RotatingLogWriter::Open(files)));
  ProcessRunner runner;
  Result<RunningProcess> pod = runner.Start(
      PodWritingTo(dir, files,
                   "echo before; while [ ! -e away ]; do sleep 0.01; done; echo while-away; touch written; "
                   "while [ ! -e back ]; do sleep 0.01; done; echo after"));
  ASSERT_TRUE(pod.has_value()) << pod.error().ToString();
  ASSERT_TRUE(Eventually([&] {
    (void)first->Pump();
    return ReadFile(files.Path(0)) == "before\n";
  }));
  first.reset();  // the agent is gone
  std::ofstream(dir.path() + "/away").flush();
  ASSERT_TRUE(Eventually([&] { return std::filesystem::exists(dir.path() + "/written"); }));
  Result<std::optional<ProcessExit>> still = runner.Poll(pod->identity, Now());
  ASSERT_TRUE(still.has_value());
  EXPECT_FALSE(still->has_value()) << (*still)->Describe();  // alive: no SIGPIPE

  Result<LogPump> second = LogPump::Open(files.FifoPath(), *RotatingLogWriter::Open(files));
  ASSERT_TRUE(second.has_value());
  std::ofstream(dir.path() + "/back").flush();
  std::optional<ProcessExit> exit = WaitForExit(runner, pod->identity);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->Describe(), "exited with code 0");
  PumpDry(*second);
  EXPECT_EQ(ReadFile(files.Path(0)), "before\nwhile-away\nafter\n");
}

TEST(LogPumpTest, CreateFifoKeepsAnExistingFifoAndRefusesAFile) {
  TempDir dir;
  const std::string path = dir.path() + "/pod.log.fifo";
  ASSERT_TRUE(LogPump::CreateFifo(path).ok());
  EXPECT_TRUE(LogPump::CreateFifo(path).ok());  // an agent restart
  std::ofstream(dir.path() + "/plain") << "x";
  Status refused = LogPump::CreateFifo(dir.path() + "/plain");
  EXPECT_EQ(refused.code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(refused.message(), HasSubstr("not a FIFO"));
}

}  // namespace
}  // namespace tessera

// Per-pod log files: a pod's output, kept on the node under a size cap, read back
// as a tail, and followed as it grows (what `logs -f` streams).
//
// How output reaches the files, and why this way
//   A child writing straight into pod.log (O_APPEND) cannot be rotated correctly:
//   after rename(pod.log, pod.log.1) it goes on writing into the renamed inode,
//   so the cap is not kept; and copytruncate loses whatever is written between
//   its copy and its truncate. So the pod writes into a FIFO (pod.log.fifo, made
//   by LogPump::CreateFifo and passed as ProcessSpec::output_path) and the agent,
//   the only writer of the files, copies from it into pod.log (LogPump), starting
//   a new file when the live one reaches the cap (RotatingLogWriter).
//   A FIFO, not an anonymous pipe, because the agent may restart while the pod
//   runs: the new agent opens the FIFO again by its path. The pod holds its end
//   read-write, so the FIFO never lacks a reader and the pod is never killed by
//   SIGPIPE while no agent runs; the agent's end is read-write too (see LogPump).
//   Trade-offs: while no agent reads, a pod that fills the pipe's buffer (raised
//   to 1 MiB where the host allows) blocks in write() until an agent is back;
//   output still in the buffer when the pod's last process exits while no agent
//   runs is lost; and every chunk of output costs the agent a read and a write.
//   In exchange the cap holds exactly and no byte is lost to rotation.
//
// The files, and the invariants followers rely on
//   <dir>/<base> is the live file; <base>.1 ... <base>.N are older (.N oldest),
//   at most N = max_rotated_files of them, each file at most max_file_bytes.
//   Rotation renames .N-1 over .N (dropping the oldest), ..., the live file to
//   .1, then creates a new live file. Only the live file is ever written, so a
//   file that is no longer live never changes again. That, and holding the file
//   open (an open inode cannot be reused), let a LogFollower read every byte
//   exactly once across rotations with no state shared with the writer.
//
// Thread-safety: a RotatingLogWriter and its LogPump belong to one thread (one
// per pod). Any number of LogFollowers, in any thread or process, read at once;
// each LogFollower is used by one thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "common/result.h"

namespace tessera {

// A pod's log files: where they are and how much of them to keep.
struct LogFileSet {
  std::string dir;
  std::string base_name = "pod.log";
  int64_t max_file_bytes = int64_t{10} << 20;
  int max_rotated_files = 3;  // besides the live file; 0 keeps only the live file

  // generation 0 is the live file, 1..max_rotated_files the older ones.
  std::string Path(int generation) const;
  // The FIFO the pod writes into.
  std::string FifoPath() const;
};

// The only writer of a LogFileSet. Appends to the live file and rotates it when
// it is full, splitting a write at the cap so that no file exceeds it.
class RotatingLogWriter {
 public:
  // Creates `files.dir` (one level) when missing; appends to an existing live
  // file, so an agent restart continues where the last one stopped.
  static Result<RotatingLogWriter> Open(LogFileSet files);

  Status Append(std::string_view bytes);

  const LogFileSet& files() const { return files_; }
  int64_t live_file_bytes() const { return live_bytes_; }

  RotatingLogWriter(RotatingLogWriter&& other) noexcept;
  RotatingLogWriter& operator=(RotatingLogWriter&& other) noexcept;
  ~RotatingLogWriter();

 private:
  RotatingLogWriter(LogFileSet files, int fd, int64_t live_bytes)
      : files_(std::move(files)), fd_(fd), live_bytes_(live_bytes) {}
  Status Rotate();

  LogFileSet files_;
  int fd_ = -1;
  int64_t live_bytes_ = 0;
};

// Copies what a pod writes into its FIFO to its RotatingLogWriter, without
// blocking: the agent's loop calls Pump for each pod (or when fd() is readable).
//
// The pump holds the FIFO open read-write, not just for reading. A FIFO's
// buffer is discarded when its last descriptor closes, so a pod that writes and
// exits before the agent reads would otherwise lose its last output; and a
// reader alone would see end-of-file before the pod has opened its end. So:
// open the pump before starting the pod; Pump while it runs; and once Poll has
// reported its end (its processes are all gone by then), Pump once more to copy
// the last of its output. End-of-output is the process's end, not end-of-file.
class LogPump {
 public:
  // Makes the FIFO at `path`; an existing FIFO there is kept (an agent restart).
  static Status CreateFifo(const std::string& path);

  // Opens the FIFO; a restarted agent opens it again to go on where the last
  // one stopped (what the pod wrote meanwhile waits in the FIFO).
  static Result<LogPump> Open(const std::string& fifo_path, RotatingLogWriter writer);

  // Copies what is buffered now, at most `max_bytes`, and returns how much; 0
  // when nothing is. On a write error (disk full) the bytes read in that step
  // are lost and the error is returned; the next call goes on after them.
  Result<int64_t> Pump(int64_t max_bytes = int64_t{1} << 20);

  int fd() const { return fd_; }  // for poll/epoll
  const RotatingLogWriter& writer() const { return writer_; }

  LogPump(LogPump&& other) noexcept;
  LogPump& operator=(LogPump&& other) noexcept;
  ~LogPump();

 private:
  LogPump(int fd, RotatingLogWriter writer) : fd_(fd), writer_(std::move(writer)) {}

  int fd_ = -1;
  RotatingLogWriter writer_;
};

// Where a LogFollower starts reading.
struct LogStart {
  enum class Kind { kBeginning, kEnd, kLastLines, kLastBytes };
  Kind kind = Kind::kEnd;
  int64_t count = 0;

  static LogStart Beginning() { return {Kind::kBeginning, 0}; }           // the oldest byte kept
  static LogStart End() { return {Kind::kEnd, 0}; }                       // only what is written from now on
  static LogStart LastLines(int64_t n) { return {Kind::kLastLines, n}; }  // as `tail -n`
  static LogStart LastBytes(int64_t n) { return {Kind::kLastBytes, n}; }  // as `tail -c`
};

struct LogChunk {
  std::string bytes;  // empty: nothing new for now
  // Output between the previous chunk and this one may be missing: the file
  // after the one this follower finished was dropped before it got there (it
  // fell more than max_rotated_files files behind; with max_rotated_files 0,
  // any rotation). Only the count of lost bytes is unknown, never their order.
  bool gap = false;
};

// Reads a pod's output in order, across rotations, each byte once. Holds the
// file it is reading open; needs only the file names (dir, base_name,
// max_rotated_files) and no cooperation from the writer.
class LogFollower {
 public:
  static Result<LogFollower> Open(LogFileSet files, LogStart start);

  // Non-blocking: the bytes written since the last call (at most `max_bytes`),
  // empty when there are none yet. Call again to continue; a `logs -f` handler
  // calls it whenever it wakes up.
  Result<LogChunk> ReadNew(size_t max_bytes = size_t{64} << 10);

  LogFollower(LogFollower&& other) noexcept;
  LogFollower& operator=(LogFollower&& other) noexcept;
  ~LogFollower();

 private:
  explicit LogFollower(LogFileSet files) : files_(std::move(files)) {}
  void HoldFile(int fd, dev_t dev, ino_t ino, int64_t offset);
  bool IsLive() const;
  enum class NextFile { kOpened, kNotYet, kLost };
  NextFile OpenNextNewer();
  bool OpenOldest();

  LogFileSet files_;
  int fd_ = -1;  // -1: no file yet; the oldest one that appears is read from its start
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  int64_t offset_ = 0;
};

// The last `lines` lines kept (across rotated files), as `tail -n`.
Result<std::string> ReadLogTail(const LogFileSet& files, int64_t lines);

}  // namespace tessera

#include "agent/log_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "common/unique_fd.h"

namespace tessera {

namespace {

constexpr int64_t kPipeBufferBytes = int64_t{1} << 20;  // /proc/sys/fs/pipe-max-size by default
constexpr size_t kCopyChunkBytes = size_t{64} << 10;
// A new follower retries a snapshot of the files this often when rotations keep
// moving them while it opens them.
constexpr int kSnapshotAttempts = 4;

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// A file's identity: an inode stays the same file across renames, and is not
// reused while someone holds it open.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  friend bool operator==(const FileId&, const FileId&) = default;
};

std::optional<FileId> StatId(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{st.st_dev, st.st_ino};
}

struct OpenedLog {
  UniqueFd fd;
  FileId id;
  int64_t size = 0;
};

// nullopt when `path` does not exist (rotated away, or not yet created).
Result<std::optional<OpenedLog>> OpenForReading(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<OpenedLog>();
    return Err(Status::IoError(fmt::format("cannot open {}: {}", path, ErrnoText(errno))));
  }
  UniqueFd owner(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return Err(Status::IoError(fmt::format("cannot stat {}: {}", path, ErrnoText(errno))));
  return std::optional<OpenedLog>(OpenedLog{std::move(owner), {st.st_dev, st.st_ino}, st.st_size});
}

// The kept files, newest first, each held open. Generations are opened one at
// a time, so a rotation meanwhile can move files under us; the result is
// checked against the names afterwards and taken again when it moved.
Result<std::vector<OpenedLog>> OpenKeptFiles(const LogFileSet& files) {
  std::vector<OpenedLog> kept;
  for (int attempt = 0; attempt < kSnapshotAttempts; ++attempt) {
    kept.clear();
    std::vector<int> generations;
    for (int g = 0; g <= files.max_rotated_files; ++g) {
      ASSIGN_OR_RETURN(std::optional<OpenedLog> opened, OpenForReading(files.Path(g)));
      if (!opened) {
        if (g == 0) continue;  // between a rotation's rename and its new live file
        break;                 // no older files
      }
      kept.push_back(std::move(*opened));
      generations.push_back(g);
    }
    bool unchanged = true;
    for (size_t i = 0; i < kept.size() && unchanged; ++i) {
      unchanged = StatId(files.Path(generations[i])) == kept[i].id;
    }
    if (unchanged) break;
  }
  return kept;
}

// Reads exactly [begin, end) of `fd` into `out`; false when the file is shorter.
Result<bool> ReadRange(int fd, int64_t begin, int64_t end, std::string* out) {
  out->resize(static_cast<size_t>(end - begin));
  size_t done = 0;
  while (done < out->size()) {
    const ssize_t n = ::pread(fd, out->data() + done, out->size() - done, begin + static_cast<int64_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Err(Status::IoError(fmt::format("cannot read a log file: {}", ErrnoText(errno))));
    if (n == 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

struct StreamPosition {
  size_t file = 0;  // index into the kept files, newest first
  int64_t offset = 0;
};

// Where the last `lines` lines begin, scanning backwards from the newest byte.
// A newline that ends the stream ends the last line; it does not start another.
Result<StreamPosition> FindLastLines(const std::vector<OpenedLog>& kept, int64_t lines) {
  if (lines == 0) return StreamPosition{0, kept[0].size};
  bool at_stream_end = true;
  int64_t newlines_to_pass = lines;
  std::string block;
  for (size_t i = 0; i < kept.size(); ++i) {
    int64_t end = kept[i].size;
    while (end > 0) {
      const int64_t begin = std::max<int64_t>(0, end - static_cast<int64_t>(kCopyChunkBytes));
      ASSIGN_OR_RETURN(bool complete, ReadRange(kept[i].fd.get(), begin, end, &block));
      if (!complete) break;  // cut short by someone other than the writer; use what is older
      for (int64_t p = end - 1; p >= begin; --p) {
        const bool newline = block[static_cast<size_t>(p - begin)] == '\n';
        if (std::exchange(at_stream_end, false) && newline) continue;
        if (newline && --newlines_to_pass == 0) return StreamPosition{i, p + 1};
      }
      end = begin;
    }
  }
  return StreamPosition{kept.size() - 1, 0};  // fewer lines kept than asked for: all of them
}

StreamPosition FindLastBytes(const std::vector<OpenedLog>& kept, int64_t bytes) {
  for (size_t i = 0; i < kept.size(); ++i) {
    if (bytes <= kept[i].size) return {i, kept[i].size - bytes};
    bytes -= kept[i].size;
  }
  return {kept.size() - 1, 0};
}

Status ValidateFileSet(const LogFileSet& files) {
  if (files.dir.empty() || files.base_name.empty() || files.base_name.find('/') != std::string::npos) {
    return Status::InvalidArgument(fmt::format(
        "log files need a directory and a plain file name (got \"{}\" and \"{}\")", files.dir, files.base_name));
  }
  if (files.max_file_bytes <= 0) {
    return Status::InvalidArgument(fmt::format("log file cap must be positive, not {}", files.max_file_bytes));
  }
  if (files.max_rotated_files < 0) {
    return Status::InvalidArgument(
        fmt::format("rotated log files kept must be 0 or more, not {}", files.max_rotated_files));
  }
  return Status::Ok();
}

Result<int> OpenLiveForAppend(const std::string& path, int extra_flags) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | extra_flags, 0640);
  if (fd < 0) return Err(Status::IoError(fmt::format("cannot open log file {}: {}", path, ErrnoText(errno))));
  return fd;
}

}  // namespace

// ---------------------------------------------------------------------------
// LogFileSet.

std::string LogFileSet::Path(int generation) const {
  return generation == 0 ? fmt::format("{}/{}", dir, base_name) : fmt::format("{}/{}.{}", dir, base_name, generation);
}

std::string LogFileSet::FifoPath() const { return fmt::format("{}/{}.fifo", dir, base_name); }

// ---------------------------------------------------------------------------
// RotatingLogWriter.

Result<RotatingLogWriter> RotatingLogWriter::Open(LogFileSet files) {
  RETURN_IF_ERROR(ValidateFileSet(files));
  if (::mkdir(files.dir.c_str(), 0750) != 0 && errno != EEXIST) {
    return Err(Status::IoError(fmt::format("cannot create log directory {}: {}", files.dir, ErrnoText(errno))));
  }
  ASSIGN_OR_RETURN(int fd, OpenLiveForAppend(files.Path(0), 0));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    return Err(Status::IoError(fmt::format("cannot stat {}: {}", files.Path(0), ErrnoText(error))));
  }
  return RotatingLogWriter(std::move(files), fd, st.st_size);
}

RotatingLogWriter::RotatingLogWriter(RotatingLogWriter&& other) noexcept
    : files_(std::move(other.files_)), fd_(std::exchange(other.fd_, -1)), live_bytes_(other.live_bytes_) {}

RotatingLogWriter& RotatingLogWriter::operator=(RotatingLogWriter&& other) noexcept {
  if (this != &other) {
    CloseFd(fd_);
    files_ = std::move(other.files_);
    fd_ = std::exchange(other.fd_, -1);
    live_bytes_ = other.live_bytes_;
  }
  return *this;
}

RotatingLogWriter::~RotatingLogWriter() { CloseFd(fd_); }

Status RotatingLogWriter::Append(std::string_view bytes) {
  while (!bytes.empty()) {
    // Rotate when full rather than right after filling, so that no empty live
    // file is made for output that may never come.
    if (live_bytes_ >= files_.max_file_bytes) RETURN_IF_ERROR(Rotate());
    const size_t room = static_cast<size_t>(files_.max_file_bytes - live_bytes_);
    const std::string_view piece = bytes.substr(0, room);
    const ssize_t n = ::write(fd_, piece.data(), piece.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IoError(fmt::format("cannot write log file {}: {}", files_.Path(0), ErrnoText(errno)));
    live_bytes_ += n;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

// Renames oldest first, so every file always has a name until the oldest is
// dropped; followers rely on names only moving to higher generations.
Status RotatingLogWriter::Rotate() {
  if (files_.max_rotated_files == 0) {
    if (::unlink(files_.Path(0).c_str()) != 0 && errno != ENOENT) {
      return Status::IoError(fmt::format("cannot remove full log file {}: {}", files_.Path(0), ErrnoText(errno)));
    }
  } else {
    for (int g = files_.max_rotated_files - 1; g >= 0; --g) {
      if (::rename(files_.Path(g).c_str(), files_.Path(g + 1).c_str()) != 0 && errno != ENOENT) {
        return Status::IoError(
            fmt::format("cannot rotate {} to {}: {}", files_.Path(g), files_.Path(g + 1), ErrnoText(errno)));
      }
    }
  }
  ASSIGN_OR_RETURN(int fd, OpenLiveForAppend(files_.Path(0), O_TRUNC));
  CloseFd(fd_);
  fd_ = fd;
  live_bytes_ = 0;
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// LogPump.

Status LogPump::CreateFifo(const std::string& path) {
  if (::mkfifo(path.c_str(), 0600) == 0) return Status::Ok();
  if (errno != EEXIST) return Status::IoError(fmt::format("cannot create FIFO {}: {}", path, ErrnoText(errno)));
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode)) return Status::Ok();
  return Status::AlreadyExists(fmt::format("{} exists and is not a FIFO", path));
}

Result<LogPump> LogPump::Open(const std::string& fifo_path, RotatingLogWriter writer) {
  // Read-write: see the class comment. O_NONBLOCK: reads never wait.
  const int fd = ::open(fifo_path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Err(Status::IoError(fmt::format("cannot open FIFO {}: {}", fifo_path, ErrnoText(errno))));
  LogPump pump(fd, std::move(writer));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) {
    return Err(Status::InvalidArgument(fmt::format("{} is not a FIFO", fifo_path)));
  }
  // Best effort: a larger buffer lets a pod run on longer while no agent reads.
  (void)::fcntl(fd, F_SETPIPE_SZ, static_cast<int>(kPipeBufferBytes));
  return pump;
}

LogPump::LogPump(LogPump&& other) noexcept : fd_(std::exchange(other.fd_, -1)), writer_(std::move(other.writer_)) {}

LogPump& LogPump::operator=(LogPump&& other) noexcept {
  if (this != &other) {
    CloseFd(fd_);
    fd_ = std::exchange(other.fd_, -1);
    writer_ = std::move(other.writer_);
  }
  return *this;
}

LogPump::~LogPump() { CloseFd(fd_); }

Result<int64_t> LogPump::Pump(int64_t max_bytes) {
  int64_t copied = 0;
  char buf[kCopyChunkBytes];
  while (copied < max_bytes) {
    const size_t want = static_cast<size_t>(std::min<int64_t>(sizeof buf, max_bytes - copied));
    const ssize_t n = ::read(fd_, buf, want);
    if (n > 0) {
      RETURN_IF_ERROR(writer_.Append(std::string_view(buf, static_cast<size_t>(n))));
      copied += n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    // We hold a writing end ourselves, so there is no end-of-file: EAGAIN (or a
    // 0 that cannot happen) means the buffer is empty.
    if (n == 0 || errno == EAGAIN) break;
    return Err(Status::IoError(fmt::format("cannot read the pod's output FIFO: {}", ErrnoText(errno))));
  }
  return copied;
}

// ---------------------------------------------------------------------------
// LogFollower.

Result<LogFollower> LogFollower::Open(LogFileSet files, LogStart start) {
  RETURN_IF_ERROR(ValidateFileSet(files));
  if (start.count < 0) return Err(Status::InvalidArgument(fmt::format("cannot start {} back in a log", start.count)));
  ASSIGN_OR_RETURN(std::vector<OpenedLog> kept, OpenKeptFiles(files));
  LogFollower follower(std::move(files));
  if (kept.empty()) return follower;  // no output yet: starts at the first file that appears

  StreamPosition position;
  switch (start.kind) {
    case LogStart::Kind::kBeginning:
      position = {kept.size() - 1, 0};
      break;
    case LogStart::Kind::kEnd:
      position = {0, kept[0].size};
      break;
    case LogStart::Kind::kLastBytes:
      position = FindLastBytes(kept, start.count);
      break;
    case LogStart::Kind::kLastLines: {
      ASSIGN_OR_RETURN(position, FindLastLines(kept, start.count));
      break;
    }
  }
  OpenedLog& file = kept[position.file];
  follower.HoldFile(file.fd.release(), file.id.dev, file.id.ino, position.offset);
  return follower;
}

LogFollower::LogFollower(LogFollower&& other) noexcept
    : files_(std::move(other.files_)),
      fd_(std::exchange(other.fd_, -1)),
      dev_(other.dev_),
      ino_(other.ino_),
      offset_(other.offset_) {}

LogFollower& LogFollower::operator=(LogFollower&& other) noexcept {
  if (this != &other) {
    CloseFd(fd_);
    files_ = std::move(other.files_);
    fd_ = std::exchange(other.fd_, -1);
    dev_ = other.dev_;
    ino_ = other.ino_;
    offset_ = other.offset_;
  }
  return *this;
}

LogFollower::~LogFollower() { CloseFd(fd_); }

void LogFollower::HoldFile(int fd, dev_t dev, ino_t ino, int64_t offset) {
  CloseFd(fd_);
  fd_ = fd;
  dev_ = dev;
  ino_ = ino;
  offset_ = offset;
}

bool LogFollower::IsLive() const { return StatId(files_.Path(0)) == FileId{dev_, ino_}; }

// Steps:
//  1. With no file yet, take the oldest one there is, from its start.
//  2. Read on from our offset. Anything new: return it.
//  3. At the end of our file: if it is still the live file, nothing is new.
//  4. Otherwise it was rotated, and rotated files never change: read what the
//     writer added before rotating, then move to the next newer file (step 2).
// Each pass moves one file newer; when rotations outrun the passes, the rest
// waits for the next call.
Result<LogChunk> LogFollower::ReadNew(size_t max_bytes) {
  LogChunk chunk;
  if (max_bytes == 0) return chunk;
  auto read_some = [&]() -> Result<bool> {
    chunk.bytes.resize(max_bytes);
    ssize_t n;
    do {
      n = ::pread(fd_, chunk.bytes.data(), max_bytes, offset_);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return Err(Status::IoError(fmt::format("cannot read {}'s logs: {}", files_.Path(0), ErrnoText(errno))));
    chunk.bytes.resize(static_cast<size_t>(n));
    offset_ += n;
    return n > 0;
  };
  for (int pass = 0; pass < files_.max_rotated_files + 3; ++pass) {
    if (fd_ < 0 && !OpenOldest()) return chunk;  // 1.
    ASSIGN_OR_RETURN(bool got, read_some());     // 2.
    if (got || IsLive()) return chunk;           // 3.
    ASSIGN_OR_RETURN(got, read_some());          // 4.
    if (got) return chunk;
    switch (OpenNextNewer()) {
      case NextFile::kOpened:
        break;
      case NextFile::kNotYet:
        return chunk;
      case NextFile::kLost:
        // Our file was dropped as the oldest: every file kept now is newer, but
        // some between ours and them may have been dropped too.
        chunk.gap = true;
        CloseFd(fd_);
        break;
    }
  }
  return chunk;
}

// Our file is complete; the next newer one is one generation below it. Files
// only move to higher generations, one rename at a time, so when ours is at
// generation j both before and after opening generation j-1, what we opened
// was its successor.
LogFollower::NextFile LogFollower::OpenNextNewer() {
  const FileId ours{dev_, ino_};
  for (int attempt = 0; attempt < kSnapshotAttempts; ++attempt) {
    int generation = -1;
    for (int g = 1; g <= files_.max_rotated_files && generation < 0; ++g) {
      if (StatId(files_.Path(g)) == ours) generation = g;
    }
    if (generation < 0) continue;  // maybe moving between our looks; look again
    Result<std::optional<OpenedLog>> next = OpenForReading(files_.Path(generation - 1));
    if (!next || !next->has_value()) return NextFile::kNotYet;  // mid-rotation: its rename is still to come
    if (StatId(files_.Path(generation)) != ours) continue;
    OpenedLog& file = **next;
    HoldFile(file.fd.release(), file.id.dev, file.id.ino, 0);
    return NextFile::kOpened;
  }
  // Not found in any look: either dropped, or moved on faster than we looked
  // (rotations while this thread waited for a CPU). Only a dropped file has no
  // name left; one that still has a name is looked for again next time.
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && st.st_nlink > 0) return NextFile::kNotYet;
  return NextFile::kLost;
}

// The oldest kept file, from its start: checked to still be the oldest after
// opening it (a rotation meanwhile would have moved an older one above it).
bool LogFollower::OpenOldest() {
  // A plain flag and value, not std::optional: GCC 12 at -O2 warns (wrongly) that
  // an optional's payload may be uninitialized in the comparisons below.
  const bool have_finished = fd_ < 0 && ino_ != 0;
  const FileId finished{have_finished ? dev_ : 0, have_finished ? ino_ : 0};
  for (int attempt = 0; attempt < kSnapshotAttempts; ++attempt) {
    for (int g = files_.max_rotated_files; g >= 0; --g) {
      Result<std::optional<OpenedLog>> opened = OpenForReading(files_.Path(g));
      if (!opened || !opened->has_value()) continue;
      OpenedLog& file = **opened;
      // The file we finished before losing track of it is not read again.
      if (have_finished && file.id == finished) continue;
      const std::optional<FileId> older = StatId(files_.Path(g + 1));
      if (older && (!have_finished || *older != finished)) break;  // something moved meanwhile: look again
      HoldFile(file.fd.release(), file.id.dev, file.id.ino, 0);
      return true;
    }
  }
  return false;
}

Result<std::string> ReadLogTail(const LogFileSet& files, int64_t lines) {
  ASSIGN_OR_RETURN(LogFollower follower, LogFollower::Open(files, LogStart::LastLines(lines)));
  // A pod still writing would keep this going forever; stop after what the
  // files can hold.
  const int64_t limit = files.max_file_bytes * (files.max_rotated_files + 1);
  std::string out;
  while (static_cast<int64_t>(out.size()) < limit) {
    ASSIGN_OR_RETURN(LogChunk chunk, follower.ReadNew());
    if (chunk.bytes.empty()) break;
    out += chunk.bytes;
  }
  return out;
}

}  // namespace tessera

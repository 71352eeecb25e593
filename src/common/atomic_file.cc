#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace tessera {

Status WriteFileAtomically(const std::string& path, std::string_view text, mode_t mode,
                           const AtomicWriteOptions& options) {
  if (options.create_parent) {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty() && !std::filesystem::exists(parent, ec)) {
      std::filesystem::create_directories(parent, ec);
      if (ec) return Status::IoError(fmt::format("cannot create {}: {}", parent.string(), ec.message()));
      ::chmod(parent.c_str(), 0700);
    }
  }
  // A fresh file, never one already there: in a directory another user can
  // write, a planted PATH.tmp (a symlink or hard link to another file) is
  // removed, and one planted again meanwhile makes the write fail rather than
  // reach that file.
  const std::string tmp = path + ".tmp";
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return Status::IoError(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
  bool ok = ::fchmod(fd, mode) == 0;
  for (size_t done = 0; ok && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  if (ok && options.owner && ::geteuid() == 0) ok = ::fchown(fd, options.owner->first, options.owner->second) == 0;
  if (ok && options.sync) ok = ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int why = ok ? errno : saved;
    ::unlink(tmp.c_str());
    return Status::IoError(fmt::format("cannot write {}: {}", path, std::strerror(why)));
  }
  return Status::Ok();
}

}  // namespace tessera

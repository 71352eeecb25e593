// Network namespaces a test makes and removes: a file under /run/netns, as
// `ip netns add` makes one (so `ip netns exec NAME ...` reaches it while the
// test runs), removed when the ScopedNetns goes. RunIn runs code inside one,
// on a thread of its own: sockets made there stay in that namespace, and
// processes started there (posix_spawn, fork) are born in it.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>

namespace tessera::testing {

// True when this process may make network namespaces (root, and the kernel lets it).
inline bool CanMakeNetns() {
  if (::geteuid() != 0) return false;
  bool ok = false;
  std::thread([&] { ok = ::unshare(CLONE_NEWNET) == 0; }).join();
  return ok;
}

class ScopedNetns {
 public:
  // `tag` makes the name readable; the pid and a counter make it unique.
  explicit ScopedNetns(const std::string& tag) {
    static std::atomic<int> counter{0};
    name_ = "tsrt-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + tag;
    path_ = "/run/netns/" + name_;
    std::filesystem::create_directories("/run/netns");
    int fd = ::open(path_.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
    if (fd < 0) throw std::runtime_error("cannot create " + path_ + ": " + std::strerror(errno));
    ::close(fd);
    std::string error;
    std::thread([&] {
      if (::unshare(CLONE_NEWNET) != 0) {
        error = std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno);
      } else if (::mount("/proc/thread-self/ns/net", path_.c_str(), "none", MS_BIND, nullptr) != 0) {
        error = std::string("bind mount: ") + std::strerror(errno);
      } else {
        // lo up, as `ip netns add` leaves it down but every test wants it.
        std::system("ip link set lo up");
      }
    }).join();
    if (!error.empty()) {
      ::unlink(path_.c_str());
      throw std::runtime_error("cannot make network namespace " + name_ + ": " + error);
    }
  }
  ~ScopedNetns() {
    ::umount2(path_.c_str(), MNT_DETACH);
    ::unlink(path_.c_str());
  }
  ScopedNetns(const ScopedNetns&) = delete;
  ScopedNetns& operator=(const ScopedNetns&) = delete;

  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }

  // Runs `fn` in this namespace, on a thread of its own, and waits for it.
  template <typename Fn>
  auto RunIn(Fn&& fn) const {
    return RunInPath(path_, std::forward<Fn>(fn));
  }

  template <typename Fn>
  static auto RunInPath(const std::string& path, Fn&& fn) {
    using R = decltype(fn());
    std::string error;
    if constexpr (std::is_void_v<R>) {
      std::thread([&] {
        if (!Enter(path, error)) return;
        fn();
      }).join();
      if (!error.empty()) throw std::runtime_error(error);
    } else {
      R result{};
      std::thread([&] {
        if (!Enter(path, error)) return;
        result = fn();
      }).join();
      if (!error.empty()) throw std::runtime_error(error);
      return result;
    }
  }

  // Runs a shell command in this namespace; its exit code.
  int Shell(const std::string& command) const {
    return RunIn([&] { return WEXITSTATUS(std::system(command.c_str())); });
  }

 private:
  static bool Enter(const std::string& path, std::string& error) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) {
      error = "cannot enter " + path + ": " + std::strerror(errno);
      if (fd >= 0) ::close(fd);
      return false;
    }
    ::close(fd);
    return true;
  }

  std::string name_;
  std::string path_;
};

}  // namespace tessera::testing

// UniqueFd: owns a file descriptor and closes it on destruction, so that a
// function returning early on an error leaks none. ErrnoText: errno in words.
#pragma once

#include <fmt/format.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <utility>

namespace tessera {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) Reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void Reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// strerrordesc_np is thread-safe, unlike strerror.
inline std::string ErrnoText(int error) {
  const char* text = strerrordesc_np(error);
  return text != nullptr ? text : fmt::format("errno {}", error);
}

}  // namespace tessera

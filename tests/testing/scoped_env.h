// ScopedEnv: sets an environment variable (nullopt: unsets it) for the life of
// the object, then puts back what was there. Tests only: setenv is not
// thread-safe, so use it before starting threads that read the environment.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace tessera::testing {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    Set(value);
  }
  ~ScopedEnv() { Set(old_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  void Set(const std::optional<std::string>& value) {
    if (value) {
      ::setenv(name_, value->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace tessera::testing

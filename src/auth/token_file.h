// kube-apiserver's static token file (--token-auth-file): one user per CSV line,
//
//   token,user,uid,"group1,group2"
//
// at least three columns (the groups column is optional and further columns are
// ignored, as kube-apiserver ignores them); blank lines and lines starting with
// '#' are skipped. A token listed twice keeps its last line, as kube-apiserver
// does (and the parse says so in `warnings`). Every user also gets the group
// system:authenticated.
//
// TokenFileAuthenticator re-reads the file when it changes (its modification
// time, size or inode), checked at most once a second, so that an admin adds or
// removes a user without restarting the server. A file that has become
// unreadable or invalid keeps the users of the last good read, and the error is
// logged once per change (never a token: messages name lines, not contents).
//
// Thread-safety: TokenFile is immutable; TokenFileAuthenticator's methods may
// be called from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "auth/user_info.h"
#include "common/result.h"
#include "common/time.h"

namespace tessera {

class TokenFile {
 public:
  // InvalidArgument naming the line: "line 3: a token line needs at least 3
  // columns (token, user name, uid); found 2".
  static Result<TokenFile> Parse(std::string_view text);

  // The user a token names; nullopt when the file does not list it.
  std::optional<UserInfo> Find(std::string_view token) const;
  size_t size() const { return users_.size(); }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, UserInfo, Hash, std::equal_to<>> users_;
  std::vector<std::string> warnings_;
};

class TokenFileAuthenticator {
 public:
  // Reads `path` now: an error here (missing, unreadable, invalid) stops the
  // server at start, as kube-apiserver's does.
  static Result<std::unique_ptr<TokenFileAuthenticator>> Open(std::string path);

  // The user of `token`, re-reading the file first when a second has passed
  // since the last look and it changed. `now` is the wall clock's reading.
  std::optional<UserInfo> Find(std::string_view token, Timestamp now);

  const std::string& path() const { return path_; }

 private:
  explicit TokenFileAuthenticator(std::string path) : path_(std::move(path)) {}
  struct Stamp {
    int64_t mtime_ns = 0;
    int64_t size = 0;
    uint64_t inode = 0;
    friend bool operator==(const Stamp&, const Stamp&) = default;
  };
  // Re-reads when changed; keeps the old users when the new file is bad.
  void Refresh();

  std::string path_;
  std::atomic<int64_t> checked_ms_{0};
  std::mutex mu_;  // one refresh at a time; guards stamp_
  Stamp stamp_;
  std::atomic<std::shared_ptr<const TokenFile>> file_;
};

}  // namespace tessera

#include "auth/token_file.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "common/csv_rows.h"

namespace tessera {
namespace {

constexpr int64_t kRecheckMs = 1000;

// The groups column: "a,b,c" (already unquoted by the CSV reader).
std::vector<std::string> SplitGroups(std::string_view column) {
  std::vector<std::string> groups;
  while (!column.empty()) {
    const size_t comma = column.find(',');
    std::string_view group = TrimCsvField(column.substr(0, comma));
    if (!group.empty()) groups.emplace_back(group);
    if (comma == std::string_view::npos) break;
    column.remove_prefix(comma + 1);
  }
  return groups;
}

}  // namespace

Result<TokenFile> TokenFile::Parse(std::string_view text) {
  TokenFile file;
  auto row = [&](int64_t line, CsvFields fields) -> Status {
    if (!fields.empty() && fields[0].starts_with('#')) return Status::Ok();
    if (fields.size() < 3) {
      return Status::InvalidArgument(fmt::format(
          "line {}: a token line needs at least 3 columns (token, user name, uid); found {}", line, fields.size()));
    }
    if (fields[0].empty()) return Status::InvalidArgument(fmt::format("line {}: the token is empty", line));
    if (fields[1].empty()) return Status::InvalidArgument(fmt::format("line {}: the user name is empty", line));
    UserInfo user{.name = std::string(fields[1]), .uid = std::string(fields[2])};
    if (fields.size() > 3) user.groups = SplitGroups(fields[3]);
    user.groups.emplace_back(kGroupAuthenticated);
    auto [it, fresh] = file.users_.insert_or_assign(std::string(fields[0]), std::move(user));
    if (!fresh) file.warnings_.push_back(fmt::format("line {}: a token listed before; this line replaces it", line));
    return Status::Ok();
  };
  int64_t first_line = 0;
  Status s = ForEachCsvRow(
      text,
      [&](CsvFields fields) {
        // The file has no header: its first row is a user too. Its line is the
        // first that is not blank.
        for (std::string_view rest = text; !rest.empty();) {
          ++first_line;
          const size_t nl = rest.find('\n');
          if (!TrimCsvField(rest.substr(0, nl)).empty()) break;
          rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
        }
        return row(first_line, fields);
      },
      row);
  if (!s.ok()) return Err(s);
  return file;
}

std::optional<UserInfo> TokenFile::Find(std::string_view token) const {
  auto it = users_.find(token);
  if (it == users_.end()) return std::nullopt;
  return it->second;
}

Result<std::unique_ptr<TokenFileAuthenticator>> TokenFileAuthenticator::Open(std::string path) {
  std::unique_ptr<TokenFileAuthenticator> a(new TokenFileAuthenticator(std::move(path)));
  std::ifstream in(a->path_);
  if (!in) {
    return Err(Status::IoError(fmt::format("--token-auth-file {}: cannot read it: {}", a->path_, std::strerror(errno))));
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto file = TokenFile::Parse(text.str());
  if (!file) return Err(file.error().WithContext(fmt::format("--token-auth-file {}", a->path_)));
  for (const std::string& w : file->warnings()) spdlog::warn("--token-auth-file {}: {}", a->path_, w);
  struct stat st {};
  if (::stat(a->path_.c_str(), &st) == 0) {
    a->stamp_ = Stamp{.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec,
                      .size = st.st_size,
                      .inode = st.st_ino};
  }
  a->file_.store(std::make_shared<const TokenFile>(std::move(*file)));
  return a;
}

void TokenFileAuthenticator::Refresh() {
  std::lock_guard lock(mu_);
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) {
    const Stamp gone{};
    if (!(stamp_ == gone)) {
      spdlog::error("--token-auth-file {}: cannot read it ({}); keeping the users read before", path_,
                    std::strerror(errno));
      stamp_ = gone;
    }
    return;
  }
  const Stamp now{.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec,
                  .size = st.st_size,
                  .inode = st.st_ino};
  if (now == stamp_) return;
  stamp_ = now;
  std::ifstream in(path_);
  std::ostringstream text;
  text << in.rdbuf();
  auto file = TokenFile::Parse(text.str());
  if (!file) {
    spdlog::error("--token-auth-file {}: {}; keeping the users read before", path_, file.error().message());
    return;
  }
  for (const std::string& w : file->warnings()) spdlog::warn("--token-auth-file {}: {}", path_, w);
  spdlog::info("--token-auth-file {}: read again, {} users", path_, file->size());
  file_.store(std::make_shared<const TokenFile>(std::move(*file)));
}

std::optional<UserInfo> TokenFileAuthenticator::Find(std::string_view token, Timestamp now) {
  int64_t checked = checked_ms_.load(std::memory_order_relaxed);
  if (now.ms - checked >= kRecheckMs &&
      checked_ms_.compare_exchange_strong(checked, now.ms, std::memory_order_relaxed)) {
    Refresh();
  }
  return file_.load()->Find(token);
}

}  // namespace tessera

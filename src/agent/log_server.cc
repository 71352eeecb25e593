#include "agent/log_server.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "agent/log_files.h"
#include "agent/pod_launch.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

HttpResponse Text(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(body);
  return r;
}

}  // namespace

std::string PodDirectory(const std::string& pods_dir, const std::string& ns, const std::string& name,
                         const std::string& uid) {
  return (fs::path(pods_dir) / fmt::format("{}_{}_{}", SafePathPart(ns), SafePathPart(name), SafePathPart(uid)))
      .string();
}

void MarkPodEnded(const std::string& pod_dir) { std::ofstream(fs::path(pod_dir) / "ended") << "ended\n"; }

std::string PodDirectoryUid(const std::string& dir_name) {
  const size_t last = dir_name.rfind('_');
  if (last == std::string::npos || last + 1 == dir_name.size() || dir_name.find('_') == last) return "";
  return dir_name.substr(last + 1);
}

namespace {

// How /proc/self/mountinfo writes a path: space, tab, newline and backslash as octal escapes.
std::string MountinfoEscaped(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\\') {
      out += fmt::format("\\{:03o}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out;
}

// The mount points (as mountinfo escapes them) of this process's mount namespace.
std::vector<std::string> MountPoints() {
  std::vector<std::string> out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    // ID PARENT MAJOR:MINOR ROOT MOUNT-POINT ...
    size_t pos = 0;
    for (int field = 0; field < 4 && pos != std::string::npos; ++field) {
      pos = line.find(' ', pos);
      if (pos != std::string::npos) ++pos;
    }
    if (pos == std::string::npos) continue;
    const size_t end = line.find(' ', pos);
    out.push_back(line.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
  }
  return out;
}

}  // namespace

CollectedPodDirectories CollectPodDirectories(const std::string& pods_dir, const std::set<std::string>& keep,
                                              Duration retention) {
  CollectedPodDirectories out;
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  std::vector<fs::path> expired;
  for (const fs::directory_entry& entry : fs::directory_iterator(pods_dir, ec)) {
    std::error_code entry_ec;
    if (!entry.is_directory(entry_ec) || entry.is_symlink(entry_ec)) continue;
    const std::string uid = PodDirectoryUid(entry.path().filename().string());
    if (uid.empty() || keep.contains(uid)) continue;
    // The newest change of what says the pod's last activity.
    auto newest = fs::file_time_type::min();
    for (const fs::path& p : {entry.path(), entry.path() / "ended", entry.path() / "pod.log"}) {
      std::error_code time_ec;
      const auto t = fs::last_write_time(p, time_ec);
      if (!time_ec && t > newest) newest = t;
    }
    if (newest == fs::file_time_type::min()) continue;
    if (std::chrono::duration_cast<std::chrono::milliseconds>(now - newest).count() < retention.ms) continue;
    expired.push_back(entry.path());
  }
  if (expired.empty()) return out;
  const std::vector<std::string> mounts = MountPoints();
  for (const fs::path& dir : expired) {
    const std::string escaped = MountinfoEscaped(fs::absolute(dir).lexically_normal().string());
    bool mounted = false;
    for (const std::string& m : mounts) mounted = mounted || m == escaped || m.starts_with(escaped + "/");
    if (mounted) {
      out.failed.emplace_back(dir.string(), "something is still mounted under it");
      continue;
    }
    std::error_code rm_ec;
    fs::remove_all(dir, rm_ec);
    if (rm_ec) {
      out.failed.emplace_back(dir.string(), rm_ec.message());
    } else {
      out.removed.push_back(dir.string());
    }
  }
  return out;
}

Result<std::unique_ptr<LogServer>> LogServer::Start(std::string pods_dir, Authorize authorize, const std::string& host,
                                                    uint16_t port, ExecResolver resolve_exec) {
  std::unique_ptr<LogServer> s(new LogServer());
  s->resolve_exec_ = std::move(resolve_exec);
  s->pods_dir_ = std::move(pods_dir);
  s->authorize_ = std::move(authorize);
  LogServer* self = s.get();
  s->http_ = std::make_unique<HttpServer>(HttpServerOptions{.host = host, .port = port, .threads = 1},
                                          [self](const HttpRequest& req) { return self->Handle(req); });
  RETURN_IF_ERROR(s->http_->Start());
  return s;
}

LogServer::~LogServer() { Stop(); }

void LogServer::Stop() {
  if (http_) http_->Stop();
}

uint16_t LogServer::port() const { return http_->port(); }

HttpResponse LogServer::Handle(const HttpRequest& req) {
  const std::string auth = req.Header("authorization");
  if (!auth.starts_with("Bearer ")) return Text(401, "a bearer token is required\n");
  if (Status s = authorize_(std::string_view(auth).substr(7)); !s.ok()) return Text(401, s.message() + "\n");
  // /logs/{ns}/{pod}/{uid}
  std::vector<std::string> parts;
  for (size_t start = 1; start <= req.path.size();) {
    size_t slash = req.path.find('/', start);
    if (slash == std::string::npos) slash = req.path.size();
    parts.push_back(req.path.substr(start, slash - start));
    start = slash + 1;
  }
  if (parts.size() == 4 && parts[0] == "exec" && (req.method == "GET" || req.method == "POST") && resolve_exec_) {
    auto exec = ParseExecRequest(req);
    if (!exec) return Text(400, exec.error().message() + "\n");
    auto target = resolve_exec_(parts[1], parts[2], parts[3]);
    if (!target) return Text(target.error().code() == StatusCode::kNotFound ? 404 : 500, target.error().message() + "\n");
    return ExecResponse(req, std::move(*exec), std::move(*target));
  }
  if (req.method != "GET" || parts.size() != 4 || parts[0] != "logs") {
    return Text(404, "this agent serves GET /logs/NAMESPACE/POD/UID and GET /exec/NAMESPACE/POD/UID\n");
  }
  const std::string dir = PodDirectory(pods_dir_, parts[1], parts[2], parts[3]);
  if (!fs::exists(dir)) return Text(404, fmt::format("pod {}/{} has no logs on this node\n", parts[1], parts[2]));
  LogStart start = LogStart::Beginning();
  if (const std::string tail = req.Query("tailLines"); !tail.empty()) start = LogStart::LastLines(std::atoll(tail.c_str()));
  auto follower = LogFollower::Open(LogFileSet{.dir = dir}, start);
  if (!follower) return Text(500, follower.error().message() + "\n");
  const bool follow = req.Query("follow") == "true";
  HttpResponse r = Text(200, "");
  auto shared = std::make_shared<LogFollower>(std::move(*follower));
  r.stream = [shared, follow, dir](std::shared_ptr<StreamSink> sink) {
    // One thread per stream: a follow can last as long as the pod.
    std::thread([shared, follow, dir, sink] {
      while (sink->open()) {
        const bool ended = fs::exists(fs::path(dir) / "ended");  // before reading: nothing is missed
        auto chunk = shared->ReadNew();
        if (!chunk) break;
        if (chunk->gap && !sink->Write("... (older output was rotated away) ...\n")) break;
        if (!chunk->bytes.empty()) {
          if (!sink->Write(std::move(chunk->bytes))) break;
          continue;
        }
        if (!follow || ended) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      sink->Close();
    }).detach();
  };
  return r;
}

}  // namespace tessera

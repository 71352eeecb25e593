// api_scale: a load generator for the API server (DESIGN.md section 10: "API: over
// 10,000 submissions/s on 2 cores with the SQLite store").
//
// Starts a real Server in-process (fresh temporary data directory, port 0, 2 HTTP
// I/O threads; its scheduler loop runs concurrently, as in production) and drives
// it over HTTP with ApiClient, one client (one keep-alive connection) per thread.
//
// Authentication and authorization are on, as in production: the submissions
// come from a namespace user ("bench", from a --token-auth-file, in group
// bench-team, bound to ClusterRole edit in namespace "bench"), not the admin, so
// each request is authenticated, rate-limited (the per-user limit raised out of
// the way: it measures the server, not the limit), authorized by RBAC, stamped
// with its creator and written to the audit log (--audit 0 leaves it out).
// --as admin submits with the admin token instead.
//
// Phase 1, submissions: --threads T threads each POST --requests N kueue
// Workloads to /apis/kueue.x-k8s.io/v1beta1/namespaces/bench/workloads and
// expect 201. Each request is timed alone with std::chrono::steady_clock;
// submissions/s = successful submissions / wall time of the whole phase (from
// releasing the threads until the last one finishes). With T requests always in
// flight, the rate is T / mean latency, so the mean is printed too, with the
// share of the clients' waiting spent in requests over 10 ms (stalls: a few of
// those weigh as much as thousands of fast ones). Then the CPU each
// submission cost (clients apart, the server by thread), how long each thread
// was runnable but waited for one of the cores, and how long after the
// phase the scheduler loop had caught up (every client's last Workload has its
// QuotaReserved condition).
//
// Phase 2, watch fan-out: --watchers W threads each open a watch on
// /apis/scheduling.k8s.io/v1/priorityclasses?watch=true&labelSelector=fanout. To be sure every watch is
// subscribed before the clock starts, one warm-up PriorityClass labelled fanout=yes
// is created and every watcher must see it (up to 30 s). Then --events E more
// labelled PriorityClasses are created from one client, and the clock runs from the
// first of those creates until every watcher has received all E events (or a
// 30 s timeout): events/s = events received / seconds.
//
// The last lines are the headline figures:
//   BENCH api_submit_per_s <value> 1/s
//   BENCH api_submit_p50_ms <value> ms
//   BENCH api_submit_p99_ms <value> ms
//   BENCH api_scheduler_caught_up_s <value> s
//   BENCH api_watch_fanout_events_per_s <value> 1/s
//
// Watchers keep their streams open after the last event and end when the server
// stops. --close-watchers 1 closes each watch after its E-th event instead, as a
// real client might: a client closing its watch while the server was still
// writing to it once crashed the server (Session::Shutdown cleared the write
// queue under an in-flight async_write; fixed in 5a80f30, test
// WatchersThatHangUpMidStreamDoNotHurtTheServer), and this flag keeps that path
// exercised under load.
//
// The watch fan-out phase watches PriorityClasses (cluster-scoped) as the admin.
//
// Usage: api_scale [--threads T] [--requests N] [--watchers W] [--events E]
//                  [--close-watchers 0|1] [--http-threads H] [--as user|admin] [--audit 1|0]
// --http-threads: the server's HTTP I/O threads (default 2, as `tessera server`'s).
// (also --flag=value; --benchmark_* flags, which bench/run_all.sh passes to
// programs named *_bench, are ignored).
#include <fmt/format.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "client/api_client.h"
#include "server/server.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Flags {
  int threads = 8;
  int requests = 2500;
  int watchers = 1000;
  int events = 100;
  int close_watchers = 0;  // 1: each watcher closes its stream after E events
  int http_threads = 2;    // the server's HTTP I/O threads
  bool as_admin = false;   // --as admin: submit with the admin token
  int audit = 1;           // --audit 0: no audit log
};

bool ParseFlags(int argc, char** argv, Flags& f) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.starts_with("--benchmark_")) continue;
    std::string_view name = arg;
    std::string_view value;
    bool have_value = false;
    if (auto eq = arg.find('='); eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      have_value = true;
    }
    int* target = nullptr;
    if (name == "--as") {
      const std::string_view who = have_value ? value : (i + 1 < argc ? std::string_view(argv[++i]) : "");
      if (who != "user" && who != "admin") {
        std::fprintf(stderr, "api_scale: --as takes user or admin\n");
        return false;
      }
      f.as_admin = who == "admin";
      continue;
    }
    if (name == "--threads") target = &f.threads;
    else if (name == "--requests") target = &f.requests;
    else if (name == "--watchers") target = &f.watchers;
    else if (name == "--events") target = &f.events;
    else if (name == "--close-watchers") target = &f.close_watchers;
    else if (name == "--http-threads") target = &f.http_threads;
    else if (name == "--audit") target = &f.audit;
    if (target == nullptr) {
      std::fprintf(stderr, "api_scale: unknown flag %s\n", argv[i]);
      return false;
    }
    if (!have_value) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "api_scale: %s needs a value\n", argv[i]);
        return false;
      }
      value = argv[++i];
    }
    int v = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || p != value.data() + value.size() || v < 0) {
      std::fprintf(stderr, "api_scale: bad value for %.*s\n", static_cast<int>(name.size()), name.data());
      return false;
    }
    *target = v;
  }
  if (f.threads < 1) f.threads = 1;
  if (f.events < 1) f.events = 1;
  if (f.http_threads < 1) f.http_threads = 1;
  return true;
}

// Each watcher and each server-side connection is a descriptor: raise the soft
// limit to the hard one.
void RaiseFdLimit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

std::string WorkloadBody(const std::string& name) {
  return fmt::format(
      R"({{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"Workload","metadata":{{"name":"{}"}},)"
      R"("spec":{{"queueName":"default","podSets":[{{"name":"main","count":1,"template":{{"spec":{{"containers":)"
      R"([{{"name":"c","image":"x","resources":{{"requests":{{"nvidia.com/gpu":"1"}}}}}}]}}}}}}]}}}})",
      name);
}

// The fan-out's objects: PriorityClasses, which no controller writes to (a
// Namespace gets its uid range and ServiceAccount: one more event each).
std::string FanoutBody(const std::string& name) {
  return fmt::format(
      R"({{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{{"name":"{}","labels":{{"fanout":"yes"}}}},"value":1}})",
      name);
}

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t idx = static_cast<size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(idx, sorted.size() - 1)];
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

struct SubmitResult {
  double per_s = 0;
  double p50_ms = 0;
  double p99_ms = 0;
};

// Each live thread's time, summed by thread name (the server names its
// threads: http-io, store-writer, store-ckpt, scheduler, watch-hub): CPU
// seconds, and seconds it was runnable but waited for a CPU (the second field
// of /proc/self/task/*/schedstat), which shows how much the threads contend
// for the two cores.
struct ThreadTimes {
  double cpu = 0;
  double waiting = 0;
};

ThreadTimes ReadThreadTimes(const std::filesystem::path& task) {
  ThreadTimes t;
  double on_cpu_ns = 0, waiting_ns = 0;
  std::ifstream schedstat(task / "schedstat");
  if (schedstat >> on_cpu_ns >> waiting_ns) t = {.cpu = on_cpu_ns / 1e9, .waiting = waiting_ns / 1e9};
  return t;
}

std::map<std::string, ThreadTimes> TimesByThreadName() {
  std::map<std::string, ThreadTimes> by_name;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (!std::getline(comm, name)) continue;
    const ThreadTimes t = ReadThreadTimes(task.path());
    by_name[name].cpu += t.cpu;
    by_name[name].waiting += t.waiting;
  }
  return by_name;
}

double ProcessCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return secs(ru.ru_utime) + secs(ru.ru_stime);
}

ThreadTimes ThisThreadTimes() { return ReadThreadTimes("/proc/thread-self"); }

SubmitResult RunSubmissions(const std::string& url, const std::string& token, const Flags& f) {
  const std::string target = "/apis/kueue.x-k8s.io/v1beta1/namespaces/bench/workloads";
  std::vector<std::vector<double>> lat(f.threads);
  std::atomic<int64_t> ok{0}, errors{0};
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::mutex err_mu;
  std::string first_error;

  std::vector<std::thread> threads;
  threads.reserve(f.threads);
  std::vector<ThreadTimes> client_times(f.threads);  // each client thread's, in the phase
  for (int t = 0; t < f.threads; ++t) {
    threads.emplace_back([&, t] {
      pthread_setname_np(pthread_self(), "client");
      tessera::ApiClient client(url, token);
      std::vector<std::string> bodies;
      bodies.reserve(f.requests);
      for (int i = 0; i < f.requests; ++i) bodies.push_back(WorkloadBody(fmt::format("bench-t{}-{}", t, i)));
      lat[t].reserve(f.requests);
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      const ThreadTimes at_start = ThisThreadTimes();
      for (int i = 0; i < f.requests; ++i) {
        auto start = Clock::now();
        auto r = client.Request("POST", target, bodies[i]);
        auto end = Clock::now();
        if (r && r->status == 201) {
          ok.fetch_add(1, std::memory_order_relaxed);
          lat[t].push_back(std::chrono::duration<double, std::milli>(end - start).count());
        } else {
          errors.fetch_add(1, std::memory_order_relaxed);
          std::lock_guard lock(err_mu);
          if (first_error.empty()) {
            first_error = r ? fmt::format("HTTP {}: {}", r->status, r->body.substr(0, 300)) : r.error().ToString();
          }
        }
      }
      const ThreadTimes at_end = ThisThreadTimes();
      client_times[t] = {.cpu = at_end.cpu - at_start.cpu, .waiting = at_end.waiting - at_start.waiting};
    });
  }
  while (ready.load() < f.threads) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const std::map<std::string, ThreadTimes> threads_before = TimesByThreadName();
  const double process_before = ProcessCpuSeconds();
  const auto start = Clock::now();
  go.store(true, std::memory_order_release);
  for (auto& th : threads) th.join();
  const double secs = Seconds(Clock::now() - start);
  const double process_cpu = ProcessCpuSeconds() - process_before;
  const std::map<std::string, ThreadTimes> threads_after = TimesByThreadName();

  std::vector<double> all;
  for (auto& v : lat) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  SubmitResult res;
  res.per_s = secs > 0 ? static_cast<double>(ok.load()) / secs : 0;
  res.p50_ms = Percentile(all, 0.50);
  res.p99_ms = Percentile(all, 0.99);
  std::printf("submissions: %d threads x %d requests: %lld created (201), %lld errors in %.3f s\n", f.threads,
              f.requests, static_cast<long long>(ok.load()), static_cast<long long>(errors.load()), secs);
  std::printf("submissions: %.0f/s; latency p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", res.per_s, res.p50_ms,
              res.p99_ms, all.empty() ? 0.0 : all.back());
  double waited = 0, stalled = 0;
  size_t stalls = 0;
  for (double ms : all) {
    waited += ms;
    if (ms > 10) {
      stalled += ms;
      ++stalls;
    }
  }
  if (!all.empty() && waited > 0) {
    std::printf("submissions: mean latency %.3f ms; %zu requests over 10 ms, %.1f%% of the clients' waiting\n",
                waited / static_cast<double>(all.size()), stalls, 100 * stalled / waited);
  }
  if (!first_error.empty()) std::printf("submissions: first error: %s\n", first_error.c_str());
  // Where the machine's time went, per submission: the clients share the
  // server's two cores here, so their share is reported apart.
  ThreadTimes clients;
  for (const ThreadTimes& c : client_times) {
    clients.cpu += c.cpu;
    clients.waiting += c.waiting;
  }
  const double client_total = clients.cpu;
  const double per = ok.load() > 0 ? 1e6 / static_cast<double>(ok.load()) : 0;
  std::string server_threads;
  std::string waits = fmt::format(" clients {:.0f},", 1000 * clients.waiting);
  for (const auto& [name, after] : threads_after) {
    if (name == "client") continue;
    auto before = threads_before.find(name);
    const ThreadTimes was = before == threads_before.end() ? ThreadTimes{} : before->second;
    // Threads that round to nothing (the bench's own main thread, an idle watch hub) are left out.
    const double us = (after.cpu - was.cpu) * per, waited_ms = 1000 * (after.waiting - was.waiting);
    if (us >= 0.5) server_threads += fmt::format(" {} {:.0f},", name, us);
    if (waited_ms >= 0.5) waits += fmt::format(" {} {:.0f},", name, waited_ms);
  }
  if (!server_threads.empty()) server_threads.pop_back();
  waits.pop_back();
  std::printf("submissions: CPU per submission %.0f us: clients %.0f us, server %.0f us (by thread:%s); "
              "%.2f of the %u cores busy\n",
              process_cpu * per, client_total * per, (process_cpu - client_total) * per, server_threads.c_str(),
              secs > 0 ? process_cpu / secs : 0.0, std::thread::hardware_concurrency());
  std::printf("submissions: runnable but waiting for a CPU in the phase, ms by thread:%s\n", waits.c_str());
  return res;
}

// The scheduler loop runs beside the API and, under a burst, may still be
// writing the pending reasons when the last submission is answered (its passes
// take at most about half a core). Reports how long after the phase every
// client's last Workload had its QuotaReserved condition (polled every 50 ms,
// up to 60 s), so that a figure bought by leaving work behind shows.
// Returns those seconds.
double WaitForTheScheduler(const std::string& url, const std::string& token, const Flags& f) {
  if (f.requests < 1) return 0;
  tessera::ApiClient client(url, token);
  const auto start = Clock::now();
  for (int t = 0; t < f.threads; ++t) {
    const std::string target = fmt::format("/apis/kueue.x-k8s.io/v1beta1/namespaces/bench/workloads/bench-t{}-{}", t,
                                           f.requests - 1);
    while (Clock::now() - start < std::chrono::seconds(60)) {
      auto r = client.Request("GET", target);
      if (r && r->status == 200 && r->body.find("\"QuotaReserved\"") != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  const double caught_up = Seconds(Clock::now() - start);
  std::printf("submissions: the scheduler had written every last workload's QuotaReserved condition %.2f s "
              "after the phase ended\n",
              caught_up);
  return caught_up;
}

// State shared with watcher threads; held by shared_ptr so that a watcher still
// blocked in Stream after the benchmark gives up can never touch freed memory.
struct FanoutState {
  std::atomic<int64_t> events{0};     // measured events received, all watchers
  std::atomic<int> warmed{0};         // watchers that saw the warm-up event
  std::atomic<int> finished{0};       // watchers that saw every event
  std::atomic<int> exited{0};         // watcher threads that returned
  std::atomic<int> failed{0};         // watches that ended with an error
  std::mutex mu;
  std::string first_error;
};

double RunFanout(const std::string& url, const std::string& token, const Flags& f, bool& all_exited) {
  auto st = std::make_shared<FanoutState>();
  const int events = f.events;
  const bool close_early = f.close_watchers != 0;
  const std::string target = "/apis/scheduling.k8s.io/v1/priorityclasses?watch=true&labelSelector=fanout";
  std::vector<std::thread> threads;
  threads.reserve(f.watchers);
  int started = 0;
  for (int w = 0; w < f.watchers; ++w) {
    try {
      threads.emplace_back([st, url, token, target, events, close_early] {
        tessera::ApiClient client(url, token);
        int seen = 0;  // lines: 1 warm-up, then `events` measured ones
        tessera::Status s = client.Stream(target, [&](const std::string& line) {
          if (line.empty()) return true;
          ++seen;
          if (seen == 1) {
            st->warmed.fetch_add(1);
            return true;
          }
          if (seen > events + 1) return true;
          st->events.fetch_add(1, std::memory_order_relaxed);
          if (seen == events + 1) {
            st->finished.fetch_add(1);
            return !close_early;
          }
          return true;
        });
        if (!s.ok() && seen < events + 1) {
          st->failed.fetch_add(1);
          std::lock_guard lock(st->mu);
          if (st->first_error.empty()) st->first_error = s.ToString();
        }
        st->exited.fetch_add(1);
      });
      ++started;
    } catch (const std::system_error& e) {
      std::printf("fan-out: could not start watcher thread %d (%s); continuing with %d watchers\n", w, e.what(),
                  started);
      break;
    }
  }
  const int watchers = started;
  if (watchers == 0) {
    all_exited = true;
    return 0;
  }

  tessera::ApiClient creator(url, token);
  auto create = [&](const std::string& name) {
    auto r = creator.Request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", FanoutBody(name));
    if (!r || r->status != 201) {
      std::printf("fan-out: creating priorityclass %s failed: %s\n", name.c_str(),
                  r ? fmt::format("HTTP {}: {}", r->status, r->body.substr(0, 300)).c_str() : r.error().ToString().c_str());
      return false;
    }
    return true;
  };

  // Warm-up: every watch must be subscribed before the clock starts.
  const auto warm_start = Clock::now();
  create("fanout-warmup");
  const auto warm_deadline = warm_start + std::chrono::seconds(30);
  while (st->warmed.load() + st->failed.load() < watchers && Clock::now() < warm_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::printf("fan-out: %d watchers opened, %d subscribed (saw the warm-up event) after %.3f s, %d failed\n", watchers,
              st->warmed.load(), Seconds(Clock::now() - warm_start), st->failed.load());
  const int live = st->warmed.load();

  const auto start = Clock::now();
  int created = 0;
  for (int e = 0; e < events; ++e) created += create(fmt::format("fanout-{}", e)) ? 1 : 0;
  const auto created_at = Clock::now();
  const auto deadline = start + std::chrono::seconds(30);
  while (st->finished.load() < live && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  const auto end = Clock::now();
  const double secs = Seconds(end - start);
  const int64_t got = st->events.load();
  const int64_t expected = static_cast<int64_t>(live) * events;
  const double per_s = secs > 0 ? static_cast<double>(got) / secs : 0;
  std::printf("fan-out: %d priorityclasses created in %.3f s; %d/%d watchers got all %d events\n", created,
              Seconds(created_at - start), st->finished.load(), live, events);
  std::printf("fan-out: %lld/%lld events delivered in %.3f s: %.0f events/s%s\n", static_cast<long long>(got),
              static_cast<long long>(expected), secs, per_s, got < expected ? " (TIMED OUT: partial)" : "");
  {
    std::lock_guard lock(st->mu);
    if (!st->first_error.empty()) std::printf("fan-out: first watch error: %s\n", st->first_error.c_str());
  }

  // Watchers still in Stream end when the server stops (below, in main).
  for (auto& th : threads) th.detach();
  all_exited = false;
  (void)st;
  return per_s;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, flags)) return 2;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  RaiseFdLimit();

  char tmpl[] = "/tmp/api_scale.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    std::perror("api_scale: mkdtemp");
    return 1;
  }
  const std::string data_dir = tmpl;

  // The namespace user: a token-auth file line, the namespace, and edit there.
  const std::string user_token = "bench-user-token-4c1d7e0a9b";
  std::ofstream(data_dir + "/users.csv") << user_token << ",bench,1001,\"bench-team\"\n";
  tessera::ServerOptions options;
  options.data_dir = data_dir;
  options.http.host = "127.0.0.1";
  options.http.port = 0;
  options.http.threads = flags.http_threads;
  options.token_auth_file = data_dir + "/users.csv";
  if (flags.audit != 0) options.audit.path = data_dir + "/audit.log";
  options.rate = tessera::UserRateLimit{.per_second = 1'000'000, .burst = 1'000'000};
  auto server = tessera::Server::Start(options);
  if (!server) {
    std::fprintf(stderr, "api_scale: server failed to start: %s\n", server.error().ToString().c_str());
    std::filesystem::remove_all(data_dir);
    return 1;
  }
  const std::string url = (*server)->url();
  const std::string token = (*server)->admin_token();
  {
    tessera::ApiClient admin(url, token);
    const std::string ns = R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench"}})";
    const std::string binding = R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding",
      "metadata":{"name":"bench-edit","namespace":"bench"},
      "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"edit"},
      "subjects":[{"kind":"Group","name":"bench-team","apiGroup":"rbac.authorization.k8s.io"}]})";
    const std::string queue = R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"LocalQueue",
      "metadata":{"name":"default","namespace":"bench"},"spec":{"clusterQueue":"default"}})";
    for (const auto& [path, body] : {std::pair{"/api/v1/namespaces", ns},
                                     std::pair{"/apis/rbac.authorization.k8s.io/v1/namespaces/bench/rolebindings", binding},
                                     std::pair{"/apis/kueue.x-k8s.io/v1beta1/namespaces/bench/localqueues", queue}}) {
      auto r = admin.Request("POST", path, body);
      if (!r || r->status != 201) {
        std::fprintf(stderr, "api_scale: setting up the namespace user failed at %s: %s\n", path,
                     r ? r->body.c_str() : r.error().ToString().c_str());
        return 1;
      }
    }
  }
  const std::string submitter = flags.as_admin ? token : user_token;
  std::printf("api_scale: server at %s (%d HTTP thread%s, data dir %s), %u hardware threads; submitting as %s, "
              "audit log %s\n",
              url.c_str(), flags.http_threads, flags.http_threads == 1 ? "" : "s", data_dir.c_str(),
              std::thread::hardware_concurrency(), flags.as_admin ? "the admin" : "namespace user bench (RBAC: edit)",
              flags.audit != 0 ? "on" : "off");

  const SubmitResult sub = RunSubmissions(url, submitter, flags);
  const double caught_up = WaitForTheScheduler(url, submitter, flags);
  bool all_exited = true;
  const double fanout = flags.watchers > 0 ? RunFanout(url, token, flags, all_exited) : 0.0;

  (*server)->Stop();
  std::error_code ec;
  std::filesystem::remove_all(data_dir, ec);

  std::printf("BENCH api_submit_per_s %.0f 1/s\n", sub.per_s);
  std::printf("BENCH api_submit_p50_ms %.3f ms\n", sub.p50_ms);
  std::printf("BENCH api_submit_p99_ms %.3f ms\n", sub.p99_ms);
  std::printf("BENCH api_scheduler_caught_up_s %.2f s\n", caught_up);
  std::printf("BENCH api_watch_fanout_events_per_s %.0f 1/s\n", fanout);
  std::fflush(stdout);
  std::fflush(stderr);
  // Detached watcher threads may still be unwinding; leave without running
  // static destructors under them.
  std::_Exit(0);
}

// store_bench: throughput of the SQLite store on realistic documents.
//
// Not a test (no assertions on time): run it by hand, pinned to the cores the
// server would get, e.g. `taskset -c 0,1 build/tests/store/store_bench`.
// Each phase starts from the state the previous one left:
//   build doc   N documents built and dropped: the caller's cost, in every phase below
//   create      N creates from one thread (the API's path: one transaction each)
//   create xT   N creates spread over T threads (group commit: queued writes share a transaction)
//   update      N updates with the expected revision, one thread
//   get         N point reads, one thread
//   apply       N creates in batches of 100 (one transaction per batch)
// Documents are ~700-byte Pod manifests. Durability is synchronous=NORMAL unless
// --full. The store file is created fresh under --dir and removed at the end.
#include <stdlib.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/sqlite_store.h"

namespace tessera {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

json PodManifest(const std::string& ns, const std::string& name, int generation) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name},
        {"namespace", ns},
        {"labels", {{"app", "trainer"}, {"kueue.x-k8s.io/queue-name", "team-nlp-queue"}, {"tier", "batch"}}},
        {"annotations", {{"tessera.dev/generation", std::to_string(generation)}}}}},
      {"spec",
       {{"schedulerName", "tessera"},
        {"priorityClassName", "training"},
        {"restartPolicy", "OnFailure"},
        {"containers",
         json::array({{{"name", "main"},
                       {"image", "registry.example.com/ml/trainer:2024.06"},
                       {"command", json::array({"python", "-m", "train", "--config", "/cfg/run.yaml"})},
                       {"env", json::array({{{"name", "WORLD_SIZE"}, {"value", "4"}},
                                            {{"name", "NCCL_DEBUG"}, {"value", "WARN"}}})},
                       {"resources",
                        {{"requests", {{"cpu", "8"}, {"memory", "64Gi"}, {"nvidia.com/gpu", "1"}}},
                         {"limits", {{"cpu", "8"}, {"memory", "64Gi"}, {"nvidia.com/gpu", "1"}}}}}}})}}},
      {"status", {{"phase", "Pending"}}}};
}

// Wall-clock and process CPU time (all threads, user + system) since Start().
struct Timer {
  Clock::time_point wall;
  double cpu;
};

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

Timer Start() { return {Clock::now(), CpuSeconds()}; }

// ops/s by the wall clock; CPU us/op is the cost that bounds throughput when
// cores, not waiting, are the limit (and is less sensitive to a busy machine).
void Report(const char* phase, int ops, const Timer& start) {
  double wall = std::chrono::duration<double>(Clock::now() - start.wall).count();
  double cpu = CpuSeconds() - start.cpu;
  std::printf("%-10s %8d ops  %7.3f s  %9.0f ops/s  %6.1f us/op wall  %6.1f us/op cpu\n", phase, ops, wall,
              ops / wall, wall * 1e6 / ops, cpu * 1e6 / ops);
}

int Run(int objects, int threads, bool full, int checkpoint_frames, std::filesystem::path dir) {
  std::filesystem::create_directories(dir);
  std::string path = (dir / "bench.db").string();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  SqliteStoreOptions options;
  options.sync = full ? SqliteStoreOptions::Sync::kFull : SqliteStoreOptions::Sync::kNormal;
  options.checkpoint_frames = checkpoint_frames;
  Result<std::unique_ptr<Store>> opened = OpenSqliteStore(path, options);
  if (!opened.has_value()) {
    std::fprintf(stderr, "%s\n", opened.error().ToString().c_str());
    return 1;
  }
  Store& store = **opened;
  std::printf("store %s, synchronous=%s, checkpoint every %d frames, %d objects, ~%zu-byte documents\n",
              path.c_str(), full ? "FULL" : "NORMAL", checkpoint_frames, objects,
              PodManifest("team-nlp", "trainer-00000", 0).dump().size());

  auto fail = [](const Status& status) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    std::exit(1);
  };

  // Baseline: what a caller spends building the documents, included in every
  // phase below (subtract it to get the store's own cost).
  Timer start = Start();
  size_t bytes = 0;
  for (int i = 0; i < objects; ++i) {
    json doc = PodManifest("team-nlp", "a-" + std::to_string(i), 0);
    bytes += doc.size();
  }
  Report("build doc", objects, start);

  start = Start();
  for (int i = 0; i < objects; ++i) {
    std::string name = "a-" + std::to_string(i);
    Result<StoredObject> r = store.Create(ObjectKey{"/Pod", "team-nlp", name}, PodManifest("team-nlp", name, 0));
    if (!r.has_value()) fail(r.error());
  }
  Report("create", objects, start);

  start = Start();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int i = t; i < objects; i += threads) {
        std::string name = "b-" + std::to_string(i);
        Result<StoredObject> r = store.Create(ObjectKey{"/Pod", "team-cv", name}, PodManifest("team-cv", name, 0));
        if (!r.has_value()) fail(r.error());
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  Report(("create x" + std::to_string(threads)).c_str(), objects, start);

  start = Start();
  for (int i = 0; i < objects; ++i) {
    std::string name = "a-" + std::to_string(i);
    ObjectKey key{"/Pod", "team-nlp", name};
    // The expected revision of a-i: creates ran first, one revision each.
    Result<StoredObject> r = store.Update(key, PodManifest("team-nlp", name, 1), i + 1);
    if (!r.has_value()) fail(r.error());
  }
  Report("update", objects, start);

  start = Start();
  for (int i = 0; i < objects; ++i) {
    Result<StoredObject> r = store.Get(ObjectKey{"/Pod", "team-nlp", "a-" + std::to_string(i)});
    if (!r.has_value()) fail(r.error());
  }
  Report("get", objects, start);

  start = Start();
  for (int i = 0; i < objects;) {
    std::vector<WriteOp> batch;
    for (int j = 0; j < 100 && i < objects; ++j, ++i) {
      std::string name = "c-" + std::to_string(i);
      batch.push_back({WriteOp::Kind::kCreate, ObjectKey{"/Pod", "team-rl", name}, PodManifest("team-rl", name, 0), 0});
    }
    Result<std::vector<StoredObject>> r = store.Apply(std::move(batch));
    if (!r.has_value()) fail(r.error());
  }
  Report("apply/100", objects, start);
  if (bytes == 0) std::printf("(no documents built)\n");  // keeps the baseline loop alive
  std::printf("final revision %lld, file %.1f MB\n", static_cast<long long>(store.Revision()),
              static_cast<double>(std::filesystem::file_size(path)) / 1e6);
  opened->reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  int objects = 50'000;
  int threads = 2;
  bool full = false;
  int checkpoint_frames = tessera::SqliteStoreOptions{}.checkpoint_frames;
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "tessera-store-bench";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--objects" && i + 1 < argc) {
      objects = std::atoi(argv[++i]);
    } else if (arg == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (arg == "--checkpoint-frames" && i + 1 < argc) {
      checkpoint_frames = std::atoi(argv[++i]);
    } else if (arg == "--full") {
      full = true;
    } else if (arg == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--objects N] [--threads T] [--full] [--checkpoint-frames F] [--dir DIR]\n", argv[0]);
      return 2;
    }
  }
  if (objects <= 0 || threads <= 0) {
    std::fprintf(stderr, "--objects and --threads must be positive\n");
    return 2;
  }
  return tessera::Run(objects, threads, full, checkpoint_frames, dir);
}

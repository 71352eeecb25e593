// `tessera get`: kubectl's tables, output formats, selectors and watches.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "api/manifest.h"
#include "cli/commands/get_command.h"
#include "tests/cli/cli_test_fixture.h"

namespace tessera {
namespace {

using nlohmann::json;

class GetTest : public CliTest {
 protected:
  CommandRun Get(GetOptions options, const std::string& ns = "default") {
    return Run([&](const CommandContext& ctx) { return RunGet(ctx, options); }, ns);
  }
};

const std::map<std::string, std::string>* RowNamed(const std::vector<std::map<std::string, std::string>>& rows,
                                                    const std::string& name) {
  for (const auto& row : rows) {
    if (row.at("NAME") == name) return &row;
  }
  return nullptr;
}

// Every line of a table starts its cells where the header's names start.
void ExpectAligned(const std::string& table) {
  std::istringstream lines(table);
  std::string header;
  std::getline(lines, header);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_NE(line.back(), ' ') << "trailing blank: [" << line << "]";
    for (size_t i = 1; i < line.size() && i < header.size(); ++i) {
      // A cell starting after a 3-space gap must sit under a header name's start.
      if (line[i] != ' ' && i >= 3 && line.compare(i - 3, 3, "   ") == 0) {
        EXPECT_TRUE(header[i] != ' ' && header[i - 1] == ' ') << "misaligned at " << i << ":\n" << header << "\n" << line;
      }
    }
  }
}

// After the seed, `get clusterqueues` lists the bootstrap queue and the seed's,
// with kubectl's and Kueue's columns, aligned.
TEST_F(GetTest, ClusterQueuesTable) {
  ApplySeed();
  CommandRun r = Get({.args = {"clusterqueues"}});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("NAME                COHORT   STRATEGY         PENDING WORKLOADS   ADMITTED WORKLOADS   AGE\n"))
      << r.out;
  ExpectAligned(r.out);
  auto rows = ParseTable(r.out);
  ASSERT_EQ(rows.size(), 2u) << r.out;
  EXPECT_EQ(rows[0].at("NAME"), "default");
  EXPECT_EQ(rows[1].at("NAME"), "gpu-cluster-queue");
  EXPECT_EQ(rows[1].at("COHORT"), "");                  // the seed's queue is in no cohort
  EXPECT_EQ(rows[1].at("STRATEGY"), "BestEffortFIFO");  // Kueue's default
  EXPECT_FALSE(rows[1].at("AGE").empty());
}

// Priority classes: the bootstrap four and the seed's three, with value,
// global default and preemption policy.
TEST_F(GetTest, PriorityClassesTable) {
  ApplySeed();
  CommandRun r = Get({.args = {"pc"}});
  ASSERT_EQ(r.rc, 0) << r.err;
  ExpectAligned(r.out);
  auto rows = ParseTable(r.out);
  EXPECT_EQ(rows.size(), 7u) << r.out;  // production, training, development, batch + 3 from the seed
  const auto* exploratory = RowNamed(rows, "exploratory");
  ASSERT_NE(exploratory, nullptr) << r.out;
  EXPECT_EQ(exploratory->at("VALUE"), "1000");
  EXPECT_EQ(exploratory->at("GLOBAL-DEFAULT"), "true");
  EXPECT_EQ(exploratory->at("PREEMPTIONPOLICY"), "Never");
  const auto* inference = RowNamed(rows, "production-inference");
  ASSERT_NE(inference, nullptr);
  EXPECT_EQ(inference->at("VALUE"), "1000000");
  EXPECT_EQ(inference->at("PREEMPTIONPOLICY"), "PreemptLowerPriority");
}

// -o json of one named object prints that object, pretty, as the server stores it.
TEST_F(GetTest, JsonOfANamedObject) {
  ApplySeed();
  CommandRun r = Get({.args = {"cq", "gpu-cluster-queue"}, .output = "json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("\n    \"apiVersion\""), std::string::npos);  // kubectl indents by 4
  json obj = json::parse(r.out);
  EXPECT_EQ(obj["kind"], "ClusterQueue");
  EXPECT_EQ(obj["spec"]["resourceGroups"][0]["flavors"][1]["name"], "a100-ondemand");
}

// -o yaml of a list prints a kind: List that reads back as the same objects
// -o json gives (strings that look like numbers stay strings).
TEST_F(GetTest, YamlListReadsBackAsTheJson) {
  ApplySeed();
  CommandRun yaml = Get({.args = {"resourcequotas"}, .output = "yaml", .all_namespaces = true});
  CommandRun as_json = Get({.args = {"resourcequotas"}, .output = "json", .all_namespaces = true});
  ASSERT_EQ(yaml.rc, 0) << yaml.err;
  EXPECT_NE(yaml.out.find("kind: List"), std::string::npos);
  EXPECT_NE(yaml.out.find("requests.nvidia.com/gpu: \"8\""), std::string::npos) << yaml.out;
  auto docs = YamlToJson(yaml.out);
  ASSERT_TRUE(docs.has_value()) << docs.error().ToString();
  ASSERT_EQ(docs->size(), 1u);
  // The scheduler loop may write status (and so a new resourceVersion) between
  // the two reads: compare what both reads must agree on.
  auto stable = [](json list) {
    for (json& item : list["items"]) {
      item.erase("status");
      item["metadata"].erase("resourceVersion");
    }
    return list;
  };
  EXPECT_EQ(stable((*docs)[0]), stable(json::parse(as_json.out)));
  EXPECT_EQ((*docs)[0]["items"].size(), 2u);  // the seed's two quotas
}

// -o name prints kind.group/name, as kubectl does.
TEST_F(GetTest, NameOutput) {
  ApplySeed();
  CommandRun r = Get({.args = {"localqueues"}, .output = "name"}, "team-nlp");
  EXPECT_EQ(r.out, "localqueue.kueue.x-k8s.io/team-nlp-queue\n");
  CommandRun ns = Get({.args = {"namespace/team-nlp", "namespace/default"}, .output = "name"});
  EXPECT_EQ(ns.out, "namespace/team-nlp\nnamespace/default\n");
}

// -l filters by label, with equality and set-based selectors.
TEST_F(GetTest, LabelSelector) {
  ASSERT_EQ(ApplyText("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  labels: {team: nlp}\n---\n"
                      "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: b\n  labels: {team: vision}\n")
                .rc,
            0);
  auto names = [&](const std::string& selector) {
    CommandRun r = Get({.args = {"ns"}, .output = "name", .selector = selector});
    EXPECT_EQ(r.rc, 0) << r.err;
    return r.out;
  };
  EXPECT_EQ(names("team=nlp"), "namespace/a\n");
  EXPECT_EQ(names("team in (nlp,vision)"), "namespace/a\nnamespace/b\n");
  EXPECT_EQ(names("team!=nlp,team"), "namespace/b\n");
  CommandRun shown = Get({.args = {"ns"}, .selector = "team", .show_labels = true});
  EXPECT_EQ(shown.rc, 0) << shown.err;
  EXPECT_NE(shown.out.find("LABELS\n"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("   kubernetes.io/metadata.name=a,team=nlp\n"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("   kubernetes.io/metadata.name=b,team=vision\n"), std::string::npos) << shown.out;
}

// --field-selector, as kubectl's: the server selects (here Events by what they
// are about), and an unsupported field is the server's error, naming the ones it takes.
TEST_F(GetTest, FieldSelector) {
  ApiClient client = Admin();
  for (const auto& [name, about] : {std::pair{"e1", "a"}, std::pair{"e2", "b"}}) {
    const json e{{"apiVersion", "v1"},
                 {"kind", "Event"},
                 {"metadata", {{"name", name}, {"namespace", "default"}}},
                 {"involvedObject", {{"kind", "Pod"}, {"name", about}, {"namespace", "default"}}},
                 {"reason", "Started"},
                 {"message", "started"},
                 {"type", "Normal"}};
    auto r = client.Request("POST", "/api/v1/namespaces/default/events", e.dump());
    ASSERT_TRUE(r.has_value() && r->status == 201) << (r ? r->body : r.error().ToString());
  }
  CommandRun r = Get({.args = {"events"}, .output = "name", .field_selector = "involvedObject.name=b"}, "default");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "event/e2\n");
  CommandRun bad = Get({.args = {"events"}, .field_selector = "spec.color=blue"}, "default");
  EXPECT_EQ(bad.rc, 1);
  EXPECT_NE(bad.err.find("field label not supported: spec.color"), std::string::npos) << bad.err;
}

// An empty list prints nothing on stdout and kubectl's sentence on stderr.
TEST_F(GetTest, EmptyListSaysNoResourcesFound) {
  CommandRun r = Get({.args = {"pods"}}, "default");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "No resources found in default namespace.\n");
  CommandRun cluster = Get({.args = {"ns"}, .selector = "nothing=here"});
  EXPECT_EQ(cluster.err, "No resources found\n");
}

// -A lists every namespace, with a NAMESPACE column first.
TEST_F(GetTest, AllNamespacesAddsANamespaceColumn) {
  ApplySeed();
  CommandRun r = Get({.args = {"localqueues"}, .all_namespaces = true});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("NAMESPACE   NAME ")) << r.out;
  auto rows = ParseTable(r.out);
  ASSERT_EQ(rows.size(), 2u) << r.out;  // default/default and team-nlp/team-nlp-queue
  EXPECT_EQ(rows[1].at("NAMESPACE"), "team-nlp");
  EXPECT_EQ(rows[1].at("CLUSTERQUEUE"), "gpu-cluster-queue");
}

// A named object that does not exist is reported in kubectl's words; the
// others still print; exit 1.
TEST_F(GetTest, MissingNamedObjectIsAnError) {
  CommandRun r = Get({.args = {"ns", "nope", "default"}});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Error from server (NotFound): namespaces \"nope\" not found\n");
  auto rows = ParseTable(r.out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("NAME"), "default");
}

// Names across all namespaces, or with a selector, are usage errors.
TEST_F(GetTest, ConflictingArgumentsAreUsageErrors) {
  EXPECT_EQ(Get({.args = {"pods", "p"}, .all_namespaces = true}).rc, 2);
  EXPECT_EQ(Get({.args = {"pods", "p"}, .selector = "a=b"}).rc, 2);
  EXPECT_EQ(Get({.args = {"pods/p", "nodes"}}).rc, 2);
  EXPECT_EQ(Get({.args = {"gizmos"}}).rc, 2);
}

// -o wide on workloads adds why each one waits: the scheduler's own message.
TEST_F(GetTest, WideWorkloadsShowThePendingMessage) {
  ApplySeed();  // the seed's Volcano job waits: its queue's flavors do not exist
  std::string message;
  ASSERT_TRUE(Eventually([&] {
    json wl = GetJson("/apis/kueue.x-k8s.io/v1beta1/namespaces/team-nlp/workloads/vcjob-distributed-llm-training");
    if (!wl.is_object()) return false;  // the job controller has not made it yet
    for (const json& c : wl.value("status", json::object()).value("conditions", json::array())) {
      if (c.value("type", "") == "QuotaReserved" && c.value("status", "") == "False") message = c.value("message", "");
    }
    return !message.empty();
  })) << "the scheduler loop wrote no pending condition";
  CommandRun r = Get({.args = {"workloads"}, .output = "wide"}, "team-nlp");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto rows = ParseTable(r.out);
  const auto* row = RowNamed(rows, "vcjob-distributed-llm-training");
  ASSERT_NE(row, nullptr) << r.out;
  EXPECT_EQ(row->at("QUEUE"), "team-nlp-queue");
  EXPECT_EQ(row->at("ADMITTED"), "False");
  EXPECT_EQ(row->at("FINISHED"), "");  // Kueue's columns: not finished, no condition yet
  EXPECT_NE(r.out.find("RESERVED IN   ADMITTED   FINISHED   POSITION   REASON"), std::string::npos) << r.out;
  std::string reason;
  json wl = GetJson("/apis/kueue.x-k8s.io/v1beta1/namespaces/team-nlp/workloads/vcjob-distributed-llm-training");
  for (const json& c : wl["status"]["conditions"]) {
    if (c.value("type", "") == "QuotaReserved") reason = c.value("reason", "");
  }
  EXPECT_FALSE(reason.empty());
  EXPECT_EQ(row->at("REASON"), reason) << r.out;
  EXPECT_EQ(row->at("MESSAGE"), message);
  // Without -o wide there is no MESSAGE column.
  EXPECT_EQ(Get({.args = {"workloads"}}, "team-nlp").out.find("MESSAGE"), std::string::npos);
}

// A Workload in `default` as a user (or a job controller) writes one.
json WorkloadNamed(const std::string& name, const json& spec_fields) {
  auto wl = ParseSingleObject(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {namespace: default}
spec:
  queueName: default
  podSets:
    - name: main
      count: 1
      template:
        spec:
          containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
)");
  EXPECT_TRUE(wl.has_value()) << wl.error().ToString();
  (*wl)["metadata"]["name"] = name;
  (*wl)["spec"].update(spec_fields);
  return *wl;
}

// PRIORITY is the class a workload names; without one, the priority it runs
// at: spec.priority when set, else the global default class's value, else 0.
TEST_F(GetTest, WorkloadPriorityWithoutAClassIsTheEffectivePriority) {
  ApiClient client = Admin();
  const std::vector<std::pair<std::string, json>> workloads = {
      {"named", {{"priorityClassName", "training"}}}, {"unnamed", json::object()}, {"pinned", {{"priority", 42}}}};
  for (const auto& [name, spec] : workloads) {
    auto r = client.Request("POST", "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads",
                            WorkloadNamed(name, spec).dump());
    ASSERT_EQ(r->status, 201) << r->body;
  }
  auto priorities = [&] {
    CommandRun r = Get({.args = {"workloads"}, .output = "wide"});  // PRIORITY is a wide column
    EXPECT_EQ(r.rc, 0) << r.err;
    std::map<std::string, std::string> by_name;
    for (const auto& row : ParseTable(r.out)) by_name[row.at("NAME")] = row.at("PRIORITY");
    return by_name;
  };
  // The bootstrap classes include no global default: 0.
  EXPECT_EQ(priorities(),
            (std::map<std::string, std::string>{{"named", "training"}, {"pinned", "42"}, {"unnamed", "0"}}));
  ASSERT_EQ(ApplyText("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: exploratory\n"
                      "value: 1000\nglobalDefault: true\n")
                .rc,
            0);
  EXPECT_EQ(priorities(),
            (std::map<std::string, std::string>{{"named", "training"}, {"pinned", "42"}, {"unnamed", "1000"}}));
}

// A list is read in chunks of --chunk-size objects; every object arrives
// whatever the chunk, in order (0: one request).
TEST_F(GetTest, ListsAreReadInChunks) {
  ApiClient client = Admin();
  for (int i = 0; i < 5; ++i) {
    json ns{{"apiVersion", "v1"}, {"kind", "Namespace"},
            {"metadata", {{"name", "c" + std::to_string(i)}, {"labels", {{"chunked", "yes"}}}}}};
    ASSERT_EQ(client.Request("POST", "/api/v1/namespaces", ns.dump())->status, 201);
  }
  for (int64_t chunk : {1, 2, 5, 500, 0}) {
    CommandRun r = Get({.args = {"ns"}, .output = "name", .selector = "chunked", .chunk_size = chunk});
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "namespace/c0\nnamespace/c1\nnamespace/c2\nnamespace/c3\nnamespace/c4\n") << "chunk " << chunk;
  }
}

// -w prints the current objects, then a row per change, under the same header.
TEST_F(GetTest, WatchPrintsARowPerEvent) {
  std::atomic<bool> done = false;
  CommandRun watched;
  std::thread watcher([&] {
    watched = Get({.args = {"ns"}, .selector = "watch=yes", .watch = true, .max_watch_events_for_test = 2});
    done = true;
  });
  // Namespaces created after the watch's list arrive as events; create them
  // until the watcher has seen two (the first may land in its initial list).
  ApiClient client = Admin();
  for (int i = 0; i < 100 && !done; ++i) {
    client.Request("POST", "/api/v1/namespaces",
                   json{{"apiVersion", "v1"}, {"kind", "Namespace"},
                        {"metadata", {{"name", "w" + std::to_string(i)}, {"labels", {{"watch", "yes"}}}}}}
                       .dump());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!done) server_->Stop();  // ends the stream rather than hanging the test
  watcher.join();
  ASSERT_TRUE(done);
  EXPECT_EQ(watched.rc, 0) << watched.err;
  auto rows = ParseTable(watched.out);
  ASSERT_GE(rows.size(), 2u) << watched.out;
  EXPECT_TRUE(watched.out.starts_with("NAME   STATUS   AGE\n")) << watched.out;
  EXPECT_EQ(rows[0].at("NAME"), "w0");
  EXPECT_EQ(rows[0].at("STATUS"), "Active");
}

}  // namespace
}  // namespace tessera

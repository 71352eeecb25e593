// The shared pieces of the client commands, without a server: aligned tables,
// JSON -> YAML, describe's layout, paths and names, and quota rows (the columns
// and AGE are the API layer's: tests/api/printer_columns_test.cc).
#include <gtest/gtest.h>

#include <sstream>

#include "api/kinds.h"
#include "api/manifest.h"
#include "cli/commands/describe_writer.h"
#include "cli/commands/queue_usage.h"
#include "cli/commands/resource_paths.h"
#include "cli/commands/table_printer.h"
#include "cli/commands/yaml_output.h"

namespace tessera {
namespace {

using nlohmann::json;

// Columns are as wide as their widest cell plus 3 spaces; the last is not
// padded and no line ends in blanks; width counts characters, not bytes.
TEST(TableTest, AlignsColumnsLikeKubectl) {
  Table t({"NAME", "STATUS", "AGE"});
  t.AddRow({"a-long-name", "Ready", "5s"});
  t.AddRow({"b", "", ""});
  t.AddRow({"ümlaut", "NotReady", "3d"});
  std::ostringstream out;
  t.Print(out);
  EXPECT_EQ(out.str(),
            "NAME          STATUS     AGE\n"
            "a-long-name   Ready      5s\n"
            "b\n"
            "ümlaut        NotReady   3d\n");
}

// A watch row wider than the first table's columns pushes the rest right,
// keeping 3 spaces between cells.
TEST(TableTest, RowWiderThanItsColumns) {
  EXPECT_EQ(FormatRow({"much-longer-name", "x"}, {4, 1}), "much-longer-name   x\n");
  EXPECT_EQ(FormatRow({"a", "b"}, {4, 1}, 2), "a     b\n");  // padding 2: 4 + 2
}

// Strings that YAML would read as something else are quoted; the YAML reads
// back (through the manifest layer) as the same JSON.
TEST(YamlOutputTest, RoundTripsAndQuotesAmbiguousStrings) {
  json v = {{"quoted", {"8", "0.25", "true", "no", "null", "", "1e3", "0x1F", "2026-01-01T00:00:00Z", "~"}},
            {"plain", {"hello", "a100-spot", "nvidia.com/gpu", "500m", "256Gi"}},
            {"numbers", {8, 0.25, -3, true, nullptr}},
            {"empty", {{"map", json::object()}, {"list", json::array()}}},
            {"multi", "line one\nline two\n"},
            {"8", "a key that looks like a number"}};
  const std::string yaml = ToYaml(v);
  EXPECT_NE(yaml.find("- \"8\"\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("- hello\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("- 500m\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("map: {}\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("list: []\n"), std::string::npos) << yaml;
  auto back = YamlToJson(yaml);
  ASSERT_TRUE(back.has_value()) << back.error().ToString() << "\n" << yaml;
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0], v) << yaml;
}

TEST(YamlOutputTest, NeedsQuotes) {
  for (const char* s : {"8", "-1", "+2", "1.5", ".5", "1e3", "0o17", "0b101", "1_000", "12:30", "True", "OFF", "y", ""}) {
    EXPECT_TRUE(NeedsQuotes(s)) << s;
  }
  for (const char* s : {"a100", "500m", "64Gi", "v1", "team-nlp", "1.2.3", "e3"}) EXPECT_FALSE(NeedsQuotes(s)) << s;
}

// kubectl's labels for field names.
TEST(DescribeWriterTest, SmartLabel) {
  EXPECT_EQ(SmartLabel("nominalQuota"), "Nominal Quota");
  EXPECT_EQ(SmartLabel("apiVersion"), "API Version");
  EXPECT_EQ(SmartLabel("uid"), "UID");
  EXPECT_EQ(SmartLabel("podSetAssignments"), "Pod Set Assignments");
  EXPECT_EQ(SmartLabel("withinClusterQueue"), "Within Cluster Queue");
  EXPECT_EQ(SmartLabel("nvidia.com/gpu"), "nvidia.com/gpu");
  EXPECT_EQ(SmartLabel("requests.cpu"), "requests.cpu");
}

// Values of consecutive key lines line up 2 spaces after the longest key;
// a section header ("List:") and top-level lines after nested ones start new blocks.
TEST(DescribeWriterTest, AlignsValuesPerBlock) {
  DescribeWriter w;
  w.Field(0, "Name", "q");
  w.Field(0, "Annotations", "a: 1");
  w.Continue(0, "b: 2");
  w.Field(0, "Spec", std::nullopt);
  w.Object(2, json{{"cohort", "c"}, {"queueingStrategy", "StrictFIFO"}, {"list", {"x", "y"}}});
  w.Field(0, "Events", "<none>");
  EXPECT_EQ(w.Render(),
            "Name:         q\n"
            "Annotations:  a: 1\n"
            "              b: 2\n"
            "Spec:\n"
            "  Cohort:  c\n"
            "  List:\n"
            "    x\n"
            "    y\n"
            "  Queueing Strategy:  StrictFIFO\n"
            "Events:  <none>\n");
}

// REST paths and display names from the kind registry.
TEST(ResourcePathsTest, PathsAndNames) {
  const KindInfo* cq = FindKindByCliName("cq");
  const KindInfo* pod = FindKindByCliName("pods");
  const KindInfo* vcjob = FindKindByCliName("jobs.batch.volcano.sh");
  ASSERT_TRUE(cq && pod && vcjob);
  EXPECT_EQ(CollectionPath(*cq, "ignored"), "/apis/kueue.x-k8s.io/v1beta1/clusterqueues");
  EXPECT_EQ(CollectionPath(*pod, "team-nlp"), "/api/v1/namespaces/team-nlp/pods");
  EXPECT_EQ(CollectionPath(*pod, ""), "/api/v1/pods");
  EXPECT_EQ(ObjectPath(*vcjob, "ns", "train"), "/apis/batch.volcano.sh/v1alpha1/namespaces/ns/jobs/train");
  EXPECT_EQ(ObjectRef(*cq, "gpu-cluster-queue"), "clusterqueue.kueue.x-k8s.io/gpu-cluster-queue");
  EXPECT_EQ(ObjectRef(*pod, "p"), "pod/p");
  EXPECT_EQ(WithQuery("/api/v1/pods", {{"labelSelector", "team in (a,b)"}, {"watch", ""}}),
            "/api/v1/pods?labelSelector=team%20in%20%28a%2Cb%29");
}

// KIND NAME... and KIND/NAME... both name objects; mixing them is an error.
TEST(ResourcePathsTest, ObjectArguments) {
  auto named = ParseObjectArgs({"cq", "a", "b"});
  ASSERT_TRUE(named.has_value());
  ASSERT_EQ(named->size(), 2u);
  EXPECT_EQ((*named)[1].name, "b");
  auto typed = ParseObjectArgs({"cq/a", "pods/p"});
  ASSERT_TRUE(typed.has_value());
  EXPECT_EQ((*typed)[1].kind->kind, "Pod");
  EXPECT_FALSE(ParseObjectArgs({"cq/a", "b"}).has_value());
  EXPECT_FALSE(ParseObjectArgs({"cq", "pods/p"}).has_value());
  EXPECT_FALSE(ParseObjectArgs({"gizmos"}).has_value());
}

// Quota rows: GPUs first in each flavor, in spec flavor order; no status reads as 0 used.
TEST(QueueUsageTest, RowsFromSpecAndStatus) {
  json cq = json::parse(R"({"spec": {"resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
      "flavors": [{"name": "spot", "resources": [{"name": "cpu", "nominalQuota": 128},
                                                 {"name": "memory", "nominalQuota": "512Gi"},
                                                 {"name": "nvidia.com/gpu", "nominalQuota": 16, "borrowingLimit": "4"}]},
                  {"name": "ondemand", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "8"}]}]}]}})");
  std::vector<QueueUsageRow> rows = QueueUsage(cq);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].flavor, "spot");
  EXPECT_EQ(rows[0].resource, "nvidia.com/gpu");
  EXPECT_EQ(rows[0].nominal, "16");
  EXPECT_EQ(rows[0].borrowing_limit, "4");
  EXPECT_EQ(rows[0].used, "0");  // no status yet
  EXPECT_EQ(rows[1].resource, "cpu");
  EXPECT_EQ(rows[2].nominal, "512Gi");
  EXPECT_EQ(rows[3].flavor, "ondemand");
  EXPECT_EQ(rows[3].borrowing_limit, "");  // unlimited

  cq["status"]["flavorsUsage"] = json::parse(R"([{"name": "spot", "resources": [
      {"name": "nvidia.com/gpu", "total": "18500m", "borrowed": "2500m"}, {"name": "memory", "total": "68719476736"}]}])");
  rows = QueueUsage(cq);
  EXPECT_EQ(rows[0].used, "18.5");     // 18500 milli-GPU, as a decimal
  EXPECT_EQ(rows[0].borrowed, "2.5");
  EXPECT_EQ(rows[2].used, "64Gi");     // bytes in their shortest exact form
  EXPECT_EQ(rows[3].used, "0");
}


}  // namespace
}  // namespace tessera

// `tessera run TEMPLATE NAME` against a real server: the catalogue it ships,
// knobs by flag and by --set, what it refuses (and that nothing is stored
// then), --dry-run, and who may add to the catalogue.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/kinds.h"
#include "api/validation.h"
#include "server/default_templates.h"
#include "tests/cli/cli_test_fixture.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

class RunTemplateTest : public CliTest {
 protected:
  ApiResponse Post(const std::string& path, const json& body) {
    auto r = Admin().Request("POST", path, body.dump());
    return r ? *r : ApiResponse{};
  }
  CommandRun Cli(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"--server", server_->url(), "--token", server_->admin_token()};
    all.insert(all.end(), args.begin(), args.end());
    return RunCommandLine(all);
  }
};

// The server writes its catalogue without the API's validation: it must pass it.
TEST(DefaultTemplatesTest, EachIsAValidTemplate) {
  const KindInfo& kind = *FindKindByStoreKey("tessera.dev/Template");
  for (const json& t : DefaultTemplates()) {
    EXPECT_TRUE(ValidateObject(kind, t).ok()) << t["metadata"]["name"] << ": " << ValidateObject(kind, t).message();
  }
}

TEST_F(RunTemplateTest, TheShippedCatalogueIsListedWithItsKnobs) {
  CommandRun r = Cli({"get", "templates"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto rows = ParseTable(r.out);
  std::map<std::string, std::map<std::string, std::string>> by_name;
  for (const auto& row : rows) by_name[row.at("NAME")] = row;
  ASSERT_TRUE(by_name.contains("jupyter") && by_name.contains("pytorch-ddp") && by_name.contains("inference") &&
              by_name.contains("batch"))
      << r.out;
  EXPECT_EQ(by_name["inference"].at("KIND"), "InferenceService");
  EXPECT_EQ(by_name["jupyter"].at("KIND"), "Notebook");
  EXPECT_EQ(by_name["jupyter"].at("CATEGORY"), "notebook");
  EXPECT_THAT(by_name["jupyter"].at("PARAMETERS"), HasSubstr("gpu,"));
  EXPECT_EQ(by_name["pytorch-ddp"].at("KIND"), "TrainingJob");
}

TEST_F(RunTemplateTest, ANotebookFromTheCatalogueTakesItsDefaultsAndTheFlagsGiven) {
  CommandRun r = Cli({"run", "jupyter", "nb1", "--gpu", "0.5", "--set", "home-size=20Gi", "--set", "idle-timeout=30m"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "notebook.tessera.dev/nb1 created from template jupyter\n");
  const json nb = GetJson("/apis/tessera.dev/v1/namespaces/default/notebooks/nb1");
  EXPECT_EQ(nb["spec"]["gpu"], "0.5");
  EXPECT_EQ(nb["spec"]["home"]["size"], "20Gi");
  EXPECT_EQ(nb["spec"]["idle"]["timeout"], "30m");
  EXPECT_EQ(nb["spec"]["memory"], "4Gi") << "the template's default";
  EXPECT_EQ(nb["metadata"]["labels"]["tessera.dev/template"], "jupyter");
  // Who made it: the caller, as for any create.
  EXPECT_FALSE(nb["metadata"].value("annotations", json::object()).value("tessera.dev/created-by", "").empty())
      << nb["metadata"].dump();
}

TEST_F(RunTemplateTest, ATrainingJobTakesItsCommandAfterTheDashesAndItsGpusAsLimits) {
  CommandRun r = Cli({"run", "pytorch-ddp", "llm", "--set", "workers=4", "--gpu", "2", "--", "torchrun", "train.py"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "trainingjob.tessera.dev/llm created from template pytorch-ddp\n");
  const json tj = GetJson("/apis/tessera.dev/v1/namespaces/default/trainingjobs/llm");
  EXPECT_EQ(tj["spec"]["replicas"], 4);
  const json& c = tj["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(c["command"], json({"torchrun", "train.py"}));
  EXPECT_EQ(c["resources"]["limits"]["nvidia.com/gpu"], "2");
  EXPECT_EQ(c["name"], "worker");
}

// `tessera run inference`: the one-line inference service.
TEST_F(RunTemplateTest, AnInferenceServiceThatScalesToZero) {
  CommandRun r = Cli({"run", "inference", "sentiment", "--gpu", "0.25", "--set", "min-replicas=0", "--", "python3", "-m",
                      "http.server", "8080"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "inferenceservice.tessera.dev/sentiment created from template inference\n");
  const json isvc = GetJson("/apis/tessera.dev/v1/namespaces/default/inferenceservices/sentiment");
  EXPECT_EQ(isvc["spec"]["minReplicas"], 0);
  EXPECT_EQ(isvc["spec"]["maxReplicas"], 4);
  EXPECT_EQ(isvc["spec"]["port"], 8080);
  const json& c = isvc["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(c["command"], json({"python3", "-m", "http.server", "8080"}));
  EXPECT_EQ(c["resources"]["limits"]["nvidia.com/gpu"], "0.25");
}

TEST_F(RunTemplateTest, DryRunPrintsTheObjectAndCreatesNothing) {
  CommandRun r = Cli({"run", "batch", "prep", "--dry-run", "--", "python3", "prep.py"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("kind: Job\n"));
  EXPECT_THAT(r.out, HasSubstr("name: prep\n"));
  EXPECT_THAT(r.out, HasSubstr("- python3\n"));
  EXPECT_EQ(GetJson("/apis/batch/v1/namespaces/default/jobs").value("items", json::array()).size(), 0u);
}

TEST_F(RunTemplateTest, BadKnobsAreRefusedWithWhatToFixAndNothingIsStored) {
  // An unknown knob, with the closest one.
  CommandRun r = Cli({"run", "jupyter", "nb", "--set", "gpus=1"});
  EXPECT_NE(r.rc, 0);
  EXPECT_THAT(r.err, HasSubstr("has no parameter gpus (did you mean gpu?)"));
  // A value of the wrong type.
  r = Cli({"run", "pytorch-ddp", "t", "--set", "workers=many", "--", "torchrun", "x.py"});
  EXPECT_NE(r.rc, 0);
  EXPECT_THAT(r.err, HasSubstr("parameters.workers: string \"many\" is not an integer"));
  // Out of range.
  r = Cli({"run", "pytorch-ddp", "t", "--set", "workers=0", "--", "torchrun", "x.py"});
  EXPECT_THAT(r.err, HasSubstr("parameters.workers: 0 is below the minimum of 1"));
  // A required knob left out.
  r = Cli({"run", "batch", "b"});
  EXPECT_NE(r.rc, 0);
  EXPECT_THAT(r.err, HasSubstr("parameters.command: required by template batch"));
  // A value the kind refuses, in the kind's words.
  r = Cli({"run", "jupyter", "nb", "--gpu", "1.5"});
  EXPECT_NE(r.rc, 0);
  EXPECT_THAT(r.err, HasSubstr("makes an invalid Notebook"));
  // An unknown template.
  r = Cli({"run", "jupyterr", "nb"});
  EXPECT_NE(r.rc, 0);
  EXPECT_THAT(r.err, HasSubstr("template \"jupyterr\" not found"));
  EXPECT_EQ(GetJson("/apis/tessera.dev/v1/namespaces/default/notebooks").value("items", json::array()).size(), 0u);
  EXPECT_EQ(GetJson("/apis/tessera.dev/v1/namespaces/default/trainingjobs").value("items", json::array()).size(), 0u);
}

TEST_F(RunTemplateTest, AnAdminAddsATemplateThatCannotMakeAnInvalidObject) {
  // Refused: a knob pointing outside the spec, and defaults that make an invalid object.
  json bad{{"apiVersion", "tessera.dev/v1"},
           {"kind", "Template"},
           {"metadata", {{"name", "bad"}}},
           {"spec",
            {{"displayName", "Bad"},
             {"object", {{"apiVersion", "tessera.dev/v1"}, {"kind", "Notebook"}, {"spec", {{"gpu", "lots"}}}}},
             {"parameters", json::array({{{"name", "Name"}, {"path", "status.phase"}}})}}}};
  auto r = Post("/apis/tessera.dev/v1/templates", bad);
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_THAT(r.body, HasSubstr("spec.parameters[0].name"));
  EXPECT_THAT(r.body, HasSubstr("spec.parameters[0].path"));
  bad["spec"]["parameters"] = json::array();
  r = Post("/apis/tessera.dev/v1/templates", bad);
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_THAT(r.body, HasSubstr("spec.object"));
  // Accepted: a small one, then run.
  json good = bad;
  good["metadata"]["name"] = "tiny";
  good["spec"]["object"]["spec"] = {{"gpu", "0.25"}, {"command", {"sleep", "600"}}};
  good["spec"]["parameters"] = json::array(
      {{{"name", "gpu"}, {"path", "spec.gpu"}, {"type", "quantity"}, {"enum", {"0.25", "0.5"}}}});
  r = Post("/apis/tessera.dev/v1/templates", good);
  ASSERT_EQ(r.status, 201) << r.body;
  CommandRun run = Cli({"run", "tiny", "nb", "--gpu", "1"});
  EXPECT_THAT(run.err, HasSubstr("parameters.gpu: \"1\" is not one of 0.25, 0.5"));
  run = Cli({"run", "tiny", "nb", "--gpu", "0.5"});
  EXPECT_EQ(run.rc, 0) << run.err;
}

}  // namespace
}  // namespace tessera

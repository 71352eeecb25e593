// `tessera notebook create|open|suspend|resume`, `tessera run notebook` and
// `tessera get notebooks`, through main()'s wiring against a real server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/cli/cli_test_fixture.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

constexpr const char* kNotebook = "/apis/tessera.dev/v1/namespaces/default/notebooks/";

class NotebookCommandTest : public CliTest {
 protected:
  // `tessera ARGS...` with this server's address and token (given first: ARGS may end in `-- CMD`).
  CommandRun Cli(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"--server", server_->url(), "--token", server_->admin_token()};
    all.insert(all.end(), args.begin(), args.end());
    return RunCommandLine(all);
  }
};

TEST_F(NotebookCommandTest, CreateMakesTheNotebookAndGetListsItWithItsUrl) {
  CommandRun r = Cli({"notebook", "create", "nb1", "--gpu", "0.25", "--home-size", "10Gi", "--idle-timeout", "30m",
                      "--queue", "default"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "notebook.tessera.dev/nb1 created in queue default\n  open it:  tessera notebook open nb1 -n default\n");
  const json nb = GetJson(std::string(kNotebook) + "nb1");
  EXPECT_EQ(nb["spec"]["gpu"], "0.25");
  EXPECT_EQ(nb["spec"]["home"]["size"], "10Gi");
  EXPECT_EQ(nb["spec"]["idle"]["timeout"], "30m");
  EXPECT_FALSE(nb["spec"].contains("command")) << "Jupyter Lab by default";
  const std::string url = "/api/v1/namespaces/default/services/notebook-nb1:http/proxy/";
  ASSERT_TRUE(Eventually([&] { return GetJson(std::string(kNotebook) + "nb1").value("status", json::object()).value("url", "") == url; }));
  r = Cli({"get", "notebooks"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto rows = ParseTable(r.out);
  ASSERT_EQ(rows.size(), 1u) << r.out;
  EXPECT_EQ(rows[0].at("NAME"), "nb1");
  EXPECT_EQ(rows[0].at("STATUS"), "Pending");
  EXPECT_EQ(rows[0].at("GPU"), "0.25");
  EXPECT_EQ(rows[0].at("URL"), url);
  EXPECT_EQ(rows[0].at("IDLE"), "-");
  EXPECT_TRUE(rows[0].contains("AGE"));
  EXPECT_EQ(Cli({"get", "nb", "nb1"}).rc, 0) << "the short name";
}

TEST_F(NotebookCommandTest, RunNotebookTakesACommandAfterTheDashes) {
  CommandRun r = Cli({"run", "notebook", "nb2", "--gpu", "1", "--queue", "default", "--", "python3", "-m", "http.server"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const json nb = GetJson(std::string(kNotebook) + "nb2");
  EXPECT_EQ(nb["spec"]["command"], json({"python3", "-m", "http.server"}));
  EXPECT_EQ(nb["spec"]["gpu"], "1");
}

TEST_F(NotebookCommandTest, BadFlagsAreRefusedBeforeAnythingIsSent) {
  CommandRun r = Cli({"notebook", "create", "nb", "--gpu", "0.3x", "--queue", "default"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("--gpu \"0.3x\""));
  r = Cli({"notebook", "create", "nb", "--idle-timeout", "soon", "--queue", "default"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("--idle-timeout \"soon\""));
  r = Cli({"notebook", "create", "nb", "--home-path", "/home/me", "--queue", "default"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("--home-path needs --home-size"));
  EXPECT_TRUE(GetJson(std::string(kNotebook) + "nb").is_null());
}

TEST_F(NotebookCommandTest, SuspendThenOpenResumesAndPrintsTheUrl) {
  ASSERT_EQ(Cli({"notebook", "create", "nb", "--queue", "default"}).rc, 0);
  CommandRun r = Cli({"notebook", "suspend", "nb"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "notebook.tessera.dev/nb suspended\n");
  json nb;
  ASSERT_TRUE(Eventually([&] {
    nb = GetJson(std::string(kNotebook) + "nb");
    const json status = nb.value("status", json::object());
    return status.value("phase", "") == "Suspended" && status.contains("suspendedAt");
  })) << nb.dump();
  r = Cli({"notebook", "open", "nb"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("notebook.tessera.dev/nb was suspended: resuming"));
  // The URL logs a browser in once (a login code, never the token).
  EXPECT_THAT(r.out, HasSubstr(server_->url() + "/api/v1/namespaces/default/services/notebook-nb:http/proxy/?tessera-login="));
  EXPECT_EQ(r.out.find(server_->admin_token()), std::string::npos);
  const json resumed = GetJson(std::string(kNotebook) + "nb");
  EXPECT_EQ(resumed["spec"]["suspend"], false);
  EXPECT_EQ(resumed["metadata"]["annotations"]["tessera.dev/resume-from"], nb["status"]["suspendedAt"]);
  ASSERT_TRUE(Eventually([&] {
    const json w = GetJson("/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/notebook-nb");
    return w.is_object() && w.value("spec", json::object()).value("active", true);
  }));
}

TEST_F(NotebookCommandTest, OpeningAMissingNotebookSaysSo) {
  CommandRun r = Cli({"notebook", "open", "ghost"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr("ghost"));
}

}  // namespace
}  // namespace tessera

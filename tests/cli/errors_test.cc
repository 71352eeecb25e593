// What every command says when it cannot do its work: a refused token, no
// server, an unknown kind.
#include <gtest/gtest.h>

#include "cli/commands/apply_command.h"
#include "cli/commands/get_command.h"
#include "cli/commands/queues_command.h"
#include "tests/cli/cli_test_fixture.h"

namespace tessera {
namespace {

class ErrorsTest : public CliTest {};

// A wrong token: exit 1 with the server's Status message and where the token came from.
TEST_F(ErrorsTest, BadTokenGivesTheServersMessage) {
  CommandContext ctx = Context();
  ctx.config.token = "not-the-token";
  ctx.config.source = "TESSERA_TOKEN";
  CommandRun r = RunWith(ctx, [](const CommandContext& c) { return RunGet(c, {.args = {"ns"}}); });
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "Error from server (Unauthorized): the bearer token is not valid for this server (the token came from "
            "TESSERA_TOKEN; the admin token is in <data-dir>/admin.token)\n");
}

// No token at all: the server's message says how to give one.
TEST_F(ErrorsTest, MissingTokenSaysHowToGiveOne) {
  CommandContext ctx = Context();
  ctx.config.token = "";
  CommandRun r = RunWith(ctx, [](const CommandContext& c) { return RunQueues(c, {}); });
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Error from server (Unauthorized): no bearer token: pass --token"), std::string::npos) << r.err;
}

// apply with a refused token stops at the first object instead of repeating
// the same error for each.
TEST_F(ErrorsTest, ApplyStopsAtARefusedToken) {
  CommandContext ctx = Context();
  ctx.config.token = "not-the-token";
  CommandRun r = RunWith(ctx, [](const CommandContext& c) { return RunApply(c, {.files = {SeedDir().string()}}); });
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// Nothing listening: exit 1, saying which server could not be reached.
TEST_F(ErrorsTest, UnreachableServerSaysSo) {
  CommandContext ctx = Context();
  ctx.config.server = "http://127.0.0.1:1";
  for (auto command : std::vector<std::function<int(const CommandContext&)>>{
           [](const CommandContext& c) { return RunGet(c, {.args = {"ns"}}); },
           [](const CommandContext& c) { return RunQueues(c, {}); },
           [](const CommandContext& c) { return RunApply(c, {.files = {SeedDir().string()}}); }}) {
    CommandRun r = RunWith(ctx, command);
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("error: cannot reach the Tessera server at 127.0.0.1:1"), std::string::npos) << r.err;
  }
}

// An unknown kind is a usage error that lists the kinds there are.
TEST_F(ErrorsTest, UnknownKindIsAUsageError) {
  CommandRun r = Run([](const CommandContext& c) { return RunGet(c, {.args = {"gizmos"}}); });
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("the server doesn't have a resource type \"gizmos\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("clusterqueues"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tessera

// What every command says when it cannot do its work: a refused token, no
// server, an unknown kind.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <thread>

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

// A server that accepts connections but never answers: with --request-timeout
// the command gives up (exit 1) saying so; without one it would wait forever.
TEST_F(ErrorsTest, SilentServerEndsAtTheRequestTimeout) {
  // Listening but never accepting: the kernel completes the handshake, the
  // request is sent, and no answer ever comes.
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  socklen_t length = sizeof address;
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string url = fmt::format("http://127.0.0.1:{}", ntohs(address.sin_port));
  // Should the timeout not work, closing the listener (which resets the
  // connection) ends the command after a minute with another message.
  std::promise<void> finished;
  std::thread guard([&, done = finished.get_future()] {
    done.wait_for(std::chrono::seconds(60));
    ::close(listener);
  });
  CommandRun r = RunCommandLine({"--server", url, "--token", "t", "--request-timeout", "0.2s", "get", "ns"});
  finished.set_value();
  guard.join();
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find(fmt::format("error: no response from {} within 0.2s (--request-timeout)", url)), std::string::npos)
      << r.err;
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

// CliTest: a real API server (Server::Start on 127.0.0.1, port 0, a fresh data
// directory) for each test, and helpers that run client commands in-process
// and capture what they print and their exit code.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "client/api_client.h"
#include "cli/commands/command_context.h"
#include "server/server.h"

namespace tessera {

// What a command printed and returned.
struct CommandRun {
  int rc = -1;
  std::string out;
  std::string err;
};

// The seed manifests directory (../shared/examples/seed next to the repository);
// empty when not found.
std::filesystem::path SeedDir();

// The rows of an aligned table as header -> cell maps. Columns start where the
// header's names start (names are separated by two or more spaces; a name may
// hold single spaces: "PENDING WORKLOADS"), so a misaligned cell reads wrong.
std::vector<std::map<std::string, std::string>> ParseTable(const std::string& text);

// Runs `tessera ARGS...` for the client commands through the same wiring as
// main() (ClientCommands, ParseAndRun), in-process, with `stdin_text` as
// standard input.
CommandRun RunCommandLine(const std::vector<std::string>& args, const std::string& stdin_text = "");

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // A context for the test's server with the admin token.
  CommandContext Context(const std::string& ns = "default");
  // Runs `command` with captured streams (and `stdin_text` as standard input).
  CommandRun Run(const std::function<int(const CommandContext&)>& command, const std::string& ns = "default",
                 const std::string& stdin_text = "");
  CommandRun RunWith(CommandContext ctx, const std::function<int(const CommandContext&)>& command,
                     const std::string& stdin_text = "");

  // Applies the seed's manifests and checks that it worked.
  void ApplySeed();
  // Applies YAML given as text (through `apply -f -`).
  CommandRun ApplyText(const std::string& yaml, const std::string& ns = "default");
  // GET path as JSON (null when not 200).
  nlohmann::json GetJson(const std::string& path);
  // Registers a node with `gpus` (COUNTxMODEL-MEMORY), as an agent does.
  void RegisterNode(const std::string& name, const std::string& gpus);
  // Polls `condition` for up to `seconds`; the scheduler loop writes status asynchronously.
  bool Eventually(const std::function<bool()>& condition, double seconds = 10);

  ApiClient Admin() { return ApiClient(server_->url(), server_->admin_token()); }

  std::filesystem::path dir_;
  std::unique_ptr<Server> server_;
};

}  // namespace tessera

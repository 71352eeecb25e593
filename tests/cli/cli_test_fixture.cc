#include "tests/testing/seed_dir.h"
#include "tests/cli/cli_test_fixture.h"

#include <unistd.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "agent/gpu_inventory.h"
#include "agent/node_registration.h"
#include "cli/commands/apply_command.h"
#include "cli/commands/client_commands.h"
#include "server/api/api_handler.h"
#include "tests/testing/test_dirs.h"
#include "tests/testing/test_server.h"

#ifndef TESSERA_SOURCE_DIR
#define TESSERA_SOURCE_DIR "."
#endif

namespace tessera {

namespace fs = std::filesystem;

fs::path SeedDir() { return testing::SeedDir(); }


std::vector<std::map<std::string, std::string>> ParseTable(const std::string& text) {
  std::vector<std::map<std::string, std::string>> rows;
  std::istringstream lines(text);
  std::string header;
  if (!std::getline(lines, header)) return rows;
  // Column starts: the header's first character and every name after 2+ spaces.
  std::vector<size_t> starts;
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == ' ') continue;
    if (i == 0 || (i >= 2 && header[i - 1] == ' ' && header[i - 2] == ' ')) starts.push_back(i);
  }
  auto trim = [](std::string s) {
    while (!s.empty() && s.back() == ' ') s.pop_back();
    while (!s.empty() && s.front() == ' ') s.erase(0, 1);
    return s;
  };
  std::vector<std::string> names;
  for (size_t c = 0; c < starts.size(); ++c) {
    const size_t end = c + 1 < starts.size() ? starts[c + 1] : std::string::npos;
    names.push_back(trim(header.substr(starts[c], end == std::string::npos ? end : end - starts[c])));
  }
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) break;  // a blank line ends the table
    std::map<std::string, std::string> row;
    for (size_t c = 0; c < starts.size(); ++c) {
      if (starts[c] >= line.size()) {
        row[names[c]] = "";
        continue;
      }
      const size_t end = c + 1 < starts.size() ? starts[c + 1] : std::string::npos;
      row[names[c]] = trim(line.substr(starts[c], end == std::string::npos ? end : end - starts[c]));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

CommandRun RunCommandLine(const std::vector<std::string>& args, const std::string& stdin_text) {
  std::ostringstream out, err;
  std::istringstream in(stdin_text);
  CLI::App app{"Tessera"};
  app.require_subcommand(1);
  int rc = 0;
  ClientCommands commands(out, err, in);
  commands.AddTo(app, &rc);
  std::vector<const char*> argv = {"tessera"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  CommandRun run;
  run.rc = ParseAndRun(app, static_cast<int>(argv.size()), argv.data(), rc, out, err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

void CliTest::SetUp() {
  dir_ = testing::FreshTestDir("tessera-cli");
  server_ = testing::StartLocalServer(dir_.string());
  ASSERT_NE(server_, nullptr);
}

void CliTest::TearDown() {
  server_.reset();
  fs::remove_all(dir_);
}

CommandContext CliTest::Context(const std::string& ns) {
  CommandContext ctx;
  ctx.config.server = server_->url();
  ctx.config.token = server_->admin_token();
  ctx.config.source = "the test";
  ctx.ns = ns;
  return ctx;
}

CommandRun CliTest::Run(const std::function<int(const CommandContext&)>& command, const std::string& ns,
                        const std::string& stdin_text) {
  return RunWith(Context(ns), command, stdin_text);
}

CommandRun CliTest::RunWith(CommandContext ctx, const std::function<int(const CommandContext&)>& command,
                            const std::string& stdin_text) {
  std::ostringstream out, err;
  std::istringstream in(stdin_text);
  ctx.out = &out;
  ctx.err = &err;
  ctx.in = &in;
  CommandRun run;
  run.rc = command(ctx);
  run.out = out.str();
  run.err = err.str();
  return run;
}

void CliTest::ApplySeed() {
  ASSERT_FALSE(SeedDir().empty()) << "seed manifests not found";
  CommandRun r = Run([](const CommandContext& ctx) { return RunApply(ctx, {.files = {SeedDir().string()}}); });
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
}

CommandRun CliTest::ApplyText(const std::string& yaml, const std::string& ns) {
  return Run([](const CommandContext& ctx) { return RunApply(ctx, {.files = {"-"}}); }, ns, yaml);
}

nlohmann::json CliTest::GetJson(const std::string& path) {
  ApiClient client = Admin();
  auto r = client.Request("GET", path);
  if (!r || r->status != 200) return nlohmann::json();
  return nlohmann::json::parse(r->body);
}

void CliTest::RegisterNode(const std::string& name, const std::string& gpus) {
  Node node;
  node.name = name;
  node.cpu_milli = 64000;
  node.memory_bytes = int64_t{512} << 30;
  auto devices = ParseSimulatedInventory(gpus);
  ASSERT_TRUE(devices.has_value()) << devices.error().ToString();
  node.gpus = *devices;
  ApiClient client = Admin();
  auto r = client.Request("POST", "/api/v1/nodes", NodeObject(node, true, Rfc3339Now()).dump());
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 201) << r->body;
}

bool CliTest::Eventually(const std::function<bool()>& condition, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int>(seconds * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return condition();
}

}  // namespace tessera

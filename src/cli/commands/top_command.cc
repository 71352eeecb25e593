#include "cli/commands/top_command.h"

#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "cli/commands/exit_codes.h"
#include "cli/commands/server_errors.h"
#include "cli/commands/table_printer.h"

namespace tessera {
namespace {

struct Sample {
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Our own exposition (text format 0.0.4): `name{k="v",...} value` lines.
std::map<std::string, std::vector<Sample>> ParseMetrics(const std::string& text) {
  std::map<std::string, std::vector<Sample>> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    const std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.empty() || line[0] == '#') continue;
    Sample s;
    size_t i = line.find_first_of("{ ");
    if (i == std::string::npos) continue;
    const std::string name = line.substr(0, i);
    if (line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        const size_t eq = line.find('=', i);
        if (eq == std::string::npos || eq + 1 >= line.size() || line[eq + 1] != '"') break;
        const std::string key = line.substr(i, eq - i);
        std::string value;
        size_t j = eq + 2;
        for (; j < line.size() && line[j] != '"'; ++j) {
          if (line[j] == '\\' && j + 1 < line.size()) {
            ++j;
            value += line[j] == 'n' ? '\n' : line[j];
          } else {
            value += line[j];
          }
        }
        s.labels[key] = value;
        i = j + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      i = line.find(' ', i);
      if (i == std::string::npos) continue;
    }
    s.value = std::strtod(line.c_str() + i + 1, nullptr);
    out[name].push_back(std::move(s));
  }
  return out;
}

std::string Gpus(double v) { return fmt::format("{:g}", std::round(v * 100) / 100); }

std::string Bytes(double b) {
  static const char* kUnits[] = {"", "Ki", "Mi", "Gi", "Ti"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f}", b) : fmt::format("{:.1f}{}", b, kUnits[u]);
}

}  // namespace

int RunTop(const CommandContext& ctx) {
  auto client = ctx.Client();
  auto r = client->Request("GET", "/metrics");
  if (!r) {
    *ctx.err << LocalError(r.error()) << "\n";
    return kExitFailure;
  }
  if (r->status != 200) {
    *ctx.err << ServerError(*r, ctx.config) << "\n";
    return kExitFailure;
  }
  const auto metrics = ParseMetrics(r->body);
  auto family = [&](const std::string& name) -> const std::vector<Sample>& {
    static const std::vector<Sample> kNone;
    auto it = metrics.find(name);
    return it == metrics.end() ? kNone : it->second;
  };

  struct NodeRow {
    bool ready = false;
    int gpus = 0;
    double allocated = 0, utilization = 0, memory = 0;
    int sampled = 0;
  };
  std::map<std::string, NodeRow> nodes;
  for (const Sample& s : family("tessera_node_ready")) nodes[s.labels.at("node")].ready = s.value > 0;
  for (const Sample& s : family("tessera_gpu_allocated_ratio")) {
    NodeRow& n = nodes[s.labels.at("node")];
    ++n.gpus;
    n.allocated += s.value;
  }
  for (const Sample& s : family("tessera_gpu_utilization_ratio")) {
    NodeRow& n = nodes[s.labels.at("node")];
    n.utilization += s.value;
    ++n.sampled;
  }
  for (const Sample& s : family("tessera_gpu_memory_used_bytes")) nodes[s.labels.at("node")].memory += s.value;
  Table node_table({"NODE", "READY", "GPUS", "ALLOCATED", "UTILISATION", "GPU MEMORY"});
  for (const auto& [name, n] : nodes) {
    node_table.AddRow({name, n.ready ? "True" : "False", std::to_string(n.gpus), Gpus(n.allocated),
                       n.sampled > 0 ? fmt::format("{:.0f}%", 100 * n.utilization / n.sampled) : "<unknown>",
                       n.sampled > 0 ? Bytes(n.memory) : "<unknown>"});
  }

  struct TeamRow {
    double allocated = 0, used = 0, pending = 0;
    bool used_known = false;
  };
  std::map<std::string, TeamRow> teams;
  const bool any_samples = !family("tessera_gpu_utilization_ratio").empty();
  for (const Sample& s : family("tessera_namespace_allocated_gpus")) teams[s.labels.at("namespace")].allocated = s.value;
  for (const Sample& s : family("tessera_namespace_used_gpus")) {
    teams[s.labels.at("namespace")].used = s.value;
    teams[s.labels.at("namespace")].used_known = any_samples;
  }
  for (const Sample& s : family("tessera_namespace_pending_workloads")) teams[s.labels.at("namespace")].pending = s.value;
  Table team_table({"NAMESPACE", "ALLOCATED GPUS", "USED GPUS", "PENDING"});
  for (const auto& [name, t] : teams) {
    if (t.allocated == 0 && t.pending == 0) continue;  // namespaces with nothing to show
    team_table.AddRow({name, Gpus(t.allocated), t.used_known ? Gpus(t.used) : "<unknown>",
                       fmt::format("{:g}", t.pending)});
  }
  if (node_table.rows() == 0) {
    *ctx.out << "No nodes: start an agent (`tessera agent`) or `tessera up`.\n";
  } else {
    node_table.Print(*ctx.out);
  }
  *ctx.out << "\n";
  if (team_table.rows() == 0) {
    *ctx.out << "No namespace holds GPUs or waits for them.\n";
  } else {
    team_table.Print(*ctx.out);
  }
  return kExitOk;
}

}  // namespace tessera

#include "cli/commands/pipelinerun_describe.h"

#include <fmt/format.h>

#include "common/time_format.h"
#include "pipeline/dag.h"
#include "pipeline/parameters.h"
#include "pipeline/pipeline_spec.h"
#include "pipeline/render.h"

namespace tessera {

using nlohmann::json;

namespace {

const json& Member(const json& obj, const char* key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it != obj.end() ? *it : kNull;
}

std::string Str(const json& obj, const char* key) {
  const json& v = Member(obj, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

}  // namespace

std::vector<std::string> PipelineRunDagLines(const json& run) {
  const json& status = Member(run, "status");
  const json& spec = Member(status, "pipelineSpec");
  const std::string message = Str(status, "message");
  if (spec.is_null()) return {fmt::format("<not started{}>", message.empty() ? "" : ": " + message)};
  auto parsed = pipeline::ParsePipelineSpec(spec, "status.pipelineSpec");
  if (!parsed) return {fmt::format("<unreadable: {}>", parsed.error().message())};
  pipeline::ParameterValues values;
  if (const json& p = Member(status, "parameters"); p.is_object()) {
    for (const auto& [name, value] : p.items()) {
      if (value.is_string()) values[name] = value.get<std::string>();
    }
  }
  auto dag = pipeline::Expand(*parsed, values);
  if (!dag) return {fmt::format("<unreadable: {}>", dag.error().message())};
  pipeline::NodeStates states;
  if (const json& nodes = Member(status, "nodes"); nodes.is_object()) {
    for (const auto& [name, n] : nodes.items()) {
      pipeline::NodeStatus s;
      s.state = pipeline::ParseNodeState(Str(n, "phase")).value_or(pipeline::NodeState::kPending);
      const json& attempts = Member(n, "attempts");
      s.attempts = attempts.is_number_integer() ? attempts.get<int32_t>() : 0;
      s.permanent = Member(n, "permanent").is_boolean() && Member(n, "permanent").get<bool>();
      s.message = Str(n, "message");
      if (std::string from = Str(n, "resumedFrom"); !from.empty()) s.resumed_from = from;
      if (auto t = ParseRfc3339(Str(n, "finishedAt"))) s.finished_at = *t;
      states[name] = std::move(s);
    }
  }
  return pipeline::RenderDag(*dag, states);
}

}  // namespace tessera

#include "cli/commands/sweep_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>

#include "api/age.h"
#include "cli/commands/exit_codes.h"
#include "cli/commands/server_errors.h"
#include "cli/commands/table_printer.h"

namespace tessera {

using nlohmann::json;

namespace {

const json& Field(const json& obj, const char* key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

std::string ObjectiveMetric(const json& sweep) {
  const json& objective = Field(Field(sweep, "spec"), "objective");
  const json& name = Field(objective, "objectiveMetricName");
  return name.is_string() ? name.get<std::string>() : std::string("objective");
}

bool Maximize(const json& sweep) {
  const json& type = Field(Field(Field(sweep, "spec"), "objective"), "type");
  return type.is_string() && type.get<std::string>() == "maximize";
}

std::string NumberText(const json& v) {
  if (!v.is_number()) return "-";
  return fmt::format("{:.6g}", v.get<double>());
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string XmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

Result<json> FetchSweep(const CommandContext& ctx, const std::string& name) {
  auto client = ctx.Client();
  auto r = client->Request("GET", fmt::format("/apis/tessera.dev/v1/namespaces/{}/sweeps/{}", ctx.ns, name));
  if (!r) return std::unexpected(r.error());
  if (r->status != 200) return std::unexpected(Status::NotFound(ServerError(*r, ctx.config)));
  json doc = json::parse(r->body, nullptr, false);
  if (doc.is_discarded()) return std::unexpected(Status::Internal("the server's answer is not JSON"));
  return doc;
}

}  // namespace

bool IsGetTrials(const std::vector<std::string>& args) {
  return args.size() == 2 && (args[0] == "trials" || args[0] == "trial");
}

std::string TrialsTable(const json& sweep, int64_t now) {
  std::vector<std::string> parameters;
  const json& params = Field(Field(sweep, "spec"), "parameters");
  if (params.is_array()) {
    for (const json& p : params) {
      const json& n = Field(p, "name");
      if (n.is_string()) parameters.push_back(n.get<std::string>());
    }
  }
  std::vector<std::string> headers{"TRIAL", "STATUS"};
  for (const std::string& p : parameters) headers.push_back(Upper(p));
  headers.push_back(Upper(ObjectiveMetric(sweep)));
  headers.push_back("AGE");
  Table table(headers);
  const json& trials = Field(Field(sweep, "status"), "trialList");
  if (trials.is_array()) {
    for (const json& t : trials) {
      std::vector<std::string> row{Field(t, "name").is_string() ? Field(t, "name").get<std::string>() : "",
                                   Field(t, "state").is_string() ? Field(t, "state").get<std::string>() : ""};
      for (const std::string& p : parameters) {
        std::string value = "-";
        const json& assignments = Field(t, "parameterAssignments");
        if (assignments.is_array()) {
          for (const json& a : assignments) {
            if (Field(a, "name") == p && Field(a, "value").is_string()) value = Field(a, "value").get<std::string>();
          }
        }
        row.push_back(value);
      }
      row.push_back(NumberText(Field(t, "objectiveValue")));
      row.push_back(AgeSince(Field(t, "createdAt"), now));
      table.AddRow(std::move(row));
    }
  }
  std::ostringstream out;
  table.Print(out);
  return out.str();
}

int RunGetTrials(const CommandContext& ctx, const std::string& sweep) {
  auto doc = FetchSweep(ctx, sweep);
  if (!doc) {
    *ctx.err << doc.error().message() << "\n";
    return kExitFailure;
  }
  *ctx.out << TrialsTable(*doc, ctx.Now());
  return kExitOk;
}

std::string SweepSvg(const json& sweep) {
  constexpr double kWidth = 640, kHeight = 360, kLeft = 60, kRight = 20, kTop = 30, kBottom = 40;
  struct Point {
    size_t index;
    double value;
  };
  std::vector<Point> points;
  size_t count = 0;
  const json& trials = Field(Field(sweep, "status"), "trialList");
  if (trials.is_array()) {
    count = trials.size();
    for (size_t i = 0; i < trials.size(); ++i) {
      const json& v = Field(trials[i], "objectiveValue");
      if (v.is_number() && std::isfinite(v.get<double>())) points.push_back({i, v.get<double>()});
    }
  }
  const std::string metric = ObjectiveMetric(sweep);
  const std::string name = Field(Field(sweep, "metadata"), "name").is_string()
                               ? Field(Field(sweep, "metadata"), "name").get<std::string>()
                               : std::string();
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"20\" font-family=\"sans-serif\" font-size=\"14\">sweep {3}: {4} per trial</text>\n",
      kWidth, kHeight, kLeft, XmlEscape(name), XmlEscape(metric));
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\"/>\n", kLeft, kTop,
                     kTop + plot_h);
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\"/>\n", kLeft, kTop + plot_h,
                     kLeft + plot_w);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" font-family=\"sans-serif\" font-size=\"12\">trial</text>\n",
                     kLeft + plot_w / 2, kHeight - 8);
  if (points.empty()) {
    svg += fmt::format(
        "<text x=\"{}\" y=\"{}\" font-family=\"sans-serif\" font-size=\"12\">no trial has a value yet</text>\n",
        kLeft + 10, kTop + plot_h / 2);
    return svg + "</svg>\n";
  }
  double lo = points[0].value, hi = points[0].value;
  for (const Point& p : points) lo = std::min(lo, p.value), hi = std::max(hi, p.value);
  if (hi == lo) hi = lo + 1;
  const auto x = [&](size_t i) { return kLeft + plot_w * (count <= 1 ? 0.5 : static_cast<double>(i) / (count - 1)); };
  const auto y = [&](double v) { return kTop + plot_h * (1 - (v - lo) / (hi - lo)); };
  for (const double v : {hi, lo}) {
    svg += fmt::format("<text x=\"4\" y=\"{:.1f}\" font-family=\"sans-serif\" font-size=\"11\">{:.4g}</text>\n",
                       y(v) + 4, v);
  }
  const bool maximize = Maximize(sweep);
  std::string best_line;
  std::optional<double> best;
  for (const Point& p : points) {
    if (!best || (maximize ? p.value > *best : p.value < *best)) best = p.value;
    best_line += fmt::format("{}{:.1f},{:.1f}", best_line.empty() ? "" : " ", x(p.index), y(*best));
    const json& t = trials[p.index];
    const std::string trial = Field(t, "name").is_string() ? Field(t, "name").get<std::string>() : "";
    svg += fmt::format(
        "<circle class=\"trial\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"steelblue\">"
        "<title>{} {}={:.6g}</title></circle>\n",
        x(p.index), y(p.value), XmlEscape(trial), XmlEscape(metric), p.value);
  }
  svg += fmt::format(
      "<polyline class=\"best\" points=\"{}\" fill=\"none\" stroke=\"darkorange\" stroke-width=\"2\"/>\n", best_line);
  return svg + "</svg>\n";
}

int RunReportSweep(const CommandContext& ctx, const ReportSweepOptions& options) {
  auto doc = FetchSweep(ctx, options.name);
  if (!doc) {
    *ctx.err << doc.error().message() << "\n";
    return kExitFailure;
  }
  const std::string svg = SweepSvg(*doc);
  if (options.output.empty()) {
    *ctx.out << svg;
    return kExitOk;
  }
  std::ofstream file(options.output, std::ios::trunc);
  file << svg;
  if (!file) {
    *ctx.err << fmt::format("error: cannot write {}\n", options.output);
    return kExitFailure;
  }
  *ctx.err << fmt::format("wrote {}\n", options.output);
  return kExitOk;
}

}  // namespace tessera

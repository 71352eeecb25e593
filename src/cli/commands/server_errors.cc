#include "cli/commands/server_errors.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace tessera {
namespace {

nlohmann::json StatusObject(const ApiResponse& r) {
  nlohmann::json body = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_object() && body.value("kind", "") == "Status") return body;
  return nlohmann::json();
}

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  constexpr size_t kMax = 500;
  if (text.size() > kMax) text = text.substr(0, kMax) + "...";
  return text;
}

}  // namespace

std::string StatusReason(const ApiResponse& response) {
  nlohmann::json s = StatusObject(response);
  if (s.is_object() && s.contains("reason") && s["reason"].is_string()) return s["reason"].get<std::string>();
  return "";
}

std::string StatusMessage(const ApiResponse& response) {
  nlohmann::json s = StatusObject(response);
  if (s.is_object() && s.contains("message") && s["message"].is_string()) return s["message"].get<std::string>();
  return Trimmed(response.body);
}

std::string ServerError(const ApiResponse& response, const ClientConfig& config, std::string_view context) {
  std::string reason = StatusReason(response);
  if (reason.empty()) reason = fmt::format("HTTP {}", response.status);
  std::string message = StatusMessage(response);
  if (message.empty()) message = "(no message)";
  if (response.status == 401 && !config.token.empty()) {
    message += fmt::format(" (the token came from {}; the admin token is in <data-dir>/admin.token)",
                           config.source.empty() ? "the command line" : config.source);
  }
  if (context.empty()) return fmt::format("Error from server ({}): {}", reason, message);
  return fmt::format("Error from server ({}): {}: {}", reason, context, message);
}

std::string LocalError(const Status& status) { return fmt::format("error: {}", status.message()); }

}  // namespace tessera

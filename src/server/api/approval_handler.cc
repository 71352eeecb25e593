#include "server/api/approval_handler.h"

#include <fmt/format.h>

#include "api/kinds.h"
#include "api/manifest.h"
#include "common/time_format.h"
#include "server/api/api_errors.h"
#include "server/api/authorization.h"
#include "server/object_json.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr int kConflictRetries = 5;

struct Decision {
  bool approve = false;
  std::string reason;
};

// The decision the body adds: its last condition of type Approved or Denied
// with status "True". nullopt when it has none.
std::optional<Decision> DecisionIn(const json& body) {
  const json status = body.is_object() ? body.value("status", json::object()) : json::object();
  const json conditions = status.is_object() ? status.value("conditions", json::array()) : json::array();
  std::optional<Decision> found;
  if (!conditions.is_array()) return found;
  for (const json& c : conditions) {
    if (!c.is_object()) continue;
    const std::string type = c.value("type", ""), state = c.value("status", "");
    if ((type == "Approved" || type == "Denied") && state == "True") {
      // The message is the person's reason; `reason` is a machine word (kubectl's "KubectlApprove").
      found = Decision{.approve = type == "Approved", .reason = c.value("message", "")};
    }
  }
  return found;
}

}  // namespace

HttpResponse AnswerApproval(Store& store, const UserInfo& user, const RequestInfo& r, const HttpRequest& http,
                            Timestamp now, std::string* decision_text) {
  const KindInfo& kind = *r.kind;
  auto parsed = ParseSingleObject(http.body);
  if (!parsed) return StatusResponse(400, "BadRequest", parsed.error().message());
  const std::optional<Decision> decision = DecisionIn(*parsed);
  if (!decision) {
    return StatusResponse(422, "Invalid",
                          "status.conditions: add a condition of type Approved or Denied with status \"True\" and the "
                          "reason as its message (tessera approve NAME, tessera deny NAME --reason TEXT)");
  }
  if (!decision->approve && decision->reason.empty()) {
    return StatusResponse(422, "Invalid", "status.conditions: a denial needs a reason (tessera deny NAME --reason TEXT)");
  }
  const std::string now_text = FormatRfc3339(Timestamp::FromSeconds(now.seconds()));
  for (int attempt = 0; attempt < kConflictRetries; ++attempt) {
    auto current = store.Get(r.Key());
    if (!current) return ObjectErrorResponse(current.error(), kind, r.name);
    json next = current->object;
    json& status = next["status"];
    if (!status.is_object()) status = json::object();
    const std::string phase = status.value("phase", "Pending");
    if (phase != "Pending") {
      std::string how = phase;
      if (phase == "Denied") how = fmt::format("Denied by {}", status.value("denial", json::object()).value("user", "?"));
      return ObjectConflict(kind, r.name, fmt::format("it is no longer pending: {}", how));
    }
    const json& spec = next["spec"];
    const std::string requester = spec.value("requester", "");
    if (decision->approve && requester == user.name && !spec.value("allowSelfApproval", false)) {
      return ForbiddenObjectResponse(kind, r.name,
                                     fmt::format("user \"{}\" requested it: someone else must approve it (its "
                                                 "ApprovalPolicy does not allow self-approval)",
                                                 user.name));
    }
    const json record{{"user", user.name}, {"time", now_text}, {"reason", decision->reason}};
    if (decision->approve) {
      json& approvals = status["approvals"];
      if (!approvals.is_array()) approvals = json::array();
      bool again = false;
      for (const json& a : approvals) again = again || (a.is_object() && a.value("user", "") == user.name);
      if (!again) approvals.push_back(record);  // distinct people: a second approval by one counts once
      if (static_cast<int64_t>(approvals.size()) >= spec.value("requiredApprovals", int64_t{1})) status["phase"] = "Approved";
      *decision_text = fmt::format("approved by {}{}", user.name, decision->reason.empty() ? "" : ": " + decision->reason);
    } else {
      status["denial"] = record;
      status["phase"] = "Denied";
      *decision_text = fmt::format("denied by {}: {}", user.name, decision->reason);
    }
    SetCondition(next, decision->approve ? "Approved" : "Denied", true, decision->approve ? "Approved" : "Denied",
                 fmt::format("{} {}{}", decision->approve ? "approved by" : "denied by", user.name,
                             decision->reason.empty() ? "" : ": " + decision->reason),
                 now_text);
    auto updated = store.Update(r.Key(), std::move(next), current->revision);
    if (updated) {
      HttpResponse ok;
      ok.body = updated->object.dump(-1, ' ', false, json::error_handler_t::replace);
      return ok;
    }
    if (updated.error().code() != StatusCode::kConflict) return ObjectErrorResponse(updated.error(), kind, r.name);
  }
  return ObjectConflict(kind, r.name);
}

}  // namespace tessera

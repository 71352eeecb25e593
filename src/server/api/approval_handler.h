// The approval subresource of an ApprovalRequest (approval_controller.h):
//
//   PUT|PATCH /apis/tessera.dev/v1/namespaces/NS/approvalrequests/NAME/approval
//   (GET of it answers the ApprovalRequest, as a subresource shows its object)
//
// as kubectl certificate approve does for a CertificateSigningRequest: the body
// is the ApprovalRequest (or, for PATCH, a merge patch of it) whose
// status.conditions gained a condition of type Approved or Denied with status
// "True", its message the reason (its `reason` field, a machine word, is not). RBAC decides who may send it (update or
// patch on approvalrequests/approval in NS: the "admin" role has it); this
// records the decision in status, by the authenticated user, never by what the
// body claims:
//   status.approvals: [{user, time, reason}]   one per distinct person
//   status.denial:    {user, time, reason}      a denial needs a reason
//   status.phase:     Approved once requiredApprovals distinct people approved; Denied
// Refused: the requester approving their own request unless the policy allows
// it (403); a request no longer pending (409 Conflict, saying how it ended);
// a body without a decision, or a denial without a reason (422).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "auth/user_info.h"
#include "common/time.h"
#include "http/http_server.h"
#include "server/api/request_info.h"
#include "store/store.h"

namespace tessera {

// Answers the request; on success sets `decision` to what the audit log says
// ("approved by bob: looks fine") and returns the updated ApprovalRequest.
HttpResponse AnswerApproval(Store& store, const UserInfo& user, const RequestInfo& request, const HttpRequest& http,
                            Timestamp now, std::string* decision);

}  // namespace tessera

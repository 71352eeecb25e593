// `tessera auth can-i`, `tessera auth whoami`, `tessera create token` and
// `tessera create node-token`: kubectl's words and outputs, over the API's
// SelfSubjectAccessReview, SelfSubjectRulesReview, SelfSubjectReview and
// TokenRequest (src/server/auth_endpoints.h).
//
//   tessera auth can-i create jobs.batch -n team-nlp      yes (exit 0) / no (exit 1)
//   tessera auth can-i get pods --subresource log
//   tessera auth can-i get /metrics                        a non-resource URL
//   tessera auth can-i --list -n team-nlp                  the rules that apply there
//   tessera auth whoami [-o yaml|json]
//   tessera create token builder -n team-nlp --duration 24h
//   tessera create node-token gpu-07 --duration 8760h      (an admin; for `tessera agent --token-file`)
#pragma once

#include <string>
#include <vector>

#include "cli/commands/command_context.h"

namespace tessera {

struct CanIOptions {
  std::vector<std::string> args;  // VERB, then TYPE, TYPE/NAME or /URL (absent with --list)
  std::string subresource;
  bool all_namespaces = false;
  bool list = false;
  bool quiet = false;  // -q: only the exit code
};
int RunCanI(const CommandContext& ctx, const CanIOptions& options);

int RunWhoAmI(const CommandContext& ctx, const std::string& output);

struct CreateTokenOptions {
  std::string name;  // the ServiceAccount, or the node
  std::string duration;
  std::vector<std::string> audiences;
  std::string bound_object_kind;
  std::string bound_object_name;
  std::string bound_object_uid;
};
int RunCreateToken(const CommandContext& ctx, const CreateTokenOptions& options);
int RunCreateNodeToken(const CommandContext& ctx, const CreateTokenOptions& options);

}  // namespace tessera

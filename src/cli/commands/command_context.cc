#include "cli/commands/command_context.h"

#include "common/time_format.h"

namespace tessera {

int64_t CommandContext::Now() const {
  if (now_unix != 0) return now_unix;
  return SystemNow().ms / 1000;
}

std::unique_ptr<ApiClient> CommandContext::Client() const {
  return std::make_unique<ApiClient>(config.server, config.token, config.tls, config.request_timeout);
}

}  // namespace tessera

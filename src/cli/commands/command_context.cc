#include "cli/commands/command_context.h"

#include <chrono>

namespace tessera {

int64_t CommandContext::Now() const {
  if (now_unix != 0) return now_unix;
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::unique_ptr<ApiClient> CommandContext::Client() const {
  return std::make_unique<ApiClient>(config.server, config.token, config.tls);
}

}  // namespace tessera

#include "net/nftables.h"

#include <fmt/format.h>
#include <nftables/libnftables.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "net/node_ruleset.h"

namespace tessera::net {
namespace {

struct ContextFree {
  void operator()(nft_ctx* ctx) const { nft_ctx_free(ctx); }
};
using Context = std::unique_ptr<nft_ctx, ContextFree>;

struct Outcome {
  int rc = 0;
  std::string output;
  std::string error;
};

// `as_file`: the text is handed to nft as a file (a memfd), not a buffer:
// nft 1.0.6 quotes the *first* line of a buffer under every error, whatever
// line it is about, but the right line of a file ("FILE:LINE:COLUMNS: Error:
// ..."), and a multi-line script needs that to be read.
Result<Outcome> Run(std::string_view command, bool as_file) {
  Context ctx(nft_ctx_new(NFT_CTX_DEFAULT));
  if (!ctx) return Err(Status::Unavailable("libnftables: cannot make a context (nft_ctx_new failed)"));
  nft_ctx_buffer_output(ctx.get());
  nft_ctx_buffer_error(ctx.get());
  Outcome o;
  std::string path;
  if (as_file) {
    const int fd = ::memfd_create("tessera-nft", MFD_CLOEXEC);
    if (fd < 0) return Err(Status::Unavailable(fmt::format("memfd_create: {}", std::strerror(errno))));
    size_t done = 0;
    while (done < command.size()) {
      const ssize_t n = ::write(fd, command.data() + done, command.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int e = errno;
        ::close(fd);
        return Err(Status::Unavailable(fmt::format("writing the ruleset to a memfd: {}", std::strerror(e))));
      }
      done += static_cast<size_t>(n);
    }
    path = fmt::format("/proc/self/fd/{}", fd);
    o.rc = nft_run_cmd_from_filename(ctx.get(), path.c_str());
    ::close(fd);
  } else {
    const std::string text(command);  // NUL-terminated
    o.rc = nft_run_cmd_from_buffer(ctx.get(), text.c_str());
  }
  if (const char* out = nft_ctx_get_output_buffer(ctx.get())) o.output = out;
  if (const char* err = nft_ctx_get_error_buffer(ctx.get())) o.error = err;
  if (!path.empty()) {
    // "/proc/self/fd/5:3:9-20: Error: ..." -> "line 3:9-20: Error: ...".
    const std::string prefix = path + ":";
    for (size_t at = o.error.find(prefix); at != std::string::npos; at = o.error.find(prefix, at)) {
      o.error.replace(at, prefix.size(), "line ");
    }
  }
  return o;
}

}  // namespace

Status ApplyRuleset(std::string_view script) {
  ASSIGN_OR_RETURN(Outcome o, Run(script, /*as_file=*/true));
  if (o.rc == 0) return Status::Ok();
  std::string error = o.error.empty() ? "no message" : o.error;
  while (!error.empty() && error.back() == '\n') error.pop_back();
  return Status::Unavailable(fmt::format("nft refused the ruleset: {}", error));
}

Status DeleteTesseraTables() { return ApplyRuleset(RenderDeleteTables()); }

Result<std::string> ListTesseraTable(std::string_view family) {
  ASSIGN_OR_RETURN(Outcome o, Run(fmt::format("list table {} {}", family, kTableName), /*as_file=*/false));
  if (o.rc != 0) {
    return Err(Status::NotFound(fmt::format("table {} {}: {}", family, kTableName, o.error)));
  }
  return o.output;
}

}  // namespace tessera::net

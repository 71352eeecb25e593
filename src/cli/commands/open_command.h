// `tessera open TARGET`: a URL a browser can open on something the server's
// proxy serves, logged in as the CLI's user without a token in the URL.
//
//   TARGET: NAME or notebook/NAME (a Notebook: resumed first when suspended,
//   as `tessera notebook open`), svc/NAME[:PORT] or pod/NAME[:PORT].
//
// The CLI asks the server, with its token, for a login code for that proxy
// path (POST .../proxylogin, server/api/proxy_login.h) and prints
// SERVER/api/v1/namespaces/NS/.../proxy/?tessera-login=CODE: a single-use code,
// valid 60 seconds, that the proxy trades for an HttpOnly cookie on that path
// and drops from the URL. With a desktop (DISPLAY or WAYLAND_DISPLAY) and
// xdg-open on the PATH, the URL is opened too, unless --print.
#pragma once

#include <string>

#include "cli/commands/command_context.h"
#include "client/api_client.h"
#include "common/result.h"

namespace tessera {

struct OpenOptions {
  std::string target;
  bool print_only = false;  // --print: never start a browser
};

// POST .../{resource}/{name_port}/proxylogin in `ns`: the absolute URL with
// the login code. The error's message is worded for the user as it is
// ("Error from server (Forbidden): ...", "error: cannot reach ...").
Result<std::string> RequestProxyLoginUrl(const CommandContext& ctx, ApiClient& client, const std::string& resource,
                                         const std::string& name_port);

// Prints `url` and, unless print_only, opens it with xdg-open when there is one
// and a desktop to show it on.
void ShowUrl(const CommandContext& ctx, const std::string& url, bool print_only);

int RunOpen(const CommandContext& ctx, const OpenOptions& options);

}  // namespace tessera

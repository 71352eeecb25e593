// The exit codes of every client command (`tessera apply/get/describe/delete/
// submit/queues`), as `tessera --help` documents them. Scripts rely on them:
//   0  success
//   1  the server refused a request, or something failed (the message says which);
//      commands that work on several objects keep going and exit 1 at the end
//   2  the command line is wrong (unknown flag or kind, a bad value); nothing was sent
#pragma once

namespace tessera {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// The lines `tessera --help` ends with.
inline constexpr const char* kExitCodesHelp =
    "Exit codes:\n"
    "  0  success\n"
    "  1  the server refused a request or something failed (the error says which);\n"
    "     commands on several objects keep going and exit 1 at the end\n"
    "  2  usage error: unknown flag, kind or bad value; nothing was sent to the server\n"
    "\n"
    "Server and token: --server/--token, else TESSERA_SERVER/TESSERA_TOKEN, else\n"
    "~/.config/tessera/config.yaml (written by `tessera up`).";

}  // namespace tessera

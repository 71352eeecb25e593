// Applying nft scripts through libnftables, in the network namespace of the
// calling thread: the one wrapper of libnftables (as http/ wraps Beast).
//
// Contract
// - Every call makes its own nft context (and so its own netlink socket), in
//   the calling thread: a thread that entered a namespace with setns(2) before
//   the call applies its rules there. A context is never kept across calls,
//   so a call never writes into a namespace it was not called in.
// - A script is one nft transaction: it applies as a whole or not at all.
// - Errors are Unavailable with nft's own error text: "line 12:9-20: Error:
//   ...", the offending line and a mark under the token. (The script reaches
//   nft as a file, a memfd, rather than through nft_run_cmd_from_buffer: nft
//   1.0.6 quotes a buffer's first line under every error.)
//
// Thread-safety: calls may run on several threads at once (one context each).
// Requires CAP_NET_ADMIN in the namespace.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace tessera::net {

// Runs `script` (nft's syntax, as `nft -f` reads it).
Status ApplyRuleset(std::string_view script);

// Deletes Tessera's tables (inet and bridge "tessera"), present or not.
Status DeleteTesseraTables();

// `nft list table FAMILY tessera`; NotFound when the table is not there.
Result<std::string> ListTesseraTable(std::string_view family);

}  // namespace tessera::net

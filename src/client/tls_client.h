// The client side of TLS to a Tessera server, as kubectl trusts one: the
// context (TLS 1.2 or later; the system's CAs, a --certificate-authority file
// whose every certificate is a trust anchor, or no verification with
// --insecure-skip-tls-verify) and the name the server's certificate must carry.
// Shared by ApiClient and the CLI's port-forward WebSockets.
//
// Thread-safety: pure functions.
#pragma once

#include <boost/asio/ssl.hpp>

#include <string>

#include "client/api_client.h"
#include "common/result.h"

namespace tessera {

// InvalidArgument for a CA file with the insecure flag or a CA file that
// cannot be read; Unavailable when the system's CAs cannot be loaded.
Result<boost::asio::ssl::context> MakeTlsClientContext(const TlsClientOptions& options);

// The name (or IP address) `ssl`'s peer certificate must carry (verify_peer
// alone accepts a trusted certificate of any host), and SNI for a DNS name.
void ExpectServerName(SSL* ssl, const std::string& host);

}  // namespace tessera

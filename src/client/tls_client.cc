#include "client/tls_client.h"

#include <fmt/format.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/ip/address.hpp>

namespace tessera {

namespace ssl = boost::asio::ssl;

Result<ssl::context> MakeTlsClientContext(const TlsClientOptions& options) {
  const std::string& ca_file = options.certificate_authority;
  if (!ca_file.empty() && options.insecure_skip_tls_verify) {
    return Err(Status::InvalidArgument(
        "specifying a root certificates file with the insecure flag is not allowed: drop "
        "--insecure-skip-tls-verify or --certificate-authority"));
  }
  ssl::context context(ssl::context::tls_client);
  context.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                      ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  boost::system::error_code ec;
  if (options.insecure_skip_tls_verify) {
    context.set_verify_mode(ssl::verify_none);
  } else if (ca_file.empty()) {
    context.set_verify_mode(ssl::verify_peer);
    context.set_default_verify_paths(ec);
    if (ec) return Err(Status::Unavailable(fmt::format("cannot load the system's CA certificates: {}", ec.message())));
  } else {
    context.set_verify_mode(ssl::verify_peer);
    context.load_verify_file(ca_file, ec);
    if (ec) {
      return Err(Status::InvalidArgument(
          fmt::format("cannot use the certificate authority file {}: {}", ca_file, ec.message())));
    }
    // Any certificate of the file is a trust anchor, as in kubectl: a server's
    // own certificate (self-signed or not) may stand in for its CA.
    X509_STORE_set_flags(SSL_CTX_get_cert_store(context.native_handle()), X509_V_FLAG_PARTIAL_CHAIN);
  }
  return context;
}

void ExpectServerName(SSL* ssl, const std::string& host) {
  boost::system::error_code not_an_address;
  boost::asio::ip::make_address(host, not_an_address);
  if (!not_an_address) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
    return;
  }
  SSL_set_tlsext_host_name(ssl, host.c_str());
  SSL_set1_host(ssl, host.c_str());
}

}  // namespace tessera

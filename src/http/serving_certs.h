// A certificate authority and a serving certificate made on first start, so
// that a server nobody gave a certificate still speaks HTTPS that clients can
// verify (kubectl sends credentials only over TLS): `tessera up` uses it, as
// kubeadm and k3s make their cluster CA. OpenSSL's C API, no `openssl` binary.
//
// Under `dir`: ca.crt and ca.key (a P-256 CA, valid ten years) and
// apiserver.crt and apiserver.key (signed by that CA, for serverAuth, valid ten
// years, for localhost, 127.0.0.1 and the names given). Made once: files
// already there are kept and used, so clients that trust the CA keep trusting
// it across restarts. The keys are written 0600.
//
// Thread-safety: call from one thread at a time for one `dir`.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"

namespace tessera {

struct ServingCertFiles {
  std::string ca_cert;  // PEM: what clients trust (kubeconfig's certificate-authority)
  std::string cert;     // PEM: the server's certificate
  std::string key;      // PEM: its private key
};

// `names`: more subjectAltNames, each an IPv4 address or a DNS name.
Result<ServingCertFiles> EnsureServingCertificate(const std::filesystem::path& dir,
                                                  const std::vector<std::string>& names = {});

}  // namespace tessera

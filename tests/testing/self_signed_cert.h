// Self-signed certificates made at test time with OpenSSL's C API (no
// `openssl` binary needed), for the TLS tests of the server and the CLI.
//
// WriteSelfSignedCert writes <dir>/<name>.crt and <dir>/<name>.key (PEM): a
// P-256 key and a certificate valid for a day, its own CA (basicConstraints
// CA:TRUE), with the subjectAltName entries given, "DNS:localhost,IP:127.0.0.1"
// by default. Empty paths when OpenSSL fails (the test then fails on them).
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstring>  // EVP_EC_gen uses strstr
#include <filesystem>
#include <memory>
#include <string>

namespace tessera::testing {

struct CertFiles {
  std::string cert;
  std::string key;
};

inline CertFiles WriteSelfSignedCert(const std::filesystem::path& dir, const std::string& name,
                                     const std::string& subject_alt_names = "DNS:localhost,IP:127.0.0.1") {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), X509_free);
  if (!key || !cert) return {};
  X509_set_version(cert.get(), 2);  // v3, for the extensions
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* subject = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(name.c_str()), -1,
                             -1, 0);
  X509_set_issuer_name(cert.get(), subject);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
  for (const auto& [nid, value] : {std::pair{NID_basic_constraints, std::string("critical,CA:TRUE")},
                                   std::pair{NID_subject_alt_name, subject_alt_names}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    if (ext == nullptr) return {};
    X509_add_ext(cert.get(), ext, -1);
    X509_EXTENSION_free(ext);
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return {};

  const CertFiles files{(dir / (name + ".crt")).string(), (dir / (name + ".key")).string()};
  auto write = [](const std::string& path, auto&& pem) {
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) return false;
    const bool ok = pem(f) == 1;
    return std::fclose(f) == 0 && ok;
  };
  const bool wrote =
      write(files.cert, [&](FILE* f) { return PEM_write_X509(f, cert.get()); }) &&
      write(files.key, [&](FILE* f) {
        return PEM_write_PrivateKey(f, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
      });
  return wrote ? files : CertFiles{};
}

}  // namespace tessera::testing

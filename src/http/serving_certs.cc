#include "http/serving_certs.h"

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <fmt/format.h>

#include <cstdio>
#include <cstring>  // EVP_EC_gen uses strstr
#include <memory>
#include <system_error>

namespace tessera {
namespace {

namespace fs = std::filesystem;

using Key = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using Cert = std::unique_ptr<X509, decltype(&X509_free)>;

constexpr long kTenYears = 10L * 365 * 24 * 3600;

std::string OpenSslError(std::string_view what) {
  char text[256] = {0};
  ERR_error_string_n(ERR_get_error(), text, sizeof text);
  return fmt::format("making the server's certificate: {}: {}", what, text);
}

// A v3 certificate of `key` named `common_name`, issued by `issuer` (itself when null).
Result<Cert> MakeCert(EVP_PKEY* key, const std::string& common_name, X509* issuer, EVP_PKEY* issuer_key,
                      const std::vector<std::pair<int, std::string>>& extensions) {
  Cert cert(X509_new(), X509_free);
  if (!cert) return Err(Status::Internal(OpenSslError("X509_new")));
  X509_set_version(cert.get(), 2);
  // A random 64-bit serial, so that a CA made again is never confused with the old one.
  std::unique_ptr<BIGNUM, decltype(&BN_free)> serial(BN_new(), BN_free);
  if (!serial || BN_rand(serial.get(), 64, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) == nullptr) {
    return Err(Status::Internal(OpenSslError("serial number")));
  }
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), kTenYears);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* subject = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(subject, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("tessera"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : subject);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer ? issuer : cert.get(), cert.get(), nullptr, nullptr, 0);
  for (const auto& [nid, value] : extensions) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    if (ext == nullptr) return Err(Status::Internal(OpenSslError(fmt::format("extension {}", value))));
    X509_add_ext(cert.get(), ext, -1);
    X509_EXTENSION_free(ext);
  }
  if (X509_sign(cert.get(), issuer_key ? issuer_key : key, EVP_sha256()) == 0) {
    return Err(Status::Internal(OpenSslError("signing")));
  }
  return cert;
}

template <class Write>
Status WritePem(const fs::path& path, mode_t mode, Write write) {
  const fs::path partial = path.string() + ".partial";
  FILE* f = std::fopen(partial.c_str(), "w");
  if (f == nullptr) {
    return Status::Internal(fmt::format("cannot write {}: {}", partial.string(), std::strerror(errno)));
  }
  ::fchmod(fileno(f), mode);
  const bool ok = write(f) == 1;
  if (std::fclose(f) != 0 || !ok) return Status::Internal(fmt::format("cannot write {}", partial.string()));
  std::error_code ec;
  fs::rename(partial, path, ec);
  if (ec) return Status::Internal(fmt::format("cannot write {}: {}", path.string(), ec.message()));
  return Status::Ok();
}

std::string SubjectAltNames(const std::vector<std::string>& names) {
  std::string sans = "DNS:localhost,IP:127.0.0.1";
  for (const std::string& name : names) {
    in_addr ip{};
    in6_addr ip6{};
    const bool is_ip = inet_pton(AF_INET, name.c_str(), &ip) == 1 || inet_pton(AF_INET6, name.c_str(), &ip6) == 1;
    if (name.empty() || name == "localhost" || name == "127.0.0.1") continue;
    sans += fmt::format(",{}:{}", is_ip ? "IP" : "DNS", name);
  }
  return sans;
}

}  // namespace

Result<ServingCertFiles> EnsureServingCertificate(const fs::path& dir, const std::vector<std::string>& names) {
  const ServingCertFiles files{.ca_cert = (dir / "ca.crt").string(),
                               .cert = (dir / "apiserver.crt").string(),
                               .key = (dir / "apiserver.key").string()};
  const fs::path ca_key_path = dir / "ca.key";
  std::error_code ec;
  if (fs::exists(files.ca_cert, ec) && fs::exists(files.cert, ec) && fs::exists(files.key, ec)) return files;
  fs::create_directories(dir, ec);
  if (ec) return Err(Status::Internal(fmt::format("cannot create {}: {}", dir.string(), ec.message())));
  fs::permissions(dir, fs::perms::owner_all, ec);
  if (ec) return Err(Status::Internal(fmt::format("cannot make {} private (0700): {}", dir.string(), ec.message())));

  Key ca_key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  Key key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  if (!ca_key || !key) return Err(Status::Internal(OpenSslError("key")));
  ASSIGN_OR_RETURN(Cert ca, MakeCert(ca_key.get(), "tessera-ca", nullptr, nullptr,
                                     {{NID_basic_constraints, "critical,CA:TRUE"},
                                      {NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature"},
                                      {NID_subject_key_identifier, "hash"}}));
  ASSIGN_OR_RETURN(Cert cert, MakeCert(key.get(), "tessera-apiserver", ca.get(), ca_key.get(),
                                       {{NID_basic_constraints, "critical,CA:FALSE"},
                                        {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
                                        {NID_ext_key_usage, "serverAuth"},
                                        {NID_authority_key_identifier, "keyid:always"},
                                        {NID_subject_alt_name, SubjectAltNames(names)}}));
  auto private_key = [](EVP_PKEY* k) {
    return [k](FILE* f) { return PEM_write_PrivateKey(f, k, nullptr, nullptr, 0, nullptr, nullptr); };
  };
  // The keys first and the CA's certificate last: a start that stops halfway makes them all again.
  RETURN_IF_ERROR(WritePem(ca_key_path, 0600, private_key(ca_key.get())));
  RETURN_IF_ERROR(WritePem(files.key, 0600, private_key(key.get())));
  RETURN_IF_ERROR(WritePem(files.cert, 0644, [&](FILE* f) { return PEM_write_X509(f, cert.get()); }));
  RETURN_IF_ERROR(WritePem(files.ca_cert, 0644, [&](FILE* f) { return PEM_write_X509(f, ca.get()); }));
  return files;
}

}  // namespace tessera

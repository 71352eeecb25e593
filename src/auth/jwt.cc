// JWTs over cjose, with OpenSSL 3 for what cjose lacks (PEM import, SHA-256 for
// thumbprints, strict base64url). How the work is split:
//   - cjose holds every key (cjose_jwk_t), signs (cjose_jws_sign) and checks
//     signatures (cjose_jws_verify); we exchange only strings with it.
//   - We parse every JSON document ourselves with nlohmann (never cjose's
//     jansson output for decisions), and decide ourselves whether a token's alg
//     may be used at all and with which key, so that nothing reaches
//     cjose_jws_verify that we did not allow. cjose 0.6.2.1 imports alg "none"
//     tokens, ignores "crit", checks an ES256 signature with a P-384 key (it
//     does not tie the alg to the curve), and accepts an ECDSA signature of any
//     even size (it splits it in halves, so 0||R||0||S verifies too); its
//     base64url decoder stops at the first '=' and ignores what follows.
//   - Every cjose and OpenSSL object lives in a unique_ptr with its release
//     function, so that an early return leaks nothing.
// Nothing here throws: nlohmann is called in its non-throwing forms (parse with
// allow_exceptions = false, dump with the replacing error handler), and the
// one strict dump (of a caller's claims) is caught.
#include "auth/jwt.h"

#include <cjose/header.h>
#include <cjose/jwk.h>
#include <cjose/jws.h>
#include <cjose/util.h>
#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "common/check.h"
#include "common/time_format.h"

namespace tessera {
namespace {

using nlohmann::json;

// ---- Ownership of cjose and OpenSSL objects ---------------------------------

struct JwkRelease {
  void operator()(cjose_jwk_t* jwk) const { cjose_jwk_release(jwk); }
};
struct JwsRelease {
  void operator()(cjose_jws_t* jws) const { cjose_jws_release(jws); }
};
struct HeaderRelease {
  void operator()(cjose_header_t* header) const { cjose_header_release(header); }
};
// A string cjose allocated (cjose_jwk_to_json), possibly with private key
// material in it: wiped, then given back to cjose's allocator.
struct CjoseStringFree {
  void operator()(char* text) const {
    OPENSSL_cleanse(text, std::strlen(text));
    cjose_get_dealloc()(text);
  }
};
struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* pkey) const { EVP_PKEY_free(pkey); }
};
struct BnClearFree {
  void operator()(BIGNUM* bn) const { BN_clear_free(bn); }
};

using JwkPtr = std::unique_ptr<cjose_jwk_t, JwkRelease>;
using JwsPtr = std::unique_ptr<cjose_jws_t, JwsRelease>;
using HeaderPtr = std::unique_ptr<cjose_header_t, HeaderRelease>;
using CjoseString = std::unique_ptr<char, CjoseStringFree>;
using BioPtr = std::unique_ptr<BIO, BioFree>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using BnPtr = std::unique_ptr<BIGNUM, BnClearFree>;

// Bytes of key material, wiped when dropped.
class SecretBytes {
 public:
  SecretBytes() = default;
  explicit SecretBytes(size_t size) : bytes_(size) {}
  SecretBytes(SecretBytes&& other) noexcept : bytes_(std::move(other.bytes_)) { other.bytes_.clear(); }
  SecretBytes& operator=(SecretBytes&&) = delete;
  SecretBytes(const SecretBytes&) = delete;
  SecretBytes& operator=(const SecretBytes&) = delete;
  ~SecretBytes() {
    if (!bytes_.empty()) OPENSSL_cleanse(bytes_.data(), bytes_.size());
  }

  uint8_t* data() { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

 private:
  std::vector<uint8_t> bytes_;
};

// Wipes a std::string that held private key material before it is freed.
struct WipeOnExit {
  std::string& text;
  ~WipeOnExit() {
    if (!text.empty()) OPENSSL_cleanse(text.data(), text.size());
  }
};

// ---- Small helpers ------------------------------------------------------------

// Never throws: invalid UTF-8 (which nlohmann's parser never produces) is replaced.
std::string Dump(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

json ParseJson(std::string_view text) { return json::parse(text.begin(), text.end(), nullptr, false); }

// The string member `key` of `object`, or nullptr when absent or not a string.
const std::string* StringMember(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return nullptr;
  return &it->get_ref<const std::string&>();
}

std::string CjoseErrorText(const cjose_err& err) {
  return fmt::format("{} (in cjose's {})", err.message != nullptr ? err.message : "unknown error",
                     err.function != nullptr ? err.function : "<unknown>");
}

// OpenSSL's oldest queued error in words; clears the thread's queue so that a
// failure here never surfaces in someone else's later call.
std::string TakeOpensslError() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "no detail from OpenSSL";
  std::array<char, 256> text{};
  ERR_error_string_n(code, text.data(), text.size());
  return text.data();
}

// Something a client sent (alg, kid), fit to quote in a message: as is when it
// is a short plain name, else JSON-quoted and cut to 64 bytes.
std::string Quoted(std::string_view text) {
  constexpr size_t kMax = 64;
  std::string cut(text.substr(0, kMax));
  std::string out = Dump(json(cut));
  if (text.size() > kMax) out.insert(out.size() - 1, "...");
  return out;
}
std::string PlainName(std::string_view text) {
  const bool plain = !text.empty() && text.size() <= 16 && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
  return plain ? std::string(text) : Quoted(text);
}

// ---- base64url (RFC 4648 section 5, unpadded as JWS writes it) ----------------

std::string Base64UrlEncode(const uint8_t* data, size_t size) {
  // EVP_EncodeBlock writes standard base64 with padding and a NUL: 4 per 3 bytes.
  std::string out(4 * ((size + 2) / 3) + 1, '\0');
  const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(size));
  out.resize(static_cast<size_t>(written));
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return out;
}

// Strict: only the URL alphabet, no padding, no whitespace (cjose's own
// decoder stops at the first '=' and ignores what follows).
std::optional<std::string> Base64UrlDecode(std::string_view text) {
  if (text.size() % 4 == 1 || text.size() > static_cast<size_t>(INT_MAX) - 3) return std::nullopt;
  std::string standard(text);
  for (char& c : standard) {
    if (c == '-') {
      c = '+';
    } else if (c == '_') {
      c = '/';
    } else if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
      return std::nullopt;
    }
  }
  const size_t padding = (4 - standard.size() % 4) % 4;
  standard.append(padding, '=');
  std::string out(standard.size() / 4 * 3, '\0');
  // EVP_DecodeBlock counts the padding as zero bytes; drop them.
  const int decoded = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                      reinterpret_cast<const unsigned char*>(standard.data()),
                                      static_cast<int>(standard.size()));
  if (decoded < 0 || static_cast<size_t>(decoded) < padding) return std::nullopt;
  out.resize(static_cast<size_t>(decoded) - padding);
  return out;
}

// ---- Algorithms and key types ---------------------------------------------------

enum class KeyType { kRsa, kEcP256, kEcP384, kEcP521 };

// The key type an algorithm signs with; nullopt for one this file does not support.
std::optional<KeyType> KeyTypeForAlg(std::string_view alg) {
  if (alg == "RS256" || alg == "RS384" || alg == "RS512") return KeyType::kRsa;
  if (alg == "ES256") return KeyType::kEcP256;
  if (alg == "ES384") return KeyType::kEcP384;
  if (alg == "ES512") return KeyType::kEcP521;
  return std::nullopt;
}

std::string_view DefaultAlg(KeyType type) {
  switch (type) {
    case KeyType::kRsa: return "RS256";
    case KeyType::kEcP256: return "ES256";
    case KeyType::kEcP384: return "ES384";
    case KeyType::kEcP521: return "ES512";
  }
  return "RS256";
}

std::string_view AlgsFor(KeyType type) {
  return type == KeyType::kRsa ? std::string_view("RS256, RS384 or RS512") : DefaultAlg(type);
}

std::string_view KeyTypeName(KeyType type) {
  switch (type) {
    case KeyType::kRsa: return "an RSA key";
    case KeyType::kEcP256: return "an EC P-256 key";
    case KeyType::kEcP384: return "an EC P-384 key";
    case KeyType::kEcP521: return "an EC P-521 key";
  }
  return "a key";
}

// RFC 7518 section 3.4: an ECDSA signature is R || S, each the curve's size.
size_t EcSignatureSize(KeyType type) {
  switch (type) {
    case KeyType::kEcP256: return 64;
    case KeyType::kEcP384: return 96;
    case KeyType::kEcP521: return 132;
    case KeyType::kRsa: return 0;
  }
  return 0;
}

std::optional<KeyType> EcKeyTypeForCurve(std::string_view crv) {
  if (crv == "P-256") return KeyType::kEcP256;
  if (crv == "P-384") return KeyType::kEcP384;
  if (crv == "P-521") return KeyType::kEcP521;
  return std::nullopt;
}

// The members of a JWK that carry its key, by kty.
constexpr std::array<const char*, 2> kRsaPublicMembers = {"n", "e"};
constexpr std::array<const char*, 6> kRsaPrivateMembers = {"d", "p", "q", "dp", "dq", "qi"};
constexpr std::array<const char*, 3> kEcPublicMembers = {"crv", "x", "y"};

// {"kty", public members} of an RSA or EC JWK, or an error naming what is missing.
Result<json> PublicMembers(const json& jwk, KeyType type) {
  json out = json::object();
  out["kty"] = type == KeyType::kRsa ? "RSA" : "EC";
  auto copy = [&](const char* name) -> Status {
    const std::string* value = StringMember(jwk, name);
    if (value == nullptr || value->empty()) {
      return Status::InvalidArgument(fmt::format("the JWK has no \"{}\" string", name));
    }
    out[name] = *value;
    return Status::Ok();
  };
  if (type == KeyType::kRsa) {
    for (const char* name : kRsaPublicMembers) RETURN_IF_ERROR(copy(name));
  } else {
    for (const char* name : kEcPublicMembers) RETURN_IF_ERROR(copy(name));
  }
  return out;
}

// The key type of a JWK by its "kty" (and "crv"), or why it has none we use.
Result<KeyType> KeyTypeOfJwk(const json& jwk) {
  const std::string* kty = StringMember(jwk, "kty");
  if (kty == nullptr) return Err(Status::InvalidArgument("the JWK has no \"kty\" string"));
  if (*kty == "RSA") return KeyType::kRsa;
  if (*kty == "EC") {
    const std::string* crv = StringMember(jwk, "crv");
    if (crv == nullptr) return Err(Status::InvalidArgument("the EC JWK has no \"crv\" string"));
    if (std::optional<KeyType> type = EcKeyTypeForCurve(*crv)) return *type;
    return Err(Status::InvalidArgument(
        fmt::format("curve {} is not supported (supported: P-256, P-384, P-521)", Quoted(*crv))));
  }
  return Err(Status::InvalidArgument(fmt::format("kty {} is not supported (supported: RSA, EC)", Quoted(*kty))));
}

Result<JwkPtr> ImportJwk(const std::string& text) {
  cjose_err err{};
  JwkPtr jwk(cjose_jwk_import(text.data(), text.size(), &err));
  if (jwk == nullptr) return Err(Status::InvalidArgument("the JWK's key is invalid: " + CjoseErrorText(err)));
  return jwk;
}

// cjose's JSON for `jwk`, parsed.
Result<json> CjoseJwkJson(const cjose_jwk_t* jwk, bool with_private) {
  cjose_err err{};
  CjoseString text(cjose_jwk_to_json(jwk, with_private, &err));
  if (text == nullptr) return Err(Status::Internal("cannot export a JWK: " + CjoseErrorText(err)));
  json parsed = ParseJson(text.get());
  if (!parsed.is_object()) return Err(Status::Internal("cjose exported a JWK that is not a JSON object"));
  return parsed;
}

// ---- Signing and checking one signature with cjose ------------------------------

Result<std::string> SignCompact(const cjose_jwk_t* jwk, const std::string& alg, const std::string& kid,
                                const std::string& payload) {
  cjose_err err{};
  HeaderPtr header(cjose_header_new(&err));
  if (header == nullptr) return Err(Status::Internal("cannot build a JWS header: " + CjoseErrorText(err)));
  if (!cjose_header_set(header.get(), "alg", alg.c_str(), &err) ||
      !cjose_header_set(header.get(), "kid", kid.c_str(), &err) ||
      !cjose_header_set(header.get(), "typ", "JWT", &err)) {
    return Err(Status::Internal("cannot build a JWS header: " + CjoseErrorText(err)));
  }
  JwsPtr jws(cjose_jws_sign(jwk, header.get(), reinterpret_cast<const uint8_t*>(payload.data()), payload.size(),
                            &err));
  if (jws == nullptr) return Err(Status::Internal("cannot sign: " + CjoseErrorText(err)));
  const char* compact = nullptr;  // owned by the jws
  if (!cjose_jws_export(jws.get(), &compact, &err) || compact == nullptr) {
    return Err(Status::Internal("cannot serialize a JWS: " + CjoseErrorText(err)));
  }
  return std::string(compact);
}

// Whether `jwk` signed `token`, whose alg the caller has already allowed for
// this key. A fresh cjose_jws_t each time: cjose keeps the digest in it.
Result<bool> SignedBy(std::string_view token, std::string_view alg, const cjose_jwk_t* jwk) {
  cjose_err err{};
  JwsPtr jws(cjose_jws_import(token.data(), token.size(), &err));
  if (jws == nullptr) return Err(Status::Unauthenticated("malformed token: its JWS structure is not accepted"));
  // cjose reads the header with jansson and we with nlohmann: make sure both
  // saw the same alg (say, under duplicate members).
  const char* cjose_alg = cjose_header_get(cjose_jws_get_protected(jws.get()), "alg", &err);
  if (cjose_alg == nullptr || alg != cjose_alg) {
    return Err(Status::Unauthenticated("malformed token: its header is ambiguous"));
  }
  const bool ok = cjose_jws_verify(jws.get(), jwk, &err);
  ERR_clear_error();  // a failed check leaves OpenSSL errors queued
  return ok;
}

// Splits and decodes a compact JWS. `signature_size` is the decoded signature's length.
struct DecodedToken {
  Jwt jwt;
  size_t signature_size = 0;
};

Result<DecodedToken> Decode(std::string_view token) {
  auto malformed = [](std::string_view why) {
    return Err(Status::Unauthenticated(fmt::format("malformed token: {}", why)));
  };
  const size_t dot1 = token.find('.');
  const size_t dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos) {
    const size_t parts = static_cast<size_t>(std::count(token.begin(), token.end(), '.')) + 1;
    return malformed(fmt::format("a JWT has 3 dot-separated parts, this one has {}", parts));
  }
  const std::optional<std::string> header = Base64UrlDecode(token.substr(0, dot1));
  if (!header) return malformed("its header is not base64url");
  const std::optional<std::string> payload = Base64UrlDecode(token.substr(dot1 + 1, dot2 - dot1 - 1));
  if (!payload) return malformed("its payload is not base64url");
  const std::optional<std::string> signature = Base64UrlDecode(token.substr(dot2 + 1));
  if (!signature) return malformed("its signature is not base64url");
  DecodedToken out;
  out.jwt.header = ParseJson(*header);
  if (!out.jwt.header.is_object()) return malformed("its header is not a JSON object");
  out.jwt.claims = ParseJson(*payload);
  if (!out.jwt.claims.is_object()) return malformed("its payload is not a JSON object");
  out.signature_size = signature->size();
  return out;
}

// ---- Time claims -------------------------------------------------------------------

// A NumericDate (RFC 7519 section 2: seconds since the epoch, maybe fractional)
// as a Timestamp, saturating far outside int64 milliseconds; nullopt when it is
// not a number.
std::optional<Timestamp> NumericDate(const json& value) {
  constexpr int64_t kMaxSeconds = std::numeric_limits<int64_t>::max() / 1000 - 1;
  if (value.is_number_integer() && !value.is_number_unsigned()) {
    const int64_t seconds = value.get<int64_t>();
    if (seconds > kMaxSeconds) return Timestamp::Never();
    if (seconds < -kMaxSeconds) return Timestamp::FromSeconds(-kMaxSeconds);
    return Timestamp::FromSeconds(seconds);
  }
  if (value.is_number_unsigned()) {
    const uint64_t seconds = value.get<uint64_t>();
    if (seconds > static_cast<uint64_t>(kMaxSeconds)) return Timestamp::Never();
    return Timestamp::FromSeconds(static_cast<int64_t>(seconds));
  }
  if (value.is_number_float()) {
    const double seconds = value.get<double>();
    if (!std::isfinite(seconds)) return std::nullopt;
    if (seconds > static_cast<double>(kMaxSeconds)) return Timestamp::Never();
    if (seconds < -static_cast<double>(kMaxSeconds)) return Timestamp::FromSeconds(-kMaxSeconds);
    return Timestamp::FromMillis(static_cast<int64_t>(std::floor(seconds * 1000)));
  }
  return std::nullopt;
}

// FormatRfc3339 where it can (years 0..9999), else the raw seconds.
std::string FormatNumericDate(Timestamp t) {
  constexpr int64_t kYear0Ms = -62167219200000;     // 0000-01-01T00:00:00Z
  constexpr int64_t kYear10000Ms = 253402300800000;  // 10000-01-01T00:00:00Z
  if (!t.never() && t.ms >= kYear0Ms && t.ms < kYear10000Ms) return FormatRfc3339(t);
  return t.never() ? std::string("the end of time") : fmt::format("{} seconds after the epoch", t.seconds());
}

}  // namespace

// ---- SigningKey ------------------------------------------------------------------------

struct SigningKey::Impl {
  JwkPtr jwk;  // private
  KeyType type = KeyType::kRsa;
  std::string kid;
  std::string alg;
  json public_jwk;  // {"kty","kid","alg","use", key members}
};

struct KeySet::Key {
  JwkPtr jwk;  // public only
  KeyType type = KeyType::kRsa;
  std::string kid;  // "" when the JWKS entry had none
  std::string alg;  // "" when the JWKS entry had none: any alg of its type
  json public_jwk;
};

namespace {

constexpr int kMinRsaBits = 2048;
constexpr int kMaxRsaBits = 16384;

// A SigningKey's Impl from a private cjose key: its type from cjose's public
// JSON, alg and kid as given or by default (the thumbprint), and, for a key an
// admin gave (`self_check`), one signature checked, so that a private half that
// does not match its public half is refused now rather than minting tokens
// nobody can verify.
Result<std::shared_ptr<const SigningKey::Impl>> MakeSigningKey(JwkPtr jwk, std::optional<std::string> alg,
                                                                std::optional<std::string> kid, bool self_check) {
  auto impl = std::make_shared<SigningKey::Impl>();
  ASSIGN_OR_RETURN(json cjose_public, CjoseJwkJson(jwk.get(), /*with_private=*/false));
  ASSIGN_OR_RETURN(impl->type, KeyTypeOfJwk(cjose_public));
  if (impl->type == KeyType::kRsa) {
    cjose_err err{};
    const size_t bits = cjose_jwk_get_keysize(jwk.get(), &err);
    if (bits < static_cast<size_t>(kMinRsaBits)) {
      return Err(Status::InvalidArgument(
          fmt::format("the RSA key has {} bits; signing keys need at least {}", bits, kMinRsaBits)));
    }
  }
  if (alg.has_value()) {
    if (KeyTypeForAlg(*alg) != impl->type) {
      return Err(Status::InvalidArgument(fmt::format("alg {} does not fit {} (it takes {})", PlainName(*alg),
                                                     KeyTypeName(impl->type), AlgsFor(impl->type))));
    }
    impl->alg = std::move(*alg);
  } else {
    impl->alg = DefaultAlg(impl->type);
  }
  ASSIGN_OR_RETURN(json members, PublicMembers(cjose_public, impl->type));
  if (kid.has_value()) {
    impl->kid = std::move(*kid);
  } else {
    ASSIGN_OR_RETURN(impl->kid, JwkThumbprint(members));
  }
  impl->public_jwk = std::move(members);
  impl->public_jwk["kid"] = impl->kid;
  impl->public_jwk["alg"] = impl->alg;
  impl->public_jwk["use"] = "sig";
  impl->jwk = std::move(jwk);
  if (self_check) {
    ASSIGN_OR_RETURN(std::string token, SignCompact(impl->jwk.get(), impl->alg, impl->kid, "{}"));
    ASSIGN_OR_RETURN(bool ok, SignedBy(token, impl->alg, impl->jwk.get()));
    if (!ok) return Err(Status::InvalidArgument("the key's private half does not match its public half"));
  }
  return std::shared_ptr<const SigningKey::Impl>(std::move(impl));
}

// A big-endian unsigned parameter of an OpenSSL key.
Result<SecretBytes> KeyParam(const EVP_PKEY* pkey, const char* name) {
  BIGNUM* raw = nullptr;
  if (EVP_PKEY_get_bn_param(pkey, name, &raw) != 1 || raw == nullptr) {
    BN_clear_free(raw);
    return Err(Status::InvalidArgument(fmt::format("the PEM key has no \"{}\": {}", name, TakeOpensslError())));
  }
  BnPtr bn(raw);
  SecretBytes bytes(static_cast<size_t>(BN_num_bytes(bn.get())));
  BN_bn2bin(bn.get(), bytes.data());
  return bytes;
}

// Never asks for a passphrase (OpenSSL's default callback would read the terminal).
int NoPassphrase(char* /*buf*/, int /*size*/, int /*rwflag*/, void* /*u*/) { return -1; }

Result<JwkPtr> RsaJwkFromPkey(const EVP_PKEY* pkey) {
  BIGNUM* third_prime = nullptr;
  if (EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_FACTOR3, &third_prime) == 1) {
    BN_clear_free(third_prime);
    return Err(Status::InvalidArgument("multi-prime RSA keys are not supported"));
  }
  ERR_clear_error();
  ASSIGN_OR_RETURN(SecretBytes n, KeyParam(pkey, OSSL_PKEY_PARAM_RSA_N));
  ASSIGN_OR_RETURN(SecretBytes e, KeyParam(pkey, OSSL_PKEY_PARAM_RSA_E));
  ASSIGN_OR_RETURN(SecretBytes d, KeyParam(pkey, OSSL_PKEY_PARAM_RSA_D));
  ASSIGN_OR_RETURN(SecretBytes p, KeyParam(pkey, OSSL_PKEY_PARAM_RSA_FACTOR1));
  ASSIGN_OR_RETURN(SecretBytes q, KeyParam(pkey, OSSL_PKEY_PARAM_RSA_FACTOR2));
  ASSIGN_OR_RETURN(SecretBytes dp, KeyParam(pkey, OSSL_PKEY_PARAM_RSA_EXPONENT1));
  ASSIGN_OR_RETURN(SecretBytes dq, KeyParam(pkey, OSSL_PKEY_PARAM_RSA_EXPONENT2));
  ASSIGN_OR_RETURN(SecretBytes qi, KeyParam(pkey, OSSL_PKEY_PARAM_RSA_COEFFICIENT1));
  cjose_jwk_rsa_keyspec spec{};
  spec.n = n.data(), spec.nlen = n.size();
  spec.e = e.data(), spec.elen = e.size();
  spec.d = d.data(), spec.dlen = d.size();
  spec.p = p.data(), spec.plen = p.size();
  spec.q = q.data(), spec.qlen = q.size();
  spec.dp = dp.data(), spec.dplen = dp.size();
  spec.dq = dq.data(), spec.dqlen = dq.size();
  spec.qi = qi.data(), spec.qilen = qi.size();
  cjose_err err{};
  JwkPtr jwk(cjose_jwk_create_RSA_spec(&spec, &err));
  if (jwk == nullptr) return Err(Status::Internal("cannot build an RSA JWK: " + CjoseErrorText(err)));
  return jwk;
}

Result<JwkPtr> EcJwkFromPkey(const EVP_PKEY* pkey) {
  std::array<char, 64> group{};
  size_t group_len = 0;
  if (EVP_PKEY_get_group_name(pkey, group.data(), group.size(), &group_len) != 1) {
    return Err(Status::InvalidArgument("the PEM EC key names no curve: " + TakeOpensslError()));
  }
  const std::string_view name(group.data(), group_len);
  cjose_jwk_ec_keyspec spec{};
  if (name == "prime256v1" || name == "P-256") {
    spec.crv = CJOSE_JWK_EC_P_256;
  } else if (name == "secp384r1" || name == "P-384") {
    spec.crv = CJOSE_JWK_EC_P_384;
  } else if (name == "secp521r1" || name == "P-521") {
    spec.crv = CJOSE_JWK_EC_P_521;
  } else {
    return Err(Status::InvalidArgument(
        fmt::format("curve {} is not supported (supported: P-256, P-384, P-521)", Quoted(name))));
  }
  // cjose derives the public point from d and ignores x and y; they are given
  // anyway so that the spec is complete.
  ASSIGN_OR_RETURN(SecretBytes d, KeyParam(pkey, OSSL_PKEY_PARAM_PRIV_KEY));
  ASSIGN_OR_RETURN(SecretBytes x, KeyParam(pkey, OSSL_PKEY_PARAM_EC_PUB_X));
  ASSIGN_OR_RETURN(SecretBytes y, KeyParam(pkey, OSSL_PKEY_PARAM_EC_PUB_Y));
  spec.d = d.data(), spec.dlen = d.size();
  spec.x = x.data(), spec.xlen = x.size();
  spec.y = y.data(), spec.ylen = y.size();
  cjose_err err{};
  JwkPtr jwk(cjose_jwk_create_EC_spec(&spec, &err));
  if (jwk == nullptr) return Err(Status::Internal("cannot build an EC JWK: " + CjoseErrorText(err)));
  return jwk;
}

}  // namespace

Result<SigningKey> SigningKey::GenerateRsa(int bits) {
  if (bits < kMinRsaBits || bits > kMaxRsaBits) {
    return Err(Status::InvalidArgument(
        fmt::format("an RSA key of {} bits was asked for; sizes from {} to {} are allowed", bits, kMinRsaBits,
                    kMaxRsaBits)));
  }
  cjose_err err{};
  JwkPtr jwk(cjose_jwk_create_RSA_random(static_cast<size_t>(bits), nullptr, 0, &err));  // e = 65537
  if (jwk == nullptr) return Err(Status::Internal("cannot generate an RSA key: " + CjoseErrorText(err)));
  ASSIGN_OR_RETURN(auto impl, MakeSigningKey(std::move(jwk), std::nullopt, std::nullopt, /*self_check=*/false));
  return SigningKey(std::move(impl));
}

Result<SigningKey> SigningKey::GenerateEs256() {
  cjose_err err{};
  JwkPtr jwk(cjose_jwk_create_EC_random(CJOSE_JWK_EC_P_256, &err));
  if (jwk == nullptr) return Err(Status::Internal("cannot generate an EC key: " + CjoseErrorText(err)));
  ASSIGN_OR_RETURN(auto impl, MakeSigningKey(std::move(jwk), std::nullopt, std::nullopt, /*self_check=*/false));
  return SigningKey(std::move(impl));
}

Result<SigningKey> SigningKey::FromPrivateJwk(std::string_view text) {
  auto fail = [](const Status& why) { return Err(why.WithContext("private JWK")); };
  const json jwk = ParseJson(text);
  if (!jwk.is_object()) return fail(Status::InvalidArgument("not a JSON object"));
  Result<KeyType> type = KeyTypeOfJwk(jwk);
  if (!type) return fail(type.error());
  const std::string* d = StringMember(jwk, "d");
  if (d == nullptr || d->empty()) return fail(Status::InvalidArgument("it has no private part (\"d\")"));
  // Only the key's members go to cjose: it would take "kid" as well, and we
  // keep the kid ourselves.
  Result<json> members = PublicMembers(jwk, *type);
  if (!members) return fail(members.error());
  (*members)["d"] = *d;
  if (*type == KeyType::kRsa) {
    for (const char* name : kRsaPrivateMembers) {
      if (const std::string* value = StringMember(jwk, name)) (*members)[name] = *value;
    }
  }
  std::string key_text = Dump(*members);
  WipeOnExit wipe{key_text};
  Result<JwkPtr> imported = ImportJwk(key_text);
  if (!imported) return fail(imported.error());
  std::optional<std::string> alg;
  if (auto it = jwk.find("alg"); it != jwk.end()) {
    if (!it->is_string()) return fail(Status::InvalidArgument("\"alg\" is not a string"));
    alg = it->get<std::string>();
  }
  std::optional<std::string> kid;
  if (auto it = jwk.find("kid"); it != jwk.end()) {
    if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
      return fail(Status::InvalidArgument("\"kid\" is not a non-empty string"));
    }
    kid = it->get<std::string>();
  }
  Result<std::shared_ptr<const Impl>> impl =
      MakeSigningKey(std::move(*imported), std::move(alg), std::move(kid), /*self_check=*/true);
  if (!impl) return fail(impl.error());
  // cjose derives an EC key's public point from "d" and drops the given one;
  // the self-check cannot see a mismatch then, so compare.
  if ((*impl)->type != KeyType::kRsa) {
    for (const char* name : {"x", "y"}) {
      if (*StringMember((*impl)->public_jwk, name) != *StringMember(*members, name)) {
        return fail(Status::InvalidArgument("the key's private half does not match its public half"));
      }
    }
  }
  return SigningKey(std::move(*impl));
}

Result<SigningKey> SigningKey::FromPem(std::string_view pem) {
  auto fail = [](const Status& why) { return Err(why.WithContext("PEM private key")); };
  if (pem.size() > static_cast<size_t>(INT_MAX)) return fail(Status::InvalidArgument("too large"));
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (bio == nullptr) return fail(Status::Internal("cannot allocate a BIO: " + TakeOpensslError()));
  PkeyPtr pkey(PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr));
  if (pkey == nullptr) {
    return fail(Status::InvalidArgument(fmt::format(
        "no unencrypted RSA PRIVATE KEY, EC PRIVATE KEY or PRIVATE KEY block could be read ({})",
        TakeOpensslError())));
  }
  const int base_id = EVP_PKEY_get_base_id(pkey.get());
  if (base_id != EVP_PKEY_RSA && base_id != EVP_PKEY_EC) {
    const char* type = EVP_PKEY_get0_type_name(pkey.get());
    return fail(Status::InvalidArgument(
        fmt::format("a {} key is not supported (supported: RSA, EC)", type != nullptr ? type : "non-RSA, non-EC")));
  }
  Result<JwkPtr> jwk = base_id == EVP_PKEY_RSA ? RsaJwkFromPkey(pkey.get()) : EcJwkFromPkey(pkey.get());
  if (!jwk) return fail(jwk.error());
  Result<std::shared_ptr<const Impl>> impl =
      MakeSigningKey(std::move(*jwk), std::nullopt, std::nullopt, /*self_check=*/true);
  if (!impl) return fail(impl.error());
  return SigningKey(std::move(*impl));
}

std::string SigningKey::ToPrivateJwk() const {
  Result<json> jwk = CjoseJwkJson(impl_->jwk.get(), /*with_private=*/true);
  TESSERA_CHECK(jwk.has_value(), "cjose cannot export a key it holds: {}", jwk.error().ToString());
  (*jwk)["kid"] = impl_->kid;
  (*jwk)["alg"] = impl_->alg;
  return Dump(*jwk);
}

nlohmann::json SigningKey::PublicJwk() const { return impl_->public_jwk; }
const std::string& SigningKey::kid() const { return impl_->kid; }
const std::string& SigningKey::alg() const { return impl_->alg; }

Result<std::string> SigningKey::Sign(const nlohmann::json& claims) const {
  if (!claims.is_object()) return Err(Status::InvalidArgument("JWT claims must be a JSON object"));
  std::string payload;
  try {
    payload = claims.dump();
  } catch (const json::exception&) {
    return Err(Status::InvalidArgument("JWT claims hold a string that is not valid UTF-8"));
  }
  return SignCompact(impl_->jwk.get(), impl_->alg, impl_->kid, payload);
}

// ---- KeySet ------------------------------------------------------------------------------

namespace {

// A verification key from a JWK's public members; `alg` and `kid` may be "".
Result<std::shared_ptr<const KeySet::Key>> MakeVerifyKey(const json& jwk, KeyType type, std::string alg,
                                                         std::string kid) {
  auto key = std::make_shared<KeySet::Key>();
  ASSIGN_OR_RETURN(json members, PublicMembers(jwk, type));
  ASSIGN_OR_RETURN(key->jwk, ImportJwk(Dump(members)));
  key->type = type;
  key->kid = std::move(kid);
  key->alg = std::move(alg);
  key->public_jwk = std::move(members);
  if (!key->kid.empty()) key->public_jwk["kid"] = key->kid;
  if (!key->alg.empty()) key->public_jwk["alg"] = key->alg;
  key->public_jwk["use"] = "sig";
  return std::shared_ptr<const KeySet::Key>(std::move(key));
}

// The key of one JWKS entry, or why it is skipped.
Result<std::shared_ptr<const KeySet::Key>> JwksEntryKey(const json& entry) {
  if (!entry.is_object()) return Err(Status::InvalidArgument("not a JSON object"));
  if (auto it = entry.find("use"); it != entry.end()) {
    if (!it->is_string()) return Err(Status::InvalidArgument("\"use\" is not a string"));
    if (*it != "sig") return Err(Status::InvalidArgument(fmt::format("\"use\" is {}", Quoted(it->get<std::string>()))));
  }
  if (auto it = entry.find("key_ops"); it != entry.end()) {
    if (!it->is_array() || std::find(it->begin(), it->end(), json("verify")) == it->end()) {
      return Err(Status::InvalidArgument("\"key_ops\" does not list \"verify\""));
    }
  }
  ASSIGN_OR_RETURN(KeyType type, KeyTypeOfJwk(entry));
  std::string alg;
  if (auto it = entry.find("alg"); it != entry.end()) {
    if (!it->is_string()) return Err(Status::InvalidArgument("\"alg\" is not a string"));
    alg = it->get<std::string>();
    if (!KeyTypeForAlg(alg).has_value()) {
      return Err(Status::InvalidArgument(fmt::format("alg {} is not supported", PlainName(alg))));
    }
    if (KeyTypeForAlg(alg) != type) {
      return Err(Status::InvalidArgument(fmt::format("alg {} does not fit {}", alg, KeyTypeName(type))));
    }
  }
  std::string kid;
  if (auto it = entry.find("kid"); it != entry.end()) {
    if (!it->is_string()) return Err(Status::InvalidArgument("\"kid\" is not a string"));
    kid = it->get<std::string>();
  }
  return MakeVerifyKey(entry, type, std::move(alg), std::move(kid));
}

}  // namespace

Result<KeySet> KeySet::FromJwks(std::string_view text) {
  const json jwks = ParseJson(text);
  if (jwks.is_discarded()) return Err(Status::InvalidArgument("the JWKS is not valid JSON"));
  auto keys = jwks.is_object() ? jwks.find("keys") : jwks.end();
  if (!jwks.is_object() || keys == jwks.end() || !keys->is_array()) {
    return Err(Status::InvalidArgument("the JWKS has no \"keys\" list"));
  }
  KeySet set;
  std::vector<std::string> skipped;
  for (size_t i = 0; i < keys->size(); ++i) {
    const json& entry = (*keys)[i];
    Result<std::shared_ptr<const Key>> key = JwksEntryKey(entry);
    if (key.has_value()) {
      set.keys_.push_back(std::move(*key));
      continue;
    }
    const std::string* kid = StringMember(entry, "kid");
    skipped.push_back(fmt::format("key {}{}: {}", i, kid != nullptr ? " (kid " + Quoted(*kid) + ")" : "",
                                  key.error().message()));
  }
  if (set.empty()) {
    if (skipped.empty()) return Err(Status::InvalidArgument("the JWKS lists no keys"));
    return Err(Status::InvalidArgument(
        fmt::format("the JWKS has no usable signing key ({})", fmt::join(skipped, "; "))));
  }
  return set;
}

void KeySet::Add(const SigningKey& key) {
  const SigningKey::Impl& impl = *key.impl_;
  Result<std::shared_ptr<const Key>> public_key = MakeVerifyKey(impl.public_jwk, impl.type, impl.alg, impl.kid);
  TESSERA_CHECK(public_key.has_value(), "cjose cannot import the public half of key {}: {}", impl.kid,
                public_key.error().ToString());
  keys_.push_back(std::move(*public_key));
}

nlohmann::json KeySet::ToJwks() const {
  json keys = json::array();
  for (const auto& key : keys_) keys.push_back(key->public_jwk);
  return json{{"keys", std::move(keys)}};
}

bool KeySet::HasKid(std::string_view kid) const {
  return std::any_of(keys_.begin(), keys_.end(), [&](const auto& key) { return key->kid == kid; });
}

// ---- Tokens ------------------------------------------------------------------------------

Result<Jwt> DecodeJwtUnverified(std::string_view token) {
  ASSIGN_OR_RETURN(DecodedToken decoded, Decode(token));
  return std::move(decoded.jwt);
}

// Steps:
//   1. decode the three parts (malformed otherwise);
//   2. the header's alg must be supported and allowed, else refused before any key is looked at:
//      "none", HS* and PS* are never supported;
//   3. the candidate keys: those with the header's kid (unknown kid otherwise), else all; of them,
//      those that fit the alg (RS* an RSA key, ES256/384/512 an EC key on P-256/384/521, and the
//      key's own alg when it has one);
//   4. an ECDSA signature must have its curve's exact size;
//   5. cjose checks the signature against each candidate until one matches.
Result<Jwt> VerifyJwt(std::string_view token, const KeySet& keys, std::span<const std::string_view> allowed_algs) {
  ASSIGN_OR_RETURN(DecodedToken decoded, Decode(token));
  const json& header = decoded.jwt.header;

  const std::string* alg = StringMember(header, "alg");
  if (alg == nullptr) return Err(Status::Unauthenticated("malformed token: its header has no \"alg\" string"));
  const std::optional<KeyType> alg_type = KeyTypeForAlg(*alg);
  const bool allowed = std::find(allowed_algs.begin(), allowed_algs.end(), *alg) != allowed_algs.end();
  if (!alg_type.has_value() || !allowed) {
    std::vector<std::string_view> accepted;
    for (std::string_view a : allowed_algs) {
      if (KeyTypeForAlg(a).has_value()) accepted.push_back(a);
    }
    return Err(Status::Unauthenticated(
        fmt::format("token signed with {}, which is not accepted (accepted: {})", PlainName(*alg),
                    accepted.empty() ? std::string("none") : fmt::format("{}", fmt::join(accepted, ", ")))));
  }
  if (header.contains("crit")) {
    return Err(Status::Unauthenticated("token requires header extensions (\"crit\") that are not supported"));
  }

  std::optional<std::string> kid;
  if (auto it = header.find("kid"); it != header.end()) {
    if (!it->is_string()) return Err(Status::Unauthenticated("malformed token: its \"kid\" is not a string"));
    kid = it->get<std::string>();
  }
  std::vector<const KeySet::Key*> candidates;
  const KeySet::Key* misfit = nullptr;  // a key the kid named, of the wrong type
  for (const auto& key : keys.keys_) {
    if (kid.has_value() && key->kid != *kid) continue;
    if (key->type == *alg_type && (key->alg.empty() || key->alg == *alg)) {
      candidates.push_back(key.get());
    } else if (misfit == nullptr) {
      misfit = key.get();
    }
  }
  if (candidates.empty()) {
    if (kid.has_value() && misfit == nullptr) {
      return Err(Status::Unauthenticated(fmt::format("token signed by an unknown key (kid {})", Quoted(*kid))));
    }
    if (kid.has_value()) {
      return Err(Status::Unauthenticated(fmt::format("token signed with {}, but its key (kid {}) is {}{}", *alg,
                                                     Quoted(*kid), KeyTypeName(misfit->type),
                                                     misfit->alg.empty() ? "" : " for " + misfit->alg)));
    }
    return Err(Status::Unauthenticated(fmt::format("token signed with {}, for which there is no key", *alg)));
  }

  const size_t ec_size = EcSignatureSize(*alg_type);
  if (ec_size != 0 && decoded.signature_size != ec_size) {
    return Err(Status::Unauthenticated("token signature is invalid"));
  }
  for (const KeySet::Key* key : candidates) {
    ASSIGN_OR_RETURN(bool ok, SignedBy(token, *alg, key->jwk.get()));
    if (ok) return std::move(decoded.jwt);
  }
  return Err(Status::Unauthenticated("token signature is invalid"));
}

Status CheckTokenTimes(const nlohmann::json& claims, Timestamp now, Duration leeway) {
  const Duration minus_leeway{leeway.infinite() ? -std::numeric_limits<int64_t>::max() : -leeway.ms};
  auto exp_it = claims.is_object() ? claims.find("exp") : claims.end();
  if (!claims.is_object() || exp_it == claims.end()) {
    return Status::Unauthenticated("token has no expiry (\"exp\"); tokens without one are not accepted");
  }
  const std::optional<Timestamp> exp = NumericDate(*exp_it);
  if (!exp.has_value()) return Status::Unauthenticated("token expiry (\"exp\") is not a number");
  // Valid while now < exp + leeway.
  if (!exp->never() && now >= *exp + leeway) {
    return Status::Unauthenticated(fmt::format("token expired at {}", FormatNumericDate(*exp)));
  }
  if (auto it = claims.find("nbf"); it != claims.end()) {
    const std::optional<Timestamp> nbf = NumericDate(*it);
    if (!nbf.has_value()) return Status::Unauthenticated("token start (\"nbf\") is not a number");
    // Valid once now >= nbf - leeway.
    if (nbf->never() || now < *nbf + minus_leeway) {
      return Status::Unauthenticated(fmt::format("token is not valid before {}", FormatNumericDate(*nbf)));
    }
  }
  if (auto it = claims.find("iat"); it != claims.end() && !NumericDate(*it).has_value()) {
    return Status::Unauthenticated("token issue time (\"iat\") is not a number");
  }
  return Status::Ok();
}

Status CheckTokenAudience(const nlohmann::json& claims, std::span<const std::string> accepted) {
  auto it = claims.is_object() ? claims.find("aud") : claims.end();
  if (claims.is_object() && it != claims.end()) {
    const bool valid = it->is_string() || (it->is_array() && std::all_of(it->begin(), it->end(), [](const json& v) {
                                             return v.is_string();
                                           }));
    if (!valid) return Status::Unauthenticated("token audience (\"aud\") is not a string or a list of strings");
  }
  const std::vector<std::string> audiences = TokenAudiences(claims);
  for (const std::string& aud : audiences) {
    if (std::find(accepted.begin(), accepted.end(), aud) != accepted.end()) return Status::Ok();
  }
  const json accepted_list(std::vector<std::string>(accepted.begin(), accepted.end()));
  return Status::Unauthenticated(fmt::format("token audience {} is not accepted here (accepted: {})",
                                             Dump(json(audiences)), Dump(accepted_list)));
}

std::vector<std::string> TokenAudiences(const nlohmann::json& claims) {
  std::vector<std::string> out;
  auto it = claims.is_object() ? claims.find("aud") : claims.end();
  if (!claims.is_object() || it == claims.end()) return out;
  if (it->is_string()) {
    out.push_back(it->get<std::string>());
  } else if (it->is_array()) {
    for (const json& value : *it) {
      if (value.is_string()) out.push_back(value.get<std::string>());
    }
  }
  return out;
}

Result<std::string> JwkThumbprint(const nlohmann::json& jwk) {
  ASSIGN_OR_RETURN(KeyType type, KeyTypeOfJwk(jwk));
  // RFC 7638 section 3.2: the required members only, sorted (nlohmann's
  // objects are std::maps, so dump() writes them in order), no whitespace.
  ASSIGN_OR_RETURN(json members, PublicMembers(jwk, type));
  const std::string canonical = Dump(members);
  std::array<uint8_t, EVP_MAX_MD_SIZE> digest{};
  unsigned int digest_size = 0;
  if (EVP_Digest(canonical.data(), canonical.size(), digest.data(), &digest_size, EVP_sha256(), nullptr) != 1) {
    return Err(Status::Internal("SHA-256 failed: " + TakeOpensslError()));
  }
  return Base64UrlEncode(digest.data(), digest_size);
}

}  // namespace tessera

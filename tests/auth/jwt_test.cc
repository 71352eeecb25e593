#include "auth/jwt.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/time_format.h"
#include "tests/testing/read_file.h"
#include "tests/testing/test_dirs.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ---- Helpers -------------------------------------------------------------------------

// Keys are slow to generate: each test binary makes these once.
const SigningKey& RsaKey() {
  static const SigningKey key = SigningKey::GenerateRsa().value();
  return key;
}
const SigningKey& OtherRsaKey() {
  static const SigningKey key = SigningKey::GenerateRsa().value();
  return key;
}
const SigningKey& EcKey() {
  static const SigningKey key = SigningKey::GenerateEs256().value();
  return key;
}

KeySet SetOf(std::initializer_list<const SigningKey*> keys) {
  KeySet set;
  for (const SigningKey* key : keys) set.Add(*key);
  return set;
}

// Claims as a ServiceAccount token carries them; exp an hour from the real
// clock, so that PyJWT (which checks exp itself) accepts them too.
json ServiceAccountClaims() {
  const int64_t now = SystemNow().seconds();
  return json{{"iss", "https://tessera.local"},
              {"sub", "system:serviceaccount:default:trainer"},
              {"aud", json::array({"tessera"})},
              {"iat", now},
              {"nbf", now},
              {"exp", now + 3600}};
}

std::string B64Url(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return out;
}

std::string B64UrlDecode(std::string text) {
  for (char& c : text) c = c == '-' ? '+' : c == '_' ? '/' : c;
  const size_t padding = (4 - text.size() % 4) % 4;
  text.append(padding, '=');
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  out.resize(static_cast<size_t>(n) - padding);
  return out;
}

// A token's three parts.
std::vector<std::string> Parts(const std::string& token) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t dot = token.find('.'); dot != std::string::npos; dot = token.find('.', start)) {
    parts.push_back(token.substr(start, dot - start));
    start = dot + 1;
  }
  parts.push_back(token.substr(start));
  return parts;
}

std::string Join(const std::string& header, const std::string& payload, const std::string& signature) {
  return header + "." + payload + "." + signature;
}

// A token with the given header and claims and a made-up signature.
std::string Unsigned(const json& header, const json& claims, const std::string& signature) {
  return Join(B64Url(header.dump()), B64Url(claims.dump()), signature);
}

struct PkeyFree {
  void operator()(EVP_PKEY* pkey) const { EVP_PKEY_free(pkey); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

std::string PemOf(EVP_PKEY* pkey) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
  EXPECT_EQ(PEM_write_bio_PrivateKey(bio.get(), pkey, nullptr, nullptr, 0, nullptr, nullptr), 1);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

// RS256 over header.payload by OpenSSL alone (RSASSA-PKCS1-v1_5 with SHA-256).
std::string OpensslRs256(EVP_PKEY* pkey, const std::string& signing_input) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  EXPECT_EQ(EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, pkey), 1);
  size_t size = 0;
  EXPECT_EQ(EVP_DigestSign(ctx.get(), nullptr, &size,
                           reinterpret_cast<const unsigned char*>(signing_input.data()), signing_input.size()),
            1);
  std::string signature(size, '\0');
  EXPECT_EQ(EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                           reinterpret_cast<const unsigned char*>(signing_input.data()), signing_input.size()),
            1);
  signature.resize(size);
  return B64Url(signature);
}

// A scratch directory under /tmp, removed when the test ends.
class ScratchDir {
 public:
  ScratchDir() : path_(testing::FreshTestDir("tessera-jwt")) {}
  ~ScratchDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
    return (path_ / name).string();
  }

 private:
  fs::path path_;
};

// Runs a shell command; its exit code and what it wrote (stdout and stderr).
std::pair<int, std::string> RunShell(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Runs `openssl args`, failing the test with its output when it fails.
void Openssl(const std::string& args) {
  auto [rc, out] = RunShell("openssl " + args);
  ASSERT_EQ(rc, 0) << "openssl " << args << ":\n" << out;
}

std::string Trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text;
}

void ExpectUnauthenticated(const Result<Jwt>& result, const std::string& message) {
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(result.error().message(), message);
}

void ExpectMalformed(const Result<Jwt>& result) {
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(result.error().message().rfind("malformed token: ", 0), 0u) << result.error().message();
}

// ---- Signing and verifying ------------------------------------------------------------

// A ServiceAccount token signed with the default RSA key verifies against a
// key set holding that key, giving back its header and claims.
TEST(JwtSignTest, Rs256RoundTrip) {
  const json claims = ServiceAccountClaims();
  const std::string token = RsaKey().Sign(claims).value();

  Result<Jwt> jwt = VerifyJwt(token, SetOf({&RsaKey()}));
  ASSERT_TRUE(jwt.has_value()) << jwt.error().ToString();
  EXPECT_EQ(jwt->claims, claims);
  EXPECT_EQ(jwt->header, (json{{"alg", "RS256"}, {"kid", RsaKey().kid()}, {"typ", "JWT"}}));
}

// An EC P-256 key signs ES256, which verifies when ES256 is allowed.
TEST(JwtSignTest, Es256RoundTrip) {
  const json claims = ServiceAccountClaims();
  const std::string token = EcKey().Sign(claims).value();
  const std::string_view es256[] = {"ES256"};

  Result<Jwt> jwt = VerifyJwt(token, SetOf({&EcKey()}), es256);
  ASSERT_TRUE(jwt.has_value()) << jwt.error().ToString();
  EXPECT_EQ(EcKey().alg(), "ES256");
  EXPECT_EQ(jwt->header["alg"], "ES256");
  EXPECT_EQ(jwt->claims, claims);
  // RFC 7518 section 3.4: R || S, 32 bytes each on P-256.
  EXPECT_EQ(B64UrlDecode(Parts(token)[2]).size(), 64u);
}

// A token whose header names no kid is checked against every key of its type,
// here signed by OpenSSL alone for a key imported from its PEM.
TEST(JwtSignTest, TokenWithoutKidTriesEveryKey) {
  PkeyPtr pkey(EVP_RSA_gen(2048));
  ASSERT_NE(pkey, nullptr);
  const SigningKey imported = SigningKey::FromPem(PemOf(pkey.get())).value();
  const std::string header = B64Url(R"({"alg":"RS256","typ":"JWT"})");
  const std::string payload = B64Url(ServiceAccountClaims().dump());
  const std::string token = Join(header, payload, OpensslRs256(pkey.get(), header + "." + payload));

  Result<Jwt> jwt = VerifyJwt(token, SetOf({&OtherRsaKey(), &imported}));
  ASSERT_TRUE(jwt.has_value()) << jwt.error().ToString();
  EXPECT_EQ(jwt->claims["sub"], "system:serviceaccount:default:trainer");
}

// Claims that are not a JSON object are not signed.
TEST(JwtSignTest, SignRefusesNonObjectClaims) {
  Result<std::string> token = RsaKey().Sign(json::array({1, 2}));
  ASSERT_FALSE(token.has_value());
  EXPECT_EQ(token.error().code(), StatusCode::kInvalidArgument);
}

// DecodeJwtUnverified reads the issuer of a token with no key at hand, for routing.
TEST(JwtSignTest, DecodeUnverifiedReadsClaimsWithoutKeys) {
  const std::string token = RsaKey().Sign(ServiceAccountClaims()).value();

  Result<Jwt> jwt = DecodeJwtUnverified(token);
  ASSERT_TRUE(jwt.has_value()) << jwt.error().ToString();
  EXPECT_EQ(jwt->claims["iss"], "https://tessera.local");
  EXPECT_EQ(jwt->header["kid"], RsaKey().kid());
}

// ---- Keys ---------------------------------------------------------------------------------

// A generated key's kid is the RFC 7638 thumbprint of its public JWK, which
// has exactly the members the header promises.
TEST(SigningKeyTest, GeneratedKidIsThumbprint) {
  const json jwk = RsaKey().PublicJwk();
  EXPECT_EQ(RsaKey().kid(), JwkThumbprint(jwk).value());
  EXPECT_EQ(jwk["kty"], "RSA");
  EXPECT_EQ(jwk["alg"], "RS256");
  EXPECT_EQ(jwk["use"], "sig");
  EXPECT_EQ(jwk["e"], "AQAB");  // 65537
  EXPECT_FALSE(jwk.contains("d"));
  // 2048 bits = 256 bytes = 342 base64url characters, unpadded.
  EXPECT_EQ(jwk["n"].get<std::string>().size(), 342u);

  const json ec = EcKey().PublicJwk();
  EXPECT_EQ(EcKey().kid(), JwkThumbprint(ec).value());
  EXPECT_EQ(ec["crv"], "P-256");
  EXPECT_FALSE(ec.contains("d"));
}

// The thumbprint of RFC 7638 section 3.1's example key is the one the RFC gives.
TEST(JwtThumbprintTest, MatchesRfc7638Example) {
  const json jwk = {
      {"kty", "RSA"},
      {"n",
       "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3"
       "oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdA"
       "ZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-"
       "kEgU8awapJzKnqDKgw"},
      {"e", "AQAB"},
      {"alg", "RS256"},
      {"kid", "2011-04-29"}};
  EXPECT_EQ(JwkThumbprint(jwk).value(), "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs");
}

// A JWK without its required members has no thumbprint.
TEST(JwtThumbprintTest, RefusesIncompleteJwk) {
  EXPECT_EQ(JwkThumbprint(json{{"kty", "RSA"}, {"n", "AQAB"}}).error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(JwkThumbprint(json{{"kty", "oct"}, {"k", "AQAB"}}).error().code(), StatusCode::kInvalidArgument);
}

// A private JWK written by ToPrivateJwk reads back as the same key: same kid,
// alg and public half, and its tokens verify with the original's key set.
TEST(SigningKeyTest, PrivateJwkRoundTripKeepsKid) {
  const std::string text = RsaKey().ToPrivateJwk();
  const json jwk = json::parse(text);
  EXPECT_EQ(jwk["kid"], RsaKey().kid());
  EXPECT_TRUE(jwk.contains("d"));

  Result<SigningKey> back = SigningKey::FromPrivateJwk(text);
  ASSERT_TRUE(back.has_value()) << back.error().ToString();
  EXPECT_EQ(back->kid(), RsaKey().kid());
  EXPECT_EQ(back->alg(), "RS256");
  EXPECT_EQ(back->PublicJwk(), RsaKey().PublicJwk());
  EXPECT_TRUE(VerifyJwt(back->Sign(ServiceAccountClaims()).value(), SetOf({&RsaKey()})).has_value());
}

// The same holds for an EC key, whose alg follows its curve.
TEST(SigningKeyTest, EcPrivateJwkRoundTripKeepsKidAndAlg) {
  Result<SigningKey> back = SigningKey::FromPrivateJwk(EcKey().ToPrivateJwk());
  ASSERT_TRUE(back.has_value()) << back.error().ToString();
  EXPECT_EQ(back->kid(), EcKey().kid());
  EXPECT_EQ(back->alg(), "ES256");
  EXPECT_EQ(back->PublicJwk(), EcKey().PublicJwk());
}

// A kid an admin chose is kept; without one, the kid is the thumbprint.
TEST(SigningKeyTest, PrivateJwkKidIsKeptOrDerived) {
  json jwk = json::parse(RsaKey().ToPrivateJwk());
  jwk["kid"] = "2026-12-sa";
  EXPECT_EQ(SigningKey::FromPrivateJwk(jwk.dump()).value().kid(), "2026-12-sa");

  jwk.erase("kid");
  jwk.erase("alg");
  const SigningKey derived = SigningKey::FromPrivateJwk(jwk.dump()).value();
  EXPECT_EQ(derived.kid(), RsaKey().kid());
  EXPECT_EQ(derived.alg(), "RS256");
}

// A JWK's alg is kept when it fits the key (RS384 on RSA) and refused when it
// does not (ES256 on RSA).
TEST(SigningKeyTest, PrivateJwkAlgMustFitKey) {
  json jwk = json::parse(RsaKey().ToPrivateJwk());
  jwk["alg"] = "RS384";
  const SigningKey rs384 = SigningKey::FromPrivateJwk(jwk.dump()).value();
  EXPECT_EQ(rs384.alg(), "RS384");
  const std::string_view algs[] = {"RS384"};
  EXPECT_TRUE(VerifyJwt(rs384.Sign(ServiceAccountClaims()).value(), SetOf({&rs384}), algs).has_value());

  jwk["alg"] = "ES256";
  EXPECT_EQ(SigningKey::FromPrivateJwk(jwk.dump()).error().code(), StatusCode::kInvalidArgument);
}

// A public JWK, a non-object and a JWK whose private half belongs to another
// key are not signing keys.
TEST(SigningKeyTest, PrivateJwkRefusesPublicOrMismatchedKeys) {
  EXPECT_EQ(SigningKey::FromPrivateJwk(RsaKey().PublicJwk().dump()).error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SigningKey::FromPrivateJwk("[1]").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SigningKey::FromPrivateJwk("{not json").error().code(), StatusCode::kInvalidArgument);

  json mixed = json::parse(RsaKey().ToPrivateJwk());
  const json other = json::parse(OtherRsaKey().ToPrivateJwk());
  for (const char* name : {"d", "p", "q", "dp", "dq", "qi"}) mixed[name] = other[name];
  Result<SigningKey> key = SigningKey::FromPrivateJwk(mixed.dump());
  ASSERT_FALSE(key.has_value());
  EXPECT_EQ(key.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(key.error().message().find("does not match"), std::string::npos) << key.error().message();

  // cjose would silently derive the EC point from "d": the given one must agree.
  json ec = json::parse(EcKey().ToPrivateJwk());
  ec["d"] = json::parse(SigningKey::GenerateEs256().value().ToPrivateJwk())["d"];
  EXPECT_EQ(SigningKey::FromPrivateJwk(ec.dump()).error().code(), StatusCode::kInvalidArgument);
}

// RSA keys under 2048 bits are neither generated nor read.
TEST(SigningKeyTest, RefusesSmallRsaKeys) {
  EXPECT_EQ(SigningKey::GenerateRsa(1024).error().code(), StatusCode::kInvalidArgument);
  PkeyPtr small(EVP_RSA_gen(1024));
  ASSERT_NE(small, nullptr);
  Result<SigningKey> key = SigningKey::FromPem(PemOf(small.get()));
  ASSERT_FALSE(key.has_value());
  EXPECT_EQ(key.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(key.error().message().find("1024 bits"), std::string::npos) << key.error().message();
}

// An RSA key written by `openssl genrsa -traditional` (PKCS#1) and the same key
// converted to PKCS#8 read as one key, whose kid is its thumbprint and whose
// modulus is the one openssl prints.
TEST(SigningKeyTest, PemRsaPkcs1AndPkcs8GiveSameKid) {
  ScratchDir dir;
  const std::string pkcs1 = (dir.path() / "rsa1.pem").string();
  const std::string pkcs8 = (dir.path() / "rsa8.pem").string();
  ASSERT_NO_FATAL_FAILURE(Openssl("genrsa -traditional -out " + pkcs1 + " 2048"));
  ASSERT_NO_FATAL_FAILURE(Openssl("pkcs8 -topk8 -nocrypt -in " + pkcs1 + " -out " + pkcs8));
  const std::string pem1 = testing::ReadFile(pkcs1);
  const std::string pem8 = testing::ReadFile(pkcs8);
  ASSERT_NE(pem1.find("BEGIN RSA PRIVATE KEY"), std::string::npos) << pem1;
  ASSERT_NE(pem8.find("BEGIN PRIVATE KEY"), std::string::npos) << pem8;

  Result<SigningKey> from1 = SigningKey::FromPem(pem1);
  Result<SigningKey> from8 = SigningKey::FromPem(pem8);
  ASSERT_TRUE(from1.has_value()) << from1.error().ToString();
  ASSERT_TRUE(from8.has_value()) << from8.error().ToString();
  EXPECT_EQ(from1->kid(), from8->kid());
  EXPECT_EQ(from1->kid(), JwkThumbprint(from1->PublicJwk()).value());
  EXPECT_EQ(from1->alg(), "RS256");

  auto [rc, modulus] = RunShell("openssl rsa -in " + pkcs1 + " -noout -modulus");
  ASSERT_EQ(rc, 0) << modulus;
  std::string hex;
  for (unsigned char c : B64UrlDecode(from1->PublicJwk()["n"].get<std::string>())) hex += fmt::format("{:02X}", c);
  EXPECT_EQ(Trim(modulus), "Modulus=" + hex);
}

// An EC key written by `openssl ecparam -genkey` (SEC1) and the same key in
// PKCS#8 read as one ES256 key whose kid is its thumbprint.
TEST(SigningKeyTest, PemEcSec1AndPkcs8GiveSameKid) {
  ScratchDir dir;
  const std::string sec1 = (dir.path() / "ec1.pem").string();
  const std::string pkcs8 = (dir.path() / "ec8.pem").string();
  ASSERT_NO_FATAL_FAILURE(Openssl("ecparam -name prime256v1 -genkey -noout -out " + sec1));
  ASSERT_NO_FATAL_FAILURE(Openssl("pkcs8 -topk8 -nocrypt -in " + sec1 + " -out " + pkcs8));
  const std::string pem1 = testing::ReadFile(sec1);
  ASSERT_NE(pem1.find("BEGIN EC PRIVATE KEY"), std::string::npos) << pem1;

  Result<SigningKey> from1 = SigningKey::FromPem(pem1);
  Result<SigningKey> from8 = SigningKey::FromPem(testing::ReadFile(pkcs8));
  ASSERT_TRUE(from1.has_value()) << from1.error().ToString();
  ASSERT_TRUE(from8.has_value()) << from8.error().ToString();
  EXPECT_EQ(from1->kid(), from8->kid());
  EXPECT_EQ(from1->kid(), JwkThumbprint(from1->PublicJwk()).value());
  EXPECT_EQ(from1->alg(), "ES256");
  EXPECT_EQ(from1->PublicJwk()["crv"], "P-256");
}

// A P-384 key from PEM signs ES384.
TEST(SigningKeyTest, PemP384KeySignsEs384) {
  ScratchDir dir;
  const std::string path = (dir.path() / "ec384.pem").string();
  ASSERT_NO_FATAL_FAILURE(Openssl("ecparam -name secp384r1 -genkey -noout -out " + path));
  const SigningKey key = SigningKey::FromPem(testing::ReadFile(path)).value();
  EXPECT_EQ(key.alg(), "ES384");
  const std::string_view es384[] = {"ES384"};
  EXPECT_TRUE(VerifyJwt(key.Sign(ServiceAccountClaims()).value(), SetOf({&key}), es384).has_value());
}

// An encrypted PEM is refused at once, never prompting for a passphrase, and
// so is text that is no PEM key at all.
TEST(SigningKeyTest, PemRefusesEncryptedAndGarbage) {
  ScratchDir dir;
  const std::string path = (dir.path() / "enc.pem").string();
  ASSERT_NO_FATAL_FAILURE(Openssl("genrsa -aes128 -passout pass:secret -out " + path + " 2048"));
  Result<SigningKey> encrypted = SigningKey::FromPem(testing::ReadFile(path));
  ASSERT_FALSE(encrypted.has_value());
  EXPECT_EQ(encrypted.error().code(), StatusCode::kInvalidArgument);

  EXPECT_EQ(SigningKey::FromPem("not a key").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SigningKey::FromPem("").error().code(), StatusCode::kInvalidArgument);
}

// ---- Key sets --------------------------------------------------------------------------

// An identity provider's JWKS lists an encryption key, a symmetric key, an
// unknown kty and a curve we do not verify besides its signing key: only the
// signing key is taken.
TEST(KeySetTest, JwksSkipsEncryptionAndUnknownKeys) {
  json sig = RsaKey().PublicJwk();
  json enc = OtherRsaKey().PublicJwk();
  enc["use"] = "enc";
  enc["kid"] = "enc-1";
  const json jwks = {{"keys",
                      json::array({enc,
                       {{"kty", "oct"}, {"kid", "hmac"}, {"k", "c2VjcmV0"}},
                       {{"kty", "OKP"}, {"kid", "ed"}, {"crv", "Ed25519"}, {"x", "AAAA"}},
                       {{"kty", "EC"}, {"kid", "k1"}, {"crv", "secp256k1"}, {"x", "AAAA"}, {"y", "AAAA"}},
                       sig})}};

  Result<KeySet> set = KeySet::FromJwks(jwks.dump());
  ASSERT_TRUE(set.has_value()) << set.error().ToString();
  EXPECT_EQ(set->size(), 1u);
  EXPECT_TRUE(set->HasKid(RsaKey().kid()));
  EXPECT_FALSE(set->HasKid("enc-1"));
  EXPECT_FALSE(set->HasKid("hmac"));
  EXPECT_TRUE(VerifyJwt(RsaKey().Sign(ServiceAccountClaims()).value(), *set).has_value());
}

// A JWKS that leaves no signing key is refused, saying why each key was skipped.
TEST(KeySetTest, JwksWithoutUsableKeyIsRefused) {
  json enc = RsaKey().PublicJwk();
  enc["use"] = "enc";
  const json jwks = {{"keys", json::array({enc, {{"kty", "oct"}, {"k", "c2VjcmV0"}}})}};

  Result<KeySet> set = KeySet::FromJwks(jwks.dump());
  ASSERT_FALSE(set.has_value());
  EXPECT_EQ(set.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(set.error().message().find("\"use\" is \"enc\""), std::string::npos) << set.error().message();
  EXPECT_NE(set.error().message().find("kty \"oct\""), std::string::npos) << set.error().message();
}

// Text that is not JSON, a document without a "keys" list and an empty list are refused.
TEST(KeySetTest, JwksMustBeJsonWithKeysList) {
  EXPECT_EQ(KeySet::FromJwks("{").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(KeySet::FromJwks(R"({"keys": {}})").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(KeySet::FromJwks(R"([])").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(KeySet::FromJwks(R"({"keys": []})").error().code(), StatusCode::kInvalidArgument);
}

// Private members in a JWKS are dropped: the set writes back public keys only.
TEST(KeySetTest, JwksIgnoresPrivateParts) {
  const json jwks = {{"keys", json::array({json::parse(RsaKey().ToPrivateJwk())})}};
  const KeySet set = KeySet::FromJwks(jwks.dump()).value();
  const json back = set.ToJwks();
  ASSERT_EQ(back["keys"].size(), 1u);
  EXPECT_FALSE(back["keys"][0].contains("d"));
  EXPECT_FALSE(back["keys"][0].contains("p"));
  EXPECT_EQ(back["keys"][0], RsaKey().PublicJwk());
}

// ToJwks lists keys in the order added, and reads back as a set that verifies
// the same tokens.
TEST(KeySetTest, ToJwksRoundTrip) {
  const KeySet set = SetOf({&RsaKey(), &EcKey()});
  const json jwks = set.ToJwks();
  ASSERT_EQ(jwks["keys"].size(), 2u);
  EXPECT_EQ(jwks["keys"][0]["kid"], RsaKey().kid());
  EXPECT_EQ(jwks["keys"][1]["kid"], EcKey().kid());

  const KeySet back = KeySet::FromJwks(jwks.dump()).value();
  EXPECT_EQ(back.ToJwks(), jwks);
  const std::string_view both[] = {"RS256", "ES256"};
  EXPECT_TRUE(VerifyJwt(EcKey().Sign(ServiceAccountClaims()).value(), back, both).has_value());
}

// ---- What verification refuses ------------------------------------------------------

// An unsigned token (alg "none") is refused, even when a caller lists "none".
TEST(JwtVerifyTest, RefusesAlgNone) {
  const std::string token =
      Unsigned({{"alg", "none"}, {"kid", RsaKey().kid()}}, ServiceAccountClaims(), /*signature=*/"");
  const std::string_view with_none[] = {"RS256", "none"};

  ExpectUnauthenticated(VerifyJwt(token, SetOf({&RsaKey()})),
                        "token signed with none, which is not accepted (accepted: RS256)");
  ExpectUnauthenticated(VerifyJwt(token, SetOf({&RsaKey()}), with_none),
                        "token signed with none, which is not accepted (accepted: RS256)");
}

// An HS256 token keyed with the RSA key's public JWK (the algorithm confusion
// attack) is refused, even when a caller lists HS256.
TEST(JwtVerifyTest, RefusesHs256) {
  const std::string secret = RsaKey().PublicJwk().dump();
  const std::string header = B64Url(json{{"alg", "HS256"}, {"kid", RsaKey().kid()}}.dump());
  const std::string payload = B64Url(ServiceAccountClaims().dump());
  const std::string input = header + "." + payload;
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int mac_size = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac.data(), &mac_size);
  const std::string token = Join(header, payload, B64Url({reinterpret_cast<char*>(mac.data()), mac_size}));
  const std::string_view with_hs256[] = {"RS256", "HS256"};

  ExpectUnauthenticated(VerifyJwt(token, SetOf({&RsaKey()}), with_hs256),
                        "token signed with HS256, which is not accepted (accepted: RS256)");
}

// A validly signed ES256 token is refused where only RS256 is allowed.
TEST(JwtVerifyTest, RefusesAlgNotInAllowList) {
  const std::string token = EcKey().Sign(ServiceAccountClaims()).value();
  ExpectUnauthenticated(VerifyJwt(token, SetOf({&RsaKey(), &EcKey()})),
                        "token signed with ES256, which is not accepted (accepted: RS256)");
}

// A token whose kid is not in the set is refused, naming the kid.
TEST(JwtVerifyTest, RefusesUnknownKid) {
  const std::string token = RsaKey().Sign(ServiceAccountClaims()).value();
  ExpectUnauthenticated(VerifyJwt(token, SetOf({&OtherRsaKey()})),
                        "token signed by an unknown key (kid \"" + RsaKey().kid() + "\")");
}

// A token whose payload was swapped for one naming another subject fails its signature.
TEST(JwtVerifyTest, RefusesTamperedPayload) {
  std::vector<std::string> parts = Parts(RsaKey().Sign(ServiceAccountClaims()).value());
  json claims = ServiceAccountClaims();
  claims["sub"] = "system:serviceaccount:kube-system:admin";
  const std::string token = Join(parts[0], B64Url(claims.dump()), parts[2]);

  ExpectUnauthenticated(VerifyJwt(token, SetOf({&RsaKey()})), "token signature is invalid");
}

// A key that claims another key's kid cannot sign for it.
TEST(JwtVerifyTest, RefusesOtherKeyWithSameKid) {
  json impostor = json::parse(OtherRsaKey().ToPrivateJwk());
  impostor["kid"] = RsaKey().kid();
  const SigningKey key = SigningKey::FromPrivateJwk(impostor.dump()).value();
  ASSERT_EQ(key.kid(), RsaKey().kid());

  ExpectUnauthenticated(VerifyJwt(key.Sign(ServiceAccountClaims()).value(), SetOf({&RsaKey()})),
                        "token signature is invalid");
}

// An ES256 header naming a P-384 key is refused before cjose sees it (cjose
// would check the SHA-256 digest with the P-384 key).
TEST(JwtVerifyTest, RefusesAlgThatDoesNotFitTheKidsKey) {
  ScratchDir dir;
  const std::string path = (dir.path() / "ec384.pem").string();
  ASSERT_NO_FATAL_FAILURE(Openssl("ecparam -name secp384r1 -genkey -noout -out " + path));
  const SigningKey p384 = SigningKey::FromPem(testing::ReadFile(path)).value();
  std::vector<std::string> parts = Parts(p384.Sign(ServiceAccountClaims()).value());
  const std::string token = Join(B64Url(json{{"alg", "ES256"}, {"kid", p384.kid()}}.dump()), parts[1], parts[2]);
  const std::string_view both[] = {"ES256", "ES384"};

  ExpectUnauthenticated(
      VerifyJwt(token, SetOf({&p384}), both),
      "token signed with ES256, but its key (kid \"" + p384.kid() + "\") is an EC P-384 key for ES384");
}

// An RS256 token with a kid of an EC key is refused the same way.
TEST(JwtVerifyTest, RefusesRsaAlgForEcKey) {
  std::vector<std::string> parts = Parts(EcKey().Sign(ServiceAccountClaims()).value());
  const std::string token = Join(B64Url(json{{"alg", "RS256"}, {"kid", EcKey().kid()}}.dump()), parts[1], parts[2]);
  Result<Jwt> result = VerifyJwt(token, SetOf({&EcKey()}));
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(result.error().message().find("is an EC P-256 key"), std::string::npos) << result.error().message();
}

// A token in two parts is malformed.
TEST(JwtVerifyTest, RefusesTwoParts) {
  std::vector<std::string> parts = Parts(RsaKey().Sign(ServiceAccountClaims()).value());
  ExpectUnauthenticated(VerifyJwt(parts[0] + "." + parts[1], SetOf({&RsaKey()})),
                        "malformed token: a JWT has 3 dot-separated parts, this one has 2");
  ExpectMalformed(DecodeJwtUnverified(parts[0] + "." + parts[1]));
  ExpectMalformed(VerifyJwt(RsaKey().Sign(ServiceAccountClaims()).value() + ".x", SetOf({&RsaKey()})));
}

// Characters outside base64url (standard base64's '+', '*', padding) make a token malformed.
TEST(JwtVerifyTest, RefusesBadBase64) {
  std::vector<std::string> parts = Parts(RsaKey().Sign(ServiceAccountClaims()).value());
  ExpectUnauthenticated(VerifyJwt(Join("*" + parts[0], parts[1], parts[2]), SetOf({&RsaKey()})),
                        "malformed token: its header is not base64url");
  ExpectUnauthenticated(VerifyJwt(Join(parts[0], parts[1] + "=", parts[2]), SetOf({&RsaKey()})),
                        "malformed token: its payload is not base64url");
  ExpectUnauthenticated(VerifyJwt(Join(parts[0], parts[1], parts[2] + "+"), SetOf({&RsaKey()})),
                        "malformed token: its signature is not base64url");
  // One character of a 4-character group cannot be.
  ExpectMalformed(VerifyJwt(Join(parts[0], "A", parts[2]), SetOf({&RsaKey()})));
}

// A payload that is JSON but not an object, or not JSON, is malformed; so is such a header.
TEST(JwtVerifyTest, RefusesNonObjectPayload) {
  std::vector<std::string> parts = Parts(RsaKey().Sign(ServiceAccountClaims()).value());
  ExpectUnauthenticated(VerifyJwt(Join(parts[0], B64Url("[1,2]"), parts[2]), SetOf({&RsaKey()})),
                        "malformed token: its payload is not a JSON object");
  ExpectUnauthenticated(VerifyJwt(Join(parts[0], B64Url("{\"sub\":"), parts[2]), SetOf({&RsaKey()})),
                        "malformed token: its payload is not a JSON object");
  ExpectUnauthenticated(VerifyJwt(Join(B64Url("\"RS256\""), parts[1], parts[2]), SetOf({&RsaKey()})),
                        "malformed token: its header is not a JSON object");
}

// A header without alg, or with a kid that is not a string, is malformed.
TEST(JwtVerifyTest, RefusesHeaderWithoutAlgOrWithBadKid) {
  std::vector<std::string> parts = Parts(RsaKey().Sign(ServiceAccountClaims()).value());
  ExpectMalformed(VerifyJwt(Join(B64Url(R"({"typ":"JWT"})"), parts[1], parts[2]), SetOf({&RsaKey()})));
  ExpectMalformed(VerifyJwt(Join(B64Url(R"({"alg":"RS256","kid":7})"), parts[1], parts[2]), SetOf({&RsaKey()})));
}

// A header with critical extensions we do not understand is refused (cjose ignores "crit").
TEST(JwtVerifyTest, RefusesCriticalExtensions) {
  std::vector<std::string> parts = Parts(RsaKey().Sign(ServiceAccountClaims()).value());
  const std::string header = B64Url(json{{"alg", "RS256"}, {"kid", RsaKey().kid()}, {"crit", {"exp"}}}.dump());
  ExpectUnauthenticated(VerifyJwt(Join(header, parts[1], parts[2]), SetOf({&RsaKey()})),
                        "token requires header extensions (\"crit\") that are not supported");
}

// A valid ES256 signature re-encoded as 0 || R || 0 || S (66 bytes, not 64) is
// refused: cjose 0.6.2.1 splits a signature in halves and would accept it, so
// that one token would have many valid encodings.
TEST(JwtVerifyTest, RefusesEcSignatureOfWrongSize) {
  std::vector<std::string> parts = Parts(EcKey().Sign(ServiceAccountClaims()).value());
  const std::string signature = B64UrlDecode(parts[2]);
  ASSERT_EQ(signature.size(), 64u);
  const std::string zero(1, '\0');
  const std::string padded = zero + signature.substr(0, 32) + zero + signature.substr(32);
  const std::string_view es256[] = {"ES256"};

  ExpectUnauthenticated(VerifyJwt(Join(parts[0], parts[1], B64Url(padded)), SetOf({&EcKey()}), es256),
                        "token signature is invalid");
  EXPECT_TRUE(VerifyJwt(Join(parts[0], parts[1], parts[2]), SetOf({&EcKey()}), es256).has_value());
}

// Whatever is wrong with a token, the message never quotes the token or any of its parts.
TEST(JwtVerifyTest, NoErrorMessageContainsTheToken) {
  const std::string good = RsaKey().Sign(ServiceAccountClaims()).value();
  std::vector<std::string> parts = Parts(good);
  json tampered = ServiceAccountClaims();
  tampered["sub"] = "admin";
  const std::vector<std::string> tokens = {
      good,  // against a set without its key
      parts[0] + "." + parts[1],
      Join("*" + parts[0], parts[1], parts[2]),
      Join(parts[0], B64Url("[1]"), parts[2]),
      Join(parts[0], B64Url(tampered.dump()), parts[2]),
      Unsigned({{"alg", "none"}}, ServiceAccountClaims(), ""),
      Unsigned({{"alg", "HS256"}, {"kid", RsaKey().kid()}}, ServiceAccountClaims(), parts[2]),
  };
  for (const std::string& token : tokens) {
    for (const KeySet& set : {SetOf({&OtherRsaKey()}), SetOf({&RsaKey()})}) {
      Result<Jwt> result = VerifyJwt(token, set);
      if (result.has_value()) continue;  // the good token against its own key
      const std::string& message = result.error().message();
      SCOPED_TRACE(message);
      EXPECT_EQ(message.find(token), std::string::npos);
      for (const std::string& part : Parts(token)) {
        if (part.size() >= 16) {
          EXPECT_EQ(message.find(part), std::string::npos) << part;
        }
      }
      EXPECT_EQ(message.find(parts[2].substr(0, 16)), std::string::npos);
    }
  }
}

// ---- Claims ---------------------------------------------------------------------------------

Timestamp At(const char* rfc3339) { return ParseRfc3339(rfc3339).value(); }

// A token that expired 30 s ago passes with the default 60 s of leeway.
TEST(JwtTimesTest, ExpiredWithinLeewayPasses) {
  const json claims = {{"exp", At("2026-12-01T10:00:00Z").seconds()}};
  EXPECT_TRUE(CheckTokenTimes(claims, At("2026-12-01T10:00:30Z")).ok());
}

// Without leeway, the same token has expired; so has one at exactly its exp (now < exp is required).
TEST(JwtTimesTest, ExpiredWithoutLeewayFails) {
  const json claims = {{"exp", At("2026-12-01T10:00:00Z").seconds()}};
  const Status late = CheckTokenTimes(claims, At("2026-12-01T10:00:30Z"), Duration::Seconds(0));
  EXPECT_EQ(late, Status::Unauthenticated("token expired at 2026-12-01T10:00:00Z"));
  EXPECT_FALSE(CheckTokenTimes(claims, At("2026-12-01T10:00:00Z"), Duration::Seconds(0)).ok());
  EXPECT_TRUE(CheckTokenTimes(claims, At("2026-12-01T09:59:59.999Z"), Duration::Seconds(0)).ok());
  // Past the leeway too: 10:00:00 + 60 s <= 10:01:00.
  EXPECT_FALSE(CheckTokenTimes(claims, At("2026-12-01T10:01:00Z")).ok());
}

// A token whose nbf is 2 minutes ahead is not valid yet; 30 s ahead is within leeway.
TEST(JwtTimesTest, NbfInTheFutureFails) {
  const Timestamp now = At("2026-12-01T10:00:00Z");
  const json early = {{"exp", now.seconds() + 3600}, {"nbf", now.seconds() + 120}};
  EXPECT_EQ(CheckTokenTimes(early, now), Status::Unauthenticated("token is not valid before 2026-12-01T10:02:00Z"));
  const json skewed = {{"exp", now.seconds() + 3600}, {"nbf", now.seconds() + 30}};
  EXPECT_TRUE(CheckTokenTimes(skewed, now).ok());
}

// A token without exp is refused.
TEST(JwtTimesTest, ExpMissingFails) {
  const Status status = CheckTokenTimes(json{{"iat", 1}}, At("2026-12-01T10:00:00Z"));
  EXPECT_EQ(status.code(), StatusCode::kUnauthenticated);
  EXPECT_NE(status.message().find("\"exp\""), std::string::npos) << status.message();
}

// An exp (or nbf, or iat) that is a string or a bool is refused; fractional seconds are numbers.
TEST(JwtTimesTest, NonNumericExpFails) {
  const Timestamp now = At("2026-12-01T10:00:00Z");
  EXPECT_EQ(CheckTokenTimes(json{{"exp", "1796119200"}}, now).code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(CheckTokenTimes(json{{"exp", true}}, now).code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(CheckTokenTimes(json{{"exp", now.seconds() + 60}, {"nbf", "now"}}, now).code(),
            StatusCode::kUnauthenticated);
  EXPECT_EQ(CheckTokenTimes(json{{"exp", now.seconds() + 60}, {"iat", json::array()}}, now).code(),
            StatusCode::kUnauthenticated);
  EXPECT_TRUE(CheckTokenTimes(json{{"exp", now.seconds() + 0.5}}, now, Duration::Seconds(0)).ok());
}

// Dates far outside years 0..9999 are checked without crashing the formatter.
TEST(JwtTimesTest, ExtremeDatesAreHandled) {
  const Timestamp now = At("2026-12-01T10:00:00Z");
  EXPECT_TRUE(CheckTokenTimes(json{{"exp", 1e300}}, now).ok());
  EXPECT_TRUE(CheckTokenTimes(json{{"exp", std::numeric_limits<uint64_t>::max()}}, now).ok());
  const Status ancient = CheckTokenTimes(json{{"exp", -1e15}}, now);
  EXPECT_EQ(ancient.code(), StatusCode::kUnauthenticated);
  EXPECT_NE(ancient.message().find("seconds after the epoch"), std::string::npos) << ancient.message();
  EXPECT_FALSE(CheckTokenTimes(json{{"exp", now.seconds() + 60}, {"nbf", 1e300}}, now).ok());
}

const std::vector<std::string> kTessera = {"tessera"};

// An aud that is the accepted audience as a string passes.
TEST(JwtAudienceTest, StringAudPasses) {
  EXPECT_TRUE(CheckTokenAudience(json{{"aud", "tessera"}}, kTessera).ok());
}

// An aud list passes when one of its values is accepted.
TEST(JwtAudienceTest, ListAudPassesOnOverlap) {
  const std::vector<std::string> accepted = {"api", "tessera"};
  EXPECT_TRUE(CheckTokenAudience(json{{"aud", {"other", "tessera"}}}, accepted).ok());
}

// A token without aud is refused like one for no accepted audience.
TEST(JwtAudienceTest, MissingAudFails) {
  EXPECT_EQ(CheckTokenAudience(json{{"sub", "x"}}, kTessera),
            Status::Unauthenticated("token audience [] is not accepted here (accepted: [\"tessera\"])"));
}

// A token for another audience is refused, naming both.
TEST(JwtAudienceTest, NoOverlapFails) {
  EXPECT_EQ(CheckTokenAudience(json{{"aud", {"other"}}}, kTessera),
            Status::Unauthenticated("token audience [\"other\"] is not accepted here (accepted: [\"tessera\"])"));
  EXPECT_EQ(CheckTokenAudience(json{{"aud", "other"}}, kTessera),
            Status::Unauthenticated("token audience [\"other\"] is not accepted here (accepted: [\"tessera\"])"));
}

// An aud that is neither a string nor a list of strings is refused.
TEST(JwtAudienceTest, NonStringAudFails) {
  EXPECT_EQ(CheckTokenAudience(json{{"aud", 7}}, kTessera).code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(CheckTokenAudience(json{{"aud", {"tessera", 7}}}, kTessera).code(), StatusCode::kUnauthenticated);
}

// TokenAudiences turns a string into a list of one, keeps a list, and is empty without aud.
TEST(JwtAudienceTest, TokenAudiences) {
  EXPECT_EQ(TokenAudiences(json{{"aud", "tessera"}}), kTessera);
  EXPECT_EQ(TokenAudiences(json{{"aud", {"a", "b"}}}), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(TokenAudiences(json{{"sub", "x"}}).empty());
  EXPECT_TRUE(TokenAudiences(json::array()).empty());
}

// ---- Interoperability with PyJWT ------------------------------------------------------

// PyJWT 2.6 with `cryptography`, as Debian packages it (/usr/bin/python3); a
// python3 on PATH (pyenv, a venv) may lack the modules.
std::string PythonWithPyJwt() {
  for (const char* python : {"/usr/bin/python3", "python3"}) {
    if (RunShell(std::string(python) + " -c 'import jwt, cryptography'").first == 0) return python;
  }
  return "";
}

constexpr std::string_view kPyJwtScript = R"py(
import base64, hashlib, json, sys
import jwt
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

mode = sys.argv[1]
if mode == "sign":  # pem alg kid claims.json
    claims = json.load(open(sys.argv[5]))
    print(jwt.encode(claims, open(sys.argv[2]).read(), algorithm=sys.argv[3], headers={"kid": sys.argv[4]}))
elif mode == "verify":  # jwk.json token alg audience
    jwk = open(sys.argv[2]).read()
    alg = sys.argv[4]
    key = (RSAAlgorithm if alg.startswith("RS") else ECAlgorithm).from_jwk(jwk)
    token = open(sys.argv[3]).read().strip()
    claims = jwt.decode(token, key, algorithms=[alg], audience=sys.argv[5])
    print(json.dumps({"header": jwt.get_unverified_header(token), "claims": claims}))
elif mode == "thumbprint":  # jwk.json, per RFC 7638 section 3
    jwk = json.load(open(sys.argv[2]))
    required = {"RSA": ["e", "kty", "n"], "EC": ["crv", "kty", "x", "y"]}[jwk["kty"]]
    canonical = json.dumps({k: jwk[k] for k in required}, sort_keys=True, separators=(",", ":"))
    print(base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode())
)py";

class JwtInteropTest : public ::testing::Test {
 protected:
  void SetUp() override {
    python_ = PythonWithPyJwt();
    ASSERT_FALSE(python_.empty())
        << "the interop tests need python3 with PyJWT and cryptography (Debian: python3-jwt, python3-cryptography); "
           "neither /usr/bin/python3 nor python3 on PATH can `import jwt, cryptography`";
    script_ = dir_.Write("pyjwt_interop.py", std::string(kPyJwtScript));
  }
  // Runs the script; its stdout, failing the test when it fails.
  std::string Py(const std::string& args) {
    auto [rc, out] = RunShell(python_ + " " + script_ + " " + args);
    EXPECT_EQ(rc, 0) << out;
    return Trim(out);
  }
  // A token PyJWT signs with `pem` verifies with VerifyJwt against the key read from the same PEM.
  void ExpectPyJwtTokenVerifies(const std::string& pem_path, const std::string& alg) {
    const SigningKey key = SigningKey::FromPem(testing::ReadFile(pem_path)).value();
    const json claims = ServiceAccountClaims();
    const std::string token =
        Py("sign " + pem_path + " " + alg + " " + key.kid() + " " + dir_.Write("claims.json", claims.dump()));
    const std::string_view algs[] = {alg};

    Result<Jwt> jwt = VerifyJwt(token, SetOf({&key}), algs);
    ASSERT_TRUE(jwt.has_value()) << jwt.error().ToString() << "\n" << token;
    EXPECT_EQ(jwt->claims, claims);
    EXPECT_EQ(jwt->header["kid"], key.kid());
  }
  // A token `key` signs verifies with PyJWT against its public JWK.
  void ExpectPyJwtVerifies(const SigningKey& key) {
    const json claims = ServiceAccountClaims();
    const std::string token = key.Sign(claims).value();
    const std::string out = Py("verify " + dir_.Write("jwk.json", key.PublicJwk().dump()) + " " +
                               dir_.Write("token", token) + " " + key.alg() + " tessera");
    const json seen = json::parse(out, nullptr, false);
    ASSERT_TRUE(seen.is_object()) << out;
    EXPECT_EQ(seen["claims"], claims);
    EXPECT_EQ(seen["header"], (json{{"alg", key.alg()}, {"kid", key.kid()}, {"typ", "JWT"}}));
  }

  ScratchDir dir_;
  std::string python_;
  std::string script_;
};

// PyJWT signs RS256 with a PKCS#8 key from `openssl genpkey`; VerifyJwt accepts it.
TEST_F(JwtInteropTest, PyJwtRs256TokenVerifies) {
  const std::string pem = (dir_.path() / "rsa.pem").string();
  ASSERT_NO_FATAL_FAILURE(Openssl("genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out " + pem));
  ExpectPyJwtTokenVerifies(pem, "RS256");
}

// PyJWT signs ES256 with a SEC1 P-256 key; VerifyJwt accepts it.
TEST_F(JwtInteropTest, PyJwtEs256TokenVerifies) {
  const std::string pem = (dir_.path() / "ec.pem").string();
  ASSERT_NO_FATAL_FAILURE(Openssl("ecparam -name prime256v1 -genkey -noout -out " + pem));
  ExpectPyJwtTokenVerifies(pem, "ES256");
}

// PyJWT verifies an RS256 token SigningKey signed, with the public JWK we publish.
TEST_F(JwtInteropTest, PyJwtVerifiesOurRs256Token) { ExpectPyJwtVerifies(RsaKey()); }

// PyJWT verifies an ES256 token SigningKey signed.
TEST_F(JwtInteropTest, PyJwtVerifiesOurEs256Token) { ExpectPyJwtVerifies(EcKey()); }

// Python's RFC 7638 thumbprint of our public JWKs is our kid, for RSA and EC.
TEST_F(JwtInteropTest, KidIsThumbprintComputedByPython) {
  EXPECT_EQ(Py("thumbprint " + dir_.Write("rsa.json", RsaKey().PublicJwk().dump())), RsaKey().kid());
  EXPECT_EQ(Py("thumbprint " + dir_.Write("ec.json", EcKey().PublicJwk().dump())), EcKey().kid());
}

}  // namespace
}  // namespace tessera

#include "server/api/proxy_login.h"

#include <fmt/format.h>
#include <openssl/rand.h>

#include <nlohmann/json.hpp>

#include <array>
#include <cctype>

#include "common/time_format.h"
#include "server/api/api_errors.h"

namespace tessera {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Calls `each(name, value, pair)` for each "name=value" of a Cookie header.
template <class F>
void ForEachCookie(std::string_view header, F each) {
  while (!header.empty()) {
    const auto semi = header.find(';');
    const std::string_view pair = Trim(header.substr(0, semi));
    if (!pair.empty()) {
      const auto eq = pair.find('=');
      each(Trim(pair.substr(0, eq)), eq == std::string_view::npos ? std::string_view() : Trim(pair.substr(eq + 1)),
           pair);
    }
    if (semi == std::string_view::npos) break;
    header.remove_prefix(semi + 1);
  }
}

// 256 random bits as hex, from OpenSSL's CSPRNG.
std::string RandomCode() {
  std::array<unsigned char, 32> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    // The CSPRNG failing is no state to hand out guessable codes in.
    std::abort();
  }
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

}  // namespace

bool IsProxyRequest(const RequestInfo& info) {
  return info.resource_request && info.kind != nullptr && info.subresource == "proxy" &&
         (info.kind->store_key == "/Pod" || info.kind->store_key == "/Service");
}

bool IsProxyLoginRequest(const RequestInfo& info) {
  return info.resource_request && info.kind != nullptr && info.subresource == kProxyLoginSubresource &&
         (info.kind->store_key == "/Pod" || info.kind->store_key == "/Service");
}

std::string ProxyBasePath(const RequestInfo& info) {
  return fmt::format("/api/v1/namespaces/{}/{}/{}/proxy", info.ns, info.resource, info.name);
}

ProxyLogins::Issued ProxyLogins::Issue(UserInfo user, std::string path, Timestamp now) {
  Issued issued{.code = RandomCode(), .expires = now + kProxyLoginCodeLifetime};
  std::lock_guard lock(mu_);
  std::erase_if(codes_, [&](const auto& entry) { return entry.second.expires <= now; });
  codes_[issued.code] = Pending{.user = std::move(user), .path = std::move(path), .expires = issued.expires};
  return issued;
}

Result<UserInfo> ProxyLogins::Redeem(std::string_view code, std::string_view path, Timestamp now) {
  Pending pending;
  {
    std::lock_guard lock(mu_);
    auto it = codes_.find(std::string(code));
    if (it == codes_.end()) {
      return Err(Status::Unauthenticated(
          "the login code is not valid: it was used already, has expired or never existed; run `tessera open` "
          "again for a new one"));
    }
    pending = std::move(it->second);
    codes_.erase(it);
  }
  if (pending.expires <= now) {
    return Err(Status::Unauthenticated("the login code has expired (codes last 60 seconds); run `tessera open` again"));
  }
  if (pending.path != path) {
    return Err(Status::Unauthenticated(fmt::format(
        "the login code is for {}, not for this path; it is spent now: run `tessera open` again", pending.path)));
  }
  return pending.user;
}

size_t ProxyLogins::PendingForTest() const {
  std::lock_guard lock(mu_);
  return codes_.size();
}

std::vector<std::string> SessionCookies(std::string_view cookie_header) {
  std::vector<std::string> out;
  ForEachCookie(cookie_header, [&](std::string_view name, std::string_view value, std::string_view) {
    if (name == kProxySessionCookie && !value.empty()) out.emplace_back(value);
  });
  return out;
}

std::string WithoutSessionCookies(std::string_view cookie_header) {
  std::string out;
  ForEachCookie(cookie_header, [&](std::string_view name, std::string_view, std::string_view pair) {
    if (name == kProxySessionCookie) return;
    if (!out.empty()) out += "; ";
    out += pair;
  });
  return out;
}

std::string SessionSetCookie(std::string_view token, std::string_view path, Duration max_age, bool secure) {
  return fmt::format("{}={}; Path={}; Max-Age={}; HttpOnly; SameSite=Strict{}", kProxySessionCookie, token, path,
                     max_age.seconds(), secure ? "; Secure" : "");
}

std::string TargetWithoutLogin(std::string_view target) {
  const auto q = target.find('?');
  if (q == std::string_view::npos) return std::string(target);
  std::string out(target.substr(0, q));
  std::string_view query = target.substr(q + 1);
  char separator = '?';
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    const std::string_view name = param.substr(0, param.find('='));
    if (!param.empty() && name != kProxyLoginQuery) {
      out += separator;
      out += param;
      separator = '&';
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return out;
}

HttpResponse AnswerProxyLogin(ProxyLogins& logins, const UserInfo& user, const RequestInfo& info,
                              const HttpRequest& request, Timestamp now) {
  if (request.method != "POST") {
    return StatusResponse(405, "MethodNotAllowed",
                          fmt::format("proxy logins are requested with POST to {} (tessera open does)", request.path));
  }
  const std::string base = ProxyBasePath(info);
  const ProxyLogins::Issued issued = logins.Issue(user, base, now);
  const nlohmann::json login{
      {"apiVersion", "tessera.dev/v1"},
      {"kind", "ProxyLogin"},
      {"metadata", {{"namespace", info.ns}, {"name", info.name}}},
      {"status",
       {{"path", base + "/"},
        {"url", fmt::format("{}/?{}={}", base, kProxyLoginQuery, issued.code)},
        {"code", issued.code},
        {"expirationTimestamp", FormatRfc3339(issued.expires)}}}};
  HttpResponse r;
  r.status = 201;
  r.body = login.dump();
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

HttpResponse RedeemProxyLogin(ProxyLogins& logins, const TokenIssuer& issuer, const RequestInfo& info,
                              const HttpRequest& request, Timestamp now, bool secure, UserInfo& user) {
  const std::string base = ProxyBasePath(info);
  auto who = logins.Redeem(request.Query(std::string(kProxyLoginQuery)), base, now);
  if (!who) {
    HttpResponse r = ErrorResponse(who.error());
    r.headers.emplace_back("Cache-Control", "no-store");
    return r;
  }
  user = *who;
  auto session = issuer.IssueProxySession(*who, base, kProxySessionExpiration, now);
  if (!session) return ErrorResponse(session.error());
  const std::string target = request.target.empty() ? request.path : request.target;
  HttpResponse r;
  r.status = 303;
  r.content_type = "text/plain; charset=utf-8";
  r.body = "logged in; on to the notebook\n";
  r.headers.emplace_back("Location", TargetWithoutLogin(target));
  r.headers.emplace_back("Set-Cookie", SessionSetCookie(session->token, base, kProxySessionExpiration, secure));
  r.headers.emplace_back("Cache-Control", "no-store");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  return r;
}

Result<UserInfo> SessionUser(const TokenIssuer& issuer, const RequestInfo& info, const HttpRequest& request,
                             Timestamp now) {
  const std::vector<std::string> sessions = SessionCookies(request.Header("cookie"));
  if (sessions.empty()) return Err(Status::NotFound("no session cookie"));
  const std::string base = ProxyBasePath(info);
  Status last = Status::Ok();
  for (const std::string& token : sessions) {
    auto user = issuer.VerifyProxySession(token, base, now);
    if (user) return user;
    last = user.error();
  }
  return Err(Status::Unauthenticated(
      fmt::format("the session cookie is not valid here ({}); run `tessera open` for a new login", last.message())));
}

}  // namespace tessera

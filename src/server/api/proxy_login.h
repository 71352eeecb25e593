// Browser logins for the proxy subresource (pods/NAME:PORT/proxy and
// services/NAME:PORT/proxy): a browser cannot send a bearer header on a link,
// so the CLI (`tessera open`), authenticated by its token, asks for a login
// code for one proxy path, and the browser trades the code for a cookie.
//
//   1. POST .../{pods,services}/NAME[:PORT]/proxylogin, with a bearer token of
//      a user who may `get` that pods/proxy or services/proxy (RBAC): 201 with
//      a ProxyLogin (status.code, status.url, status.expirationTimestamp).
//      The code is random (256 bits), valid for 60 seconds, once, on that
//      path only, for that user; codes live in the server's memory only.
//   2. GET .../proxy/...?tessera-login=CODE: the code is consumed whatever
//      the answer (a second use, an expired code, a code for another path:
//      401). A good one is answered 303 See Other to the same URL without the
//      code, with the cookie tessera-session: a session JWT the server signs
//      (TokenIssuer::IssueProxySession) naming the user and the path;
//      HttpOnly, SameSite=Strict, Secure when the server speaks TLS,
//      Path=the proxy path, Max-Age 12 hours. The code never stays in the
//      address bar or the history; the token never goes into a URL.
//   3. Later requests under that path (WebSocket upgrades included) without a
//      bearer token authenticate by the cookie, and are authorized by RBAC as
//      that user, request by request (a revoked RoleBinding denies at once).
//      The cookie is never forwarded to the pod.
//
// Thread-safety: ProxyLogins is safe from any thread; the functions are pure.
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "auth/service_account_tokens.h"
#include "auth/user_info.h"
#include "http/http_server.h"
#include "common/result.h"
#include "common/time.h"
#include "server/api/request_info.h"

namespace tessera {

inline constexpr std::string_view kProxyLoginQuery = "tessera-login";
inline constexpr std::string_view kProxySessionCookie = "tessera-session";
inline constexpr std::string_view kProxyLoginSubresource = "proxylogin";
inline constexpr Duration kProxyLoginCodeLifetime = Duration::Seconds(60);

// A pods/proxy, services/proxy or .../proxylogin request.
bool IsProxyRequest(const RequestInfo& info);
bool IsProxyLoginRequest(const RequestInfo& info);

// "/api/v1/namespaces/NS/services/NAME:PORT/proxy": the path a code and a
// session are for (the cookie's Path), as the request names the object.
// REQUIRES: IsProxyRequest(info) or IsProxyLoginRequest(info).
std::string ProxyBasePath(const RequestInfo& info);

class ProxyLogins {
 public:
  struct Issued {
    std::string code;
    Timestamp expires;
  };
  // A new code for `user` on `path` (ProxyBasePath), valid until now + 60 s.
  // Codes past their time are dropped here.
  Issued Issue(UserInfo user, std::string path, Timestamp now);
  // The user of `code` when it was issued for `path` and has not expired;
  // Unauthenticated saying why otherwise. The code is gone either way.
  Result<UserInfo> Redeem(std::string_view code, std::string_view path, Timestamp now);

  size_t PendingForTest() const;

 private:
  struct Pending {
    UserInfo user;
    std::string path;
    Timestamp expires;
  };
  mutable std::mutex mu_;
  std::unordered_map<std::string, Pending> codes_;  // guarded by mu_
};

// The values of every tessera-session cookie in a Cookie header.
std::vector<std::string> SessionCookies(std::string_view cookie_header);
// The Cookie header without the tessera-session cookies ("" when none is left).
std::string WithoutSessionCookies(std::string_view cookie_header);
// The Set-Cookie value of a session.
std::string SessionSetCookie(std::string_view token, std::string_view path, Duration max_age, bool secure);
// `target` (path and query, as sent) without its tessera-login parameters.
std::string TargetWithoutLogin(std::string_view target);

// The answer to POST .../proxylogin by `user` (already authorized to get the
// proxy): 201 with
//   {"apiVersion": "tessera.dev/v1", "kind": "ProxyLogin",
//    "metadata": {"namespace", "name"},
//    "status": {"path": BASE + "/", "url": BASE + "/?tessera-login=CODE",
//               "code": CODE, "expirationTimestamp": RFC 3339}}
// POST only (405 otherwise).
HttpResponse AnswerProxyLogin(ProxyLogins& logins, const UserInfo& user, const RequestInfo& info,
                              const HttpRequest& request, Timestamp now);

// The answer to a proxy request carrying ?tessera-login=CODE: 303 to the
// target without the code, with the session cookie (Secure with `secure`),
// or 401 saying why. `user` gets who it was for.
HttpResponse RedeemProxyLogin(ProxyLogins& logins, const TokenIssuer& issuer, const RequestInfo& info,
                              const HttpRequest& request, Timestamp now, bool secure, UserInfo& user);

// The user of a valid tessera-session cookie of the request for its proxy
// path, or Unauthenticated saying why (NotFound when there is no cookie).
Result<UserInfo> SessionUser(const TokenIssuer& issuer, const RequestInfo& info, const HttpRequest& request,
                             Timestamp now);

}  // namespace tessera

// An OpenID Connect identity provider for the browser tests: panva's
// oidc-provider (an OpenID-certified implementation, from npm) over HTTPS on
// 127.0.0.1 with a certificate made here by openssl, so that the portal's
// authorization code flow with PKCE runs against a real issuer, as it would
// against Entra ID, Okta or Dex. Its development login page takes any user
// name; the users' groups come from `groups` below.

import { execFileSync } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import { join } from "node:path";
import Provider from "oidc-provider";

export const OIDC_CLIENT_ID = "tessera-portal";

export async function startIssuer({ dir, port, redirectUri, groups }) {
  const key = join(dir, "oidc-issuer.key");
  const cert = join(dir, "oidc-issuer.crt");
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
    "-keyout", key, "-out", cert,
  ], { stdio: "ignore" });
  const issuer = `https://127.0.0.1:${port}`;
  const signing = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" });
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: OIDC_CLIENT_ID,
        token_endpoint_auth_method: "none", // a browser app: a public client, PKCE
        redirect_uris: [redirectUri],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    jwks: { keys: [{ ...signing, kid: "tessera-test", alg: "RS256", use: "sig" }] },
    cookies: { keys: [randomBytes(16).toString("hex")] },
    scopes: ["openid", "profile", "email", "groups"],
    claims: { openid: ["sub"], profile: ["preferred_username", "name"], email: ["email"], groups: ["groups"] },
    // The ID token carries the claims, as kube-apiserver's --oidc-* flags read them.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    // The portal's origin (its redirect URI's) may call the token endpoint from the browser.
    clientBasedCORS: (_ctx, origin, client) => client.redirectUris.some((u) => new URL(u).origin === origin),
    async findAccount(_ctx, id) {
      return {
        accountId: id,
        claims: () => ({ sub: id, preferred_username: id, name: id, email: `${id}@example.test`, groups: groups[id] ?? [] }),
      };
    },
  });
  provider.proxy = false;
  const server = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, provider.callback());
  await new Promise((res, rej) => server.listen(port, "127.0.0.1", res).on("error", rej));
  return {
    issuer,
    caFile: cert,
    stop: () => new Promise((res) => server.close(res)),
  };
}

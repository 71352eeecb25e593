import * as oauth from "oauth4webapi";

// OpenID Connect sign-in: the authorization code flow with PKCE, against the
// issuer the server trusts (its --oidc-issuer-url and --oidc-client-id, which it
// tells the browser at /ui/config.json). The ID token is the bearer token, as
// for kubectl's oidc login.

export interface OidcConfig {
  issuerUrl: string;
  clientId: string;
}

export async function portalConfig(): Promise<{ oidc: OidcConfig | null }> {
  try {
    const r = await fetch(`${import.meta.env.BASE_URL}config.json`);
    if (!r.ok) return { oidc: null };
    return (await r.json()) as { oidc: OidcConfig | null };
  } catch {
    return { oidc: null };
  }
}

const FLOW = "tessera.oidc";
const redirectUri = () => `${location.origin}${import.meta.env.BASE_URL}oidc/callback`;

async function discover(cfg: OidcConfig) {
  const issuer = new URL(cfg.issuerUrl);
  const resp = await oauth.discoveryRequest(issuer, { algorithm: "oidc" });
  return oauth.processDiscoveryResponse(issuer, resp);
}

// Sends the browser to the issuer's login page.
export async function beginOidc(cfg: OidcConfig, returnTo: string) {
  const as = await discover(cfg);
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  sessionStorage.setItem(FLOW, JSON.stringify({ verifier, state, nonce, returnTo }));
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set("client_id", cfg.clientId);
  url.searchParams.set("redirect_uri", redirectUri());
  url.searchParams.set("response_type", "code");
  url.searchParams.set("scope", "openid profile email groups");
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set("code_challenge_method", "S256");
  url.searchParams.set("state", state);
  url.searchParams.set("nonce", nonce);
  location.assign(url.href);
}

// On the callback: trades the code for the ID token; returns it and where to go.
export async function finishOidc(cfg: OidcConfig): Promise<{ idToken: string; returnTo: string }> {
  const flow = JSON.parse(sessionStorage.getItem(FLOW) ?? "null") as
    | { verifier: string; state: string; nonce: string; returnTo: string }
    | null;
  sessionStorage.removeItem(FLOW);
  if (!flow) throw new Error("this sign-in was not started here: start it again from the sign-in page");
  const as = await discover(cfg);
  const client: oauth.Client = { client_id: cfg.clientId };
  const params = oauth.validateAuthResponse(as, client, new URL(location.href), flow.state);
  const resp = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri(), flow.verifier);
  const result = await oauth.processAuthorizationCodeResponse(as, client, resp, { expectedNonce: flow.nonce, requireIdToken: true });
  if (!result.id_token) throw new Error("the issuer sent no ID token");
  return { idToken: result.id_token, returnTo: flow.returnTo };
}

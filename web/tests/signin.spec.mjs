// Signing in with a token, and out; a bad token is told what is wrong.
export const journeys = [
  {
    name: "sign in with a token, see who you are, sign out",
    async run(t) {
      const page = await t.newPage(null);
      await page.goto(`${t.url}/ui/`);
      await page.getByLabel("Token").waitFor();
      await t.screenshot(page, "signin");
      await page.getByLabel("Token").fill("not-a-token");
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.getByRole("alert").filter({ hasText: "the bearer token is not valid" }).waitFor();
      await page.getByLabel("Token").fill(t.tokens.alice);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.getByTestId("whoami").filter({ hasText: "alice" }).waitFor();
      // The token is in this tab's sessionStorage, never in the address.
      t.assert(!page.url().includes(t.tokens.alice), "the token must not be in the URL");
      const stored = await page.evaluate(() => sessionStorage.getItem("tessera.token"));
      t.assert(stored === t.tokens.alice, "the token is kept in sessionStorage");
      // alice lands in her namespace's workloads.
      await page.waitForURL(/\/ui\/ns\/team-nlp\/workloads/);
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByLabel("Token").waitFor();
      t.assert((await page.evaluate(() => sessionStorage.getItem("tessera.token"))) === null, "signing out forgets the token");
    },
  },
  {
    name: "sign in with OIDC: the authorization code flow with PKCE against the issuer the server trusts",
    async run(t) {
      const page = await t.newPage(null);
      await page.goto(`${t.url}/ui/`);
      const host = new URL(t.oidcIssuer).host;
      const asked = page.waitForRequest((r) => r.url().startsWith(`${t.oidcIssuer}/auth?`));
      await page.getByRole("button", { name: `Sign in with ${host}` }).click();
      const authorize = new URL((await asked).url());
      // The issuer's own login page, then its consent page.
      await page.locator('input[name="login"]').fill("dana");
      await page.locator('input[name="password"]').fill("any password");
      await t.screenshot(page, "signin-oidc-issuer");
      await page.locator('button[type="submit"]').click();
      await page.locator('button[type="submit"]').click(); // consent: "Continue"
      // Back in the portal as oidc:dana (prefix and claims as the server's --oidc-* flags say),
      // in team-nlp, which her group may use.
      await page.getByTestId("whoami").filter({ hasText: "oidc:dana" }).waitFor();
      await page.waitForURL(/\/ui\/ns\/team-nlp\/workloads/);
      await page.getByTestId("workload-count").waitFor();
      t.assert((await page.getByRole("alert").count()) === 0, `errors: ${await page.getByRole("alert").allInnerTexts()}`);
      // The flow began with PKCE (S256) and a state; the bearer token is the ID token, kept in sessionStorage.
      const q = authorize.searchParams;
      t.assert(q.get("response_type") === "code" && q.get("code_challenge_method") === "S256" && q.get("code_challenge") && q.get("state"), `authorize: ${authorize}`);
      const token = await page.evaluate(() => sessionStorage.getItem("tessera.token"));
      const claims = JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString());
      t.assert(claims.iss === t.oidcIssuer && claims.aud === "tessera-portal" && claims.groups?.includes("team-nlp"), `ID token claims: ${JSON.stringify(claims)}`);
      t.assert(!page.url().includes(token), "the token must not be in the URL");
      await t.screenshot(page, "signin-oidc-done");
      t.assert(page.errors.length === 0, `page errors: ${page.errors.join("; ")}`);
    },
  },
];

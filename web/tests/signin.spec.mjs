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
];

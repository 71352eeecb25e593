#!/usr/bin/env node
// The portal's browser tests: a real `tessera up` (its own data directory, users from
// a token-auth file, the quickstart's teams applied with the CLI) and Debian's
// Chromium, headless, driven by playwright-core. Each *.spec.mjs here exports
// `journeys`: [{ name, run: async (t) => {...} }]; they run one after another, a
// failure saves a screenshot and the page's text, and the exit code says if any failed.
//
//   node tests/run-browser-tests.mjs --tessera ../build/src/tessera [--only NAME] [--keep]
//
// Screenshots go to test-results/screenshots (docs/portal.md shows copies from
// docs/portal/); `BENCH name value unit` lines report the speed measurements.

import { spawn, execFile } from "node:child_process";
import { chmodSync, mkdtempSync, mkdirSync, writeFileSync, rmSync, readdirSync, existsSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { chromium } from "playwright-core";
import { OIDC_CLIENT_ID, startIssuer } from "./oidc-issuer.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const webDir = resolve(here, "..");
const repo = resolve(webDir, "..");
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const tesseraBin = resolve(opt("--tessera", join(repo, "build/src/tessera")));
const only = opt("--only", "");
const keep = args.includes("--keep");
const chromiumPath = opt("--chromium", process.env.CHROMIUM ?? "/usr/bin/chromium");
const uiDir = resolve(opt("--ui-dir", join(webDir, "dist")));
const shotDir = resolve(opt("--screenshots", join(webDir, "test-results/screenshots")));

for (const [what, path] of [
  ["tessera", tesseraBin],
  ["Chromium", chromiumPath],
  ["the portal's build (npm run build)", join(uiDir, "index.html")],
]) {
  if (!existsSync(path)) {
    console.error(`${what} not found at ${path}`);
    process.exit(2);
  }
}

const freePort = () =>
  new Promise((res, rej) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
    s.on("error", rej);
  });

// The people of the journeys: two data scientists of two teams, a team admin,
// and a platform admin.
export const USERS = {
  alice: { groups: ["team-nlp"], about: "data scientist, team-nlp" },
  bob: { groups: ["team-vision"], about: "data scientist, team-vision" },
  carol: { groups: ["team-nlp", "team-nlp-admins"], about: "team admin of team-nlp" },
  root: { groups: ["platform-admins"], about: "platform admin" },
};

const dataDir = mkdtempSync(join(tmpdir(), "tessera-portal-"));
// Pods run as the agent's unprivileged user: they must reach their directories under it
// (Jupyter makes its runtime directory there). The token files stay 0600.
chmodSync(dataDir, 0o755);
const tokens = {};
const lines = [];
for (const [name, u] of Object.entries(USERS)) {
  tokens[name] = `${name}-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
  lines.push(`${tokens[name]},${name},uid-${name},"${u.groups.join(",")}"`);
}
writeFileSync(join(dataDir, "tokens.csv"), lines.join("\n") + "\n", { mode: 0o600 });
const configHome = join(dataDir, "config");
mkdirSync(configHome);

const port = await freePort();
const url = `http://127.0.0.1:${port}`;
// An OpenID Connect issuer the server trusts too: dana signs in through it (team-nlp's group).
const oidc = await startIssuer({
  dir: dataDir,
  port: await freePort(),
  redirectUri: `${url}/ui/oidc/callback`,
  groups: { dana: ["team-nlp"] },
});
const env = { ...process.env, XDG_CONFIG_HOME: configHome, TESSERA_SERVER: url };
delete env.TESSERA_TOKEN;
const serverLog = [];
const server = spawn(
  tesseraBin,
  [
    "up",
    "--data-dir", join(dataDir, "data"),
    "--listen", `127.0.0.1:${port}`,
    "--token-auth-file", join(dataDir, "tokens.csv"),
    "--ui-dir", uiDir,
    "--no-audit-log",
    "--oidc-issuer-url", oidc.issuer,
    "--oidc-client-id", OIDC_CLIENT_ID,
    "--oidc-ca-file", oidc.caFile,
    "--oidc-username-claim", "preferred_username",
    "--oidc-username-prefix", "oidc:",
    "--oidc-groups-claim", "groups",
  ],
  { env, stdio: ["ignore", "pipe", "pipe"], detached: true },
);
for (const s of [server.stdout, server.stderr]) s.on("data", (d) => serverLog.push(d.toString()));
let stopping = false;
server.on("exit", (code) => {
  if (!stopping) {
    console.error(`tessera up exited (${code}) before the tests finished:\n${serverLog.join("").slice(-4000)}`);
    process.exit(1);
  }
});

const stop = async () => {
  stopping = true;
  try {
    process.kill(-server.pid, "SIGTERM");
  } catch {}
  await new Promise((r) => setTimeout(r, 500));
  try {
    process.kill(-server.pid, "SIGKILL");
  } catch {}
  await oidc.stop();
  if (!keep) rmSync(dataDir, { recursive: true, force: true });
};

async function waitReady() {
  for (let i = 0; i < 300; i++) {
    try {
      const r = await fetch(`${url}/readyz`);
      if (r.ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`tessera up did not get ready on ${url}:\n${serverLog.join("").slice(-4000)}`);
}

const adminToken = () => tokens.root;

// The API as a user (setup and checks; the portal itself goes through the page).
async function api(user, method, path, body) {
  const r = await fetch(`${url}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${tokens[user]}`,
      ...(body !== undefined ? { "Content-Type": typeof body === "string" ? "application/yaml" : "application/json" } : {}),
    },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await r.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = text;
  }
  if (!r.ok) {
    const e = new Error(`${method} ${path}: ${r.status} ${json?.message ?? text}`);
    e.status = r.status;
    throw e;
  }
  return json;
}

// The CLI as a user.
async function cli(user, ...argv) {
  const tokenFile = join(dataDir, `${user}.token`);
  writeFileSync(tokenFile, tokens[user], { mode: 0o600 });
  try {
    const { stdout } = await promisify(execFile)(tesseraBin, argv, {
      env: { ...env, TESSERA_TOKEN_FILE: tokenFile },
      maxBuffer: 64 << 20,
    });
    return stdout;
  } catch (e) {
    throw new Error(`tessera ${argv.join(" ")}: ${e.stderr || e.message}`);
  }
}

await waitReady();
// Seeded data: the quickstart's three teams (namespaces, flavors, queues, quotas,
// RBAC), a platform-admin group and team-nlp's admins.
writeFileSync(
  join(dataDir, "portal-rbac.yaml"),
  `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: platform-admins}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: platform-admins}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: team-nlp-admins, namespace: team-nlp}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: team-nlp-admins}]
`,
);
{
  const adminFile = join(dataDir, "data", "admin.token");
  const { stdout } = await promisify(execFile)(
    tesseraBin,
    ["apply", "-f", join(repo, "examples/quickstart/"), "-f", join(dataDir, "portal-rbac.yaml")],
    { env: { ...env, TESSERA_TOKEN_FILE: adminFile } },
  ).catch((e) => {
    throw new Error(`seeding failed: ${e.stderr || e.message}`);
  });
  if (process.env.VERBOSE) console.log(stdout);
}

mkdirSync(shotDir, { recursive: true });
const browser = await chromium.launch({
  executablePath: chromiumPath,
  headless: true,
  // Root in a container has no user namespaces for Chromium's sandbox.
  args: process.getuid?.() === 0 ? ["--no-sandbox"] : [],
});

const benches = [];
const t = {
  url,
  tokens,
  users: USERS,
  api,
  cli,
  adminToken,
  dataDir,
  // A fresh browser context signed in as the user (the token put where the
  // sign-in page puts it); `user: null` is signed out.
  oidcIssuer: oidc.issuer,
  async newPage(user, { width = 1366, height = 860, colorScheme = "light" } = {}) {
    // The issuer's certificate is the test's own: the browser is told to take it.
    const context = await browser.newContext({ viewport: { width, height }, colorScheme, ignoreHTTPSErrors: true });
    if (user) {
      await context.addInitScript((token) => {
        if (!sessionStorage.getItem("tessera.token")) sessionStorage.setItem("tessera.token", token);
      }, tokens[user]);
    }
    // Nothing leaves this machine: a page asking another host (the issuer's login page
    // links web fonts) is refused before any lookup.
    await context.route(
      (u) => !["127.0.0.1", "localhost", "[::1]"].includes(u.hostname),
      (route) => route.abort("blockedbyclient"),
    );
    const page = await context.newPage();
    page.setDefaultTimeout(15000);
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    page.errors = errors;
    // Requests that got no answer (refused, CORS, TLS), for a failed journey's report.
    page.failedRequests = [];
    page.on("requestfailed", (r) => page.failedRequests.push(`${r.method()} ${r.url()}: ${r.failure()?.errorText}`));
    return page;
  },
  async screenshot(page, name) {
    await page.screenshot({ path: join(shotDir, `${name}.png`), fullPage: false });
  },
  bench(name, value, unit) {
    benches.push({ name, value, unit });
    console.log(`BENCH ${name} ${value} ${unit}`);
  },
  // Retries `f` until it returns something truthy (or stops throwing).
  async eventually(f, { timeoutMs = 20000, what = "the condition" } = {}) {
    const end = Date.now() + timeoutMs;
    let last;
    for (;;) {
      try {
        const v = await f();
        if (v) return v;
      } catch (e) {
        last = e;
      }
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ""}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  },
  assert(cond, message) {
    if (!cond) throw new Error(message);
  },
};

const specs = readdirSync(here).filter((f) => f.endsWith(".spec.mjs")).sort();
let failed = 0;
let ran = 0;
for (const file of specs) {
  const mod = await import(pathToFileURL(join(here, file)).href);
  for (const j of mod.journeys ?? []) {
    if (only && !j.name.includes(only)) continue;
    ran++;
    const started = Date.now();
    const pages = [];
    const tj = {
      ...t,
      async newPage(user, o) {
        const p = await t.newPage(user, o);
        pages.push(p);
        return p;
      },
    };
    try {
      await Promise.race([
        j.run(tj),
        new Promise((_, rej) => setTimeout(() => rej(new Error("journey timed out after 180 s")), j.timeoutMs ?? 180000)),
      ]);
      console.log(`PASS ${file}: ${j.name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${file}: ${j.name}: ${e.stack ?? e}`);
      for (const [i, p] of pages.entries()) {
        try {
          await p.screenshot({ path: join(shotDir, `FAILED-${j.name.replace(/\W+/g, "-")}-${i}.png`) });
          console.log(`  page ${i} at ${p.url()}:\n${(await p.locator("body").innerText()).slice(0, 2000)}`);
          if (p.errors.length) console.log(`  page errors: ${p.errors.join("; ")}`);
          if (p.failedRequests.length) console.log(`  requests without an answer: ${p.failedRequests.slice(-10).join("; ")}`);
        } catch {}
      }
    } finally {
      for (const p of pages) await p.context().close().catch(() => {});
    }
  }
}
await browser.close();
await stop();
if (ran === 0) {
  console.error(only ? `no journey matches --only ${only}` : "no journeys found");
  process.exit(1);
}
console.log(`${ran - failed} of ${ran} journeys passed`);
process.exit(failed ? 1 : 0);

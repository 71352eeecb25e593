// The team admin's and platform admin's views: approving a gated request, finding
// the allocated-but-idle GPU on the fleet heatmap, and every admin view rendering.

const wl = (t, user, ns, name) => t.api(user, "GET", `/apis/kueue.x-k8s.io/v1beta1/namespaces/${ns}/workloads/${name}`);

export const journeys = [
  {
    name: "admin: a platform admin finds the idle allocated GPU on the fleet heatmap",
    async run(t) {
      // One pod holds a GPU and sleeps; one keeps its CPU busy, which the simulated
      // GPUs' utilisation model follows (docs/agent.md).
      await t.cli("alice", "submit", "idle-gpu", "-n", "team-nlp", "--gpu", "1", "--cpu", "100m", "--memory", "64Mi", "--", "sleep", "600");
      await t.cli("alice", "submit", "busy-gpu", "-n", "team-nlp", "--gpu", "1", "--cpu", "1", "--memory", "64Mi", "--", "sh", "-c", "while :; do :; done");
      // Two fractions pack onto one device: its cell shows both shares.
      await t.cli("alice", "submit", "quarter", "-n", "team-nlp", "--gpu", "0.25", "--cpu", "100m", "--memory", "64Mi", "--", "sleep", "600");
      await t.cli("alice", "submit", "half", "-n", "team-nlp", "--gpu", "0.5", "--cpu", "100m", "--memory", "64Mi", "--", "sleep", "600");
      const page = await t.newPage("root", { width: 1280 });
      const started = Date.now();
      await page.goto(`${t.url}/ui/admin/fleet`);
      await page.locator("[data-state]").first().waitFor();
      t.bench("fleet-heatmap-first-render", Date.now() - started, "ms");
      // The agent samples every 10 s: wait for both cells to show what runs on them.
      const idle = page.locator('[data-state="idle"][aria-label*="team-nlp/job-idle-gpu"]');
      const busy = page.locator('[data-state="busy"][aria-label*="team-nlp/job-busy-gpu"]');
      await idle.waitFor({ timeout: 60000 });
      await busy.waitFor({ timeout: 60000 });
      const label = await idle.getAttribute("aria-label");
      t.assert(/allocated 1 to team-nlp\/job-idle-gpu, \d+% used \(allocated but idle\)/.test(label), `idle cell label: ${label}`);
      await page.locator('[aria-label*="0.25 to team-nlp/job-quarter"][aria-label*="0.5 to team-nlp/job-half"]').waitFor();
      t.assert((await page.locator('[data-state="free"]').count()) >= 1, "free devices are shown as free");
      await t.screenshot(page, "admin-fleet");
      // Its details name the pod that holds it.
      await idle.click();
      await page.getByRole("dialog").getByText("job-idle-gpu-main-0").waitFor();
      await t.screenshot(page, "admin-fleet-cell");
      await page.keyboard.press("Escape");
      // Dark theme too.
      const dark = await t.newPage("root", { width: 1280, colorScheme: "dark" });
      await dark.goto(`${t.url}/ui/admin/fleet`);
      await dark.locator('[data-state="idle"]').first().waitFor();
      await t.screenshot(dark, "admin-fleet-dark");
      t.assert(page.errors.length === 0 && dark.errors.length === 0, `page errors: ${page.errors.concat(dark.errors).join("; ")}`);
      for (const j of ["idle-gpu", "busy-gpu", "quarter", "half"]) await t.cli("root", "delete", "job", j, "-n", "team-nlp");
    },
  },
  {
    name: "admin: a team admin approves a gated request, a data scientist cannot",
    async run(t) {
      await t.api(
        "root",
        "POST",
        "/apis/tessera.dev/v1/approvalpolicies",
        `apiVersion: tessera.dev/v1
kind: ApprovalPolicy
metadata: {name: portal-big-jobs}
spec:
  namespaceSelector: {matchLabels: {tessera.dev/team: nlp}}
  thresholds: {gpus: 4}
`,
      );
      // The policy and the job go afterwards, whatever happens: later journeys use team-nlp's GPUs ungated.
      try {
        await t.cli("alice", "submit", "big-train", "-n", "team-nlp", "--gpu", "6", "--cpu", "100m", "--memory", "64Mi", "--max-run", "600", "--", "sleep", "300");
        await t.eventually(async () => (await wl(t, "root", "team-nlp", "job-big-train")).status?.conditions?.some((c) => c.reason === "AwaitingApproval"), {
          what: "the workload to wait for approval",
        });
        // alice sees her request but is offered no decision.
        const alice = await t.newPage("alice");
        await alice.goto(`${t.url}/ui/ns/team-nlp/approvals`);
        await alice.getByRole("heading", { name: "Approvals" }).waitFor();
        await alice.locator('table[aria-label="Approval requests waiting"], [role="alert"]').first().waitFor();
        t.assert((await alice.getByRole("button", { name: /^Approve/ }).count()) === 0, "alice must not be offered Approve");
        // carol, team-nlp's admin, sees why it waits and approves it.
        const carol = await t.newPage("carol", { width: 1280 });
        await carol.goto(`${t.url}/ui/ns/team-nlp/approvals`);
        const row = carol.getByRole("row").filter({ hasText: "job-big-train" });
        await row.getByText("asks for 6 GPUs, above the 4 of ApprovalPolicy portal-big-jobs").waitFor();
        t.assert((await row.getByText("alice").count()) > 0, "the requester is shown");
        await row.getByText("6 GPUs, at most 10 min").waitFor();
        await t.screenshot(carol, "admin-approvals");
        await row.getByRole("button", { name: "Approve job-big-train" }).click();
        await carol.getByLabel("Reason").fill("the deadline is Friday");
        await carol.getByRole("dialog").getByRole("button", { name: "Approve" }).click();
        await carol.getByRole("table", { name: "Decided approval requests" }).getByText("approved by carol: the deadline is Friday").waitFor();
        await t.screenshot(carol, "admin-approvals-decided");
        const req = await t.api("root", "GET", "/apis/tessera.dev/v1/namespaces/team-nlp/approvalrequests/job-big-train");
        t.assert(req.status?.phase === "Approved", `request phase ${req.status?.phase}`);
        t.assert(req.status?.approvals?.[0]?.user === "carol" && req.status.approvals[0].reason === "the deadline is Friday", "who approved and why is recorded");
        // The workload now queues like any other (admitted, or waiting for quota; no longer for approval).
        await t.eventually(
          async () => {
            const w = await wl(t, "root", "team-nlp", "job-big-train");
            const conds = w.status?.conditions ?? [];
            return !conds.some((c) => c.reason === "AwaitingApproval" && c.status === "False" && c.type === "QuotaReserved") || conds.some((c) => c.type === "Admitted" && c.status === "True");
          },
          { what: "the approved workload to queue" },
        );
        t.assert(carol.errors.length === 0 && alice.errors.length === 0, `page errors: ${carol.errors.concat(alice.errors).join("; ")}`);
      } finally {
        await t.cli("root", "delete", "job", "big-train", "-n", "team-nlp").catch(() => {});
        await t.api("root", "DELETE", "/apis/tessera.dev/v1/approvalpolicies/portal-big-jobs").catch(() => {});
      }
    },
  },
  {
    name: "admin: every admin view renders for its admin; a data scientist is told fleet is not allowed",
    async run(t) {
      const root = await t.newPage("root", { width: 1280 });
      const views = [
        ["admin-queues", "/ui/admin/queues", () => root.getByTestId("cq-team-nlp").waitFor()],
        ["admin-cost", "/ui/admin/cost", () => root.getByRole("heading", { name: "Usage and cost" }).waitFor()],
        ["admin-policies", "/ui/admin/policies", () => root.getByRole("table", { name: "Templates" }).waitFor()],
      ];
      for (const [name, path, ready] of views) {
        await root.goto(`${t.url}${path}`);
        await ready();
        await root.waitForTimeout(300);
        t.assert((await root.getByRole("alert").count()) === 0, `${path} shows an error: ${await root.getByRole("alert").allInnerTexts()}`);
        await t.screenshot(root, name);
      }
      // The cost table matches tessera report usage, and exports CSV.
      await root.goto(`${t.url}/ui/admin/cost`);
      const table = root.getByRole("table", { name: "Usage and cost by team" });
      await table.waitFor();
      const report = JSON.parse(await t.cli("root", "report", "usage", "-o", "json"));
      const nlp = report.rows?.find((r) => r.key === "team-nlp");
      if (nlp) {
        const cells = await table.getByRole("row").filter({ hasText: "team-nlp" }).getByRole("cell").allInnerTexts();
        t.assert(Math.abs(Number(cells[1]) - nlp.gpuHours) < 0.05, `GPU-hours ${cells[1]} vs the report's ${nlp.gpuHours}`);
        t.assert(Number(cells[5]) === nlp.admissions, `admissions ${cells[5]} vs the report's ${nlp.admissions}`);
      }
      const [dl] = await Promise.all([root.waitForEvent("download"), root.getByRole("button", { name: "Export CSV" }).click()]);
      const csv = await (await import("node:fs/promises")).readFile(await dl.path(), "utf8");
      t.assert(csv.startsWith("team,gpu_hours,used_gpu_hours,cost,admissions\n") && csv.includes("team-nlp,"), `CSV: ${csv.slice(0, 200)}`);
      // A YAML policy with a mistake gets the server's words.
      await root.goto(`${t.url}/ui/admin/policies`);
      await root.getByRole("button", { name: "New Budget" }).click();
      await root.getByLabel("YAML").fill("apiVersion: tessera.dev/v1\nkind: Budget\nmetadata: {name: bad, namespace: team-nlp}\nspec: {period: Fortnightly, cost: \"10\"}\n");
      await root.getByRole("dialog").getByRole("button", { name: "Create" }).click();
      await root.getByRole("dialog").getByRole("alert").waitFor();
      await t.screenshot(root, "admin-policies-invalid");
      await root.keyboard.press("Escape");
      // The team view: quota as tessera queues prints it (root may read the ClusterQueue),
      // members and budgets; carol (namespace admin) is told she may not read the quota.
      await root.goto(`${t.url}/ui/ns/team-nlp/team`);
      const quota = root.getByRole("table", { name: "GPU quota of ClusterQueue team-nlp" });
      await quota.waitFor();
      const h100 = await quota.getByRole("row").filter({ hasText: "h100" }).getByRole("cell").allInnerTexts();
      t.assert(h100[1] === "4" && h100[2] === "2" && h100[3] === "4" && h100[4] === "2", `h100 quota row: ${h100.join(" | ")}`);
      await root.getByRole("table", { name: "RoleBindings of team-nlp" }).getByText("team-nlp-admins").first().waitFor();
      await t.screenshot(root, "admin-team");
      const carol = await t.newPage("carol", { width: 1280 });
      await carol.goto(`${t.url}/ui/ns/team-nlp/team`);
      await carol.getByRole("alert").filter({ hasText: "ClusterQueue team-nlp" }).waitFor();
      await carol.getByRole("table", { name: "RoleBindings of team-nlp" }).waitFor();
      await t.screenshot(carol, "admin-team-carol");
      // alice may not see the fleet: a clear message, not a broken page.
      const alice = await t.newPage("alice");
      await alice.goto(`${t.url}/ui/admin/fleet`);
      await alice.getByRole("alert").filter({ hasText: "Not allowed" }).waitFor();
      await t.screenshot(alice, "admin-fleet-forbidden");
      const errors = root.errors.concat(carol.errors, alice.errors);
      t.assert(errors.length === 0, `page errors: ${errors.join("; ")}`);
    },
  },
];

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
      // members and budgets; carol (namespace admin) reads her queue's quota too.
      await root.goto(`${t.url}/ui/ns/team-nlp/team`);
      const quota = root.getByRole("table", { name: "GPU quota of ClusterQueue team-nlp" });
      await quota.waitFor();
      const h100 = await quota.getByRole("row").filter({ hasText: "h100" }).getByRole("cell").allInnerTexts();
      t.assert(h100[1] === "4" && h100[2] === "2" && h100[3] === "4" && h100[4] === "2", `h100 quota row: ${h100.join(" | ")}`);
      await root.getByRole("table", { name: "RoleBindings of team-nlp" }).getByText("team-nlp-admins").first().waitFor();
      await t.screenshot(root, "admin-team");
      const carol = await t.newPage("carol", { width: 1280 });
      await carol.goto(`${t.url}/ui/ns/team-nlp/team`);
      const carolQuota = carol.getByRole("table", { name: "GPU quota of ClusterQueue team-nlp" });
      await carolQuota.waitFor();
      const carolH100 = await carolQuota.getByRole("row").filter({ hasText: "h100" }).getByRole("cell").allInnerTexts();
      t.assert(carolH100.length === 9 && carolH100[1] === "4", `carol's h100 quota row (with Lent): ${carolH100.join(" | ")}`);
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
  {
    name: "admin: what if, the recorded jobs replayed with one more node and more quota",
    async run(t) {
      // History: three 4-GPU jobs at once on team-nlp's 4 GPUs (and 4 it may borrow): one waits.
      const jobs = ["wi-1", "wi-2", "wi-3"];
      for (const j of jobs) {
        await t.cli("alice", "submit", j, "-n", "team-nlp", "--gpu", "4", "--cpu", "100m", "--memory", "64Mi", "--", "sleep", "4");
      }
      for (const j of jobs) {
        await t.eventually(async () => (await wl(t, "root", "team-nlp", `job-${j}`)).status?.conditions?.some((c) => c.type === "Finished" && c.status === "True"), {
          what: `job ${j} to finish`,
          timeoutMs: 90000,
        });
      }
      // Their usage records close on the next pass.
      await t.eventually(
        async () => {
          const list = await t.api("root", "GET", "/apis/tessera.dev/v1/namespaces/team-nlp/usagerecords");
          return jobs.every((j) => list.items.some((r) => r.spec.workload === `job-${j}` && r.spec.end));
        },
        { what: "the jobs' usage records to close" },
      );
      const root = await t.newPage("root", { width: 1366, height: 1100 });
      await root.goto(`${t.url}/ui/`);
      await root.getByRole("navigation", { name: "Views" }).getByRole("link", { name: "What if" }).click();
      await root.getByRole("heading", { name: "What if" }).waitFor();
      await root.getByText("Last 24 h", { exact: true }).click();
      // A mistake first: the server's words at the field.
      await root.getByLabel("Add nodes").fill("one more");
      await root.getByRole("button", { name: "Run the simulation" }).click();
      await root.getByText(/spec\.scenarios\[0\]\.addNodes: .*is not NODESxGPUSxMODEL/).waitFor();
      // One more 8-GPU node, and team-nlp's GPU quota on h100 raised to 12.
      await root.getByLabel("Scenario name").fill("one-more-node");
      await root.getByLabel("Add nodes").fill("1x8xH100-80GB");
      await root.getByLabel("GPU quota of team-nlp on h100 in the scenario").fill("12");
      await root.getByRole("button", { name: "Run the simulation" }).click();
      const table = root.getByRole("table", { name: "Simulated runs compared" });
      await table.waitFor({ timeout: 60000 });
      const cells = async (name) => table.getByRole("row").filter({ has: root.getByText(name, { exact: true }) }).getByRole("cell").allInnerTexts();
      const current = await cells("current");
      const changed = await cells("one-more-node");
      const observed = await cells("observed");
      t.assert(Number(changed[1]) === Number(current[1]) + 8, `GPUs: current ${current[1]}, changed ${changed[1]}`);
      t.assert(Number(current[2]) >= 3 && Number(observed[2]) === Number(current[2]), `jobs: current ${current[2]}, observed ${observed[2]}`);
      // The replay ran them: as many finish as really did.
      t.assert(Number(current[3]) >= 3 && Number(changed[3]) >= 3 && Number(current[3]) >= Number(observed[3]), `finished: current ${current[3]}, changed ${changed[3]}, observed ${observed[3]}`);
      const seconds = (text) => {
        const m = /^([\d.]+)(s|m|h|d)/.exec(text);
        return m ? Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[m[2]] : NaN;
      };
      t.assert(seconds(changed[4]) <= seconds(current[4]), `mean wait: current ${current[4]}, changed ${changed[4]}`);
      await root.getByRole("img", { name: "GPUs allocated over the period, per run and as observed" }).waitFor();
      await root.getByRole("table", { name: "Mean wait per team" }).getByText("team-nlp").waitFor();
      // The address holds the scenario: it can be shared.
      t.assert(/add=1x8xH100-80GB/.test(root.url()) && /quota=team-nlp.h100%3D12/.test(root.url()), `URL: ${root.url()}`);
      await t.screenshot(root, "admin-whatif");
      await root.getByTestId("whatif-outcome").scrollIntoViewIfNeeded();
      await root.getByRole("table", { name: "Simulated runs compared" }).evaluate((e) => e.scrollIntoView({ block: "start" }));
      await t.screenshot(root, "admin-whatif-outcome");
      // alice is offered no What-if, and may not run one.
      const alice = await t.newPage("alice");
      await alice.goto(`${t.url}/ui/ns/team-nlp/workloads`);
      // Her permissions answered (every signed-in user reads the queues), What if is not among them,
      // not even while they were asked.
      await alice.getByRole("navigation", { name: "Views" }).getByRole("link", { name: "Queues and cohorts" }).waitFor();
      const offered = await alice.getByRole("navigation", { name: "Views" }).getByRole("link").allInnerTexts();
      t.assert(!offered.includes("What if"), `alice must not be offered What if: ${offered.join(", ")}`);
      let refused = null;
      await t.api("alice", "POST", "/apis/tessera.dev/v1/simulationreviews", { apiVersion: "tessera.dev/v1", kind: "SimulationReview", spec: { since: "1d" } }).catch((e) => (refused = e));
      t.assert(refused?.status === 403, `alice's SimulationReview: ${refused?.status ?? "allowed"}`);
      t.assert(root.errors.length === 0 && alice.errors.length === 0, `page errors: ${root.errors.concat(alice.errors).join("; ")}`);
    },
  },
];

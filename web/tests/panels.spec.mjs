// The kind panels of a workload's page, on real objects made from the worked
// examples (examples/workloads/), as alice in team-nlp.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const NS = "team-nlp";
const API = `/apis/tessera.dev/v1/namespaces/${NS}`;

// An example's manifest under another name (so journeys never clash with what
// a person applied by hand).
function example(file, from, to) {
  const text = readFileSync(join(repo, "examples/workloads", file), "utf8");
  const renamed = text.replace(`\n  name: ${from}\n`, `\n  name: ${to}\n`);
  if (renamed === text) throw new Error(`${file} has no metadata.name ${from}`);
  return renamed;
}

async function create(t, plural, manifest) {
  await t.api("alice", "POST", `${API}/${plural}`, manifest);
}

async function remove(t, plural, name) {
  await t.api("alice", "DELETE", `${API}/${plural}/${name}`).catch(() => {});
}

// t.eventually, saying on a timeout what was seen last.
async function until(t, f, what, timeoutMs, seen) {
  try {
    await t.eventually(f, { timeoutMs, what });
  } catch (e) {
    throw new Error(`${e.message}; seen: ${await seen().catch((x) => x.message)}`);
  }
}

async function open(t, plural, name, opts) {
  const page = await t.newPage("alice", opts);
  const started = Date.now();
  await page.goto(`${t.url}/ui/ns/${NS}/${plural}/${name}`);
  // The kind's panel, below the page's common parts: every check looks inside it.
  const panel = page.getByTestId(`panel-${plural}`);
  await panel.waitFor();
  return { page, panel, started };
}

export const journeys = [
  {
    name: "an InferenceService's panel: its URL, its replicas, and the requests sent through the proxy",
    async run(t) {
      const name = "panel-sentiment";
      await create(t, "inferenceservices", example("inference.yaml", "sentiment", name));
      try {
        const { page, panel } = await open(t, "inferenceservices", name);
        const proxy = `/api/v1/namespaces/${NS}/services/${name}:http/proxy/`;
        await panel.getByLabel("URL", { exact: true }).filter({ hasText: proxy }).waitFor();
        await panel.getByText(`tessera open svc/${name}:http -n ${NS}`).waitFor();
        // Its one replica: a Workload, its pod on the node, Ready.
        const row = panel.getByTestId("replica-row");
        await until(
          t,
          async () => (await row.count()) === 1 && (await row.first().locator('[data-state="Ready"]').count()) === 1,
          "the replica to be Ready in the panel",
          60000,
          async () => JSON.stringify([await row.allInnerTexts(), (await t.api("alice", "GET", `${API}/inferenceservices/${name}`)).status]),
        );
        const text = await row.first().innerText();
        t.assert(text.includes(`${name}-`), `the replica row names its Workload: ${text}`);
        t.assert(text.includes("-replica-0"), `the replica row names its pod: ${text}`);
        // Requests through the proxy, as alice; the panel counts them.
        // Any answer of the replica counts (the stand-in's own 404 too); a 5xx is the proxy's.
        let answer = "";
        let slowest = { ms: 0, status: 0 };
        const call = async () => {
          const at = Date.now();
          const status = await t.api("alice", "GET", proxy).then(
            () => 200,
            (e) => {
              answer = e.message;
              return e.status ? e.status : Promise.reject(e);
            },
          );
          if (Date.now() - at > slowest.ms) slowest = { ms: Date.now() - at, status };
          return status;
        };
        const readyAt = Date.now();
        await until(t, async () => (await call()) < 500, "the replica to answer through the proxy", 60000, async () => answer);
        t.bench("isvc_ready_to_first_answer_ms", Date.now() - readyAt, "ms");
        if (slowest.ms > 5000) console.log(`  a request through the proxy took ${slowest.ms} ms (answer ${slowest.status})`);
        for (let i = 0; i < 5; i++) await call();
        const requests = panel.getByTestId("isvc-traffic").locator('[data-fact="Requests"]');
        await t.eventually(async () => Number(await requests.innerText()) > 0, {
          timeoutMs: 45000,
          what: "a non-zero request count in the traffic section",
        });
        const p50 = await panel.getByTestId("isvc-traffic").locator('[data-fact="p50 latency"]').innerText();
        t.assert(/^\d+ ms$/.test(p50), `p50 latency reads in ms: ${p50}`);
        await panel.getByRole("table", { name: "Revisions" }).getByText("stable").waitFor({ timeout: 30000 });
        await t.screenshot(page, "panel-inferenceservice");
        // A canary: a new template at 50 %; the revisions show both, each with its share.
        const isvc = await t.api("alice", "GET", `${API}/inferenceservices/${name}`);
        const stable = isvc.status.stableRevision;
        isvc.spec.canaryTrafficPercent = 50;
        isvc.spec.template.spec.containers[0].env = [{ name: "MODEL_VERSION", value: "2" }];
        await t.api("alice", "PUT", `${API}/inferenceservices/${name}`, isvc);
        const revisions = panel.getByRole("table", { name: "Revisions" }).locator("tbody tr");
        await until(
          t,
          async () => {
            const rows = await revisions.allInnerTexts();
            return rows.length === 2 && rows.every((r) => r.includes("50%"));
          },
          "two revisions at 50 % each",
          60000,
          async () => JSON.stringify(await revisions.allInnerTexts()),
        );
        const old = revisions.filter({ hasText: stable });
        await old.getByText("stable").waitFor();
        await revisions.filter({ hasNotText: stable }).getByText("current").waitFor();
        await panel.getByText(/Canary: the current revision \w+ gets 50% of the requests/).waitFor();
        await t.screenshot(page, "panel-inferenceservice-canary");
      } finally {
        await remove(t, "inferenceservices", name);
      }
    },
  },
  {
    name: "a Sweep's panel: the objective chart and the trials with their parameters",
    async run(t) {
      const name = "panel-lr";
      // The trials end after their three steps here (the example keeps them running).
      await create(t, "sweeps", example("sweep.yaml", "lr-search", name).replace("sleep 1; done; sleep 600", "sleep 1; done"));
      try {
        const { page, panel, started } = await open(t, "sweeps", name, { colorScheme: "dark" });
        const rows = panel.getByTestId("trial-row");
        await t.eventually(async () => (await rows.count()) >= 2, { timeoutMs: 30000, what: "two trials in the table" });
        const trials = panel.getByRole("table", { name: "Trials" });
        await trials.getByRole("columnheader", { name: "lr", exact: true }).waitFor();
        await trials.getByRole("columnheader", { name: "loss", exact: true }).waitFor();
        // Each trial's lr is a number in the feasible space, its link to its Job page.
        for (const r of await rows.all()) {
          const cells = await r.getByRole("cell").allInnerTexts();
          const lr = Number(cells[1]);
          t.assert(lr >= 0.0001 && lr <= 0.1, `a trial's lr is in [0.0001, 0.1]: ${cells.join(" | ")}`);
          const href = await r.getByRole("link").first().getAttribute("href");
          t.assert(href === `/ui/ns/${NS}/jobs/${cells[0].split(/\s/)[0]}`, `the trial links to its Job page: ${href}`);
        }
        // The chart once a trial reported its loss, and the best trial marked.
        await panel.getByTestId("sweep-chart").locator("canvas").waitFor({ timeout: 45000 });
        t.bench("panel_sweep_chart_ms", Date.now() - started, "ms");
        await until(
          t,
          async () => (await panel.locator("[data-best]").count()) === 1,
          "the best trial highlighted",
          30000,
          async () => JSON.stringify((await t.api("alice", "GET", `${API}/sweeps/${name}`)).status),
        );
        // The best is the lowest loss among the trials that ended.
        const best = await panel.locator("[data-best]").getByRole("cell").allInnerTexts();
        const status = (await t.api("alice", "GET", `${API}/sweeps/${name}`)).status;
        t.assert(best[0].startsWith(status.currentOptimalTrial.bestTrialName), `the highlighted trial is the server's best: ${best}`);
        const chart = panel.getByTestId("sweep-chart").getByRole("img");
        t.assert(((await chart.getAttribute("aria-label")) ?? "").includes("best so far"), "the chart says what it shows");
        // All four trials end (three steps each), and the table says so.
        await until(
          t,
          async () => (await panel.getByRole("table", { name: "Trials" }).locator('[data-state="Succeeded"]').count()) === 4,
          "four trials Succeeded",
          45000,
          async () => JSON.stringify(await rows.allInnerTexts()),
        );
        await t.screenshot(page, "panel-sweep-dark");
      } finally {
        await remove(t, "sweeps", name);
      }
    },
  },
  {
    name: "a PipelineRun's panel: the DAG, one node per step with its state, a step's Job on click or Enter",
    async run(t) {
      const name = "panel-nightly";
      await create(t, "pipelineruns", example("pipeline-run.yaml", "nightly", name));
      try {
        const { page, panel, started } = await open(t, "pipelineruns", name);
        const nodes = panel.getByTestId("dag-node");
        await t.eventually(async () => (await nodes.count()) === 4, { what: "four nodes: prepare, train-0, train-1, evaluate" });
        t.bench("panel_dag_ms", Date.now() - started, "ms");
        const ids = await nodes.evaluateAll((els) => els.map((e) => e.getAttribute("data-node")));
        t.assert(
          JSON.stringify([...ids].sort()) === JSON.stringify(["evaluate", "prepare", "train-0", "train-1"]),
          `one node per step and item: ${ids}`,
        );
        const prepare = panel.locator('[data-testid="dag-node"][data-node="prepare"]');
        await t.eventually(async () => (await prepare.getAttribute("data-state")) === "Running", {
          timeoutMs: 30000,
          what: "prepare to be Running",
        });
        for (const id of ["train-0", "train-1", "evaluate"]) {
          const s = await panel.locator(`[data-testid="dag-node"][data-node="${id}"]`).getAttribute("data-state");
          t.assert(s === "Pending", `${id} waits for prepare: ${s}`);
          const label = await panel.locator(`[data-node="${id}"]`).getAttribute("aria-label");
          t.assert(label?.includes("Pending"), `${id}'s label says its state: ${label}`);
        }
        // A click shows the step's Job and links to its page.
        await prepare.click();
        const detail = panel.getByTestId("step-detail");
        await detail.getByRole("link", { name: `${name}-prepare-1` }).waitFor();
        t.assert(
          (await detail.getByRole("link", { name: `${name}-prepare-1` }).getAttribute("href")) === `/ui/ns/${NS}/jobs/${name}-prepare-1`,
          "the step links to its Job page",
        );
        await detail.getByText(/1 active/).waitFor({ timeout: 20000 });
        await t.screenshot(page, "panel-pipelinerun");
        // The keyboard goes through the nodes in the run's order; Enter shows one.
        await panel.locator('[data-node="prepare"]').focus();
        const focused = () => page.evaluate(() => document.activeElement?.getAttribute("data-node"));
        await page.keyboard.press("Tab");
        t.assert((await focused()) === "train-0", `Tab from prepare reaches train-0: ${await focused()}`);
        await page.keyboard.press("Tab");
        t.assert((await focused()) === "train-1", `then train-1: ${await focused()}`);
        await page.keyboard.press("Enter");
        await detail.getByRole("heading", { name: "Step train-1" }).waitFor();
        await detail.getByText("0.1", { exact: true }).waitFor();
      } finally {
        await remove(t, "pipelineruns", name);
      }
    },
  },
  {
    name: "a PipelineRun's panel when every step ran: Succeeded nodes, a condition's step, durations",
    async run(t) {
      // The example's shape, with steps that end and write no artifacts: under
      // `tessera up`'s data dir (0700) a pod's uid cannot reach the artifact share.
      const name = "panel-nightly-done";
      const step = (cmd) => `{spec: {containers: [{name: main, command: [sh, -c, "${cmd}"], resources: {requests: {cpu: 250m, memory: 256Mi}}}]}}`;
      await create(
        t,
        "pipelineruns",
        `apiVersion: tessera.dev/v1
kind: PipelineRun
metadata: {name: ${name}, namespace: ${NS}}
spec:
  pipelineSpec:
    steps:
      - {name: prepare, template: ${step("echo preparing")}}
      - {name: train, dependsOn: [prepare], withItems: ["0.01", "0.1"], template: ${step("echo lr {{item}}")}}
      - {name: evaluate, dependsOn: [train], when: "{{steps.train.status}} == Succeeded", template: ${step("echo evaluating")}}
`,
      );
      try {
        const { page, panel } = await open(t, "pipelineruns", name, { colorScheme: "dark", width: 1280 });
        const done = panel.locator('[data-testid="dag-node"][data-state="Succeeded"]');
        await until(t, async () => (await done.count()) === 4, "all four nodes Succeeded", 90000, async () =>
          JSON.stringify((await t.api("alice", "GET", `${API}/pipelineruns/${name}`)).status?.nodes),
        );
        await panel.locator('[data-fact="Steps done"]').filter({ hasText: "4 of 4" }).waitFor();
        for (const id of ["prepare", "train-0", "train-1", "evaluate"]) {
          const label = await panel.locator(`[data-node="${id}"]`).getAttribute("aria-label");
          t.assert(/: Succeeded, \d+s$/.test(label ?? ""), `${id} says its state and how long it ran: ${label}`);
        }
        await panel.locator('[data-node="evaluate"]').click();
        const detail = panel.getByTestId("step-detail");
        await detail.getByText("{{steps.train.status}} == Succeeded").waitFor();
        await detail.getByText(/1 succeeded/).waitFor({ timeout: 20000 });
        await t.screenshot(page, "panel-pipelinerun-done-dark");
      } finally {
        await remove(t, "pipelineruns", name);
      }
    },
  },
  {
    name: "a Pipeline's panel: its DAG without states, and its runs",
    async run(t) {
      const name = "panel-train-v1";
      const step = (cmd) => `{spec: {containers: [{name: main, command: [sh, -c, "${cmd}"], resources: {requests: {cpu: 250m, memory: 256Mi}}}]}}`;
      await create(
        t,
        "pipelines",
        `apiVersion: tessera.dev/v1
kind: Pipeline
metadata: {name: ${name}, namespace: ${NS}}
spec:
  steps:
    - {name: prepare, template: ${step("echo preparing")}}
    - {name: train, dependsOn: [prepare], withItems: ["0.01", "0.1"], template: ${step("echo lr {{item}}")}}
`,
      );
      await create(t, "pipelineruns", `{"apiVersion": "tessera.dev/v1", "kind": "PipelineRun", "metadata": {"name": "${name}-run1", "namespace": "${NS}"}, "spec": {"pipelineRef": {"name": "${name}"}}}`);
      try {
        const { page, panel } = await open(t, "pipelines", name);
        const nodes = panel.getByTestId("dag-node");
        await t.eventually(async () => (await nodes.count()) === 3, { what: "three nodes: prepare, train-0, train-1" });
        t.assert((await nodes.first().getAttribute("aria-label")) === "step prepare", "a Pipeline's node has no state");
        const run = panel.getByRole("table", { name: "Runs" }).getByRole("row").filter({ hasText: `${name}-run1` });
        await run.waitFor({ timeout: 20000 });
        await until(t, async () => (await run.innerText()).includes("3 of 3"), "the run's three steps done", 60000, async () => run.innerText());
        await t.screenshot(page, "panel-pipeline");
        // Its run's page names the Pipeline it runs.
        await run.getByRole("link", { name: `${name}-run1` }).click();
        const runPanel = page.getByTestId("panel-pipelineruns");
        await runPanel.locator('[data-fact="Pipeline"]').getByRole("link", { name }).waitFor();
      } finally {
        await remove(t, "pipelineruns", `${name}-run1`);
        await remove(t, "pipelines", name);
      }
    },
  },
  {
    name: "an autoscaled InferenceService at zero: its panel says the first request starts a replica",
    async run(t) {
      const name = "panel-zero";
      const manifest = example("inference.yaml", "sentiment", name).replace("  replicas: 1\n", "  minReplicas: 0\n  maxReplicas: 2\n");
      t.assert(manifest.includes("minReplicas: 0"), "the example is made autoscaled");
      await create(t, "inferenceservices", manifest);
      try {
        const { page, panel } = await open(t, "inferenceservices", name);
        await panel.getByRole("heading", { name: "Autoscaling" }).waitFor();
        await panel.getByRole("alert").filter({ hasText: "No replicas: the first request starts one" }).waitFor({ timeout: 20000 });
        await panel.locator('[data-fact="Min"]').filter({ hasText: "0" }).waitFor();
        await panel.locator('[data-fact="Max"]').filter({ hasText: "2" }).waitFor();
        await panel.locator('[data-fact="State"]').filter({ hasText: "ScaledToZero" }).waitFor();
      } finally {
        await remove(t, "inferenceservices", name);
      }
    },
  },
  {
    name: "a TrainingJob's panel: its workers by rank, their pods, nodes and GPUs",
    async run(t) {
      const name = "panel-llm";
      await create(t, "trainingjobs", example("training-job.yaml", "llm-pretrain", name));
      try {
        const { page, panel } = await open(t, "trainingjobs", name);
        const rows = panel.getByTestId("worker-row");
        await t.eventually(async () => (await rows.count()) === 2, { timeoutMs: 45000, what: "two workers in the panel" });
        await until(
          t,
          async () => (await rows.locator('[data-state="Running"]').count()) === 2,
          "both workers Running",
          45000,
          async () => JSON.stringify(await rows.allInnerTexts()),
        );
        const texts = await rows.allInnerTexts();
        texts.forEach((r, rank) => {
          const cells = r.split("\t").map((c) => c.trim());
          t.assert(cells[0] === String(rank), `worker ${rank} is rank ${rank}: ${r}`);
          t.assert(cells[1] === `trainingjob-${name}-worker-${rank}`, `its pod: ${r}`);
          t.assert(cells[3] === "1", `one GPU each: ${r}`);
        });
        await panel.locator('[data-fact="Workers"]').filter({ hasText: "2 of 2" }).waitFor({ timeout: 20000 });
        await panel.locator('[data-fact="Restarts"]').filter({ hasText: "0 of 3" }).waitFor();
        await t.screenshot(page, "panel-trainingjob");
      } finally {
        await remove(t, "trainingjobs", name);
      }
    },
  },
  {
    name: "an elastic TrainingJob's panel: its size range, its world size, one row per worker it got",
    async run(t) {
      const name = "panel-elastic";
      const manifest = example("training-job.yaml", "llm-pretrain", name).replace("  replicas: 2\n", "  minReplicas: 1\n  maxReplicas: 2\n");
      t.assert(manifest.includes("maxReplicas: 2"), "the example is made elastic");
      await create(t, "trainingjobs", manifest);
      try {
        const { page, panel } = await open(t, "trainingjobs", name, { colorScheme: "dark" });
        await panel.locator('[data-fact="Size"]').filter({ hasText: "elastic, 1 to 2" }).waitFor();
        const world = await t.eventually(async () => (await t.api("alice", "GET", `${API}/trainingjobs/${name}`)).status?.worldSize, {
          timeoutMs: 45000,
          what: "the gang's world size",
        });
        await panel.locator('[data-fact="Workers"]').filter({ hasText: `${world} of 2` }).waitFor({ timeout: 30000 });
        await until(t, async () => (await panel.getByTestId("worker-row").count()) === world, `${world} worker rows`, 30000, async () =>
          JSON.stringify(await panel.getByTestId("worker-row").allInnerTexts()),
        );
        await panel.getByText(/^Growth: |Growing/).first().waitFor();
        await t.screenshot(page, "panel-trainingjob-elastic-dark");
      } finally {
        await remove(t, "trainingjobs", name);
      }
    },
  },
  {
    name: "a Notebook's panel: its URL and idle policy",
    async run(t) {
      const name = "panel-explore";
      await create(t, "notebooks", example("notebook.yaml", "explore", name));
      try {
        const { page, panel } = await open(t, "notebooks", name, { width: 1280 });
        await page
          .getByLabel("URL", { exact: true })
          .filter({ hasText: `/api/v1/namespaces/${NS}/services/notebook-${name}:http/proxy/` })
          .waitFor();
        await panel.locator('[data-fact="Suspended after"]').filter({ hasText: "30m quiet" }).waitFor();
        await panel.locator('[data-fact="GPU"]').filter({ hasText: "0.25" }).waitFor();
        // A sample a minute while it holds its GPU: the first one is charted.
        await panel.getByTestId("notebook-gpu").locator("canvas").waitFor({ timeout: 90000 });
        await t.screenshot(page, "panel-notebook");
      } finally {
        await remove(t, "notebooks", name);
      }
    },
  },
];

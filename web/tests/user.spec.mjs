// The data scientist's journeys: launch a notebook from the catalogue, see why it
// waits, see it run, open it; and a team's workloads stay its own.

const fillerJob = (name, gpu) => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name },
  spec: {
    template: {
      spec: {
        restartPolicy: "Never",
        containers: [{ name: "main", command: ["sleep", "600"], resources: { limits: { "nvidia.com/gpu": String(gpu) } } }],
      },
    },
  },
});

const admitted = (w) => (w?.status?.conditions ?? []).some((c) => c.type === "Admitted" && c.status === "True");

export const journeys = [
  {
    name: "alice launches a jupyter notebook, sees why it waits, sees it run, opens it",
    timeoutMs: 170000,
    async run(t) {
      // Fill team-nlp's quota (4 H100s nominal + 4 borrowed: the node's 8) so the notebook waits.
      await t.api("root", "POST", "/apis/batch/v1/namespaces/team-nlp/jobs", fillerJob("filler", 8));
      await t.eventually(
        async () => admitted(await t.api("root", "GET", "/apis/kueue.x-k8s.io/v1beta1/namespaces/team-nlp/workloads/job-filler")),
        { what: "the filler job to be admitted" },
      );
      const page = await t.newPage("alice");
      await page.goto(`${t.url}/ui/ns/team-nlp/launch`);
      await page.getByRole("list", { name: "Templates" }).getByText("Jupyter notebook").click();
      await page.waitForURL(/\/launch\/jupyter$/);
      await page.getByRole("textbox", { name: "Name", exact: true }).fill("nb-a");
      await page.getByLabel("gpu", { exact: true }).fill("1.5");
      // A render error is shown at its field, in the server's words.
      await page.getByText("1.5 GPUs is neither").waitFor();
      await page.getByLabel("gpu", { exact: true }).fill("0.25");
      await page.getByTestId("preview").filter({ hasText: 'gpu: "0.25"' }).waitFor();
      await page.getByTestId("preview").filter({ hasText: "name: nb-a" }).waitFor();
      await page.getByTestId("cost").waitFor();
      // Before Submit, the scheduler's forecast: the filler holds the queue, so it would wait, and says why.
      const forecast = page.getByTestId("estimated-start").filter({ hasText: "waits" });
      await forecast.filter({ hasText: "QuotaExceeded" }).or(forecast.filter({ hasText: "nvidia.com/gpu in flavor h100" })).first().waitFor({ timeout: 20000 });
      t.assert((await forecast.getAttribute("data-would-admit")) === "false", "the forecast says it would not run now");
      t.assert(/\$0\.\d+\/h/i.test(await forecast.innerText()), `the forecast has the cost per hour: ${await forecast.innerText()}`);
      await forecast.scrollIntoViewIfNeeded();
      await t.screenshot(page, "launch-jupyter");
      await page.getByRole("button", { name: "Submit" }).click();
      await page.waitForURL(/\/ui\/ns\/team-nlp\/notebooks\/nb-a$/);
      // Pending, with the core's reason and numbers.
      const why = page.getByTestId("why-waits");
      await why.filter({ hasText: "QuotaExceeded" }).waitFor({ timeout: 20000 });
      const text = await why.innerText();
      t.assert(/position \d+ in ClusterQueue team-nlp/.test(text), `the reason names the queue position: ${text}`);
      t.assert(text.includes("nvidia.com/gpu in flavor h100"), `the reason has the numbers: ${text}`);
      await t.screenshot(page, "notebook-pending");
      // The workloads view says the same, live.
      const list = await t.newPage("alice");
      await list.goto(`${t.url}/ui/ns/team-nlp/workloads`);
      await list.locator('[data-row="notebook-nb-a"]').filter({ hasText: "QuotaExceeded" }).waitFor();
      await t.screenshot(list, "workloads-pending");
      await list.context().close();
      // Free the quota: the notebook is admitted and runs.
      await t.api("root", "DELETE", "/apis/batch/v1/namespaces/team-nlp/jobs/filler");
      await page.locator('[data-state="Running"]').first().waitFor({ timeout: 60000 });
      await t.eventually(async () => (await page.getByTestId("why-waits").count()) === 0, { what: "the waiting note to go" });
      await page.getByTestId("header-facts").filter({ hasText: "on vm[" }).waitFor();
      // Jupyter is up when it says so in its log, streamed here.
      await page.getByTestId("logs").filter({ hasText: /is running at/ }).waitFor({ timeout: 60000 });
      await t.screenshot(page, "notebook-running");
      // Open: a single-use login, in a new tab, to the notebook's server through the proxy.
      const [tab] = await Promise.all([page.context().waitForEvent("page"), page.getByRole("button", { name: "Open" }).click()]);
      await t.eventually(async () => tab.url().includes("/services/notebook-nb-a:http/proxy/"), { what: "the tab to reach the proxy" });
      await tab.waitForLoadState("load");
      await t.eventually(
        async () => {
          const html = await tab.content();
          if (/connection refused/.test(html)) await tab.reload(); // the cookie is set: a reload needs no new code
          // Jupyter's own page (its tree or Lab), not a Status from the proxy.
          return (
            !tab.url().includes("tessera-login") &&
            !html.includes('"kind":"Status"') &&
            /Home Page|JupyterLab|Jupyter Notebook/i.test(await tab.title()) &&
            /jupyter/i.test(html)
          );
        },
        { timeoutMs: 30000, what: "Jupyter's page in the new tab" },
      ).catch(async (e) => {
        throw new Error(`${e.message}; the tab is at ${tab.url()}, titled "${await tab.title()}": ${(await tab.content()).slice(0, 600)}`);
      });
      t.assert(!tab.url().includes("tessera-login="), "the login code does not stay in the address");
      await t.screenshot(tab, "notebook-open");
      t.assert(page.errors.length === 0, `no page errors: ${page.errors.join("; ")}`);
    },
  },
  {
    name: "alice cannot see team-vision's workloads",
    async run(t) {
      await t.api("bob", "POST", "/apis/batch/v1/namespaces/team-vision/jobs", {
        ...fillerJob("bobs-secret-job", 1),
        spec: { ...fillerJob("x", 1).spec, parallelism: 1 },
      });
      await t.eventually(async () => t.api("bob", "GET", "/apis/kueue.x-k8s.io/v1beta1/namespaces/team-vision/workloads/job-bobs-secret-job"), {
        what: "bob's workload",
      });
      const page = await t.newPage("alice");
      await page.goto(`${t.url}/ui/ns/team-nlp/workloads`);
      await page.getByTestId("workload-count").or(page.getByTestId("empty")).first().waitFor();
      t.assert((await page.getByText("bobs-secret-job").count()) === 0, "team-vision's job is not in team-nlp's list");
      await page.goto(`${t.url}/ui/ns/team-vision/workloads`);
      const alert = page.getByRole("alert").filter({ hasText: "forbidden" });
      await alert.waitFor();
      const text = await alert.innerText();
      t.assert(text.includes("Not allowed"), `the note says it is not allowed: ${text}`);
      t.assert(text.includes('User "alice" cannot list resource "workloads"'), `the server's words: ${text}`);
      t.assert((await page.getByText("bobs-secret-job").count()) === 0, "nothing of team-vision shows");
      t.assert((await page.getByRole("table").count()) === 0, "no table, not an empty one");
      await t.screenshot(page, "workloads-forbidden");
      await t.api("bob", "DELETE", "/apis/batch/v1/namespaces/team-vision/jobs/bobs-secret-job");
    },
  },
  {
    name: "alice launches a batch job from the form and from pasted YAML, dark theme at 1280 px",
    async run(t) {
      const page = await t.newPage("alice", { width: 1280, height: 800, colorScheme: "dark" });
      await page.goto(`${t.url}/ui/ns/team-nlp/launch`);
      await page.getByRole("tab", { name: "Batch job" }).click();
      const form = page.getByRole("form", { name: "Batch job" });
      await form.getByRole("textbox", { name: "Name", exact: true }).fill("form-job");
      await form.getByLabel("Command").fill(`sh -c "echo hello from the form; sleep 2"`);
      await form.getByLabel("GPUs").fill("1.5");
      await form.getByRole("button", { name: "Submit" }).click();
      // The dry run's refusal, at the GPUs field.
      await form.getByText("1.5 GPUs is neither").waitFor();
      await form.getByLabel("GPUs").fill("0.25");
      await page.getByTestId("preview").filter({ hasText: "nvidia.com/gpu: \"0.25\"" }).waitFor();
      await t.screenshot(page, "launch-batch-form-dark");
      await form.getByRole("button", { name: "Submit" }).click();
      await page.waitForURL(/\/ui\/ns\/team-nlp\/jobs\/form-job$/);
      await page.getByTestId("logs").filter({ hasText: "hello from the form" }).waitFor({ timeout: 30000 });
      await t.screenshot(page, "job-page-dark");

      await page.goto(`${t.url}/ui/ns/team-nlp/launch`);
      await page.getByRole("tab", { name: "Paste YAML" }).click();
      const yaml = page.getByRole("textbox", { name: "YAML" });
      await yaml.fill("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: [yaml-job\n");
      await page.getByText(/line \d+, column \d+/).waitFor();
      const job = (resources) => `apiVersion: batch/v1
kind: Job
metadata:
  name: yaml-job
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          command: [sh, -c, "echo hello from yaml"]
          ${resources}:
            limits: {nvidia.com/gpu: "0.25"}
`;
      await yaml.fill(job("resoures"));
      await page.getByRole("button", { name: "Submit" }).click();
      await page.getByText("spec.template.spec.containers[0].resoures: unknown field").waitFor();
      await t.screenshot(page, "launch-yaml-error-dark");
      await yaml.fill(job("resources"));
      await page.getByRole("button", { name: "Submit" }).click();
      await page.waitForURL(/\/ui\/ns\/team-nlp\/jobs\/yaml-job$/);
      await page.getByTestId("logs").filter({ hasText: "hello from yaml" }).waitFor({ timeout: 30000 });
      t.assert(page.errors.length === 0, `no page errors: ${page.errors.join("; ")}`);
    },
  },
  {
    name: "the cost per hour comes from the queue's flavors' prices",
    async run(t) {
      // root may read the ClusterQueue and the ResourceFlavors (a data scientist may not: see Launch).
      const page = await t.newPage("root");
      await page.goto(`${t.url}/ui/ns/team-nlp/launch/jupyter`);
      await page.getByRole("textbox", { name: "Name", exact: true }).fill("priced");
      await page.getByLabel("gpu", { exact: true }).fill("0.5");
      // 0.5 GPU x h100's $2.50 and a100's $1.20 per GPU-hour (examples/quickstart/03-resourceflavors.yaml).
      await page.getByTestId("cost").filter({ hasText: "$1.25/h on h100 · $0.60/h on a100" }).waitFor();
      await t.screenshot(page, "launch-cost");
    },
  },
];

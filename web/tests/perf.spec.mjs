// The workloads view at scale: 5,000 Workloads in one namespace rendered, then kept
// live under 100 updates a second. Figures are BENCH lines; only sanity bounds fail.

const N = 5000;
const NS = "perf";
const base = `/apis/kueue.x-k8s.io/v1beta1/namespaces/${NS}/workloads`;

// Small, inactive Workloads (spec.active false: the scheduler leaves them alone).
const workload = (i) => ({
  apiVersion: "kueue.x-k8s.io/v1beta1",
  kind: "Workload",
  metadata: { name: `w-${String(i).padStart(4, "0")}` },
  spec: {
    active: false,
    queueName: "default",
    podSets: [{ name: "main", count: 1, template: { spec: { containers: [{ name: "main", command: ["true"], resources: { requests: { cpu: "100m" } } }] } } }],
  },
});

async function pool(n, concurrency, f) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await f(next++);
    }),
  );
}

// The server allows each user 200 requests a second: a 429 waits its Retry-After.
async function retrying(f) {
  for (;;) {
    try {
      return await f();
    } catch (e) {
      if (e.status !== 429) throw e;
      await new Promise((r) => setTimeout(r, 250 + Math.random() * 750));
    }
  }
}

const pctl = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

export const journeys = [
  {
    name: "perf: 5,000 workloads render, and stay live under 100 updates/s",
    timeoutMs: 240000,
    async run(t) {
      await t.api("root", "POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
      const started = Date.now();
      await pool(N, 24, (i) => retrying(() => t.api("root", "POST", base, workload(i))));
      const setupS = (Date.now() - started) / 1000;
      t.bench("portal_perf_setup_create_5000_s", setupS.toFixed(1), "s");
      t.assert(setupS < 90, `creating ${N} workloads took ${setupS} s`);

      const page = await t.newPage("root", { width: 1366, height: 860 });
      // The page's own clock, for a finer figure beside the test's: when the count and
      // a row are first in the DOM (the test's waits poll, up to 500 ms apart).
      await page.addInitScript((n) => {
        const shown = () =>
          document.querySelector('[data-testid="workload-count"]')?.textContent?.includes(`${n} of ${n} workloads`) &&
          document.querySelector("[data-row]");
        const watch = new MutationObserver(() => {
          if (shown()) {
            window.__shownAt = performance.now();
            watch.disconnect();
          }
        });
        watch.observe(document, { subtree: true, childList: true, characterData: true });
      }, N);
      const t0 = Date.now();
      await page.goto(`${t.url}/ui/ns/${NS}/workloads`);
      await page.getByTestId("workload-count").filter({ hasText: `${N} of ${N} workloads` }).waitFor({ timeout: 60000 });
      await page.locator("[data-row]").first().waitFor();
      const renderMs = Date.now() - t0;
      t.bench("portal_workloads_render_ms", renderMs, "ms");
      const inPage = await page.evaluate(() => window.__shownAt ?? -1);
      t.bench("portal_workloads_shown_in_page_ms", Math.round(inPage), "ms (from navigation start, by the page's clock)");
      t.assert(renderMs < 30000, `the 5,000-row table took ${renderMs} ms`);
      const rowsInDom = await page.locator("[data-row]").count();
      t.assert(rowsInDom < 200, `virtualized: ${rowsInDom} rows in the DOM`);
      await t.screenshot(page, "workloads-5000");

      // In the page: when each marked queue name first shows in a row, and the longest frame.
      const visible = await page.locator("[data-row]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-row")));
      await page.evaluate(() => {
        window.__seen = {};
        const scan = () => {
          for (const td of document.querySelectorAll("[data-row] td:nth-child(4)")) {
            const m = /q-(\d+)/.exec(td.textContent ?? "");
            if (m && !window.__seen[m[1]]) window.__seen[m[1]] = Date.now();
          }
        };
        new MutationObserver(scan).observe(document.querySelector('[data-testid="workloads-scroller"]'), {
          subtree: true,
          childList: true,
          characterData: true,
        });
        window.__maxFrame = 0;
        let last = performance.now();
        const frame = (now) => {
          window.__maxFrame = Math.max(window.__maxFrame, now - last);
          last = now;
          if (!window.__stopFrames) requestAnimationFrame(frame);
        };
        requestAnimationFrame(frame);
      });

      // 100 merge patches a second for 10 s: every 10th to a row on screen, timed.
      const sent = {};
      const inflight = [];
      let seq = 0;
      let keyDelay = null;
      const end = Date.now() + 10000;
      while (Date.now() < end) {
        const tick = Date.now();
        for (let k = 0; k < 10; k++) {
          const n = ++seq;
          const onScreen = n % 10 === 0;
          const name = onScreen ? visible[(n / 10) % visible.length] : `w-${String(Math.floor(Math.random() * N)).padStart(4, "0")}`;
          if (onScreen) sent[n] = Date.now();
          inflight.push(t.api("root", "PATCH", `${base}/${name}`, { spec: { queueName: `q-${n}` } }).catch(() => {}));
        }
        if (keyDelay === null && Date.now() > end - 5000) {
          // Halfway: a key press in the filter box, from the event to the next painted frame.
          keyDelay = await page.evaluate(
            () =>
              new Promise((resolve) => {
                const input = document.querySelector('input[aria-label="Filter by name or state"]');
                input.addEventListener(
                  "keydown",
                  (e) => requestAnimationFrame(() => resolve(performance.now() - e.timeStamp)),
                  { once: true },
                );
                input.focus();
                input.dispatchEvent(new KeyboardEvent("keydown", { key: "Shift", bubbles: true }));
              }),
          );
        }
        await new Promise((r) => setTimeout(r, Math.max(0, 100 - (Date.now() - tick))));
      }
      await Promise.all(inflight);
      await new Promise((r) => setTimeout(r, 2000));
      const seen = await page.evaluate(() => {
        window.__stopFrames = true;
        return { seen: window.__seen, maxFrame: window.__maxFrame };
      });
      // A row shows its latest patch: an earlier one overwritten before it painted is not a lag.
      const lags = [];
      for (const [n, at] of Object.entries(sent)) if (seen.seen[n]) lags.push(seen.seen[n] - at);
      t.assert(lags.length >= Object.keys(sent).length / 2, `only ${lags.length} of ${Object.keys(sent).length} sampled patches showed`);
      t.bench("portal_updates_sent", seq, "patches");
      t.bench("portal_updates_lag_p50_ms", pctl(lags, 50), "ms");
      t.bench("portal_updates_lag_p99_ms", pctl(lags, 99), "ms");
      t.bench("portal_updates_max_frame_ms", Math.round(seen.maxFrame), "ms");
      t.bench("portal_updates_keypress_to_frame_ms", Math.round(keyDelay ?? -1), "ms");
      t.assert(keyDelay !== null && keyDelay < 1000, `a key press waited ${keyDelay} ms for a frame`);
      t.assert(pctl(lags, 50) < 10000, "updates show within seconds");
      await t.screenshot(page, "workloads-5000-live");
    },
  },
];

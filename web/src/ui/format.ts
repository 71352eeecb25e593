// Formatting shared by the views. Quantities stay integers (milli-GPU, bytes)
// until they are shown.

export function age(from: string | undefined, now = Date.now()): string {
  if (!from) return "";
  const s = Math.max(0, Math.floor((now - Date.parse(from)) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

// A Kubernetes quantity of GPUs ("1", "0.25", "250m") in milli-GPU.
export function milliGpu(q: string | number | undefined): number {
  if (q === undefined || q === "") return 0;
  if (typeof q === "number") return Math.round(q * 1000);
  if (q.endsWith("m")) return parseInt(q, 10);
  const [whole, frac = ""] = q.split(".");
  return parseInt(whole || "0", 10) * 1000 + parseInt((frac + "000").slice(0, 3), 10);
}

export function gpus(milli: number): string {
  if (milli % 1000 === 0) return String(milli / 1000);
  return (milli / 1000).toFixed(3).replace(/0+$/, "");
}

export function money(amount: number, currency = "USD"): string {
  return new Intl.NumberFormat("en-US", { style: "currency", currency, maximumFractionDigits: 2 }).format(amount);
}

export function pct(x: number): string {
  return `${Math.round(x * 100)}%`;
}

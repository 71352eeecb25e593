import type { KubeObject } from "../../api/client";

// When the object about to be submitted would start, and where: filled in by the
// server's answer (owned by the lead).
export function EstimatedStart(props: { namespace: string; object: KubeObject | null }) {
  void props;
  return null;
}

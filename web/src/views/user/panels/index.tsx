import type { ReactNode } from "react";
import type { KubeObject } from "../../../api/client";

// What a workload's page shows for its kind beyond the common parts (state, why
// it waits, events, pods, logs): a service's URL, replicas and traffic, a sweep's
// objective chart and trials, a pipeline's DAG, a training job's workers.
export interface PanelProps {
  object: KubeObject;
  namespace: string;
}

export function panelFor(plural: string, props: PanelProps): ReactNode {
  void plural;
  void props;
  return null;
}

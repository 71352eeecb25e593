import type { ReactNode } from "react";
import type { KubeObject } from "../../../api/client";
import InferencePanel from "./InferencePanel";
import NotebookPanel from "./NotebookPanel";
import { PipelinePanel, PipelineRunPanel } from "./PipelinePanel";
import SweepPanel from "./SweepPanel";
import TrainingPanel from "./TrainingPanel";

// What a workload's page shows for its kind beyond the common parts (state, why
// it waits, events, pods, logs): a service's URL, replicas and traffic, a sweep's
// objective chart and trials, a pipeline's DAG, a training job's workers.
export interface PanelProps {
  object: KubeObject;
  namespace: string;
}

const PANELS: Record<string, (p: PanelProps) => ReactNode> = {
  inferenceservices: InferencePanel,
  sweeps: SweepPanel,
  pipelineruns: PipelineRunPanel,
  pipelines: PipelinePanel,
  trainingjobs: TrainingPanel,
  notebooks: NotebookPanel,
};

// The panel of a kind (its URL plural), or null for kinds the common parts cover.
export function panelFor(plural: string, props: PanelProps): ReactNode {
  const Panel = PANELS[plural];
  return Panel ? <Panel key={`${plural}/${props.object.metadata.name}`} {...props} /> : null;
}

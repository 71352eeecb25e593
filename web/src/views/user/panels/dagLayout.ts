import { Graph, layout } from "@dagrejs/dagre";
import type { StepNode } from "./shape";

export const NODE_WIDTH = 176;
export const NODE_HEIGHT = 52;

export interface PlacedNode {
  id: string;
  x: number; // centre
  y: number;
  width: number;
  height: number;
}

export interface PlacedEdge {
  from: string;
  to: string;
  points: { x: number; y: number }[];
}

export interface DagLayout {
  nodes: PlacedNode[];
  edges: PlacedEdge[];
  width: number;
  height: number;
}

// Positions for the pipeline's nodes, top to bottom, by dagre.
export function layoutDag(nodes: StepNode[]): DagLayout {
  const g = new Graph();
  g.setGraph({ rankdir: "TB", nodesep: 24, ranksep: 44, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  const ids = new Set(nodes.map((n) => n.id));
  // dagre places the later of two siblings on the left: given in reverse, a
  // fan-out reads left to right (train-0, train-1, ...).
  const reversed = [...nodes].reverse();
  for (const n of reversed) g.setNode(n.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const n of reversed) for (const d of [...n.deps].reverse()) if (ids.has(d)) g.setEdge(d, n.id);
  layout(g);
  const graph = g.graph() as { width?: number; height?: number };
  return {
    // In the run's order, which is the keyboard's order through them.
    nodes: nodes.map(({ id }) => {
      const n = g.node(id) as { x: number; y: number; width: number; height: number };
      return { id, x: n.x, y: n.y, width: n.width, height: n.height };
    }),
    edges: g.edges().map((e) => ({
      from: e.v,
      to: e.w,
      points: ((g.edge(e) as { points?: { x: number; y: number }[] }).points ?? []).map((p) => ({ x: p.x, y: p.y })),
    })),
    width: graph.width ?? 0,
    height: graph.height ?? 0,
  };
}

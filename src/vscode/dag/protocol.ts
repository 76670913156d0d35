// The messages between the Task Graph panel and its webview. Plain data only: the webview's
// script is built for the browser and imports nothing else from the extension.

export interface GraphNode {
  id: string;
  title: string;
  /** The core's state of the task (core/tasks/dag.ts TaskState), which picks its colour and shape. */
  state: string;
  /** The state in a word or two, drawn in the node. */
  stateWords: string;
  /** On the critical path. */
  critical: boolean;
}

/** A dependency, drawn as an arrow from the task depended on to the task that waits on it. */
export interface GraphEdge {
  from: string;
  to: string;
}

export interface TaskGraph {
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** The critical path, first task first: the longest chain of unfinished tasks, by count. */
  critical: string[];
  /** Why there is nothing to draw (no task file, an invalid one), else undefined. */
  problem?: string | undefined;
}

/** What the webview drew, read back from its own SVG. */
export interface DrawnGraph {
  nodes: string[];
  edges: Array<[from: string, to: string]>;
  critical: string[];
  /** Each drawn node's state, as its class says. */
  states: Record<string, string>;
}

export type ToWebview = { type: 'graph'; graph: TaskGraph } | { type: 'click'; id: string };

export type FromWebview = { type: 'ready' } | { type: 'drawn'; drawn: DrawnGraph } | { type: 'open'; id: string };

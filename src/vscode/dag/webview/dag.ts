// The Task Graph page: lays the DAG out with dagre and draws it as SVG in the editor's theme
// colours. A click (or Enter) on a task asks the extension to open it. After each drawing it
// reports what it drew, read back from the SVG itself.
import { type EdgeLabel, Graph, type GraphLabel, layout, type NodeLabel } from '@dagrejs/dagre';

import type { DrawnGraph, FromWebview, GraphNode, TaskGraph, ToWebview } from '../protocol';

declare function acquireVsCodeApi(): { postMessage(message: FromWebview): void };

const vscode = acquireVsCodeApi();
const SVG = 'http://www.w3.org/2000/svg';
const NODE_WIDTH = 168;
const NODE_HEIGHT = 48;
const PAD = 10;

const summary = document.getElementById('summary')!;
const main = document.getElementById('graph')!;

function el<K extends keyof SVGElementTagNameMap>(
  name: K,
  attrs: Record<string, string | number>,
  parent?: Element,
): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  parent?.appendChild(e);
  return e;
}

/** Cuts a text element's content with an ellipsis until it fits `width`. */
function fit(text: SVGTextElement, width: number): void {
  const full = text.textContent ?? '';
  const measured = text.getComputedTextLength();
  if (measured <= width) return;
  // A first cut in proportion, then a character at a time: a few measurements per title.
  let n = Math.max(1, Math.floor((full.length * width) / measured));
  do text.textContent = `${full.slice(0, n).trimEnd()}…`;
  while (--n > 0 && text.getComputedTextLength() > width);
}

function draw(graph: TaskGraph): void {
  // Redrawn on every change: the task that had the keyboard focus keeps it.
  const focused = (document.activeElement as SVGElement | null)?.dataset?.id;
  main.replaceChildren();
  if (graph.problem) {
    summary.textContent = graph.problem;
    return report();
  }
  const deps = graph.edges.length;
  summary.textContent =
    `${graph.nodes.length} task${graph.nodes.length === 1 ? '' : 's'}, ${deps} dependenc${deps === 1 ? 'y' : 'ies'}. ` +
    (graph.critical.length
      ? `Critical path (the longest chain of unfinished tasks, ${graph.critical.length} tasks): ${graph.critical.join(' → ')}`
      : 'No critical path: no chain of two or more unfinished tasks.');

  const g = new Graph<GraphLabel, NodeLabel, EdgeLabel>();
  g.setGraph({ rankdir: 'TB', nodesep: 20, ranksep: 36, marginx: 12, marginy: 12 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of graph.nodes) g.setNode(n.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const e of graph.edges) g.setEdge(e.from, e.to);
  layout(g);
  const size = g.graph();

  const svg = el('svg', { width: size.width ?? 0, height: size.height ?? 0, role: 'img', 'aria-label': 'Task dependency graph' }, main);
  const defs = el('defs', {}, svg);
  for (const kind of ['plain', 'critical']) {
    const marker = el(
      'marker',
      { id: `arrow-${kind}`, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto' },
      defs,
    );
    el('path', { d: 'M0,0 L10,5 L0,10 z', class: `arrowhead ${kind}` }, marker);
  }

  const next = new Map(graph.critical.slice(1).map((id, i) => [graph.critical[i]!, id]));
  const edges = el('g', { class: 'edges' }, svg);
  for (const e of graph.edges) {
    const points = g.edge(e.from, e.to)?.points ?? [];
    const critical = next.get(e.from) === e.to;
    el(
      'path',
      {
        class: `edge${critical ? ' critical' : ''}`,
        d: points.map((p, i) => `${i ? 'L' : 'M'}${p.x},${p.y}`).join(' '),
        'data-from': e.from,
        'data-to': e.to,
        'marker-end': `url(#arrow-${critical ? 'critical' : 'plain'})`,
      },
      edges,
    );
  }

  const nodes = el('g', { class: 'nodes' }, svg);
  for (const n of graph.nodes) drawNode(n, g.node(n.id) as { x: number; y: number }, nodes);
  if (focused) main.querySelector<SVGGElement>(`g.node[data-id="${CSS.escape(focused)}"]`)?.focus();
  report();
}

function drawNode(n: GraphNode, at: { x: number; y: number }, parent: Element): void {
  const x = at.x - NODE_WIDTH / 2;
  const y = at.y - NODE_HEIGHT / 2;
  const node = el(
    'g',
    {
      class: `node state-${n.state}${n.critical ? ' critical' : ''}`,
      transform: `translate(${x},${y})`,
      'data-id': n.id,
      'data-state': n.state,
      tabindex: 0,
      role: 'button',
      'aria-label': `${n.id}, ${n.stateWords}${n.critical ? ', on the critical path' : ''}: ${n.title}. Open the task.`,
    },
    parent,
  );
  el('title', {}, node).textContent = `${n.id} (${n.stateWords})\n${n.title}${n.critical ? '\nOn the critical path' : ''}`;
  // A running task is a pill; the others are cards with a bar of their state's colour.
  const pill = n.state === 'running';
  const rx = pill ? NODE_HEIGHT / 2 : 6;
  if (n.critical) el('rect', { class: 'halo', x: -4, y: -4, width: NODE_WIDTH + 8, height: NODE_HEIGHT + 8, rx: rx + 4 }, node);
  el('rect', { class: 'frame', width: NODE_WIDTH, height: NODE_HEIGHT, rx }, node);
  if (!pill) el('rect', { class: 'accent', x: 0, y: 0, width: 5, height: NODE_HEIGHT, rx: 2 }, node);
  const id = el('text', { class: 'id', x: PAD + 4, y: 19 }, node);
  id.textContent = n.id;
  const state = el('text', { class: 'state', x: NODE_WIDTH - PAD, y: 19, 'text-anchor': 'end' }, node);
  state.textContent = n.stateWords;
  fit(id, NODE_WIDTH - 2 * PAD - 4 - state.getComputedTextLength() - 6);
  const title = el('text', { class: 'title', x: PAD + 4, y: 37 }, node);
  title.textContent = n.title;
  fit(title, NODE_WIDTH - 2 * PAD - 4);
  const open = () => vscode.postMessage({ type: 'open', id: n.id });
  node.addEventListener('click', open);
  node.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter' && e.key !== ' ') return;
    e.preventDefault();
    open();
  });
}

/** What the SVG holds now: the extension (and its tests) learn what was drawn, not what was sent. */
function report(): void {
  const nodes = [...main.querySelectorAll<SVGGElement>('g.node')];
  const edges = [...main.querySelectorAll<SVGPathElement>('path.edge')];
  const critical = nodes.filter((n) => n.classList.contains('critical')).map((n) => n.dataset.id!);
  const after = new Map(edges.filter((e) => e.classList.contains('critical')).map((e) => [e.dataset.from!, e.dataset.to!]));
  // The marked nodes in path order: from the one no marked edge enters, along the marked edges.
  const entered = new Set(after.values());
  const ordered: string[] = [];
  for (let at = critical.find((id) => !entered.has(id)); at !== undefined && !ordered.includes(at); at = after.get(at)) ordered.push(at);
  const drawn: DrawnGraph = {
    nodes: nodes.map((n) => n.dataset.id!),
    edges: edges.map((e) => [e.dataset.from!, e.dataset.to!]),
    critical: ordered.length === critical.length ? ordered : critical,
    states: Object.fromEntries(nodes.map((n) => [n.dataset.id!, n.dataset.state!])),
  };
  vscode.postMessage({ type: 'drawn', drawn });
}

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const message = event.data;
  if (message.type === 'graph') draw(message.graph);
  else if (message.type === 'click')
    main.querySelector(`g.node[data-id="${CSS.escape(message.id)}"]`)?.dispatchEvent(new MouseEvent('click', { bubbles: true }));
});

vscode.postMessage({ type: 'ready' });

// The scripted model server: a real HTTP server on 127.0.0.1 that answers an agent CLI's model
// calls from a script, in the vendor's own protocol. A script is a list of steps per task (keyed
// by text only that task's prompt holds); each model call of that conversation takes the next
// step, so a tool's retry after a fault gets what follows the fault.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Exchange, Protocol, Step, Usage } from './protocol';

/** A step, served `times` times (default once) before the script moves on. */
export type ScriptStep = Step & { times?: number };

export interface Script {
  /** Text in a task's prompt (its title, say) → the steps its conversation takes, in order. */
  [needle: string]: ScriptStep[];
}

export interface Served {
  protocol: string;
  url: string;
  /** The script's needle; '' for a side request. */
  key: string;
  step?: Step;
  usage?: Usage;
  turn?: number;
  tools?: string[];
}

export interface ModelServer {
  url: string;
  /** Every model call answered, in order. */
  served: Served[];
  /** Requests no protocol knew (method, url, body): what a tool asked that the server lacks. */
  unknown: Array<{ method: string; url: string; body: unknown }>;
  /** The usage a task's conversation was told, summed over its answers. */
  usageOf(key: string): Usage;
  close(): Promise<void>;
}

/** The usage figures of a conversation's n-th answer: distinct numbers, so sums are telling. */
export function usageFor(n: number): Usage {
  return { input: 1000 + 7 * n, output: 40 + 3 * n, cacheRead: 200 + n };
}

export async function startModelServer(protocols: Protocol[], script: Script): Promise<ModelServer> {
  const cursors = new Map<string, { index: number; used: number; answers: number }>();
  const served: Served[] = [];
  const unknown: ModelServer['unknown'] = [];

  const next = (key: string): { step: Step; n: number } => {
    const c = cursors.get(key) ?? { index: 0, used: 0, answers: 0 };
    cursors.set(key, c);
    const steps = script[key]!;
    const s = steps[Math.min(c.index, steps.length - 1)]!;
    // Past the end the last step repeats: a script that ends in a final message keeps ending.
    c.used += 1;
    if (c.used >= (s.times ?? 1) && c.index < steps.length) {
      c.index += 1;
      c.used = 0;
    }
    const { times: _times, ...step } = s;
    return { step, n: c.answers++ };
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string): void => {
    let body: unknown = raw;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      // not JSON: handed over as text
    }
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const protocol = protocols.find((p) => p.matches(method, url));
    if (!protocol) {
      if (protocols.some((p) => p.other?.(req, res, body))) return;
      unknown.push({ method, url, body });
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${method} ${url}` } }));
      return;
    }
    const ex: Exchange | undefined = protocol.read(body, url);
    const key = ex ? Object.keys(script).find((needle) => ex.prompt.includes(needle)) : undefined;
    if (!ex || key === undefined) {
      served.push({ protocol: protocol.name, url, key: '' });
      protocol.side(res, body, url);
      return;
    }
    const { step, n } = next(key);
    const usage = step.kind === 'fault' ? undefined : usageFor(n);
    served.push({ protocol: protocol.name, url, key, step, usage, turn: ex.turn, tools: ex.tools });
    if (step.kind === 'fault') {
      if (protocol.fault) return protocol.fault(res, step);
      res.writeHead(step.status, { 'content-type': 'application/json', ...step.headers });
      res.end(JSON.stringify({ error: { message: step.message, type: 'error', code: step.status } }));
      return;
    }
    protocol.write(res, step, usage!, ex);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        handle(req, res, Buffer.concat(chunks).toString('utf8'));
      } catch (e) {
        res.writeHead(500).end(String(e));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    unknown,
    usageOf(key) {
      const sum = { input: 0, output: 0, cacheRead: 0 };
      for (const s of served)
        if (s.key === key && s.usage) {
          sum.input += s.usage.input;
          sum.output += s.usage.output;
          sum.cacheRead += s.usage.cacheRead;
        }
      return sum;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

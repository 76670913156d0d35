// The OpenAI Responses API as the codex CLI calls it: POST <base_url>/responses with the whole
// conversation as `input` items, answered as a stream of server-sent events —
//   response.created, response.output_item.added / done (a message or a function call),
//   response.output_text.delta, response.completed with `usage` {input_tokens (cached included),
//   input_tokens_details.cached_tokens, output_tokens, output_tokens_details.reasoning_tokens}.
// Faults are OpenAI's error body {error:{message,type,code}} with the status and headers given.
// https://platform.openai.com/docs/api-reference/responses-streaming
import type { ServerResponse } from 'node:http';

import type { Exchange, Protocol, Step, Usage } from '../protocol';

type Json = Record<string, any>;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((c: Json) => (typeof c?.text === 'string' ? c.text : '')).join('\n');
}

function toolNames(tools: unknown): string[] {
  if (!Array.isArray(tools)) return [];
  return tools.map((t: Json) => String(t?.name ?? t?.type ?? '')).filter(Boolean);
}

let ids = 0;
const id = (prefix: string): string => `${prefix}_${Date.now().toString(36)}${(ids++).toString(36)}`;

/** The item a step puts in the response's output, in the shape of the tool codex offered. */
function outputItem(step: Step, ex: Exchange): Json {
  const callId = id('call');
  if (step.kind === 'final')
    return {
      type: 'message',
      id: id('msg'),
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: step.text, annotations: [] }],
    };
  if (step.kind === 'write') {
    const patch = `*** Begin Patch\n*** Add File: ${step.path}\n${step.content
      .replace(/\n$/, '')
      .split('\n')
      .map((l) => `+${l}`)
      .join('\n')}\n*** End Patch\n`;
    if (!ex.tools.includes('apply_patch')) throw new Error(`codex offered no apply_patch tool (tools: ${ex.tools.join(', ')})`);
    // apply_patch is a freeform (custom) tool: its input is the patch text itself.
    return { type: 'custom_tool_call', id: id('ctc'), status: 'completed', call_id: callId, name: 'apply_patch', input: patch };
  }
  if (step.kind === 'shell') {
    if (ex.tools.includes('exec_command'))
      return {
        type: 'function_call',
        id: id('fc'),
        status: 'completed',
        call_id: callId,
        name: 'exec_command',
        arguments: JSON.stringify({ cmd: step.command }),
      };
    if (ex.tools.includes('shell_command'))
      return {
        type: 'function_call',
        id: id('fc'),
        status: 'completed',
        call_id: callId,
        name: 'shell_command',
        arguments: JSON.stringify({ command: step.command }),
      };
    return {
      type: 'function_call',
      id: id('fc'),
      status: 'completed',
      call_id: callId,
      name: 'shell',
      arguments: JSON.stringify({ command: ['bash', '-lc', step.command] }),
    };
  }
  throw new Error(`no output item for a ${step.kind} step`);
}

function sse(res: ServerResponse, events: Json[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const e of events) res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
  res.end();
}

function completed(responseId: string, model: string, output: Json[], usage: Usage | undefined): Json {
  return {
    type: 'response.completed',
    response: {
      id: responseId,
      object: 'response',
      status: 'completed',
      model,
      output,
      usage: usage && {
        input_tokens: usage.input + usage.cacheRead,
        input_tokens_details: { cached_tokens: usage.cacheRead },
        output_tokens: usage.output,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: usage.input + usage.cacheRead + usage.output,
      },
    },
  };
}

function stream(res: ServerResponse, item: Json, usage: Usage | undefined, model: string): void {
  const responseId = id('resp');
  const events: Json[] = [
    { type: 'response.created', response: { id: responseId, object: 'response', status: 'in_progress', model, output: [] } },
    {
      type: 'response.output_item.added',
      output_index: 0,
      item: { ...item, status: 'in_progress', ...(item.type === 'message' ? { content: [] } : {}) },
    },
  ];
  if (item.type === 'message') {
    const text = item.content[0].text as string;
    events.push({ type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: text });
    events.push({ type: 'response.output_text.done', item_id: item.id, output_index: 0, content_index: 0, text });
  }
  events.push({ type: 'response.output_item.done', output_index: 0, item });
  events.push(completed(responseId, model, [item], usage));
  sse(res, events);
}

export const openaiResponses: Protocol = {
  name: 'openai-responses',
  matches: (method, url) => method === 'POST' && /^\/v1\/responses(?:\?|$)/.test(url),
  read(body) {
    const b = (body ?? {}) as Json;
    const input: Json[] = Array.isArray(b.input) ? b.input : [];
    // The task's prompt is a user message; a SessionStart hook's context comes as a developer one.
    const users = input
      .filter((i) => (i.type ?? 'message') === 'message' && (i.role === 'user' || i.role === 'developer'))
      .map((i) => textOf(i.content));
    // A compaction or title request carries no tools: it is no step of the task's script.
    if (!Array.isArray(b.tools) || b.tools.length === 0) return undefined;
    return {
      prompt: users.join('\n'),
      turn: input.filter((i) => (i.type === 'message' && i.role === 'assistant') || /_call$/.test(String(i.type))).length,
      tools: toolNames(b.tools),
      stream: b.stream === true,
      model: String(b.model ?? ''),
    };
  },
  write(res, step, usage, ex) {
    stream(res, outputItem(step, ex), usage, ex.model);
  },
  fault(res, step) {
    // ChatGPT's backend answers a used-up plan with a 429 whose error names the reset in epoch
    // seconds, beside the x-codex-primary-* rate-limit headers: the body carries the header's reset.
    const resetsAt = Number(step.headers?.['x-codex-primary-reset-at']);
    const error =
      step.status === 429 && resetsAt
        ? {
            type: 'usage_limit_reached',
            message: step.message,
            plan_type: 'plus',
            resets_at: resetsAt,
            resets_in_seconds: Math.max(0, Math.round(resetsAt - Date.now() / 1000)),
          }
        : {
            type: step.status === 429 ? 'rate_limit_exceeded' : step.status >= 500 ? 'server_error' : 'invalid_request_error',
            message: step.message,
            code: null,
            param: null,
          };
    res.writeHead(step.status, { 'content-type': 'application/json', ...step.headers });
    res.end(JSON.stringify({ error }));
  },
  side(res, body) {
    const model = String((body as Json | undefined)?.model ?? '');
    const item = {
      type: 'message',
      id: id('msg'),
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Launchpad task', annotations: [] }],
    };
    stream(res, item, undefined, model);
  },
};

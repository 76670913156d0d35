// The Anthropic Messages API (POST /v1/messages), streamed as server-sent events or as one JSON
// body: https://docs.anthropic.com/en/api/messages-streaming. A step becomes a text block or a
// tool_use block calling the tool the client offered under that name; faults come in Anthropic's
// error shape with its rate-limit headers. A request offering no tools (a title, a topic check,
// a quota probe) is a side request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isAbsolute, join } from 'node:path';

import type { Exchange, Protocol, Step, Usage } from '../protocol';

type Json = Record<string, any>;

/** The names a client may give its write and shell tools, in order of preference. */
const WRITE_TOOLS = ['Write', 'create', 'write_file', 'write'];
const SHELL_TOOLS = ['Bash', 'bash', 'shell', 'run_shell_command'];

export interface AnthropicRequest {
  url: string;
  body: Json;
}

export interface AnthropicProtocol extends Protocol {
  /** Every /v1/messages body received, side requests included, in order. */
  requests: AnthropicRequest[];
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((b: Json) => (b?.type === 'text' ? String(b.text) : b?.type === 'tool_result' ? textOf(b.content) : '')).join('\n');
}

/** The client's working directory, as its system prompt states it (Claude Code: "Working directory: /x"). */
function workingDirectory(body: Json): string | undefined {
  const system = typeof body.system === 'string' ? body.system : textOf(body.system);
  const all = `${system}\n${(body.messages ?? []).map((m: Json) => textOf(m.content)).join('\n')}`;
  return /(?:Primary working directory|Working directory|cwd):\s*(\/\S+)/i.exec(all)?.[1];
}

let ids = 0;
const id = (prefix: string): string => `${prefix}_${(++ids).toString().padStart(6, '0')}`;

/** The content block a step becomes, naming the tool the client offered. */
function block(step: Exclude<Step, { kind: 'fault' }>, body: Json): Json {
  const offered: Json[] = Array.isArray(body.tools) ? body.tools : [];
  const pick = (names: string[]): Json => {
    const tool = names.map((n) => offered.find((t) => t.name === n)).find(Boolean);
    if (!tool) throw new Error(`no tool among ${names.join('/')} offered (${offered.map((t) => t.name).join(', ')})`);
    return tool;
  };
  if (step.kind === 'final') return { type: 'text', text: step.text };
  if (step.kind === 'shell') {
    const tool = pick(SHELL_TOOLS);
    return { type: 'tool_use', id: id('toolu'), name: tool.name, input: { command: step.command, description: 'Run a command' } };
  }
  const tool = pick(WRITE_TOOLS);
  const props = Object.keys(tool.input_schema?.properties ?? {});
  const pathKey = ['file_path', 'path', 'absolute_path'].find((k) => props.includes(k)) ?? 'file_path';
  const contentKey = ['content', 'file_text', 'text'].find((k) => props.includes(k)) ?? 'content';
  // Claude Code's Write wants an absolute path: resolved against the directory the client names.
  const cwd = workingDirectory(body);
  const path = isAbsolute(step.path) || !cwd ? step.path : join(cwd, step.path);
  return { type: 'tool_use', id: id('toolu'), name: tool.name, input: { [pathKey]: path, [contentKey]: step.content } };
}

function sse(res: ServerResponse, events: Array<[string, Json]>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': id('req') });
  for (const [event, data] of events) res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  res.end();
}

function answer(res: ServerResponse, model: string, content: Json, usage: Usage, stream: boolean): void {
  const stopReason = content.type === 'tool_use' ? 'tool_use' : 'end_turn';
  const fullUsage = {
    input_tokens: usage.input,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: usage.cacheRead,
    output_tokens: usage.output,
  };
  const message = { id: id('msg'), type: 'message', role: 'assistant', model, stop_sequence: null };
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json', 'request-id': id('req') });
    res.end(JSON.stringify({ ...message, content: [content], stop_reason: stopReason, usage: fullUsage }));
    return;
  }
  const start = content.type === 'tool_use' ? { ...content, input: {} } : { type: 'text', text: '' };
  const delta =
    content.type === 'tool_use'
      ? { type: 'input_json_delta', partial_json: JSON.stringify(content.input) }
      : { type: 'text_delta', text: content.text };
  sse(res, [
    ['message_start', { message: { ...message, content: [], stop_reason: null, usage: { ...fullUsage, output_tokens: 1 } } }],
    ['content_block_start', { index: 0, content_block: start }],
    ['content_block_delta', { index: 0, delta }],
    ['content_block_stop', { index: 0 }],
    // As the API does now, the final usage is cumulative and repeats the input figures.
    ['message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: fullUsage }],
    ['message_stop', {}],
  ]);
}

/** The API's error type for a status. */
function errorType(status: number): string {
  if (status === 400) return 'invalid_request_error';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 529) return 'overloaded_error';
  return 'api_error';
}

export function anthropicProtocol(): AnthropicProtocol {
  const requests: AnthropicRequest[] = [];
  return {
    name: 'anthropic',
    requests,
    matches: (method, url) => method === 'POST' && /^\/(v1\/)?messages(\?|$)/.test(url),
    read(body, url): Exchange | undefined {
      const b = (body ?? {}) as Json;
      requests.push({ url, body: b });
      const tools: string[] = Array.isArray(b.tools) ? b.tools.map((t: Json) => String(t.name)) : [];
      if (!tools.length) return undefined;
      const messages: Json[] = Array.isArray(b.messages) ? b.messages : [];
      const first = messages.find((m) => m.role === 'user');
      return {
        prompt: first ? textOf(first.content) : '',
        turn: messages.filter((m) => m.role === 'assistant').length,
        tools,
        stream: b.stream === true,
        model: String(b.model ?? ''),
      };
    },
    write(res, step, usage, ex) {
      if (step.kind === 'fault') return;
      const last = requests[requests.length - 1]!.body;
      answer(res, ex.model, block(step, last), usage, ex.stream);
    },
    fault(res, step) {
      res.writeHead(step.status, { 'content-type': 'application/json', 'request-id': id('req'), ...step.headers });
      res.end(JSON.stringify({ type: 'error', error: { type: errorType(step.status), message: step.message } }));
    },
    side(res, body) {
      const b = (body ?? {}) as Json;
      // A title request asks for JSON ({"title": …}); plain text serves the others.
      const usage = { input: 10, output: 5, cacheRead: 0 };
      answer(
        res,
        String(b.model ?? ''),
        { type: 'text', text: '{"title": "Scripted task", "isNewTopic": false}' },
        usage,
        b.stream === true,
      );
    },
    other(req: IncomingMessage, res: ServerResponse, body: unknown): boolean {
      const url = req.url ?? '';
      // Claude Code's reachability probe of the base URL.
      if (req.method === 'HEAD' && url === '/') {
        res.writeHead(200).end();
        return true;
      }
      if (req.method === 'POST' && /^\/(v1\/)?messages\/count_tokens/.test(url)) {
        const size = JSON.stringify(body ?? '').length;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ input_tokens: Math.ceil(size / 4) }));
        return true;
      }
      return false;
    },
  };
}

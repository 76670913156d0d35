// OpenAI's Chat Completions protocol, as opencode (through the AI SDK's OpenAI-compatible
// provider) and Qwen Code speak it: POST …/chat/completions with `messages` and `tools`,
// answered as one JSON object or, with `stream: true`, as SSE chunks of `choices[0].delta`
// (text, then tool-call fragments by index), a chunk with `finish_reason`, and — when the
// client asks with `stream_options.include_usage` — a last chunk with `usage` and no choices.
// https://platform.openai.com/docs/api-reference/chat/create and …/chat-streaming
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isAbsolute, join } from 'node:path';

import type { Exchange, Protocol, Step, Usage } from '../protocol';

type Json = Record<string, any>;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p: Json) => (typeof p === 'string' ? p : typeof p?.text === 'string' ? p.text : '')).join('\n');
}

function toolsOf(body: Json): Json[] {
  return Array.isArray(body.tools) ? body.tools.filter((t: Json) => t?.type === 'function' && t.function?.name) : [];
}

/**
 * The folder the task is done in, as a model would read it: the task prompt's project root, else
 * the one the tool's system prompt names. Relative paths are made absolute with it.
 */
function workDirOf(body: Json): string | undefined {
  const text = (body.messages as Json[]).map((m) => textOf(m.content)).join('\n');
  const m =
    /Project root:\s*(\/\S+)/.exec(text) ??
    /Working directory:\s*(\/\S+)/.exec(text) ??
    /currently working in the directory:?\s*(\/\S+?)\.?(?:\s|$)/.exec(text) ??
    /working directory[^/\n]*?(\/[^\s'"`]+)/i.exec(text);
  return m?.[1];
}

const WRITE_TOOLS = ['write', 'write_file', 'Write', 'create_file'];
const SHELL_TOOLS = ['bash', 'run_shell_command', 'shell', 'Bash'];

/** The arguments of a tool call, named as the tool's own parameter schema names them. */
function argumentsFor(tool: Json, fields: { path?: string; content?: string; command?: string }): Json {
  const props: Json = tool.function.parameters?.properties ?? {};
  const required: string[] = tool.function.parameters?.required ?? [];
  const args: Json = {};
  for (const name of Object.keys(props)) {
    if (fields.path !== undefined && /^(file_?path|filePath|absolute_path|path)$/i.test(name)) args[name] = fields.path;
    else if (fields.content !== undefined && /^content$/i.test(name)) args[name] = fields.content;
    else if (fields.command !== undefined && /^command$/i.test(name)) args[name] = fields.command;
    else if (required.includes(name) && props[name]?.type === 'string') args[name] = 'scripted step';
  }
  return args;
}

function pick(tools: Json[], names: string[]): Json {
  const found = names.map((n) => tools.find((t) => t.function.name === n)).find(Boolean);
  if (!found) throw new Error(`no tool among ${names.join(', ')} in ${tools.map((t) => t.function.name).join(', ')}`);
  return found;
}

interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

function usageJson(u: Usage): Json {
  return {
    prompt_tokens: u.input + u.cacheRead,
    completion_tokens: u.output,
    total_tokens: u.input + u.cacheRead + u.output,
    prompt_tokens_details: { cached_tokens: u.cacheRead },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}

let seq = 0;

/** Each Exchange's request body: the tools' parameter names and the working folder are in it. */
const bodies = new WeakMap<Exchange, Json>();

function answer(res: ServerResponse, body: Json, text: string, call: ToolCall | undefined, usage: Usage | undefined): void {
  const id = `chatcmpl-${++seq}`;
  const created = Math.floor(Date.now() / 1000);
  const model = String(body.model ?? 'scripted');
  const finish = call ? 'tool_calls' : 'stop';
  if (body.stream !== true) {
    const message: Json = { role: 'assistant', content: call ? null : text };
    if (call) message.tool_calls = [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }];
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message, finish_reason: finish }],
        ...(usage ? { usage: usageJson(usage) } : {}),
      }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const chunk = (choices: Json[], extra: Json = {}): void => {
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`);
  };
  const delta = (d: Json, finishReason: string | null = null): void => chunk([{ index: 0, delta: d, finish_reason: finishReason }]);
  delta({ role: 'assistant', content: '' });
  if (call) {
    delta({ tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] });
    // The arguments arrive in fragments, as a model streams them.
    const half = Math.ceil(call.arguments.length / 2);
    for (const part of [call.arguments.slice(0, half), call.arguments.slice(half)])
      delta({ tool_calls: [{ index: 0, function: { arguments: part } }] });
  } else {
    for (const line of text.split(/(?<=\n)/)) delta({ content: line });
  }
  delta({}, finish);
  if (usage && body.stream_options?.include_usage) chunk([], { usage: usageJson(usage) });
  res.write('data: [DONE]\n\n');
  res.end();
}

/** The side answer: what a title or "who speaks next" request expects. */
function sideText(body: Json): string {
  const all = (body.messages as Json[] | undefined)?.map((m) => textOf(m.content)).join('\n') ?? '';
  if (/next_speaker/.test(all)) return JSON.stringify({ reasoning: 'The task is done.', next_speaker: 'user' });
  return 'Scripted task';
}

export const chatCompletions: Protocol = {
  name: 'chat-completions',
  matches: (method, url) => method === 'POST' && /\/chat\/completions(?:\?|$)/.test(url),
  read(body) {
    if (typeof body !== 'object' || body === null) return undefined;
    const b = body as Json;
    const messages: Json[] = Array.isArray(b.messages) ? b.messages : [];
    const tools = toolsOf(b);
    // A request without tools is a side request: a title, a summary, a "next speaker" check.
    if (!tools.length) return undefined;
    const firstUser = messages.find((m) => m.role === 'user');
    if (!firstUser) return undefined;
    const ex: Exchange = {
      prompt: textOf(firstUser.content),
      turn: messages.filter((m) => m.role === 'assistant').length,
      tools: tools.map((t) => t.function.name as string),
      stream: b.stream === true,
      model: String(b.model ?? ''),
    };
    bodies.set(ex, b);
    return ex;
  },
  write(res, step: Step, usage, ex) {
    const body = bodies.get(ex)!;
    const tools = toolsOf(body);
    const callId = `call_${++seq}`;
    if (step.kind === 'write') {
      const tool = pick(tools, WRITE_TOOLS);
      const dir = workDirOf(body);
      const path = isAbsolute(step.path) || !dir ? step.path : join(dir, step.path);
      const args = argumentsFor(tool, { path, content: step.content });
      return answer(res, body, '', { id: callId, name: tool.function.name, arguments: JSON.stringify(args) }, usage);
    }
    if (step.kind === 'shell') {
      const tool = pick(tools, SHELL_TOOLS);
      const args = argumentsFor(tool, { command: step.command });
      return answer(res, body, '', { id: callId, name: tool.function.name, arguments: JSON.stringify(args) }, usage);
    }
    if (step.kind === 'final') return answer(res, body, step.text, undefined, usage);
  },
  fault(res, step) {
    // OpenAI's type and code for the status (a 429 of a per-minute limit: "requests").
    const [type, code] =
      step.status === 429
        ? ['requests', 'rate_limit_exceeded']
        : step.status === 401
          ? ['invalid_request_error', 'invalid_api_key']
          : step.status >= 500
            ? ['server_error', null]
            : ['invalid_request_error', null];
    res.writeHead(step.status, { 'content-type': 'application/json', ...step.headers });
    res.end(JSON.stringify({ error: { message: step.message, type, param: null, code } }));
  },
  side(res, body) {
    const b = (typeof body === 'object' && body !== null ? body : {}) as Json;
    answer(res, b, sideText(b), undefined, undefined);
  },
  other(req: IncomingMessage, res: ServerResponse) {
    if (req.method === 'GET' && /\/models(?:\?|$)/.test(req.url ?? '')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'scripted', object: 'model', created: 0, owned_by: 'launchpad' }] }));
      return true;
    }
    return false;
  },
};

// The Gemini API (generativelanguage.googleapis.com, v1beta) as gemini-cli calls it:
//   POST /v1beta/models/{model}:streamGenerateContent?alt=sse   the conversation, streamed as SSE
//   POST /v1beta/models/{model}:generateContent                  side calls with a JSON schema
//   POST /v1beta/models/{model}:countTokens                      a token count
// A request holds `contents` [{role: user|model, parts: [{text} | {functionCall} | {functionResponse}]}],
// `tools` [{functionDeclarations: [{name, …}]}] and `generationConfig`; an answer holds
// `candidates` [{content: {role: model, parts}, finishReason}] and `usageMetadata`
// {promptTokenCount (cached part included), candidatesTokenCount, cachedContentTokenCount,
// thoughtsTokenCount, totalTokenCount}. Errors are Google's: {"error": {code, message, status, details}}.
// https://ai.google.dev/api/generate-content https://ai.google.dev/gemini-api/docs/rate-limits
import type { ServerResponse } from 'node:http';

import type { Exchange, Protocol, Step, Usage } from '../protocol';

type Json = Record<string, any>;

const MODEL_CALL = /^\/v1beta\/models\/([^/:?]+):(streamGenerateContent|generateContent|countTokens)(\?|$)/;

const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

function userText(contents: Json[]): string {
  return contents
    .filter((c) => c.role === 'user')
    .flatMap((c) => (Array.isArray(c.parts) ? c.parts : []))
    .map((p: Json) => (typeof p.text === 'string' ? p.text : ''))
    .join('\n');
}

function toolNames(body: Json): string[] {
  const tools: Json[] = Array.isArray(body.tools) ? body.tools : [];
  return tools.flatMap((t) => (Array.isArray(t.functionDeclarations) ? t.functionDeclarations.map((f: Json) => String(f.name)) : []));
}

/** A side call's JSON answer: what keeps the conversation going, by the fields its schema asks for. */
function sideAnswer(schema: Json | undefined): Json {
  const props: Json = schema?.properties ?? {};
  const out: Json = {};
  for (const [name, p] of Object.entries<Json>(props)) {
    if (name === 'next_speaker') out[name] = 'user';
    else if (Array.isArray(p.enum)) out[name] = p.enum.includes('flash') ? 'flash' : p.enum[0];
    // The router's complexity_score runs from 1 (a low score keeps the default model); the loop
    // check's confidence 0 says there is no loop.
    else if (/^(number|integer)$/i.test(String(p.type))) out[name] = /score/.test(name) ? 1 : 0;
    else if (/^boolean$/i.test(String(p.type))) out[name] = false;
    else if (/^array$/i.test(String(p.type))) out[name] = [];
    else out[name] = 'ok';
  }
  return out;
}

export function usageMetadata(u: Usage): Json {
  const prompt = u.input + u.cacheRead;
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: u.output,
    cachedContentTokenCount: u.cacheRead,
    totalTokenCount: prompt + u.output,
  };
}

function parts(step: Step, ex: Exchange): Json[] {
  const has = (n: string) => ex.tools.includes(n);
  switch (step.kind) {
    case 'write':
      if (!has('write_file')) throw new Error(`gemini offered no write_file (tools: ${ex.tools.join(', ')})`);
      return [{ functionCall: { name: 'write_file', args: { file_path: step.path, content: step.content } } }];
    case 'shell':
      if (!has('run_shell_command')) throw new Error(`gemini offered no run_shell_command (tools: ${ex.tools.join(', ')})`);
      return [{ functionCall: { name: 'run_shell_command', args: { command: step.command, description: 'run a command' } } }];
    case 'final':
      return [{ text: step.text }];
    default:
      throw new Error(`not an answer: ${step.kind}`);
  }
}

function respond(res: ServerResponse, url: string, chunks: Json[]): void {
  if (url.includes(':streamGenerateContent')) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\r\n\r\n`);
    res.end();
    return;
  }
  // Unstreamed: one response holding every part.
  const last = chunks[chunks.length - 1]!;
  const allParts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);
  const one = { ...last, candidates: [{ ...last.candidates[0], content: { role: 'model', parts: allParts } }] };
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(one));
}

export const gemini: Protocol = {
  name: 'gemini',
  matches: (method, url) => method === 'POST' && MODEL_CALL.test(url),

  read(body, url) {
    const m = MODEL_CALL.exec(url)!;
    if (m[2] !== 'streamGenerateContent' || typeof body !== 'object' || body === null) return undefined;
    const b = body as Json;
    const tools = toolNames(b);
    // The conversation offers tools; a schema'd call without them (next speaker, loop check,
    // routing) is a side call.
    if (!tools.length || b.generationConfig?.responseJsonSchema || b.generationConfig?.responseSchema) return undefined;
    const contents: Json[] = Array.isArray(b.contents) ? b.contents : [];
    return {
      prompt: userText(contents),
      turn: contents.filter((c) => c.role === 'model').length,
      tools,
      stream: true,
      model: decodeURIComponent(m[1]!),
    };
  },

  write(res, step, usage, ex) {
    const p = parts(step, ex);
    // Text arrives in two pieces, as a real stream does; the usage comes with the last chunk.
    const chunks: Json[] = [];
    if (step.kind === 'final' && step.text.length > 1) {
      const cut = Math.floor(step.text.length / 2);
      chunks.push({ candidates: [{ content: { role: 'model', parts: [{ text: step.text.slice(0, cut) }] }, index: 0 }] });
      p[0] = { text: step.text.slice(cut) };
    }
    chunks.push({
      candidates: [{ content: { role: 'model', parts: p }, finishReason: 'STOP', index: 0 }],
      usageMetadata: usageMetadata(usage),
      modelVersion: ex.model,
    });
    respond(res, '?:streamGenerateContent', chunks);
  },

  fault(res, step) {
    const status = STATUS[step.status] ?? 'UNKNOWN';
    const error: Json = { code: step.status, message: step.message, status };
    if (step.status === 429) {
      const delay = /retry in ([\d.]+)s/i.exec(step.message)?.[1];
      error.details = [
        {
          '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
          violations: [
            {
              quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
              // Per minute: gemini-cli takes a per-day quota for one with no reset.
              quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier',
              quotaDimensions: { location: 'global', model: 'gemini-2.5-pro' },
              quotaValue: '100',
            },
          ],
        },
        ...(delay ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${delay}s` }] : []),
      ];
    }
    res.writeHead(step.status, { 'content-type': 'application/json; charset=UTF-8', ...step.headers });
    res.end(JSON.stringify({ error }));
  },

  side(res, body, url) {
    const b = (typeof body === 'object' && body !== null ? body : {}) as Json;
    if (url.includes(':countTokens')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ totalTokens: 10 }));
      return;
    }
    const schema = b.generationConfig?.responseJsonSchema ?? b.generationConfig?.responseSchema;
    const text = schema ? JSON.stringify(sideAnswer(schema)) : 'ok';
    respond(res, url, [
      {
        candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }],
        // No tokens: gemini adds a side call's usage to its totals, and the tests compare those
        // totals with the conversation's own.
        usageMetadata: { promptTokenCount: 0, candidatesTokenCount: 0, totalTokenCount: 0 },
      },
    ]);
  },

  other(req, res) {
    // The model list, should the tool ask for it.
    if (req.method === 'GET' && /^\/v1beta\/models(\?|$)/.test(req.url ?? '')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ models: [] }));
      return true;
    }
    return false;
  },
};

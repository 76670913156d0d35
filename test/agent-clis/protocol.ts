// What the scripted model server says, independent of any vendor's wire format. Each protocol
// (protocols/*.ts) reads its vendor's request into an Exchange and writes a Step back in that
// vendor's format, so one script drives every agent CLI through its own tools.
import type { IncomingMessage, ServerResponse } from 'node:http';

export type Step =
  /** A call of the tool's own file-writing tool (Write, write_file, apply_patch, …). */
  | { kind: 'write'; path: string; content: string }
  /** A call of the tool's own shell tool (Bash, shell, run_shell_command, …). */
  | { kind: 'shell'; command: string }
  /** The assistant's last message of the turn: no tool call, the text as given. */
  | { kind: 'final'; text: string }
  /** An HTTP error instead of an answer: status, the vendor's error body around `message`, headers. */
  | { kind: 'fault'; status: number; message: string; headers?: Record<string, string> };

/** The figures a response reports; tests compare agent.json's with their sums. */
export interface Usage {
  /** Prompt tokens not read from a cache. */
  input: number;
  output: number;
  /** Prompt tokens read from a cache. */
  cacheRead: number;
}

export interface Exchange {
  /** The text of the conversation's first user message: the task's prompt is in it. */
  prompt: string;
  /** How many assistant messages the request's history already holds (0 on the first call). */
  turn: number;
  /** The names of the tools the client offered. */
  tools: string[];
  /** Whether the client asked for a streamed answer. */
  stream: boolean;
  /** The model the client named. */
  model: string;
}

export interface Protocol {
  name: string;
  /** Whether a request (method and path, query included) is one of this protocol's model calls. */
  matches(method: string, url: string): boolean;
  /**
   * The request as an Exchange; undefined for a side request the client makes besides the
   * conversation (a title, a quota check), which `side` answers.
   */
  read(body: unknown, url: string): Exchange | undefined;
  /** Writes a step as the response, with the usage figures, in the vendor's format. */
  write(res: ServerResponse, step: Step, usage: Usage, ex: Exchange): void;
  /** Writes a fault step as the vendor's error response; without it, a generic JSON error. */
  fault?(res: ServerResponse, step: Extract<Step, { kind: 'fault' }>): void;
  /** Answers a side request (a short plain text, no usage worth counting). */
  side(res: ServerResponse, body: unknown, url: string): void;
  /** Other endpoints the client calls (a model list, a token exchange); false when not one of them. */
  other?(req: IncomingMessage, res: ServerResponse, body: unknown): boolean;
}

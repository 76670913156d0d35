// What an agent reported about its own run (cost, tokens, a usage or rate limit, its error),
// and the one on-disk form of it: agent.json in the attempt folder. Only what the tool printed
// is recorded; a field the tool does not report stays absent (never estimated).
import { readFileSync, writeFileSync } from 'node:fs';

import type { AttemptPaths } from '../statePaths';

export type LimitKind =
  /** A plan's quota is used up (Claude's 5-hour window, Codex's usage limit, Gemini's daily quota): wait for the reset. */
  | 'usage-limit'
  /** Too many requests for now (HTTP 429 without a quota message): short waits help. */
  | 'rate-limit'
  /** The provider is overloaded or down (HTTP 529/503). */
  | 'overloaded';

export interface UsageLimit {
  kind: LimitKind;
  /** The tool's own words, one line. */
  message: string;
  /** When the limit lifts, when the tool gave a timestamp or a duration (ISO 8601, UTC). */
  resetsAt?: string;
  /** The tool's words for the reset ("3:28 PM", "10pm (America/New_York)", "in 2 hours"). */
  resetText?: string;
}

export interface TokenCounts {
  input?: number;
  output?: number;
  /** Input tokens read from the provider's prompt cache (part of `input` where the tool counts them there). */
  cacheRead?: number;
  cacheWrite?: number;
  reasoning?: number;
}

export interface AgentReport {
  /** The preset whose output this is. */
  preset: string;
  costUsd?: number;
  tokens?: TokenCounts;
  /** GitHub Copilot bills in premium requests, not dollars. */
  premiumRequests?: number;
  /** The last usage-limit, rate-limit or overload signal the tool printed (a retried one included). */
  limit?: UsageLimit;
  /** The last error the tool reported (a run that recovered from it may still have succeeded). */
  error?: string;
}

/**
 * The report as agent.json holds it (snake_case, like the task file). Figures are rounded to 6
 * decimal places: a sum of reported dollars carries binary-fraction noise (0.006350000000000001).
 */
export function agentReportJson(report: AgentReport): Record<string, unknown> {
  const tokens = report.tokens && {
    input: rounded(report.tokens.input),
    output: rounded(report.tokens.output),
    cache_read: rounded(report.tokens.cacheRead),
    cache_write: rounded(report.tokens.cacheWrite),
    reasoning: rounded(report.tokens.reasoning),
  };
  const limit = report.limit && {
    kind: report.limit.kind,
    message: report.limit.message,
    resets_at: report.limit.resetsAt,
    reset_text: report.limit.resetText,
  };
  return dropUndefined({
    preset: report.preset,
    cost_usd: rounded(report.costUsd),
    tokens: tokens && dropUndefined(tokens),
    premium_requests: rounded(report.premiumRequests),
    limit: limit && dropUndefined(limit),
    error: report.error,
  });
}

function rounded(n: number | undefined): number | undefined {
  return n === undefined ? undefined : Number(n.toFixed(6));
}

export function writeAgentReport(files: AttemptPaths, report: AgentReport): void {
  writeFileSync(files.agentReport, JSON.stringify(agentReportJson(report), null, 2) + '\n');
}

/** agent.json of an attempt folder back as a report; undefined when there is none or it is unreadable. */
export function readAgentReport(files: AttemptPaths): AgentReport | undefined {
  let o: Record<string, unknown>;
  try {
    o = record(JSON.parse(readFileSync(files.agentReport, 'utf8')));
  } catch {
    return undefined;
  }
  if (typeof o.preset !== 'string') return undefined;
  const t = record(o.tokens);
  const tokens: TokenCounts = dropUndefined({
    input: num(t.input),
    output: num(t.output),
    cacheRead: num(t.cache_read),
    cacheWrite: num(t.cache_write),
    reasoning: num(t.reasoning),
  });
  const l = record(o.limit);
  const kind = LIMIT_KINDS.find((k) => k === l.kind);
  const limit: UsageLimit | undefined =
    kind && dropUndefined({ kind, message: text(l.message) ?? '', resetsAt: text(l.resets_at), resetText: text(l.reset_text) });
  return dropUndefined({
    preset: o.preset,
    costUsd: num(o.cost_usd),
    tokens: Object.keys(tokens).length ? tokens : undefined,
    premiumRequests: num(o.premium_requests),
    limit,
    error: text(o.error),
  });
}

const LIMIT_KINDS: readonly LimitKind[] = ['usage-limit', 'rate-limit', 'overloaded'];

function record(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** One line for a terminal: `cost $0.0421, tokens 1200 in / 340 out`; '' when nothing was reported. */
export function describeReport(report: AgentReport): string {
  const parts: string[] = [];
  if (report.costUsd !== undefined) parts.push(`cost $${rounded(report.costUsd)}`);
  if (report.premiumRequests !== undefined) parts.push(`${report.premiumRequests} premium request(s)`);
  const t = report.tokens;
  if (t && (t.input !== undefined || t.output !== undefined)) parts.push(`tokens ${t.input ?? '?'} in / ${t.output ?? '?'} out`);
  if (report.limit) parts.push(`${report.limit.kind}: ${report.limit.message}`);
  return parts.join(', ');
}

function dropUndefined<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

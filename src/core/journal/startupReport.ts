// The start-up summary for a person: as terminal text (`launchpad start`) and as Markdown (the
// editor's Start Session). Both come from the same sections, so they say the same things; so
// does the focus question both ask.
import type { FocusTask } from './sessionFocus';
import type { StartupSummary, StepStatus, TaskProgress } from './startup';

export interface Section {
  step: number;
  title: string;
  status: string;
  /** Plain lines; `code` lines are shown verbatim (git output). */
  lines: Array<{ text: string; code?: boolean; warning?: boolean }>;
}

const LABEL: Record<StepStatus | 'pass', string> = { ok: 'OK', warn: 'WARNING', fail: 'FAIL', skipped: 'SKIPPED', pass: 'PASS' };

export function startupSections(s: StartupSummary): Section[] {
  const line = (text: string, extra: { code?: boolean; warning?: boolean } = {}) => ({ text, ...extra });
  const p = s.progress;
  const g = s.git;
  const t = s.tasks;
  return [
    {
      step: 1,
      title: 'Directory verification',
      status: LABEL[s.directory.status],
      lines: [
        line(`project root: ${s.directory.root} (${s.directory.markers.join(', ')})`),
        line(`git repository: ${s.directory.git_toplevel}`),
      ],
    },
    {
      step: 2,
      title: `Progress context (last ${p.entries_read} journal entries)`,
      status: LABEL[p.status],
      lines: [
        ...(p.entries_read ? [] : [line('the journal is empty: this is the first session')]),
        ...listed('accomplished', p.accomplishments),
        ...(p.unresolved_blockers.length
          ? p.unresolved_blockers.map((b) => line(`unresolved blocker: Task ${b.task_id} (${b.spec}): ${b.issue}`, { warning: true }))
          : p.entries_read
            ? [line('unresolved blockers: none')]
            : []),
        ...listed('suggested next step', p.next_steps),
      ],
    },
    {
      step: 3,
      title: `Git state (branch ${g.branch ?? 'detached HEAD'})`,
      status: LABEL[g.status],
      lines: [
        ...g.warnings.map((w) => line(w, { warning: true })),
        line(g.status_lines.length ? 'git status:' : 'git status: clean'),
        ...g.status_lines.map((l) => line(l, { code: true })),
        line('last commits:'),
        ...g.recent_commits.map((l) => line(l, { code: true })),
      ],
    },
    {
      step: 4,
      title: 'Task status',
      status: LABEL[t.status],
      lines: [
        ...t.warnings.map((w) => line(w, { warning: !w.startsWith('spec task lists') })),
        ...(t.spec ? progressLines(`spec ${t.spec.name}`, t.spec) : []),
        ...(t.spec?.next_parent ? [line(`current parent task: ${t.spec.next_parent.id}: ${t.spec.next_parent.title}`)] : []),
        ...(t.harness ? progressLines('harness-tasks.json', t.harness) : []),
        ...(!t.spec && !t.harness ? [line('no harness-tasks.json and no --spec: no tasks to show')] : []),
      ],
    },
    {
      step: 5,
      title: 'Environment health',
      status: LABEL[s.health.status],
      lines: [
        ...(s.health.source
          ? [line(`${s.health.source}${s.health.duration_ms !== null ? ` (${(s.health.duration_ms / 1000).toFixed(1)} s)` : ''}`)]
          : []),
        line(s.health.detail, { warning: s.health.status === 'fail' }),
      ],
    },
  ];

  function listed(label: string, items: string[]) {
    return items.map((i) => line(`${label}: ${i}`));
  }
  function progressLines(name: string, pr: TaskProgress) {
    return [
      line(`${name}: ${pr.completed}/${pr.total} completed (${pr.percent}%)`),
      line(pr.next ? `next: ${pr.next.id}: ${pr.next.title}` : 'next: nothing left'),
      ...pr.blocked.map((b) => line(`blocked: ${b.id}: ${b.title}${b.reason ? ` (${b.reason})` : ''}`, { warning: true })),
    ];
  }
}

export function renderStartupText(s: StartupSummary): string {
  const out = [`Session start-up in ${s.root}`, ''];
  for (const sec of startupSections(s)) {
    out.push(`${sec.step}. ${sec.title}: ${sec.status}`);
    for (const l of sec.lines) out.push(`   ${l.warning ? 'warning: ' : ''}${l.code ? '  ' : ''}${l.text}`);
  }
  return out.join('\n') + '\n';
}

/** `focus`: the question (and the scope warning) once known; undefined while the task is being picked; null when there is nothing to do. */
export function renderStartupMarkdown(s: StartupSummary, focus?: { question: string; warning?: string } | null): string {
  const out = ['# Launchpad: session start-up', '', `Project: \`${s.root}\``, ''];
  for (const sec of startupSections(s)) {
    out.push(`## ${sec.step}. ${escape(sec.title)}: ${sec.status}`, '');
    let code: string[] = [];
    const flush = () => {
      if (code.length) out.push('```text', ...code, '```');
      code = [];
    };
    for (const l of sec.lines) {
      if (l.code) {
        code.push(l.text);
        continue;
      }
      flush();
      out.push(`- ${l.warning ? '**Warning:** ' : ''}${escape(l.text)}`);
    }
    flush();
    out.push('');
  }
  out.push('## 6. Focus', '');
  if (focus?.warning) out.push('```text', focus.warning, '```', '');
  out.push(
    focus ? `**${escape(focus.question)}**` : focus === null ? 'Nothing left to work on.' : '_Choosing the task for this session…_',
    '',
  );
  return out.join('\n');
}

function escape(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/[\\`*_{}[\]<>#|]/g, '\\$&');
}

/** "Ready to work on Task 1.2: Implement JWT validation?" */
export function focusQuestion(tasks: readonly FocusTask[], summary?: StartupSummary): string {
  if (tasks.length === 1) {
    const t = tasks[0]!;
    const next = summary?.tasks.spec?.next_parent?.id === t.id ? summary.tasks.spec.next : null;
    return `Ready to work on Task ${t.id}: ${t.title}${next ? ` (next subtask ${next.id}: ${next.title})` : ''}?`;
  }
  return `Ready to work on Tasks ${tasks.map((t) => t.id).join(', ')}: ${tasks.map((t) => t.title).join('; ')}?`;
}

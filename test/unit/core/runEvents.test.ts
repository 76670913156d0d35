// The event stream's writer and reader on their own: versioned records in order, a session file
// per session (a number used twice gets a second file), the oldest files removed, a late reader
// catching up from the first record and reading on as the file grows (a line half written waits),
// and which sessions are live (their process alive and the same process, no end record yet).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

import { processIdentity } from '../../../src/core/processIdentity';
import { EventFileReader, liveSessions, parseRecord, sessionFiles, SessionProgress } from '../../../src/core/runEvents/reader';
import { EVENT_FILES_KEPT, EVENTS_VERSION, RunEventWriter } from '../../../src/core/runEvents/writer';
import { StatePaths } from '../../../src/core/statePaths';
import { tempDir } from '../helpers/tmp';

const SESSION = { base_branch: 'main', mode: 'worktrees' as const, worker: null };

describe('run events: writer and reader', () => {
  it('writes each record once to the listener and the session file, versioned and numbered, the session record first', () => {
    const paths = new StatePaths(tempDir());
    const heard: string[] = [];
    const w = new RunEventWriter((line) => heard.push(line));
    w.write({ type: 'stop', scope: 'run', now: false }); // before the session: the listener only
    w.startSession(paths, { session: 7, ...SESSION });
    w.task({ taskId: 'task-001', kind: 'checkpoint', checkpoint: { step: 1, total: 2, description: 'half' } });
    w.end({ error: new Error('boom') });
    w.close();

    const file = join(paths.events, 'session-7.jsonl');
    const text = readFileSync(file, 'utf8');
    assert.equal(heard.join(''), `${heard[0]}${text}`, 'the file holds the same lines as the listener, from the session on');
    const records = heard.map((l) => JSON.parse(l));
    assert.deepEqual(
      records.map((r) => [r.v, r.seq, r.type]),
      [
        [EVENTS_VERSION, 0, 'stop'],
        [EVENTS_VERSION, 1, 'session'],
        [EVENTS_VERSION, 2, 'task'],
        [EVENTS_VERSION, 3, 'end'],
      ],
    );
    const session = records[1];
    assert.equal(session.pid, process.pid);
    assert.equal(session.identity, processIdentity(process.pid));
    assert.equal(session.host, hostname());
    assert.equal(session.root, paths.root);
    assert.equal(session.session, 7);
    assert.deepEqual(
      { step: records[2].step, total: records[2].total, description: records[2].description, event: records[2].event },
      { step: 1, total: 2, description: 'half', event: 'checkpoint' },
    );
    assert.deepEqual([records[3].outcome, records[3].error], [null, 'boom']);
    for (const r of records) assert.ok(!Number.isNaN(Date.parse(r.at)), r.at);
  });

  it('gives a session number used twice a file of its own, and keeps the newest files', () => {
    const paths = new StatePaths(tempDir());
    for (let i = 0; i < 2; i++) {
      const w = new RunEventWriter();
      w.startSession(paths, { session: 3, ...SESSION });
      w.close();
    }
    assert.deepEqual(readdirSync(paths.events).sort(), ['session-3.2.jsonl', 'session-3.jsonl']);
    for (let n = 10; n < 10 + EVENT_FILES_KEPT + 5; n++) {
      const w = new RunEventWriter();
      w.startSession(paths, { session: n, ...SESSION });
      w.close();
    }
    const left = readdirSync(paths.events);
    assert.equal(left.length, EVENT_FILES_KEPT);
    assert.ok(left.includes(`session-${10 + EVENT_FILES_KEPT + 4}.jsonl`), 'the newest is kept');
    assert.ok(!left.includes('session-3.jsonl'), 'the oldest went');
  });

  it('reads a file from its first record, then only what was appended; a line half written waits for its end', () => {
    const dir = tempDir();
    const file = join(dir, 'session-1.jsonl');
    const line = (seq: number, extra = '') =>
      `{"v":1,"seq":${seq},"at":"2026-01-01T00:00:00.000Z","type":"log","line":"l${seq}${extra}","log_type":"WARN","task":null}\n`;
    writeFileSync(file, line(0) + line(1));
    const reader = new EventFileReader(file);
    assert.deepEqual(
      reader.read().map((r) => r.seq),
      [0, 1],
    );
    assert.deepEqual(reader.read(), []);
    const next = line(2, ' é'); // a multi-byte character split across two reads
    const cut = Buffer.from(next).indexOf(Buffer.from('é')) + 1;
    appendFileSync(file, Buffer.from(next).subarray(0, cut));
    assert.deepEqual(reader.read(), [], 'half a line is not a record');
    appendFileSync(file, Buffer.concat([Buffer.from(next).subarray(cut), Buffer.from(line(3))]));
    assert.deepEqual(
      reader.read().map((r) => (r.type === 'log' ? r.line : r.type)),
      ['l2 é', 'l3'],
    );
    // A later reader catches up from the start.
    assert.equal(new EventFileReader(file).read().length, 4);
  });

  it('skips a line of another version or that is not a record', () => {
    assert.equal(parseRecord('{"v":2,"seq":0,"at":"x","type":"log"}'), undefined);
    assert.equal(parseRecord('not json'), undefined);
    assert.equal(parseRecord('{"v":1,"type":"log"}'), undefined, 'no seq');
    assert.equal(parseRecord('{"v":1,"seq":0,"at":"x","type":"log","line":"a"}')?.type, 'log');
  });

  it('tells live sessions: the process alive and the same one, no end written', async () => {
    const paths = new StatePaths(tempDir());
    const live = new RunEventWriter();
    live.startSession(paths, { session: 1, ...SESSION });
    const ended = new RunEventWriter();
    ended.startSession(paths, { session: 2, ...SESSION });
    ended.end({ error: 'done' });
    ended.close();
    // A session whose process has exited, and one whose pid now belongs to another process.
    const child = spawn('true');
    await new Promise((r) => child.on('exit', r));
    const dead = { ...JSON.parse(readFileSync(live.path!, 'utf8').split('\n')[0]!), session: 3, pid: child.pid };
    writeFileSync(join(paths.events, 'session-3.jsonl'), JSON.stringify(dead) + '\n');
    const reused = { ...dead, session: 4, pid: process.pid, identity: 'another process' };
    writeFileSync(join(paths.events, 'session-4.jsonl'), JSON.stringify(reused) + '\n');

    assert.deepEqual(
      sessionFiles(paths).map((f) => [f.session.session, f.live]),
      [
        [4, false],
        [3, false],
        [2, false],
        [1, true],
      ],
    );
    assert.deepEqual(
      liveSessions(paths).map((f) => f.file),
      [live.path],
    );
    live.close();
  });
});

describe('run events: what a session says so far', () => {
  const rec = (seq: number, body: Record<string, unknown>) => ({ v: 1, seq, at: '2026-01-01T00:00:00.000Z', ...body }) as never;
  const attempt = (seq: number, task: string, n: number) =>
    rec(seq, {
      type: 'attempt',
      task,
      attempt: n,
      agent: `agent_${task}${n}`,
      dir: `d/${task}/${n}`,
      transcript: `d/${task}/${n}/transcript.log`,
    });

  it('holds the running attempts (the last of each task until its end), the stop and the end', () => {
    const p = new SessionProgress();
    p.apply([attempt(1, 'a', 1), attempt(2, 'b', 1), rec(3, { type: 'task', task: 'a', event: 'checkpoint' })]);
    assert.deepEqual([...p.running.keys()], ['a', 'b']);
    p.apply([
      rec(4, { type: 'task', task: 'a', event: 'failed' }),
      attempt(5, 'a', 2),
      rec(6, { type: 'task', task: 'b', event: 'completed' }),
    ]);
    assert.deepEqual(
      [...p.running.values()].map((r) => (r as { dir: string }).dir),
      ['d/a/2'],
    );
    assert.equal(p.ended.get('b')?.event, 'completed');
    assert.equal(p.stopping, false);
    p.apply([
      rec(7, { type: 'stop', scope: 'task', task: 'a', agent: 'agent_a2', taken: true }),
      rec(8, { type: 'stop', scope: 'run', now: false }),
    ]);
    assert.equal(p.stopping, true, 'a stop of the run, not of one task');
    assert.equal(p.end === undefined, true, 'no end yet');
    p.apply([rec(9, { type: 'end', outcome: null, error: 'x' })]);
    assert.equal(p.end?.error, 'x');
  });
});

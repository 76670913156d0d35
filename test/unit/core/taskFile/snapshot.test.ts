import assert from 'node:assert/strict';
import { readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';

import { StatePaths } from '../../../../src/core/statePaths';
import {
  parseTaskFile,
  serializeTaskEntry,
  serializeTaskFile,
  serializeTaskFileFrom,
  TaskFileError,
} from '../../../../src/core/taskFile/parse';
import type { Task, TaskFile } from '../../../../src/core/taskFile/schema';
import { copyJson, TaskFileSnapshot } from '../../../../src/core/taskFile/snapshot';
import { StateStore } from '../../../../src/core/taskFile/store';
import { tempDir } from '../../helpers/tmp';
import { rng, task, taskFile } from '../fixtures';

/** parseTaskFile's result for a text, or its error. */
function parsed(text: string): TaskFile {
  const r = parseTaskFile(text);
  if (!r.ok) throw r.error;
  return r.file;
}

function snapshotOf(text: string): TaskFileSnapshot {
  return new TaskFileSnapshot(Buffer.from(text), parsed(text));
}

/** One random change of the kinds transactions make, to a copy. */
function randomEdit(file: TaskFile, rand: (n: number) => number, n: number): void {
  const t = file.tasks[rand(file.tasks.length)]!;
  switch (rand(9)) {
    case 0:
      t.status = 'in_progress';
      t.attempts += 1;
      t.agent_id = `agent_${n}`;
      break;
    case 1:
      t.status = 'failed';
      t.error_log.push(`[TEST_FAIL] run ${n} "quoted"\nsecond line`);
      t.failed_at = '2025-07-01T10:00:00Z';
      break;
    case 2:
      // A task as `add` builds it: defaults left to the schema, keys in its own order.
      file.tasks.push({ title: `added ${n}`, id: `new-${n}`, status: 'pending' } as Task);
      break;
    case 3:
      file.tasks.splice(rand(file.tasks.length), 1);
      break;
    case 4:
      file.session_count += 1;
      break;
    case 5:
      (t as Record<string, unknown>).unknown_field = { nested: [n, { deep: 'x' }] };
      break;
    case 6:
      file.tasks.reverse();
      break;
    case 7:
      (t as Record<string, unknown>).agent_id = undefined; // the same text as absent
      break;
    default:
      // nothing: a read-only transaction
      break;
  }
}

describe('core/taskFile snapshot', () => {
  it('serializeTaskFileFrom with the bytes of each serializeTaskEntry is serializeTaskFile, byte for byte', () => {
    const files = [
      taskFile([]),
      taskFile([task('a')]),
      taskFile([task('a', { context: 'line\nbreak "q" \\ \u2028 é 日本 🚀', depends_on: ['x', 'y'] }), task('b', { checkpoints: [] })]),
      { ...taskFile([task('a')]), extra: { tasks: [], '\n  "tasks": []': 1 }, last_session: null } as TaskFile,
      { tasks: [task('first')], version: 3, session_config: taskFile([]).session_config } as TaskFile,
    ];
    for (const file of files) {
      const entries = file.tasks.map((t) => Buffer.from(serializeTaskEntry(t)));
      assert.equal(Buffer.concat(serializeTaskFileFrom(file, entries)).toString('utf8'), serializeTaskFile(file));
    }
  });

  it('an edit gives the text serializeTaskFile writes and the file parseTaskFile reads back, over many random edits', () => {
    const rand = rng(7);
    let text = serializeTaskFile(taskFile(Array.from({ length: 12 }, (_, i) => task(`t${i}`, { depends_on: i ? [`t${i - 1}`] : [] }))));
    let snap = snapshotOf(text);
    let writes = 0;
    for (let n = 0; n < 400; n++) {
      const file = snap.copy();
      randomEdit(file, rand, n);
      if (!file.tasks.length) file.tasks.push(task(`refill-${n}`));
      const edit = snap.edit(file);
      const expected = serializeTaskFile(file);
      if (!edit) {
        assert.equal(expected, serializeTaskFile(parsed(text)), `edit ${n}: nothing to write only when the text is unchanged`);
        continue;
      }
      writes++;
      assert.equal(edit.text, expected, `edit ${n}: the text`);
      assert.equal(edit.bytes.toString('utf8'), expected);
      assert.ok(edit.next.matches(Buffer.from(expected)) && !snap.matches(Buffer.from(expected)));
      // The next snapshot holds exactly what a fresh parse of that text gives, key order included.
      assert.equal(serializeTaskFile(edit.next.copy()), serializeTaskFile(parsed(edit.text)), `edit ${n}: the parse`);
      assert.deepEqual(edit.next.copy(), parsed(edit.text));
      text = edit.text;
      snap = edit.next;
    }
    assert.ok(writes > 250, `most edits change something (${writes})`);
  });

  it('an edit the schema refuses throws its error, naming the field, and the snapshot stays usable', () => {
    const snap = snapshotOf(serializeTaskFile(taskFile([task('a'), task('b')])));
    const bad = snap.copy();
    bad.tasks[1]!.title = 'x'.repeat(501);
    assert.throws(
      () => snap.edit(bad),
      (e: unknown) => e instanceof TaskFileError && e.field === 'tasks[1].title',
    );
    const dup = snap.copy();
    dup.tasks[1]!.id = 'a';
    assert.throws(
      () => snap.edit(dup),
      (e: unknown) => e instanceof TaskFileError && /duplicate id "a"/.test(e.message),
    );
    // A repeated id however it comes: a task copied in again, two new tasks with one new id.
    const again = snap.copy();
    again.tasks.push(structuredClone(again.tasks[0]!));
    assert.throws(
      () => snap.edit(again),
      (e: unknown) => e instanceof TaskFileError && e.message.includes('tasks[2].id: duplicate id "a" (also tasks[0].id)'),
    );
    const twoNew = snap.copy();
    twoNew.tasks.push(task('c'), task('c'));
    assert.throws(
      () => snap.edit(twoNew),
      (e: unknown) => e instanceof TaskFileError && e.message.includes('tasks[3].id: duplicate id "c" (also tasks[2].id)'),
    );
    const top = snap.copy();
    (top as Record<string, unknown>).session_count = -1;
    assert.throws(
      () => snap.edit(top),
      (e: unknown) => e instanceof TaskFileError && e.field === 'session_count',
    );
    const proto = snap.copy();
    Object.defineProperty(proto.tasks[0]!, '__proto__', { value: 1, enumerable: true });
    assert.throws(
      () => snap.edit(proto),
      (e: unknown) => e instanceof TaskFileError && e.field === 'tasks[0].__proto__',
    );
    const fine = snap.copy();
    fine.tasks[0]!.status = 'completed';
    assert.match(snap.edit(fine)!.text, /"status": "completed"/);
  });

  it('matches only the exact bytes it holds', () => {
    const snap = snapshotOf(serializeTaskFile(taskFile([task('a'), task('b')])));
    const file = snap.copy();
    file.tasks[1]!.attempts = 2;
    const edit = snap.edit(file)!;
    const bytes = Buffer.from(edit.bytes);
    assert.equal(edit.next.matches(Buffer.from(bytes)), true);
    for (const at of [0, 10, bytes.indexOf('"b"'), bytes.length - 1]) {
      const changed = Buffer.from(bytes);
      changed[at] = changed[at]! ^ 1;
      assert.equal(edit.next.matches(changed), false, `a byte changed at ${at}`);
    }
    assert.equal(edit.next.matches(bytes.subarray(0, bytes.length - 1)), false);
    assert.equal(edit.next.matches(Buffer.concat([bytes, Buffer.from(' ')])), false);
  });

  it("edits take turns in two buffers: the snapshot two writes back is released, its text refused, never another write's bytes", () => {
    let snap = snapshotOf(serializeTaskFile(taskFile([task('a'), task('b')])));
    const chain: Array<{ snap: TaskFileSnapshot; text: string }> = [];
    for (let n = 1; n <= 6; n++) {
      const file = snap.copy();
      file.tasks[n % 2]!.attempts = n;
      const edit = snap.edit(file)!;
      chain.push({ snap: edit.next, text: edit.text });
      snap = edit.next;
    }
    // The last two hold their bytes; every one before them gave its buffer to a later write.
    for (const [i, { snap: s, text }] of chain.entries()) {
      if (i >= chain.length - 2) {
        assert.equal(s.released, false, `edit ${i + 1}`);
        assert.equal(s.text(), text);
        assert.ok(s.matches(Buffer.from(text)));
      } else {
        assert.equal(s.released, true, `edit ${i + 1}`);
        assert.throws(() => s.text(), /a later write has replaced/);
        assert.equal(s.matches(Buffer.from(text)), false);
      }
    }
    // The bytes of each write were what it said when it was made; the newest are still.
    assert.equal(snap.text(), serializeTaskFile(parsed(chain.at(-1)!.text)));
  });

  it('copies share nothing with the snapshot or each other', () => {
    const snap = snapshotOf(serializeTaskFile(taskFile([task('a', { depends_on: ['b'] }), task('b')])));
    const one = snap.copy();
    one.tasks[0]!.depends_on.push('c');
    one.tasks[1]!.status = 'failed';
    one.session_config.max_parallel_agents = 9;
    const two = snap.copy();
    assert.deepEqual(two.tasks[0]!.depends_on, ['b']);
    assert.equal(two.tasks[1]!.status, 'pending');
    assert.equal(two.session_config.max_parallel_agents, 3);
    assert.deepEqual(copyJson({ a: [1, { b: null }], c: 'x' }), { a: [1, { b: null }], c: 'x' });
  });

  describe('in the store', () => {
    function newStore(): { store: StateStore; paths: StatePaths } {
      const paths = new StatePaths(tempDir('launchpad-snapshot-'));
      return { store: new StateStore(paths, 'launchpad test'), paths };
    }

    it('a load returns the caller its own copy, and what a fresh store would read', async () => {
      const { store, paths } = newStore();
      store.save(taskFile([task('a'), task('b')]));
      const first = store.load().file;
      first.tasks[0]!.status = 'completed';
      first.tasks.pop();
      assert.deepEqual(store.load().file, new StateStore(paths, 'launchpad test', false).load().file);
      assert.equal(store.load().file.tasks.length, 2);
      // What a transaction returns stays as it was when a later transaction changes the file.
      const held = await store.transact((f) => f.tasks[0]!);
      await store.transact((f) => void (f.tasks[0]!.status = 'failed'));
      assert.equal(held.status, 'pending');
    });

    it("a load's text, read at once, is the file's; read after two more writes, it is refused rather than wrong", async () => {
      const { store, paths } = newStore();
      store.save(taskFile([task('a'), task('b')]));
      await store.transact((f) => void (f.tasks[0]!.attempts = 1));
      const now = store.load();
      assert.equal(now.text, readFileSync(paths.tasks, 'utf8'));
      const late = store.load();
      await store.transact((f) => void (f.tasks[0]!.attempts = 2));
      await store.transact((f) => void (f.tasks[0]!.attempts = 3));
      assert.throws(() => late.text, /a later write has replaced/);
      assert.equal(store.load().text, readFileSync(paths.tasks, 'utf8'));
    });

    it('every store of the process reads the file another one wrote from its snapshot, and its own copy', async () => {
      const { store, paths } = newStore();
      store.save(taskFile([task('a')]));
      const reader = new StateStore(paths, 'launchpad journal');
      await store.transact((f) => void (f.tasks[0]!.status = 'completed'));
      const seen = reader.load().file;
      assert.equal(seen.tasks[0]!.status, 'completed');
      seen.tasks[0]!.status = 'failed';
      assert.equal(store.load().file.tasks[0]!.status, 'completed');
      await reader.transact((f) => void (f.tasks[0]!.attempts = 4));
      assert.equal(store.load().file.tasks[0]!.attempts, 4);
    });

    it('peek gives the file for reading only: frozen, current, and never what load or a transaction hands out', async () => {
      const { store, paths } = newStore();
      store.save(taskFile([task('a'), task('b')]));
      const seen = store.peek();
      assert.throws(() => {
        seen.tasks[0]!.status = 'failed';
      }, TypeError);
      assert.throws(() => seen.tasks[1]!.depends_on.push('x'), TypeError);
      assert.throws(() => seen.tasks.push(task('c')), TypeError);
      await store.transact((f) => void (f.tasks[1]!.status = 'completed'));
      const after = store.peek();
      assert.equal(after.tasks[1]!.status, 'completed');
      assert.equal(seen.tasks[1]!.status, 'pending', 'an earlier peek is not changed by a later write');
      const copy = store.load().file;
      copy.tasks[0]!.title = 'changed';
      assert.equal(store.peek().tasks[0]!.title, 'title of a');
      assert.deepEqual(store.peek(), new StateStore(paths, 'launchpad test', false).load().file);
    });

    it('lastKnown gives what this process last read or wrote, frozen, without reading the file', async () => {
      const { store, paths } = newStore();
      assert.equal(new StateStore(new StatePaths(tempDir('launchpad-snapshot-')), 'launchpad test').lastKnown(), undefined);
      store.save(taskFile([task('a')]));
      await store.transact((f) => void (f.tasks[0]!.status = 'in_progress'));
      const known = store.lastKnown()!;
      assert.equal(known.tasks[0]!.status, 'in_progress');
      assert.throws(() => void (known.tasks[0]!.status = 'failed'), TypeError);
      // Another writer: peek reads it, lastKnown does not (until something reads the file).
      writeFileSync(paths.tasks, serializeTaskFile(taskFile([task('a', { status: 'completed' })])));
      assert.equal(store.lastKnown()!.tasks[0]!.status, 'in_progress');
      assert.equal(store.peek().tasks[0]!.status, 'completed');
      assert.equal(store.lastKnown()!.tasks[0]!.status, 'completed');
    });

    it('a file another process rewrote is read again, even at the same size and modification time', async () => {
      const { store, paths } = newStore();
      store.save(taskFile([task('aaaa')]));
      store.load();
      const before = statSync(paths.tasks);
      const text = readFileSync(paths.tasks, 'utf8');
      writeFileSync(paths.tasks, text.replace('"title of aaaa"', '"title of bbbb"'));
      utimesSync(paths.tasks, before.atime, before.mtime);
      assert.equal(statSync(paths.tasks).size, before.size);
      assert.equal(store.load().file.tasks[0]!.title, 'title of bbbb');
      await store.transact((f) => void (f.tasks[0]!.attempts = 1));
      assert.match(readFileSync(paths.tasks, 'utf8'), /"title": "title of bbbb"/);
      // A person's formatting: parsed afresh; a change rewrites it in Launchpad's format.
      writeFileSync(paths.tasks, JSON.stringify({ tasks: [{ id: 'x', title: 'hand', status: 'pending' }] }));
      assert.equal(await store.transact((f) => f.tasks[0]!.priority), 'P1');
      assert.equal(
        readFileSync(paths.tasks, 'utf8'),
        JSON.stringify({ tasks: [{ id: 'x', title: 'hand', status: 'pending' }] }),
        'nothing changed, nothing written',
      );
      await store.transact((f) => void (f.tasks[0]!.attempts = 2));
      assert.equal(readFileSync(paths.tasks, 'utf8'), serializeTaskFile(new StateStore(paths, 'launchpad test', false).load().file));
    });

    it('a refused change or a failing mutation writes nothing and leaves the next transaction its real base', async () => {
      const { store, paths } = newStore();
      store.save(taskFile([task('a')]));
      const text = readFileSync(paths.tasks, 'utf8');
      await assert.rejects(
        store.transact((f) => void (f.tasks[0]!.title = 'x'.repeat(501))),
        (e: unknown) => e instanceof TaskFileError && /not written, the change would make it invalid: tasks\[0\]\.title/.test(e.message),
      );
      await assert.rejects(
        store.transact((f) => {
          f.tasks[0]!.status = 'completed';
          throw new Error('midway');
        }),
        /midway/,
      );
      assert.equal(readFileSync(paths.tasks, 'utf8'), text);
      assert.equal(store.load().file.tasks[0]!.status, 'pending');
      await store.transact((f) => void (f.tasks[0]!.attempts = 1));
      assert.deepEqual(store.load().file, new StateStore(paths, 'launchpad test', false).load().file);
      assert.equal(store.load().file.tasks[0]!.title, 'title of a');
    });

    it('a run of transactions writes the same bytes with the snapshot as without it', async () => {
      const cached = newStore();
      const fresh = newStore();
      const start = taskFile(Array.from({ length: 8 }, (_, i) => task(`t${i}`)));
      cached.store.save(start);
      fresh.store.save(start);
      const rand = rng(3);
      for (let n = 0; n < 60; n++) {
        const seed = rand(1e9);
        const mutate = (f: TaskFile) => {
          randomEdit(f, rng(seed), n);
          if (!f.tasks.length) f.tasks.push(task(`refill-${n}`));
        };
        await cached.store.transact(mutate);
        // Without the snapshot: always the whole parse, as before snapshots.
        await new StateStore(fresh.paths, 'launchpad test', false).transact(mutate);
        assert.equal(readFileSync(cached.paths.tasks, 'utf8'), readFileSync(fresh.paths.tasks, 'utf8'), `transaction ${n}`);
      }
    });
  });
});

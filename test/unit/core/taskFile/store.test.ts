import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

import { InputError } from '../../../../src/core/inputError';
import { LockHeldError, tryAcquireLock } from '../../../../src/core/lock';
import { StatePaths } from '../../../../src/core/statePaths';
import { parseTaskFile, serializeTaskFile, TaskFileError } from '../../../../src/core/taskFile/parse';
import { readTaskFileBytes, TaskFileMissingError } from '../../../../src/core/taskFile/read';
import { recordWrite, StateStore } from '../../../../src/core/taskFile/store';
import { version } from '../../../fixtures/core/saveLoop';
import { tempDir } from '../../helpers/tmp';
import { FIXTURE_SCRIPTS, task, taskFile } from '../fixtures';

function newStore(): { store: StateStore; paths: StatePaths } {
  const paths = new StatePaths(tempDir('launchpad-store-'));
  return { store: new StateStore(paths, 'launchpad test'), paths };
}

const leftovers = (paths: StatePaths) => readdirSync(paths.root).filter((n) => n.endsWith('.tmp'));

describe('core/stateStore', () => {
  describe('load', () => {
    it('throws TaskFileMissingError naming the directory when there is no file', () => {
      const { store, paths } = newStore();
      assert.equal(store.exists(), false);
      assert.throws(
        () => store.load(),
        (e: unknown) => e instanceof TaskFileMissingError && e.message.includes(paths.root),
      );
    });

    it('throws TaskFileError for a broken file, and returns the exact text of a good one', () => {
      const { store, paths } = newStore();
      writeFileSync(paths.tasks, '{"tasks": [}');
      assert.throws(() => store.load(), TaskFileError);
      const text = '{ "tasks": [ ] }';
      writeFileSync(paths.tasks, text);
      const loaded = store.load();
      assert.equal(loaded.text, text);
      assert.deepEqual(loaded.file.tasks, []);
    });
  });

  describe('save', () => {
    it('writes the file with no .bak when there was none before, and leaves no .tmp', () => {
      const { store, paths } = newStore();
      const text = store.save(taskFile([task('t1')]));
      assert.equal(readFileSync(paths.tasks, 'utf8'), text);
      assert.equal(text, serializeTaskFile(taskFile([task('t1')])));
      assert.equal(existsSync(paths.backup), false);
      assert.deepEqual(leftovers(paths), []);
    });

    it('copies the previous file byte-for-byte to .bak before replacing it', () => {
      const { store, paths } = newStore();
      const handWritten = '{"tasks":[{"id":"t1","title":"hand written","status":"pending"}]}  \n';
      writeFileSync(paths.tasks, handWritten);
      const text = store.save(taskFile([task('t1'), task('t2')]));
      assert.equal(readFileSync(paths.backup, 'utf8'), handWritten);
      assert.equal(readFileSync(paths.tasks, 'utf8'), text);
      store.save(taskFile([task('t3')]));
      assert.equal(readFileSync(paths.backup, 'utf8'), text, 'the .bak is always the previous version');
      assert.deepEqual(leftovers(paths), []);
    });

    it('replaces the file by rename (a new inode), never by rewriting it in place', () => {
      const { store, paths } = newStore();
      store.save(taskFile([]));
      const before = statSync(paths.tasks).ino;
      store.save(taskFile([task('t1')]));
      assert.notEqual(statSync(paths.tasks).ino, before);
    });
  });

  describe('create', () => {
    it('creates the file when absent', () => {
      const { store, paths } = newStore();
      assert.equal(store.create(taskFile([task('t1')])), true);
      assert.equal(parseTaskFile(readFileSync(paths.tasks, 'utf8')).ok, true);
      assert.deepEqual(leftovers(paths), []);
    });

    it('never clobbers an existing file, even a broken one', () => {
      const { store, paths } = newStore();
      writeFileSync(paths.tasks, 'not json at all');
      assert.equal(store.create(taskFile([task('t1')])), false);
      assert.equal(readFileSync(paths.tasks, 'utf8'), 'not json at all');
      assert.equal(existsSync(paths.backup), false);
      assert.deepEqual(leftovers(paths), []);
    });
  });

  describe('recover', () => {
    const good = serializeTaskFile(taskFile([task('t1')]));

    it('says ok for a valid file and touches nothing', () => {
      const { store, paths } = newStore();
      writeFileSync(paths.tasks, good);
      assert.deepEqual(store.recover(), { kind: 'ok' });
      assert.equal(existsSync(paths.backup), false);
    });

    it('keeps the parse of a file this process read already, rather than parsing it again', () => {
      const { store, paths } = newStore();
      writeFileSync(paths.tasks, good);
      const before = store.peek();
      assert.deepEqual(store.recover(), { kind: 'ok' });
      assert.equal(store.peek(), before, 'the same parse, not a new one');
      // Bytes it has not parsed are parsed (and checked) again.
      writeFileSync(paths.tasks, serializeTaskFile(taskFile([task('t2')])));
      assert.deepEqual(store.recover(), { kind: 'ok' });
      assert.notEqual(store.peek(), before);
      assert.equal(store.peek().tasks[0]!.id, 't2');
    });

    for (const [name, broken] of [
      ['unparseable', '{"tasks": [ {"id": "t1", '],
      ['schema-invalid', '{"tasks": [{"id": "t1", "title": "x", "status": "done"}]}'],
    ] as const) {
      it(`restores a valid .bak over an ${name} file and keeps the broken one as .corrupt-*`, () => {
        const { store, paths } = newStore();
        writeFileSync(paths.tasks, broken);
        // The broken bytes are what Launchpad last wrote (say, an older version with other rules).
        recordWrite(paths, broken);
        writeFileSync(paths.backup, good);
        const outcome = store.recover();
        assert.equal(outcome.kind, 'restored');
        assert.ok(outcome.kind === 'restored');
        assert.ok(outcome.error instanceof TaskFileError);
        assert.equal(readFileSync(paths.tasks, 'utf8'), good);
        assert.equal(readFileSync(paths.backup, 'utf8'), good);
        assert.match(outcome.corruptCopy, /harness-tasks\.json\.corrupt-/);
        assert.equal(readFileSync(outcome.corruptCopy, 'utf8'), broken);
        assert.deepEqual(readdirSync(paths.root).filter((n) => n.includes('.corrupt-')).length, 1);
        assert.deepEqual(leftovers(paths), []);
        assert.deepEqual(store.recover(), { kind: 'ok' });
      });
    }

    for (const [name, broken] of [
      ['unparseable', '{"tasks": [ {"id": "t1", '],
      ['schema-invalid', '{"tasks": [{"id": "t1", "title": "x", "status": "pending", "priority": "high"}]}'],
    ] as const) {
      it(`never replaces an ${name} file a person changed: both files byte-for-byte, the position named`, () => {
        const { store, paths } = newStore();
        store.save(taskFile([task('t1')]));
        store.save(taskFile([task('t1'), task('t2')]));
        writeFileSync(paths.tasks, broken);
        const bak = readFileSync(paths.backup);
        const outcome = store.recover();
        assert.ok(outcome.kind === 'unrecoverable', outcome.kind);
        assert.equal(outcome.reason, 'changed-by-hand');
        assert.match(outcome.detail, /changed since Launchpad last wrote it/);
        assert.match(outcome.detail, /launchpad restore-backup/);
        assert.match(
          outcome.detail,
          name === 'unparseable' ? /fix line 1, column 26 by hand/ : /fix tasks\[0\]\.priority at line 1, column 72 by hand/,
        );
        assert.doesNotMatch(outcome.logMessage, /\n/);
        assert.equal(readFileSync(paths.tasks, 'utf8'), broken);
        assert.ok(readFileSync(paths.backup).equals(bak));
        assert.deepEqual(
          readdirSync(paths.root)
            .filter((n) => n.startsWith('harness-'))
            .sort(),
          ['harness-tasks.json', 'harness-tasks.json.bak'],
        );
      });
    }

    it("without a record of what Launchpad wrote (an older harness), a broken file is a person's", () => {
      const { store, paths } = newStore();
      writeFileSync(paths.tasks, '{"tasks": [');
      writeFileSync(paths.backup, good);
      const outcome = store.recover();
      assert.ok(outcome.kind === 'unrecoverable' && outcome.reason === 'changed-by-hand');
      assert.equal(readFileSync(paths.tasks, 'utf8'), '{"tasks": [');
    });

    it("a FIFO or a device in the file's place: nothing read, nothing restored", () => {
      const { store, paths } = newStore();
      writeFileSync(paths.backup, good);
      execFileSync('mkfifo', [paths.tasks]);
      const outcome = store.recover();
      assert.ok(outcome.kind === 'unrecoverable' && outcome.reason === 'changed-by-hand');
      assert.match(outcome.error.message, /is a FIFO \(named pipe\), not a regular file/);
      assert.ok(lstatSync(paths.tasks).isFIFO());
    });

    it('with no .bak: unrecoverable, and the file stays byte-for-byte', () => {
      const { store, paths } = newStore();
      const broken = Buffer.from([0x7b, 0x0a, 0xff, 0xfe, 0x00, 0x22]);
      writeFileSync(paths.tasks, broken);
      const outcome = store.recover();
      assert.equal(outcome.kind, 'unrecoverable');
      assert.deepEqual(readFileSync(paths.tasks), broken);
      assert.deepEqual(readdirSync(paths.root), ['harness-tasks.json']);
    });

    it('with an invalid .bak: unrecoverable, and both files stay byte-for-byte', () => {
      const { store, paths } = newStore();
      writeFileSync(paths.tasks, '{"tasks": 1}');
      writeFileSync(paths.backup, '{"tasks": [');
      const outcome = store.recover();
      assert.equal(outcome.kind, 'unrecoverable');
      assert.ok(outcome.kind === 'unrecoverable');
      assert.match(outcome.error.message, /^harness-tasks\.json: tasks: expected array/);
      assert.equal(readFileSync(paths.tasks, 'utf8'), '{"tasks": 1}');
      assert.equal(readFileSync(paths.backup, 'utf8'), '{"tasks": [');
      assert.deepEqual(readdirSync(paths.root).sort(), ['harness-tasks.json', 'harness-tasks.json.bak']);
    });
  });

  describe('restoreBackup (launchpad restore-backup)', () => {
    const good = serializeTaskFile(taskFile([task('t1')]));

    it('replaces a broken file a person changed by the valid .bak, keeping the broken one', async () => {
      const { store, paths } = newStore();
      writeFileSync(paths.tasks, '{"tasks": [}');
      writeFileSync(paths.backup, good);
      const restored = await store.restoreBackup();
      assert.equal(readFileSync(paths.tasks, 'utf8'), good);
      assert.equal(readFileSync(restored.corruptCopy, 'utf8'), '{"tasks": [}');
      assert.match(restored.error.message, /invalid JSON at line 1, column 12/);
      assert.deepEqual(
        restored.file.tasks.map((t) => t.id),
        ['t1'],
      );
      assert.equal(existsSync(paths.stateLock) || existsSync(paths.sessionLock), false, 'both locks released');
      // Now it is Launchpad's own write.
      assert.ok(store.isLastWrite(readFileSync(paths.tasks)));
    });

    it('refuses, changing nothing: a valid file, no .bak, an invalid .bak, a live run', async () => {
      const { store, paths } = newStore();
      writeFileSync(paths.tasks, good);
      await assert.rejects(
        store.restoreBackup(),
        (e: unknown) => e instanceof InputError && /is valid: nothing to restore/.test(e.message),
      );
      writeFileSync(paths.tasks, '{"tasks": 1}');
      await assert.rejects(
        store.restoreBackup(),
        (e: unknown) => e instanceof InputError && /no harness-tasks\.json\.bak to restore from/.test(e.message),
      );
      writeFileSync(paths.backup, '{"tasks": [{"id": "t1"}]}');
      await assert.rejects(store.restoreBackup(), (e: unknown) => {
        assert.ok(e instanceof TaskFileError);
        assert.equal(e.file, 'harness-tasks.json.bak');
        assert.equal(e.field, 'tasks[0].title');
        assert.match(e.message, /the backup is not a valid task file either: nothing was restored/);
        return true;
      });
      writeFileSync(paths.backup, good);
      const run = tryAcquireLock(paths.sessionLock, 'launchpad run');
      try {
        await assert.rejects(store.restoreBackup(), LockHeldError);
      } finally {
        run.release();
      }
      assert.equal(readFileSync(paths.tasks, 'utf8'), '{"tasks": 1}');
      assert.deepEqual(
        readdirSync(paths.root).filter((n) => n.includes('corrupt')),
        [],
      );
    });
  });

  describe('what is not a regular file, or not writable', () => {
    it('reads through a symbolic link, and writes through it: the link stays a link, the target is replaced in its folder', async () => {
      const { store, paths } = newStore();
      const elsewhere = join(tempDir('launchpad-target-'), 'tasks.json');
      writeFileSync(elsewhere, serializeTaskFile(taskFile([task('t1')])));
      symlinkSync(elsewhere, paths.tasks);
      await store.transact((f) => void f.tasks.push(task('t2')));
      assert.ok(lstatSync(paths.tasks).isSymbolicLink());
      assert.equal(readlinkSync(paths.tasks), elsewhere);
      assert.deepEqual(
        store.load().file.tasks.map((t) => t.id),
        ['t1', 't2'],
      );
      assert.deepEqual(
        JSON.parse(readFileSync(paths.backup, 'utf8')).tasks.map((t: { id: string }) => t.id),
        ['t1'],
      );
      assert.deepEqual(readdirSync(join(elsewhere, '..')), ['tasks.json'], 'no .tmp left beside the target');
      assert.ok(store.isLastWrite(readFileSync(elsewhere)));
    });

    it('keeps the mode of the file it replaces', async () => {
      const { store, paths } = newStore();
      writeFileSync(paths.tasks, serializeTaskFile(taskFile([])), { mode: 0o600 });
      chmodSync(paths.tasks, 0o600);
      await store.transact((f) => void f.tasks.push(task('t1')));
      assert.equal(statSync(paths.tasks).mode & 0o777, 0o600);
    });

    it('refuses to replace a file without write permission (even as root): nothing changes', async () => {
      const { store, paths } = newStore();
      const text = serializeTaskFile(taskFile([task('t1')]));
      writeFileSync(paths.tasks, text);
      chmodSync(paths.tasks, 0o444);
      const ino = statSync(paths.tasks).ino;
      await assert.rejects(
        store.transact((f) => void f.tasks.push(task('t2'))),
        (e: unknown) => e instanceof TaskFileError && /has no write permission/.test(e.message),
      );
      assert.equal(readFileSync(paths.tasks, 'utf8'), text);
      assert.equal(statSync(paths.tasks).ino, ino);
      assert.equal(statSync(paths.tasks).mode & 0o777, 0o444);
      assert.equal(existsSync(paths.backup), false);
    });

    it('refuses a FIFO, a device and a directory before opening them', () => {
      const { paths } = newStore();
      execFileSync('mkfifo', [paths.tasks]);
      // Opening a FIFO without a writer would block forever: the test ends, so it was not opened.
      assert.throws(
        () => readTaskFileBytes(paths.tasks, 'harness-tasks.json'),
        /harness-tasks\.json: is a FIFO \(named pipe\), not a regular file/,
      );
      const dev = join(paths.root, 'dev.json');
      symlinkSync('/dev/zero', dev);
      assert.throws(
        () => readTaskFileBytes(dev, 'harness-tasks.json'),
        /is a symbolic link to \/dev\/zero, a character device, not a regular file/,
      );
      const dir = join(paths.root, 'dir.json');
      mkdirSync(dir);
      assert.throws(() => readTaskFileBytes(dir, 'harness-tasks.json'), /is a directory, not a file/);
      const dangling = join(paths.root, 'dangling.json');
      symlinkSync(join(paths.root, 'nowhere'), dangling);
      assert.throws(() => readTaskFileBytes(dangling, 'harness-tasks.json'), /is a symbolic link to .*nowhere, which does not exist/);
    });

    it('a write that would make the file invalid is refused before anything is written', async () => {
      const { store, paths } = newStore();
      store.save(taskFile([task('t1')]));
      const before = readFileSync(paths.tasks, 'utf8');
      await assert.rejects(
        store.transact((f) => void (f.tasks[0]!.title = 'x'.repeat(501))),
        (e: unknown) =>
          e instanceof TaskFileError &&
          /not written, the change would make it invalid: tasks\[0\]\.title: must be at most 500/.test(e.message),
      );
      assert.equal(readFileSync(paths.tasks, 'utf8'), before);
    });
  });

  describe('transact', () => {
    it('writes the mutation, keeps the previous version as .bak, releases the lock', async () => {
      const { store, paths } = newStore();
      store.create(taskFile([task('t1')]));
      const before = readFileSync(paths.tasks, 'utf8');
      const result = await store.transact((f) => {
        f.tasks.push(task('t2'));
        return f.tasks.length;
      });
      assert.equal(result, 2);
      assert.deepEqual(
        store.load().file.tasks.map((t) => t.id),
        ['t1', 't2'],
      );
      assert.equal(readFileSync(paths.backup, 'utf8'), before);
      assert.equal(existsSync(paths.stateLock), false);
    });

    it('serializes concurrent transactions of one process in call order, losing no update', async () => {
      const { store } = newStore();
      store.create(taskFile([]));
      const order: number[] = [];
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          store.transact((f) => {
            order.push(i);
            f.session_count += 1;
            ((f as Record<string, unknown>).trail ??= [] as number[]) as number[];
            ((f as Record<string, unknown>).trail as number[]).push(i);
            return f.session_count;
          }),
        ),
      );
      assert.deepEqual(order, [...Array(30).keys()]);
      assert.deepEqual(
        results,
        Array.from({ length: 30 }, (_, i) => i + 1),
      );
      const file = store.load().file as Record<string, unknown>;
      assert.equal(file.session_count, 30);
      assert.deepEqual(file.trail, [...Array(30).keys()]);
    });

    it('a transaction that throws writes nothing and does not stop the next one', async () => {
      const { store, paths } = newStore();
      store.create(taskFile([]));
      const before = readFileSync(paths.tasks, 'utf8');
      const failing = store.transact((f) => {
        f.session_count = 99;
        throw new Error('boom');
      });
      const next = store.transact((f) => (f.session_count = 1));
      await assert.rejects(failing, /boom/);
      assert.equal(await next, 1);
      assert.equal(readFileSync(paths.backup, 'utf8'), before, 'only the second transaction wrote');
      assert.equal(store.load().file.session_count, 1);
    });

    it('writes nothing when nothing changed: no .bak, same inode, same bytes', async () => {
      const { store, paths } = newStore();
      // Hand formatting a write would normalize: a no-op must keep it.
      const text = '{"tasks":[{"id":"t1","title":"x","status":"pending"}]}';
      writeFileSync(paths.tasks, text);
      const ino = statSync(paths.tasks).ino;
      const seen = await store.transact((f) => {
        f.tasks[0]!.title = 'x';
        return f.tasks.length;
      });
      assert.equal(seen, 1);
      assert.equal(readFileSync(paths.tasks, 'utf8'), text);
      assert.equal(statSync(paths.tasks).ino, ino);
      assert.equal(existsSync(paths.backup), false);
    });

    it('never writes when the file is invalid: the mutation does not run, bytes stay', async () => {
      const { store, paths } = newStore();
      writeFileSync(paths.tasks, '{"tasks": [}');
      let ran = false;
      await assert.rejects(
        store.transact(() => {
          ran = true;
        }),
        TaskFileError,
      );
      assert.equal(ran, false);
      assert.equal(readFileSync(paths.tasks, 'utf8'), '{"tasks": [}');
      assert.deepEqual(
        readdirSync(paths.root).filter((n) => n.startsWith('harness-')),
        ['harness-tasks.json'],
      );
      assert.equal(existsSync(paths.stateLock), false, 'the lock is released after a failed load');
    });

    it('waits for the state lock held elsewhere, then runs', async () => {
      const { store } = newStore();
      store.create(taskFile([]));
      const held = tryAcquireLock(store.paths.stateLock, 'someone else');
      let releasedAt = 0;
      setTimeout(() => {
        releasedAt = Date.now();
        held.release();
      }, 150);
      let ranAt = 0;
      await store.transact((f) => {
        ranAt = Date.now();
        f.session_count = 5;
      });
      assert.ok(releasedAt > 0 && ranAt >= releasedAt, 'the mutation ran only after the other holder released');
      assert.equal(store.load().file.session_count, 5);
    });
  });

  describe('a reader racing a writer in another process', function () {
    this.timeout(60_000);

    it('every read parses and is exactly one of the written versions; never partial, never missing', async () => {
      const { paths } = newStore();
      const stopFile = join(paths.root, 'stop');
      const child = spawn(process.execPath, [join(FIXTURE_SCRIPTS, 'saveLoop.js'), paths.root, stopFile, '5000'], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      try {
        while (!out.includes('ready')) {
          if (child.exitCode !== null) assert.fail(`the writer exited early: ${out}`);
          await new Promise((r) => setTimeout(r, 5));
        }
        const seen = new Set<number>();
        let reads = 0;
        // At least 400 reads, and until the writer has been seen replacing the file a few times.
        const deadline = Date.now() + 20_000;
        while (reads < 400 || (seen.size < 5 && Date.now() < deadline)) {
          for (let k = 0; k < 10; k++, reads++) {
            const text = readFileSync(paths.tasks, 'utf8');
            const parsed = parseTaskFile(text);
            if (!parsed.ok) assert.fail(`read ${reads} did not parse (${text.length} chars): ${parsed.error.message}`);
            const i = parsed.file.session_count;
            assert.equal(text, serializeTaskFile(version(i)), `read ${reads} is not version ${i} as written`);
            seen.add(i);
          }
          await new Promise((r) => setImmediate(r));
        }
        writeFileSync(stopFile, '');
        assert.equal(await exited, 0);
        const saved = Number(/saved (\d+)/.exec(out)?.[1]);
        assert.ok(saved > 0, out);
        assert.ok(seen.size > 1, `the reads saw ${seen.size} version(s): the writer never overlapped the reader`);
        assert.deepEqual(leftovers(paths), []);
        assert.equal(readFileSync(paths.tasks, 'utf8'), serializeTaskFile(version(saved)));
        assert.equal(readFileSync(paths.backup, 'utf8'), serializeTaskFile(version(saved - 1)));
      } finally {
        child.kill('SIGKILL');
      }
    });
  });
});

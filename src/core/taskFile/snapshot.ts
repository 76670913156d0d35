// The task file as this process last read or wrote it: its exact bytes, what parseTaskFile made
// of them, and each task's text. A load whose bytes are identical reuses the parse (a copy of
// it: the snapshot's objects are never handed out), and an edit of such a copy is checked and
// serialized task by task, so a transaction on a large file costs what its changes cost.
import { MAX_TASK_FILE_BYTES, parseTaskFile, parseTaskFileParts, serializeTaskEntry, serializeTaskFileFrom } from './parse';
import type { Task, TaskFile } from './schema';

/** An edit as it will be written: its bytes, and the snapshot of the file after it. */
export interface TaskFileEdit {
  bytes: Buffer;
  readonly text: string;
  next: TaskFileSnapshot;
}

export class TaskFileSnapshot {
  /** Each task's serializeTaskEntry, as UTF-8: made on the first edit, then carried over. */
  private entryBytes: Uint8Array[] | undefined;
  private byId: Map<string, number> | undefined;
  /**
   * Where each entry of entryBytes starts in `bytes`, when `bytes` is Launchpad's own write of
   * them (serializeTaskFileFrom); -1 for an entry that differs from the text written there (a
   * task written in its own key order, which the parse put in the schema's). The next edit
   * copies each run of unchanged tasks from `bytes` in one go instead of joining thousands of
   * small buffers.
   */
  private offsets: Int32Array | undefined;

  /** The two buffers this file's edits take turns writing into (BytesPool), once it has been edited. */
  private pool: BytesPool | undefined;
  /** Its bytes were handed to a later edit to write into: they are no longer this snapshot's. */
  released = false;

  /** `file` must be parseTaskFile's result for `bytes`, and nobody else's object. */
  constructor(
    private readonly bytes: Buffer,
    private readonly file: TaskFile,
    entries?: Uint8Array[],
    offsets?: Int32Array,
    pool?: BytesPool,
  ) {
    this.entryBytes = entries;
    this.offsets = offsets;
    this.pool = pool;
  }

  /** Whether `bytes` are exactly the bytes this snapshot was made from. */
  matches(bytes: Uint8Array): boolean {
    return !this.released && this.bytes.equals(bytes);
  }

  /** The bytes as text. */
  text(): string {
    // Never a later write's bytes taken for this one's.
    if (this.released) throw new Error('the task file text of a snapshot a later write has replaced: read it at once');
    return this.bytes.toString('utf8');
  }

  /**
   * The parsed file itself, deeply frozen, for reading only. Tasks carried over from an earlier
   * snapshot are frozen already: only what changed is frozen again.
   */
  frozen(): TaskFile {
    deepFreeze(this.file);
    return this.file;
  }

  /** A private deep copy of the parsed file, for a caller to read or change. */
  copy(): TaskFile {
    return copyJson(this.file);
  }

  /**
   * A transaction's draft (draft.ts): the top-level fields and the tasks array copied, each task
   * this snapshot's own, frozen (those carried over from an earlier snapshot are frozen already,
   * so only what changed is frozen here). Nothing of the draft is shared but frozen tasks.
   */
  draft(): TaskFile {
    const tasks = this.file.tasks;
    for (let i = 0; i < tasks.length; i++) deepFreeze(tasks[i]);
    const out: Record<string, unknown> = {};
    for (const k in this.file) {
      const v = (this.file as Record<string, unknown>)[k];
      out[k] = k === 'tasks' ? tasks.slice() : copyJson(v);
    }
    return out as TaskFile;
  }

  /**
   * `file` (a copy of this snapshot, changed) as it would be written: undefined when its text
   * would be what this snapshot's parse serializes to (nothing to write), unless `always`. Tasks
   * are matched by id; only those whose text changed, and the top-level fields, go through the
   * schema. A file the schema refuses throws parseTaskFile's error, naming the field.
   */
  edit(file: TaskFile, always = false): TaskFileEdit | undefined {
    const before = this.entries();
    const tasks: unknown[] = Array.isArray(file.tasks) ? file.tasks : [];
    const entries: Uint8Array[] = new Array(tasks.length);
    const known: Array<Task | undefined> = new Array(tasks.length);
    let whole = !Array.isArray(file.tasks);
    let changed = whole || tasks.length !== this.file.tasks.length;
    // Ids told apart by where they were in this snapshot (unique there), so checking them for
    // duplicates takes no set of every id; ids new to the file go in a small set.
    const taken = new Uint8Array(this.file.tasks.length);
    // from[i]: the index in this snapshot of task i when its text is unchanged, else -1.
    const from = new Int32Array(tasks.length).fill(-1);
    let newIds: Set<unknown> | undefined;
    let unique = true;
    for (let i = 0; i < tasks.length && !whole; i++) {
      const task = tasks[i] as Task;
      if (task === null || typeof task !== 'object' || Array.isArray(task)) {
        whole = true;
        break;
      }
      const j = this.indexOf(task, i);
      if (j === undefined) {
        newIds ??= new Set();
        if (newIds.has(task.id)) unique = false;
        newIds.add(task.id);
      } else {
        if (taken[j]) unique = false;
        taken[j] = 1;
      }
      const old = j === undefined ? undefined : this.file.tasks[j]!;
      if (j !== i) changed = true;
      if (old !== undefined && sameJson(old, task)) {
        entries[i] = before[j!]!;
        known[i] = old;
        from[i] = j!;
        continue;
      }
      const entry = Buffer.from(serializeTaskEntry(task), 'utf8');
      entries[i] = entry;
      // Different objects, same text (a field set to undefined): the same parse.
      if (old !== undefined && entry.equals(before[j!]!)) {
        known[i] = old;
        from[i] = j!;
      } else changed = true;
    }
    if (!changed && !always && topText(file) === topText(this.file)) return undefined;

    // One buffer: written once, then compared with every read of the file.
    const joined = whole ? undefined : this.join(serializeTaskFileFrom(file, entries), from);
    const bytes = joined?.bytes ?? Buffer.from(JSON.stringify(file, null, 2) + '\n', 'utf8');
    let text: string | undefined;
    let next: TaskFileSnapshot;
    const decoded = () => (text ??= next?.released ? next.text() : bytes.toString('utf8'));
    // A repeated id: the whole parse, which names it.
    const parsed = !whole && unique && bytes.length <= MAX_TASK_FILE_BYTES ? parseTaskFileParts(file, (i) => known[i], true) : undefined;
    if (parsed) {
      // The snapshot's entries are those of its parsed tasks (defaults filled in, keys in order);
      // where one differs from what was written, it is not found at its offset.
      const offsets = joined?.offsets;
      const nextEntries = parsed.tasks.map((t, i) => {
        if (known[i]) return entries[i]!;
        const entry = Buffer.from(serializeTaskEntry(t), 'utf8');
        if (entry.equals(entries[i]!)) return entries[i]!;
        if (offsets) offsets[i] = -1;
        return entry;
      });
      next = new TaskFileSnapshot(bytes, parsed, nextEntries, offsets, this.pool);
    } else {
      const full = parseTaskFile(decoded());
      if (!full.ok) throw full.error;
      next = new TaskFileSnapshot(bytes, full.file, undefined, undefined, this.pool);
    }
    this.pool?.own(bytes, next);
    return {
      bytes,
      get text() {
        return decoded();
      },
      next,
    };
  }

  /**
   * The parts of serializeTaskFileFrom (head, entry, separator, entry, …, tail) as one buffer,
   * and where each entry starts in it. Entries unchanged from this snapshot (`from`), in a row,
   * are copied from this snapshot's bytes at once when its offsets are known.
   */
  private join(parts: Uint8Array[], from: Int32Array): { bytes: Buffer; offsets?: Int32Array } {
    const n = (parts.length - 1) / 2;
    // serializeTaskFileFrom's one-part form: no tasks, or a file it serializes whole.
    if (!Number.isInteger(n) || n !== from.length || n === 0) return { bytes: Buffer.concat(parts) };
    let total = 0;
    for (const p of parts) total += p.length;
    const out = (this.pool ??= new BytesPool()).take(total, this.bytes);
    const offsets = new Int32Array(n);
    const old = this.offsets;
    out.set(parts[0]!, 0);
    let pos = parts[0]!.length;
    let i = 0;
    while (i < n) {
      const j = old ? from[i]! : -1;
      if (j >= 0 && old![j]! >= 0) {
        let k = 1;
        while (i + k < n && from[i + k] === j + k && old![j + k]! >= 0) k++;
        // Entries j … j+k-1 and the separators between them, as they lie in this snapshot's bytes.
        const start = old![j]!;
        const end = old![j + k - 1]! + parts[2 * (i + k - 1) + 1]!.length;
        this.bytes.copy(out, pos, start, end);
        for (let m = 0; m < k; m++) offsets[i + m] = pos + (old![j + m]! - start);
        pos += end - start;
        i += k;
      } else {
        const entry = parts[2 * i + 1]!;
        offsets[i] = pos;
        out.set(entry, pos);
        pos += entry.length;
        i++;
      }
      // The separator after the last entry of a run, or the tail after the last entry.
      const after = parts[2 * i]!;
      out.set(after, pos);
      pos += after.length;
    }
    return { bytes: out, offsets };
  }

  private entries(): Uint8Array[] {
    return (this.entryBytes ??= this.file.tasks.map((t) => Buffer.from(serializeTaskEntry(t), 'utf8')));
  }

  /** Where the task with `task`'s id is in this snapshot: at `hint` usually. */
  private indexOf(task: Task, hint: number): number | undefined {
    if (this.file.tasks[hint]?.id === task.id) return hint;
    this.byId ??= new Map(this.file.tasks.map((t, i) => [t.id, i]));
    return this.byId.get(task.id);
  }
}

/**
 * Two buffers that a file's successive edits take turns writing their bytes into: the one the
 * edited snapshot does not hold. A new multi-megabyte buffer per write is what made V8 run a
 * full garbage collection every few tasks on a large file (it counts such memory toward its
 * limits); with two, a run writes the file in place of the bytes two writes back. The snapshot
 * that held those is marked released: it is no longer the file's, and its text is refused.
 */
class BytesPool {
  private readonly buffers: Array<Buffer | undefined> = [undefined, undefined];
  private readonly owners: Array<TaskFileSnapshot | undefined> = [undefined, undefined];

  /** `total` bytes to write into, in the buffer that does not hold `current`. */
  take(total: number, current: Buffer): Buffer {
    const slot = this.buffers[0] && current.buffer === this.buffers[0].buffer ? 1 : 0;
    const owner = this.owners[slot];
    if (owner) owner.released = true;
    this.owners[slot] = undefined;
    let buffer = this.buffers[slot];
    // Room to grow, so a file that grows a little does not need a new one each time.
    if (!buffer || buffer.length < total) buffer = this.buffers[slot] = Buffer.allocUnsafeSlow(total + (total >> 3));
    return buffer.subarray(0, total);
  }

  /** The snapshot made from `bytes` (taken from this pool) holds them now. */
  own(bytes: Buffer, snapshot: TaskFileSnapshot): void {
    const slot = this.buffers.findIndex((b) => b !== undefined && b.buffer === bytes.buffer);
    if (slot >= 0) this.owners[slot] = snapshot;
  }
}

/** The file's text outside its tasks. */
function topText(file: TaskFile): string {
  return JSON.stringify({ ...file, tasks: [] });
}

/**
 * A deep copy of JSON data (what a parsed task file holds: plain objects, arrays, primitives),
 * keys in their order. for…in: the objects come from JSON.parse and the schema, so every
 * enumerable key is their own, and it is the fastest walk V8 offers here.
 */
export function copyJson<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  return copyObject(value) as T;
}

function copyObject(v: object): unknown {
  if (Array.isArray(v)) {
    const n = v.length;
    const out = new Array(n);
    for (let i = 0; i < n; i++) {
      const x: unknown = v[i];
      out[i] = typeof x === 'object' && x !== null ? copyObject(x) : x;
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const k in v) {
    const x: unknown = (v as Record<string, unknown>)[k];
    out[k] = typeof x === 'object' && x !== null ? copyObject(x) : x;
  }
  return out;
}

/** Freezes every object and array of `value`, children first: a frozen one's are all frozen. */
function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  // An array by index: for-in would make a key string for each of a large file's tasks.
  if (Array.isArray(value)) for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
  else for (const k in value) deepFreeze((value as Record<string, unknown>)[k]);
  Object.freeze(value);
}

/**
 * Whether two JSON values are the same, key order included (so they serialize alike). False
 * can still mean the same text (an undefined field); edit() checks the text then.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const array = Array.isArray(a);
  if (array !== Array.isArray(b)) return false;
  if (array) {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i] && !sameJson(x[i], y[i])) return false;
    return true;
  }
  const keys = Object.keys(b);
  let i = 0;
  for (const k in a) {
    if (keys[i++] !== k) return false;
    const x = (a as Record<string, unknown>)[k];
    const y = (b as Record<string, unknown>)[k];
    if (x !== y && !sameJson(x, y)) return false;
  }
  return i === keys.length;
}

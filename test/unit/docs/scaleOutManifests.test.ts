// The Kubernetes manifests in docs/scale-out.md are copied into clusters as they are: every name
// they reference must be one they define, every variable and flag they give the worker one it
// reads, and the pods must be able to run an agent that refuses root.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { parseAllDocuments } from 'yaml';

import { numberOption, parseCommandArgs } from '../../../src/cli/command';
import { workerCommand } from '../../../src/cli/commands/worker';
import { toolVariables } from '../../../src/core/agents/presets';
import { QUEUE_NAME } from '../../../src/core/queue/job';
import { tempDir } from '../helpers/tmp';

const ROOT = resolve(__dirname, '../../../..');
const DOC = 'docs/scale-out.md';

/** How long a worker may take to exit after SIGTERM (src/core/queue/worker.ts: closing cut at 10 s, then 1 s to disconnect). */
const WORKER_EXIT_S = 11;

type Obj = Record<string, unknown>;
interface Manifest {
  kind: string;
  name: string;
  /** Where it is, for messages: the document's file, line and kind/name. */
  where: string;
  body: Obj;
}
interface Pod {
  owner: Manifest;
  labels: Obj;
  spec: Obj;
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const obj = (v: unknown): Obj => (isObj(v) ? v : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Every document of every ```yaml block of the doc; a block that does not parse fails here. */
function manifests(text: string): Manifest[] {
  const out: Manifest[] = [];
  for (const m of text.matchAll(/```yaml\n([\s\S]*?)```/g)) {
    const blockLine = text.slice(0, m.index).split('\n').length + 1;
    for (const doc of parseAllDocuments(m[1]!)) {
      const line = blockLine + m[1]!.slice(0, doc.range[0]).split('\n').length - 1;
      assert.deepEqual(
        doc.errors.map((e) => e.message),
        [],
        `${DOC}:${line}: not YAML`,
      );
      const body = obj(doc.toJS());
      const kind = String(body.kind ?? '');
      const name = String(obj(body.metadata).name ?? '');
      assert.ok(body.apiVersion && kind && name, `${DOC}:${line}: a manifest needs apiVersion, kind and metadata.name`);
      out.push({ kind, name, where: `${DOC}:${line} ${kind}/${name}`, body });
    }
  }
  return out;
}

/** Every object anywhere under `v`, with its path. */
function* walk(v: unknown, path = ''): Generator<[Obj, string]> {
  if (Array.isArray(v)) for (const [i, x] of v.entries()) yield* walk(x, `${path}[${i}]`);
  else if (isObj(v)) {
    yield [v, path];
    for (const [k, x] of Object.entries(v)) yield* walk(x, path ? `${path}.${k}` : k);
  }
}

/** The pod templates: a Deployment's (and its like) and a ScaledJob's Job. */
function pods(all: Manifest[]): Pod[] {
  return all.flatMap((m) => {
    const spec = obj(m.body.spec);
    const template = obj(m.kind === 'ScaledJob' ? obj(spec.jobTargetRef).template : spec.template);
    return isObj(template.spec) ? [{ owner: m, labels: obj(obj(template.metadata).labels), spec: template.spec }] : [];
  });
}

/** Every variable name Launchpad's source mentions, as a string or a property. */
function sourceText(): string {
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((n) => {
      const p = join(dir, n);
      return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
    });
  return files(join(ROOT, 'src'))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
}

/** The command line of a container, as the arguments `launchpad` gets when its shell runs it. */
function launchpadArgs(command: string[], env: Record<string, string>): string[] | undefined {
  if (!command.join(' ').includes('launchpad')) return undefined;
  const dir = tempDir();
  const bin = join(dir, 'launchpad');
  writeFileSync(bin, `#!/bin/sh\nprintf '%s\\0' "$@"\n`);
  chmodSync(bin, 0o755);
  const r = spawnSync(command[0]!, command.slice(1), {
    encoding: 'utf8',
    env: { PATH: `${dir}:${process.env.PATH}`, ...env, HOME: join(dir, 'home') },
  });
  assert.equal(r.status, 0, `${JSON.stringify(command)} exits ${r.status}: ${r.stderr}`);
  return r.stdout.split('\0').slice(0, -1);
}

describe(`the Kubernetes manifests in ${DOC}`, () => {
  let all: Manifest[] = [];
  before(() => {
    all = manifests(readFileSync(join(ROOT, DOC), 'utf8'));
  });
  const byKind = (kind: string, name: string) => all.find((m) => m.kind === kind && m.name === name);
  const secretKeys = (name: string): string[] | undefined => {
    const s = byKind('Secret', name);
    return s && [...Object.keys(obj(s.body.stringData)), ...Object.keys(obj(s.body.data))];
  };
  const secretValue = (name: string, key: string): string | undefined => {
    const s = byKind('Secret', name);
    const plain = obj(s?.body.stringData)[key];
    const encoded = obj(s?.body.data)[key];
    return typeof plain === 'string' ? plain : typeof encoded === 'string' ? Buffer.from(encoded, 'base64').toString() : undefined;
  };
  const containers = () =>
    pods(all).flatMap((p) =>
      list(p.spec.containers).map((c) => ({ pod: p, c: obj(c), where: `${p.owner.where} container ${String(obj(c).name)}` })),
    );

  it('parse, and hold a Secret, a worker pod and a KEDA scaler', () => {
    assert.ok(all.some((m) => m.kind === 'Secret'));
    assert.ok(all.some((m) => m.kind === 'ScaledJob' || m.kind === 'ScaledObject'));
    assert.ok(containers().length > 0);
  });

  it('reference only Secrets they define, and keys those Secrets hold', () => {
    let refs = 0;
    for (const m of all) {
      for (const [o, path] of walk(m.body)) {
        const at = `${m.where} ${path}`;
        const needs: [string, string | undefined][] = [];
        if (isObj(o.secretKeyRef)) needs.push([String(o.secretKeyRef.name), String(o.secretKeyRef.key)]);
        if (isObj(o.secretRef)) needs.push([String(o.secretRef.name), undefined]);
        if (isObj(o.secret) && typeof o.secret.secretName === 'string') needs.push([o.secret.secretName, undefined]);
        if (path.endsWith('secretTargetRef') || /secretTargetRef\[\d+\]$/.test(path))
          if (typeof o.name === 'string') needs.push([o.name, String(o.key)]);
        for (const [name, key] of needs) {
          refs++;
          const keys = secretKeys(name);
          assert.ok(keys, `${at}: Secret "${name}" is not defined in the manifests`);
          if (key !== undefined) assert.ok(keys.includes(key), `${at}: Secret "${name}" has no key "${key}" (it has ${keys.join(', ')})`);
        }
      }
    }
    assert.ok(refs > 0, 'no Secret is referenced at all');
  });

  it('scale targets, authentication refs and selectors point at what they define', () => {
    for (const m of all) {
      const spec = obj(m.body.spec);
      if (m.kind === 'ScaledObject') {
        const t = obj(spec.scaleTargetRef);
        assert.ok(
          byKind(String(t.kind ?? 'Deployment'), String(t.name)),
          `${m.where} spec.scaleTargetRef: ${String(t.name)} is not defined`,
        );
      }
      if (m.kind === 'ScaledJob') {
        const job = obj(spec.jobTargetRef);
        assert.ok(list(obj(obj(job.template).spec).containers).length, `${m.where} spec.jobTargetRef.template: no containers`);
        const restart = obj(obj(job.template).spec).restartPolicy;
        assert.ok(
          restart === 'Never' || restart === 'OnFailure',
          `${m.where}: a Job's restartPolicy is Never or OnFailure, not ${String(restart)}`,
        );
        // The default rollout deletes running Jobs when the ScaledJob changes: their attempts with them.
        assert.equal(obj(spec.rollout).strategy, 'gradual', `${m.where} spec.rollout.strategy`);
      }
      for (const [i, trigger] of list(spec.triggers).entries()) {
        const ref = obj(obj(trigger).authenticationRef);
        if (ref.name === undefined) continue;
        const kind = String(ref.kind ?? 'TriggerAuthentication');
        assert.ok(
          byKind(kind, String(ref.name)),
          `${m.where} spec.triggers[${i}].authenticationRef: ${kind} "${String(ref.name)}" is not defined`,
        );
      }
    }
    for (const p of pods(all)) {
      const selector = obj(obj(p.owner.body.spec).selector).matchLabels;
      if (!isObj(selector)) continue;
      for (const [k, v] of Object.entries(selector))
        assert.equal(p.labels[k], v, `${p.owner.where} spec.selector.matchLabels.${k}: the pod template's label is ${String(p.labels[k])}`);
    }
  });

  it('the redis trigger reads the wait list of the queue the workers use, with its password', () => {
    const scaled = all.filter((m) => m.kind === 'ScaledJob' || m.kind === 'ScaledObject');
    for (const m of scaled) {
      for (const [i, trigger] of list(obj(m.body.spec).triggers).entries()) {
        const t = obj(trigger);
        if (t.type !== 'redis') continue;
        const at = `${m.where} spec.triggers[${i}]`;
        const meta = obj(t.metadata);
        assert.equal(meta.listName, `bull:${QUEUE_NAME}:wait`, `${at}.metadata.listName: BullMQ's list of attempts waiting`);
        assert.ok(Number(meta.listLength) >= 1, `${at}.metadata.listLength`);
        // The queue URL the workers get, from the Secret the pods read it from.
        const urlRef = containers()
          .flatMap(({ c }) => list(c.env).map(obj))
          .find((e) => e.name === 'LAUNCHPAD_QUEUE_URL');
        const ref = obj(obj(urlRef?.valueFrom).secretKeyRef);
        const url = new URL(secretValue(String(ref.name), String(ref.key)) ?? 'missing:');
        assert.equal(meta.address, `${url.hostname}:${url.port || '6379'}`, `${at}.metadata.address: the queue URL's host and port`);
        assert.equal(
          String(meta.databaseIndex ?? '0'),
          url.pathname.slice(1) || '0',
          `${at}.metadata.databaseIndex: the queue URL's database`,
        );
        assert.equal(String(meta.enableTLS ?? 'false'), String(url.protocol === 'rediss:'), `${at}.metadata.enableTLS`);
        const auth = byKind(String(obj(t.authenticationRef).kind ?? 'TriggerAuthentication'), String(obj(t.authenticationRef).name));
        const password = list(obj(auth?.body.spec).secretTargetRef)
          .map(obj)
          .find((r) => r.parameter === 'password');
        assert.ok(password, `${at}: no password reaches the scaler (a TriggerAuthentication's secretTargetRef "password")`);
        assert.equal(
          secretValue(String(password.name), String(password.key)),
          decodeURIComponent(url.password),
          `${at}: the scaler's password is the queue URL's`,
        );
      }
    }
  });

  it("give the worker only variables it or its agent's tool reads, and flags `launchpad worker` has", () => {
    const source = sourceText();
    let workers = 0;
    for (const { pod, c, where } of containers()) {
      const env = list(c.env).map(obj);
      const names = env.map((e) => String(e.name));
      const command = [...list(c.command), ...list(c.args)].map(String);
      const sample = Object.fromEntries(names.map((n) => [n, `${n.toLowerCase()}-value`]));
      const args = launchpadArgs(command, sample);
      if (!args) continue;
      workers++;
      assert.equal(args[0], 'worker', `${where}: runs "launchpad ${args.join(' ')}"`);
      let values: ReturnType<typeof parseCommandArgs>['values'];
      try {
        ({ values } = parseCommandArgs(workerCommand, args.slice(1)));
        numberOption('concurrency', values.concurrency, { integer: true, min: 1 });
        numberOption('idle-exit', values['idle-exit'], { integer: true, min: 1 });
      } catch (err) {
        assert.fail(`${where}: ${(err as Error).message}`);
      }
      if (pod.owner.kind === 'ScaledJob')
        assert.ok(values['idle-exit'], `${where}: a Job's worker needs --idle-exit, or the Job never ends`);
      assert.ok(values.queue || names.includes('LAUNCHPAD_QUEUE_URL'), `${where}: no queue (--queue or LAUNCHPAD_QUEUE_URL)`);
      assert.ok(values.repo || names.includes('LAUNCHPAD_REMOTE'), `${where}: no remote (--repo or LAUNCHPAD_REMOTE)`);
      const agentVars = toolVariables(undefined);
      for (const name of names) {
        const read = new RegExp(`['".]${name}\\b`).test(source);
        const forAgent = agentVars.some((p) => (p.endsWith('*') ? name.startsWith(p.slice(0, -1)) : name === p));
        const inCommand = command.some((w) => w.includes(`$${name}`));
        assert.ok(read || forAgent || inCommand, `${where} env ${name}: neither Launchpad, an agent's tool nor the command line reads it`);
      }
    }
    assert.ok(workers > 0, 'no container runs launchpad worker');
  });

  it('run as a user other than root, with HOME and the clone on a writable volume', () => {
    for (const { pod, c, where } of containers()) {
      const podCtx = obj(pod.spec.securityContext);
      const ctx = { ...podCtx, ...obj(c.securityContext) };
      assert.equal(ctx.runAsNonRoot, true, `${where}: securityContext.runAsNonRoot`);
      assert.ok(
        typeof ctx.runAsUser === 'number' && ctx.runAsUser > 0,
        `${where}: securityContext.runAsUser is a user other than root (0)`,
      );
      const mounts = list(c.volumeMounts)
        .map(obj)
        .filter((v) => v.readOnly !== true)
        .map((v) => String(v.mountPath));
      const onVolume = (path: string) => mounts.some((m) => path === m || path.startsWith(`${m}/`));
      const home = list(c.env)
        .map(obj)
        .find((e) => e.name === 'HOME');
      assert.ok(home && onVolume(String(home.value)), `${where}: HOME is set to a directory on a writable volume`);
      const args = launchpadArgs([...list(c.command), ...list(c.args)].map(String), {}) ?? [];
      const clone = args[args.indexOf('--clone') + 1];
      assert.ok(args.includes('--clone') && clone && onVolume(clone), `${where}: --clone is on a writable volume`);
      const grace = Number(pod.spec.terminationGracePeriodSeconds ?? 30);
      assert.ok(
        grace > WORKER_EXIT_S,
        `${where}: terminationGracePeriodSeconds ${grace} leaves a stopping worker no time to give its job back`,
      );
    }
  });
});

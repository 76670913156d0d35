// A task process's time limit must hold even when the controller is gone (kill -9, a crashed
// editor). Beside each task process that has a time limit runs a watchdog: a shell in its own
// session, sleeping until a little after the deadline, that then ends the run's processes
// (SIGTERM, SIGKILL after the grace period) and removes its cgroup. One told to watch its
// controller (an in-place agent's: it works in the person's checkout) does that as soon as the
// controller is gone. It waits on its fd 3 until the run is recorded, as the task's process does,
// so a controller killed before that leaves neither running. The controller ends the watchdog
// when the run ends; a later session ends it through the process record.
import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';

import { processIdentity } from '../processIdentity';
import { killGroup } from './killGroup';

/** After the deadline, so that a live controller (which ends the run at the deadline) acts first. */
const AFTER_DEADLINE_MS = 1000;

// $1 seconds to wait, $2 grace seconds, $3 the run's process group, $4 its marker token,
// $5 its cgroup or "", $6 the identity of its first process (used without /proc only), $7 and
// $8 the controller's pid and identity, or "" when it is not watched. Nothing happens before a
// line on fd 3, written once the run is recorded; without one (the controller died first) it
// exits. With /proc the run's processes are found by cgroup and by the marker token (random:
// found anywhere in an environment, it is the run's), never by group id: after a crash the
// group may be gone and its id reused. Without /proc (macOS) only the group is reachable, and
// only while its first process is still the one started.
const SCRIPT = `
read _ <&3 || exit 0; exec 3<&-
grace=$2 g=$3 m=$4 c=$5 id=$6 ctl=$7 ctlid=$8
same_process() {
  if [ -d /proc/self ]; then
    read -r st 2>/dev/null < "/proc/$1/stat" || return 1
    set -- "\${2##*:}" \${st##*) }
    [ "$2" != Z ] && [ "\${21}" = "$1" ]
  else
    [ "$(ps -o lstart= -p "$1" 2>/dev/null | sed 's/^ *//; s/ *$//')" = "$2" ]
  fi
}
signal_run() {
  if [ -d /proc/self ]; then
    if [ -n "$c" ]; then for p in $(cat "$c/cgroup.procs" 2>/dev/null); do kill -"$1" "$p" 2>/dev/null; done; fi
    for f in $(grep -alsF -- "$m" /proc/[0-9]*/environ); do f=\${f#/proc/}; kill -"$1" "\${f%/environ}" 2>/dev/null; done
  elif [ -n "$id" ] && same_process "$g" "$id"; then
    kill -"$1" -"$g" 2>/dev/null
  fi
}
if [ -n "$ctl" ]; then
  sleep "$1" & s=$!
  while kill -0 "$s" 2>/dev/null && same_process "$ctl" "$ctlid"; do sleep 1; done
  kill "$s" 2>/dev/null
else
  sleep "$1" || exit 0
fi
signal_run TERM
sleep "$grace"
if [ -n "$c" ]; then echo 1 2>/dev/null > "$c/cgroup.kill"; fi
signal_run KILL
if [ -n "$c" ]; then
  i=0
  while [ -d "$c" ] && [ $i -lt 50 ]; do
    find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || sleep 0.1
    i=$((i + 1))
  done
fi
`;

export interface Watchdog {
  pid: number;
  identity: string | undefined;
  /** The run is recorded (the watchdog with it): the watchdog may begin. */
  release(): void;
  /** The run ended: the watchdog is not needed (no-op once it has exited). */
  stop(): void;
}

/** This process's identity, read once: what a watchdog watching its controller compares. */
let self: string | undefined;

export function startWatchdog(run: {
  pgid: number;
  token: string;
  cgroup: string | undefined;
  timeoutMs: number;
  graceMs: number;
  /** End the run as soon as this process (the controller) is gone, not at the deadline. */
  endWithController?: boolean | undefined;
}): Watchdog | undefined {
  const leader = process.platform === 'linux' ? '' : (processIdentity(run.pgid) ?? '');
  const seconds = (ms: number) => (ms / 1000).toFixed(3);
  if (run.endWithController) self ??= processIdentity(process.pid);
  const controller = run.endWithController && self ? [String(process.pid), self] : ['', ''];
  const args = [
    '-c',
    SCRIPT,
    'launchpad-watchdog',
    seconds(run.timeoutMs + AFTER_DEADLINE_MS),
    seconds(run.graceMs),
    String(run.pgid),
    run.token,
    run.cgroup ?? '',
    leader,
    ...controller,
  ];
  // Its own session: no terminal hang-up or group signal aimed at the controller reaches it.
  const child = spawn('/bin/sh', args, { detached: true, stdio: ['ignore', 'ignore', 'ignore', 'pipe'] });
  child.on('error', () => undefined);
  child.unref();
  const go = child.stdio[3] as Socket;
  go.on('error', () => undefined);
  go.unref();
  const pid = child.pid;
  if (pid === undefined) return undefined;
  return {
    pid,
    identity: processIdentity(pid),
    release: () => go.end('\n'),
    stop() {
      // Not yet reaped by us, so the pid is still the watchdog's.
      if (child.exitCode === null && child.signalCode === null) killGroup(pid, 'SIGKILL');
    },
  };
}

# The spawner's helper in python (spawner.ts starts it with python3 where there is one; else it
# starts spawnerMain.js). It does what spawnerMain.js does, but starts each process with
# posix_spawn: the child borrows this process's memory until it execs (vfork), so nothing is
# copied or write-protected. node's own spawn forks, about 1 ms of CPU a process even in a helper
# this small; posix_spawn costs 0.1-0.2 ms, ~0.4 ms with the relay of the output. It has no rules
# of its own: runProcess keeps the process group, the time limit and the kill, by pid, as for a
# child of its own.
#
# It reads requests on fd 0 and writes replies on fd 1, each a frame (spawnerProtocol.ts owns the
# format): a 4-byte little-endian length of what follows, a kind byte, a 4-byte command id, then
# the payload. It ends when fd 0 reaches its end (its parent is gone); the signals a terminal or a
# process group sends do not end it.
import errno
import json
import os
import selectors
import signal
import struct
import sys

if sys.version_info < (3, 8) or not hasattr(os, 'posix_spawn'):
    sys.exit(3)  # the parent falls back to spawnerMain.js

FRAME = struct.Struct('<IBI')
BASE_ENV, SPAWN, RELEASE, CLOSE_PIPES = 0, 1, 2, 3
READY, STARTED, ERROR, OUT, ERR, EXIT, CLOSE = 0, 1, 2, 3, 4, 5, 6

for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)
# What a started program gets back to the default: the ignored signals above, and those python
# ignores itself (SIGPIPE, SIGXFSZ).
DEFAULT_SIGNALS = [s for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE, getattr(signal, 'SIGXFSZ', None)) if s]

# fd 3 stays taken (by /dev/null, closed on exec), so no pipe of this process is ever fd 3: a
# held command's pipe is moved there, and a move onto the same number would keep close-on-exec.
_null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
if _null != 3:
    os.dup2(_null, 3, inheritable=False)
os.set_blocking(1, True)

# SIGCHLD wakes the loop through this pipe; the children are reaped there.
wake_r, wake_w = os.pipe()
os.set_blocking(wake_r, False)
os.set_blocking(wake_w, False)
signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
signal.signal(signal.SIGCHLD, lambda *_: None)

selector = selectors.DefaultSelector()
outgoing = []  # the replies of this turn of the loop, written together at its end


def send(kind, cid, payload=b''):
    outgoing.append(FRAME.pack(5 + len(payload), kind, cid))
    outgoing.append(payload)


def flush():
    view = memoryview(b''.join(outgoing))
    outgoing.clear()
    while view:
        view = view[os.write(1, view):]


class Command:
    def __init__(self, cid, pipes, hold):
        self.cid, self.hold = cid, hold
        self.pipes = pipes  # the open ends read here: {fd: OUT | ERR}
        self.status = None  # (code, signal number) once it has exited
        self.stdin = None  # (fd, bytes left to write)


commands = {}  # id -> Command
by_pid = {}  # pid -> Command, until reaped


def program(file, env):
    """The file node would run: a name without a slash is looked up on the PATH it is given."""
    if '/' in file:
        return file
    denied = False  # one was found but may not be run: EACCES, as execvp says, if none may
    for folder in os.get_exec_path(env):
        path = os.path.join(folder, file)
        if os.path.isfile(path):
            if os.access(path, os.X_OK):
                return path
            denied = True
    code = errno.EACCES if denied else errno.ENOENT
    raise OSError(code, os.strerror(code), file)


base_env = {}  # the parent's environment, which each spawn request gives the changes from


def environment(changes):
    env = dict(base_env)
    env.update(changes['set'])
    for key in changes['unset']:
        env.pop(key, None)
    return env


def start(path, argv, env, actions):
    """posix_spawn in a session of its own, the signals as a fresh process has them."""
    options = dict(file_actions=actions, setsid=True, setsigdef=DEFAULT_SIGNALS, setsigmask=())
    try:
        return os.posix_spawn(path, argv, env, **options)
    except OSError as e:
        if e.errno != errno.ENOEXEC:
            raise
    # No #! line: run by /bin/sh, as node's spawn (execvp) does.
    return os.posix_spawn('/bin/sh', ['/bin/sh', path] + argv[1:], env, **options)


def spawn(cid, request):
    file, env = request['file'], environment(request['env'])
    stdin, hold = request.get('stdin'), request.get('hold')
    ours, theirs = [], []  # the ends kept here; the ends only the child keeps
    try:
        out_r, out_w = os.pipe()
        ours.append(out_r), theirs.append(out_w)
        err_r, err_w = os.pipe()
        ours.append(err_r), theirs.append(err_w)
        actions = [(os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)]
        in_w = hold_w = None
        if stdin is None:
            actions.append((os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0))
        else:
            in_r, in_w = os.pipe()
            ours.append(in_w), theirs.append(in_r)
            actions.append((os.POSIX_SPAWN_DUP2, in_r, 0))
        if hold:
            hold_r, hold_w = os.pipe()
            ours.append(hold_w), theirs.append(hold_r)
            actions.append((os.POSIX_SPAWN_DUP2, hold_r, 3))
        # posix_spawn has no working folder of its own: the child starts in this process's.
        os.chdir(request['cwd'])
        try:
            pid = start(program(file, env), [file] + request['args'], env, actions)
        finally:
            os.chdir('/')
    except Exception as e:  # whatever it was, no pipe of it stays open here
        for fd in ours + theirs:
            os.close(fd)
        if isinstance(e, NotImplementedError):
            raise
        # node's message: the errno's name; else what was wrong (a NUL in an argument).
        reason = errno.errorcode.get(e.errno, 'EIO') if isinstance(e, OSError) else str(e)
        send(ERROR, cid, f'spawn {file} {reason}'.encode())
        return
    for fd in theirs:
        os.close(fd)
    command = Command(cid, {out_r: OUT, err_r: ERR}, hold_w)
    commands[cid] = command
    by_pid[pid] = command
    send(STARTED, cid, struct.pack('<I', pid))
    for fd in (out_r, err_r):
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ, ('out', command))
    if in_w is not None:
        os.set_blocking(in_w, False)
        command.stdin = (in_w, memoryview(stdin.encode('utf-8', 'surrogateescape')))
        write_stdin(command)


def write_stdin(command):
    fd, left = command.stdin
    try:
        while left:
            left = left[os.write(fd, left[:65536]):]
    except BlockingIOError:
        command.stdin = (fd, left)  # the rest when the pipe has room
        if not selector_has(fd):
            selector.register(fd, selectors.EVENT_WRITE, ('stdin', command))
        return
    except OSError:
        pass  # the program does not read its input (EPIPE): not an error
    close_stdin(command)


def close_stdin(command):
    fd = command.stdin[0]
    if selector_has(fd):
        selector.unregister(fd)
    os.close(fd)
    command.stdin = None


def selector_has(fd):
    try:
        selector.get_key(fd)
        return True
    except KeyError:
        return False


def read_output(fd, command):
    try:
        data = os.read(fd, 65536)
    except BlockingIOError:
        return
    except OSError:
        data = b''
    if data:
        send(command.pipes[fd], command.cid, data)
        return
    close_pipe(command, fd)
    settle(command)


def close_pipe(command, fd):
    selector.unregister(fd)
    os.close(fd)
    del command.pipes[fd]


def reap():
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        command = by_pid.pop(pid, None)
        if command is None:
            continue
        if os.WIFSIGNALED(status):
            command.status = (None, os.WTERMSIG(status))
        else:
            command.status = (os.WEXITSTATUS(status), None)
        send(EXIT, command.cid, json.dumps(command.status).encode())
        settle(command)


def settle(command):
    """'close' once the command has exited and its pipes are closed, as node's ChildProcess does."""
    if command.status is None or command.pipes:
        return
    if command.hold is not None:
        os.close(command.hold)
        command.hold = None
    if command.stdin is not None:
        close_stdin(command)
    del commands[command.cid]
    send(CLOSE, command.cid, json.dumps(command.status).encode())


def request(kind, cid, payload):
    if kind == BASE_ENV:
        base_env.clear()
        base_env.update(json.loads(payload))
        return
    if kind == SPAWN:
        try:
            spawn(cid, json.loads(payload))
        except NotImplementedError:
            os._exit(3)  # no posix_spawn in a session of its own here: the parent falls back
        except Exception as e:  # a request it cannot read must not end the others' relay
            send(ERROR, cid, f'spawn: {e}'.encode())
        return
    command = commands.get(cid)
    if command is None:
        return
    if kind == RELEASE and command.hold is not None:
        try:
            os.write(command.hold, b'\n')
        except OSError:
            pass  # it has ended (it was killed) before its release
        os.close(command.hold)
        command.hold = None
    elif kind == CLOSE_PIPES:
        for fd in list(command.pipes):
            close_pipe(command, fd)
        settle(command)


def main():
    selector.register(0, selectors.EVENT_READ, ('requests', None))
    selector.register(wake_r, selectors.EVENT_READ, ('wake', None))
    pending = b''
    send(READY, 0)
    while True:
        flush()
        for key, _ in selector.select():
            what, command = key.data
            if what == 'out':
                read_output(key.fd, command)
            elif what == 'stdin':
                write_stdin(command)
            elif what == 'wake':
                try:
                    while os.read(wake_r, 4096):
                        pass
                except BlockingIOError:
                    pass
                reap()
            else:
                data = os.read(0, 1 << 20)
                if not data:
                    os._exit(0)  # the parent is gone; what runs goes on (its watchdog ends it)
                pending += data
                while len(pending) >= 4:
                    (length,) = struct.unpack_from('<I', pending)
                    if len(pending) < 4 + length:
                        break
                    _, kind, cid = FRAME.unpack_from(pending)
                    payload = pending[9:4 + length]
                    pending = pending[4 + length:]
                    request(kind, cid, payload)


try:
    main()
except BrokenPipeError:
    os._exit(0)  # the parent stopped reading: it is gone

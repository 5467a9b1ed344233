"""Runs tests/pipeline/torch_reference.py in a process that has already imported torch.

usage: warm_reference.py ARGUMENT...          what torch_reference.py takes, same output and
                                               exit status
       warm_reference.py --serve SOCKET       the server (started by the first client)

Every comparison in the suite runs the reference once, and `import torch` costs each run about
a second of CPU (Debian's LibTorch loads ~290 shared libraries and registers its operators):
over a hundred runs, minutes of the suite's time on two cores. So the first client starts a
server that imports torch_reference (and so torch) once and never computes anything itself;
every request is served by a fork() of it — no thread runs in the server, so the child is a
clean process that owns everything from there — which changes to the client's folder and
environment, runs torch_reference.main() on the client's arguments and sends back its output
and exit status. The reference's code and results are the ones a fresh `python3
torch_reference.py` gives: the server is keyed by the script's bytes, this Python and the
environment variables that choose how the math runs (OPENBLAS_*, OMP_*, ...: OpenBLAS reads
its kernel when torch is imported), so a change to any starts another server. A server with no
request for 120 s exits. When no server can be reached or started, the client runs the
reference itself: slower, never different.
"""
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "torch_reference.py")
IDLE_S = 120
# Variables read when torch and its BLAS load, or that change how they compute.
MATH_PREFIXES = ("OPENBLAS_", "OMP_", "GOMP_", "MKL_", "KMP_", "TORCH_", "ATEN_", "LD_",
                 "PYTHON")


def server_key():
    digest = hashlib.sha256()
    for path in (SCRIPT, os.path.abspath(__file__)):
        with open(path, "rb") as f:
            digest.update(f.read())
    digest.update(sys.executable.encode())
    for name in sorted(os.environ):
        if name.startswith(MATH_PREFIXES):
            digest.update(("%s=%s\0" % (name, os.environ[name])).encode())
    return digest.hexdigest()[:20]


def socket_path(key):
    return os.path.join(tempfile.gettempdir(), "baton-reference-%d-%s.sock" % (os.getuid(), key))


def receive_all(connection):
    chunks = []
    while True:
        chunk = connection.recv(1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def ask(path, arguments):
    """(output, status) from the server at path, or None when there is none."""
    try:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.connect(path)
    except OSError:
        return None
    # A server may close at its idle timeout with this connection still in its backlog: the
    # connection is then reset, and the request goes to a new server (the reference only
    # reads, so asking again is safe).
    try:
        with connection:
            request = {"argv": arguments, "cwd": os.getcwd(), "env": dict(os.environ)}
            connection.sendall(json.dumps(request).encode() + b"\n")
            connection.shutdown(socket.SHUT_WR)
            reply = receive_all(connection)
    except OSError:
        return None
    try:
        answer = json.loads(reply.decode())
        return answer["output"], int(answer["status"])
    except (ValueError, KeyError):
        return None  # the server went away mid-request: run it here


def remove(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def start_server(path):
    # Detached from the test: its own session, no inherited descriptors (CTest waits for a
    # test's output pipe to close), output thrown away.
    subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve", path],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
                     cwd="/")


def run_here(arguments):
    sys.argv = [SCRIPT] + arguments
    sys.path.insert(0, HERE)
    import torch_reference
    return torch_reference.main()


def client(arguments):
    if os.environ.get("BATON_WARM_REFERENCE") == "off":
        return run_here(arguments)
    path = socket_path(server_key())
    answer = ask(path, arguments)
    if answer is None:
        start_server(path)
        deadline = time.monotonic() + 60
        while answer is None and time.monotonic() < deadline:
            time.sleep(0.05)
            answer = ask(path, arguments)
    if answer is None:
        return run_here(arguments)
    output, status = answer
    sys.stdout.write(output)
    sys.stdout.flush()
    return status


def serve_one(connection, reference):
    """In the forked child: the request on connection, answered."""
    import io
    import contextlib
    request = json.loads(receive_all(connection).decode())
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    output = io.StringIO()
    status = 1
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        try:
            sys.argv = [SCRIPT] + request["argv"]
            status = reference.main()
        except SystemExit as done:
            status = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        except BaseException:  # the reference's own failure, reported as a fresh run would
            import traceback
            traceback.print_exc()
            status = 1
    connection.sendall(json.dumps({"output": output.getvalue(), "status": status}).encode())


def serve(path):
    sys.path.insert(0, HERE)
    import torch_reference as reference  # torch is imported here, once
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lock_path = path + ".lock"
    import fcntl
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if ask_alive(path):
            return 0  # another client started one first
        remove(path)
        listener.bind(path)
        listener.listen(16)
    listener.settimeout(IDLE_S)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the children
    while True:
        try:
            connection, _ = listener.accept()
        except socket.timeout:
            # Idle: no new client finds this server from now on, and one that connected just
            # before is still served (drained without waiting).
            remove(path)
            listener.setblocking(False)
            continue
        except BlockingIOError:
            break
        pid = os.fork()
        if pid == 0:
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            try:
                serve_one(connection, reference)
            finally:
                os._exit(0)
        connection.close()
    return 0


def ask_alive(path):
    try:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.connect(path)
        probe.close()
        return True
    except OSError:
        return False


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        sys.exit(serve(sys.argv[2]))
    sys.exit(client(sys.argv[1:]))

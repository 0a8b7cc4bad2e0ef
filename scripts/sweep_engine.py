"""The run engine of the project's scripts: runs many commands (simulator runs, table rows), a
few at a time or on a Dask cluster, each in its own process group with its own log, with
done/total/ETA on stderr, the end of a failed command's log printed, and SIGINT/SIGTERM stopping
every child. scripts/sweep.py, fault_table.py, cost_table.py and quality_protocol.py run through it.

Also the one place that says where the binaries are and where runs go:
  --hilo-sim PATH   (default $HILO_SIM, else build/sim/hilo-sim)
  --hilo-emu PATH   (default $HILO_EMU, else build/sim/hilo-emu)
  runs without --out go under results/runs/<name>/ (ignored by git).

A task is a dict with at least `slug` (unique name), `cmd` (argv list) and `log_path` (its stdout
and stderr); run_all() adds `status` (ok, failed, timeout, interrupted, not run), `exit_code` and
`seconds` (and `worker` on Dask).
"""
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import uuid

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRACE_S = 5.0  # SIGTERM -> SIGKILL
POLL_S = 0.2
LOG_TAIL_LINES = 15  # lines of a failed command's log printed to stderr
BINARIES = {
    "hilo-sim": ("HILO_SIM", os.path.join(REPO_ROOT, "build", "sim", "hilo-sim")),
    "hilo-emu": ("HILO_EMU", os.path.join(REPO_ROOT, "build", "sim", "hilo-emu")),
    # hilo-sim's synchronous lockstep without a network (the quality scripts' runner)
    "sync-curves": ("HILO_SYNC_CURVES", os.path.join(REPO_ROOT, "build", "models", "sync-curves")),
}


class BadInput(Exception):
    """An error in a script's own arguments (exit 2)."""


def default_binary(name):
    """$HILO_SIM / $HILO_EMU / $HILO_SYNC_CURVES when set, else the binary in build/."""
    env, default = BINARIES[name]
    return os.environ.get(env) or default


def add_binary_args(parser, *names):
    """Adds --hilo-sim PATH (and --hilo-emu PATH, --sync-curves PATH) with their environment
    defaults."""
    for name in names:
        env, default = BINARIES[name]
        parser.add_argument(f"--{name}", dest=name.replace("-", "_"), metavar="PATH",
                            default=default_binary(name),
                            help=f"{name} binary (default ${env}, else "
                                 f"{os.path.relpath(default, REPO_ROOT)})")


def check_binary(path, name):
    """Raises BadInput unless path is an executable file."""
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise BadInput(f"{name} {path!r} not found or not executable (build it: "
                       f"scripts/build.sh --target {name}, or pass --{name} PATH / set "
                       f"${BINARIES[name][0]})")


def default_out(name):
    """Where a script's runs go when --out is not given: results/runs/<name> (ignored by git)."""
    return os.path.join(REPO_ROOT, "results", "runs", name)


def log(msg, label="run"):
    print(f"[{label}] {msg}", file=sys.stderr, flush=True)


def fmt_duration(s):
    s = int(round(s))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


def log_tail(path, lines=LOG_TAIL_LINES):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


# --- process groups ------------------------------------------------------------------------------

def _exited(proc):
    """True when proc has exited, WITHOUT reaping it: while it is unreaped its pid (and so its
    process-group id) cannot be reused, so signalling the group stays safe."""
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _signal_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _reap_group(proc):
    """SIGKILL to whatever is left in proc's group (sent while the leader is unreaped, so the
    group id is still ours), reaps the leader, and waits until the group is gone (a killed
    grandchild takes a moment to exit)."""
    _signal_group(proc, signal.SIGKILL)
    try:  # wait4: the exit status and the child's CPU time (user + system)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.cpu_s = usage.ru_utime + usage.ru_stime
    except ChildProcessError:
        proc.wait()
    rc = proc.returncode
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)  # signal 0: only asks whether the group still exists
        except (ProcessLookupError, PermissionError):
            break
        time.sleep(0.02)
    return rc


def _stop_group(proc, grace_s):
    """SIGTERM to proc's process group, SIGKILL to whatever is left after grace_s, then reaps."""
    _signal_group(proc, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while not _exited(proc) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _reap_group(proc)


def _finish_group(proc):
    """After the leader exited: kills anything it left in its group, then reaps it."""
    return _reap_group(proc)


def _start(cmd, cwd, log_path, extra_header=""):
    logf = open(log_path, "w")
    logf.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n" + extra_header)
    logf.flush()
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=logf, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as e:
        logf.write(f"[sweep] could not start: {e}\n")
        logf.close()
        return None, None
    return proc, logf


# --- executors -----------------------------------------------------------------------------------
# Both run each combination's command with stdout/stderr in its run.log and report
# (entry, status, exit_code, seconds) with status "exited" (exit_code says how), "timeout" or
# "interrupted".

class LocalExecutor:
    """Runs commands on this machine, `jobs` at a time, each in its own process group."""

    def __init__(self, jobs, timeout_s):
        self.jobs, self.timeout_s = jobs, timeout_s
        self.queue, self.running = [], []

    def describe(self):
        return f"local, {self.jobs} at a time"

    def parallelism(self):
        return self.jobs

    def submit(self, entry, cmd, cwd):
        self.queue.append((entry, cmd, cwd))

    def poll(self):
        done = []
        still = []
        for entry, proc, logf, t0 in self.running:
            secs = time.monotonic() - t0
            if _exited(proc):
                rc = _finish_group(proc)
                logf.close()
                entry["cpu_s"] = getattr(proc, "cpu_s", None)
                done.append((entry, "exited", rc, secs))
            elif self.timeout_s is not None and secs > self.timeout_s:
                logf.write(f"\n[sweep] stopped after {self.timeout_s:g} s (--timeout-s)\n")
                logf.flush()
                rc = _stop_group(proc, GRACE_S)
                logf.close()
                done.append((entry, "timeout", rc, secs))
            else:
                still.append((entry, proc, logf, t0))
        self.running = still
        while self.queue and len(self.running) < self.jobs:
            entry, cmd, cwd = self.queue.pop(0)
            proc, logf = _start(cmd, cwd, entry["log_path"])
            if proc is None:
                done.append((entry, "exited", 127, 0.0))
                continue
            self.running.append((entry, proc, logf, time.monotonic()))
        return done

    def idle(self):
        return not self.queue and not self.running

    def stop(self):
        """Stops every running command; returns (stopped, never started) entries."""
        for _, proc, _, _ in self.running:
            _signal_group(proc, signal.SIGTERM)
        stopped = []
        deadline = time.monotonic() + GRACE_S
        for entry, proc, logf, t0 in self.running:
            while not _exited(proc) and time.monotonic() < deadline:
                time.sleep(0.05)
            rc = _finish_group(proc)
            logf.write("\n[sweep] stopped by a signal to the sweep\n")
            logf.close()
            stopped.append((entry, "interrupted", rc, time.monotonic() - t0))
        never = [e for e, _, _ in self.queue]
        self.running, self.queue = [], []
        return stopped, never

    def close(self):
        pass


def dask_run_task(cmd, cwd, log_path, timeout_s, stop_event, grace_s):
    """A Dask task: runs cmd on the worker in its own process group, logging to log_path; stops
    it when the sweep sets the distributed Event `stop_event` or after timeout_s. Returns
    (status, exit_code, seconds, worker address)."""
    import distributed  # on the worker

    try:
        worker = distributed.get_worker().address
    except ValueError:
        worker = "?"
    header = (f"[sweep] on Dask worker {worker} (host {socket.gethostname()}, "
              f"pid {os.getpid()})\n")
    t0 = time.monotonic()
    proc, logf = _start(cmd, cwd, log_path, header)
    if proc is None:
        return "exited", 127, 0.0, worker
    stop = distributed.Event(stop_event)
    status = "exited"
    while not _exited(proc):
        if stop.wait(timeout=POLL_S * 2):
            logf.write("\n[sweep] stopped by a signal to the sweep\n")
            status = "interrupted"
            break
        if timeout_s is not None and time.monotonic() - t0 > timeout_s:
            logf.write(f"\n[sweep] stopped after {timeout_s:g} s (--timeout-s)\n")
            status = "timeout"
            break
    logf.flush()
    rc = _stop_group(proc, grace_s) if status != "exited" else _finish_group(proc)
    logf.close()
    return status, rc, time.monotonic() - t0, worker


class DaskExecutor:
    """Runs commands as tasks of a Dask distributed cluster (see dask_run_task)."""

    def __init__(self, address, timeout_s, local_workers=None):
        """address: a scheduler's address; or None with local_workers=N to start a LocalCluster of
        N single-threaded worker processes on this machine (closed with the executor)."""
        try:
            import distributed
        except ImportError:
            raise BadInput("--dask needs the Python package `distributed` "
                           "(Debian: apt-get install python3-distributed; scripts/setup.sh)")
        self.distributed = distributed
        try:  # send dask_run_task by value: remote workers need not have scripts/ importable
            import cloudpickle
            cloudpickle.register_pickle_by_value(sys.modules[__name__])
        except (ImportError, AttributeError, ValueError):
            pass
        self.cluster = None
        if address is None:
            self.cluster = distributed.LocalCluster(
                n_workers=local_workers, threads_per_worker=1, processes=True,
                host="127.0.0.1", dashboard_address=None)
            address = self.cluster.scheduler_address
        try:
            self.client = distributed.Client(address, timeout=20)
        except (OSError, TimeoutError) as e:
            raise BadInput(f"--dask {address}: cannot reach the scheduler: {e}")
        self.address = address
        self.timeout_s = timeout_s
        self.stop_name = "hilo-sweep-stop-" + uuid.uuid4().hex
        self.stop_event = distributed.Event(self.stop_name, client=self.client)
        self.futures = {}

    def parallelism(self):
        """The cluster's worker threads: how many tasks run at once."""
        workers = self.client.scheduler_info().get("workers", {})
        return sum(int(w.get("nthreads", 1)) for w in workers.values()) or 1

    def describe(self):
        n = len(self.client.scheduler_info().get("workers", {}))
        where = "local Dask cluster" if self.cluster else f"Dask scheduler {self.address}"
        return f"{where} ({n} worker(s), {self.parallelism()} at a time)"

    def submit(self, entry, cmd, cwd):
        fut = self.client.submit(dask_run_task, cmd, cwd, entry["log_path"], self.timeout_s,
                                 self.stop_name, GRACE_S, pure=False,
                                 key=f"hilo-run-{entry['slug']}-{uuid.uuid4().hex[:8]}")
        self.futures[fut] = entry

    def _result(self, fut, entry):
        try:
            status, rc, secs, worker = fut.result()
            entry["worker"] = worker
            return entry, status, rc, secs
        except Exception as e:  # the task itself failed (worker lost, ...)
            with open(entry["log_path"], "a") as f:
                f.write(f"\n[sweep] Dask task failed: {e!r}\n")
            return entry, "exited", None, 0.0

    def poll(self):
        done = []
        for fut in [f for f in self.futures if f.done()]:
            done.append(self._result(fut, self.futures.pop(fut)))
        return done

    def idle(self):
        return not self.futures

    def stop(self):
        self.stop_event.set()
        waiting = [f for f in self.futures if f.status == "pending"]
        # Tasks already running stop their runs and return; queued ones are cancelled.
        stopped, never = [], []
        deadline = time.monotonic() + GRACE_S + 10
        while any(not f.done() for f in self.futures) and time.monotonic() < deadline:
            time.sleep(0.1)
        for fut, entry in self.futures.items():
            if fut.done() and fut.status == "finished":
                e, status, rc, secs = self._result(fut, entry)
                stopped.append((e, "interrupted" if status == "interrupted" else status, rc, secs))
            else:
                never.append(entry)
        self.client.cancel([f for f in self.futures if not f.done()] + waiting)
        self.futures = {}
        return stopped, never

    def close(self):
        try:
            self.stop_event.clear()
            self.client.close()
        except Exception:
            pass
        if self.cluster is not None:
            try:
                self.cluster.close()
            except Exception:
                pass


def make_executor(jobs, timeout_s, dask=None):
    """A LocalExecutor running `jobs` at a time, or a DaskExecutor for --dask ADDRESS or
    --dask local[:N] (a LocalCluster of N single-threaded workers on this machine, default
    --jobs)."""
    if not dask:
        return LocalExecutor(jobs, timeout_s)
    if dask == "local" or dask.startswith("local:"):
        n = jobs
        if dask.startswith("local:"):
            try:
                n = int(dask.split(":", 1)[1])
            except ValueError:
                n = 0
            if n < 1:
                raise BadInput(f"--dask {dask}: expected local or local:N with N >= 1")
        return DaskExecutor(None, timeout_s, local_workers=n)
    return DaskExecutor(dask, timeout_s)


def run_all(tasks, executor, label="run", on_finish=None, cwd=None, of=None):
    """Runs every task through executor, showing done/total/ETA on stderr; SIGINT or SIGTERM stops
    the running ones (their groups get SIGTERM, then SIGKILL) and drops the queued ones. Each
    task's command writes stdout and stderr to its log_path; a failed task's log stays there and
    its last lines are printed. on_finish(task) is called for each task that finished (any
    status) before the progress line. Returns the signal number that stopped the run, or None.
    Sets every task's `status`, `exit_code` and `seconds`. of=(done before, grand total) counts
    these tasks as part of a larger run made of several calls (e.g. one task at a time)."""
    cwd = cwd or os.getcwd()
    done0, total = of if of else (0, len(tasks))
    for t in tasks:
        t.setdefault("status", "not run")
    stop_signal = []

    def on_signal(signum, _frame):
        if not stop_signal:
            log(f"{signal.Signals(signum).name}: stopping the runs", label)
        stop_signal.append(signum)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    durations, nfailed = [], 0
    done = done0
    start = time.monotonic()

    def finish(task, status, rc, secs):
        nonlocal done, nfailed
        task["exit_code"] = "" if rc is None else rc
        task["seconds"] = secs
        if status == "interrupted":
            task["status"] = "interrupted"
            if on_finish:
                on_finish(task)
            return
        if status == "exited" and rc == 0:
            task["status"] = "ok"
        else:
            task["status"] = "timeout" if status == "timeout" else "failed"
            why = ("timed out" if status == "timeout" else
                   f"exit {rc}" if rc is not None else "task lost")
            task["why"] = why
            nfailed += 1
            tail = log_tail(task["log_path"]).rstrip()
            log(f"FAILED {task['slug']} ({why}); log: {task['log_path']}" +
                ("\n  | " + tail.replace("\n", "\n  | ") if tail else ""), label)
        if on_finish:
            on_finish(task)
        durations.append(secs)
        done += 1
        remaining = total - done
        mean = sum(durations) / len(durations)
        par = max(1, executor.parallelism())
        eta = mean * -(-remaining // par)  # ceil(remaining / parallel slots) rounds of runs
        log(f"{done}/{total} done, {nfailed} failed, elapsed "
            f"{fmt_duration(time.monotonic() - start)}, ETA "
            f"{fmt_duration(eta) if remaining else '0s'}  [{task['slug']}: {secs:.1f} s]", label)

    try:
        for t in tasks:
            os.makedirs(os.path.dirname(t["log_path"]) or ".", exist_ok=True)
            executor.submit(t, t["cmd"], t.get("cwd", cwd))
        while not executor.idle() and not stop_signal:
            for result in executor.poll():
                finish(*result)
            if not executor.idle() and not stop_signal:
                time.sleep(POLL_S)
        if stop_signal:
            stopped, never = executor.stop()
            for result in stopped:
                finish(*result)
            for t in never:
                t["status"] = "not run"
    finally:
        executor.close()
        for s, h in old.items():
            signal.signal(s, h)
    return stop_signal[0] if stop_signal else None


def command_line():
    """This script's command line, as a user would type it from the repository root."""
    argv0 = os.path.relpath(os.path.abspath(sys.argv[0]), os.getcwd())
    return " ".join(shlex.quote(a) for a in [argv0] + sys.argv[1:])


def git_commit():
    """The short commit of the checkout, with '+' when tracked files have uncommitted changes."""
    def git(*args):
        try:
            return subprocess.run(["git", "-C", REPO_ROOT] + list(args), stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True).stdout.strip()
        except OSError:
            return ""
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return commit + ("+" if git("status", "--porcelain", "--untracked-files=no") else "")

#!/usr/bin/python3
"""The scripts that run a binary agree on their flags (CTest: scripts.flags). Runs nothing
heavy: only --help, bad arguments and missing binaries.

Usage: tests/scripts/test_script_flags.py   (from the repository root)

Every script under scripts/ that runs hilo-sim, hilo-emu or sync-curves is listed in SCRIPTS (a
script that names one of those binaries and is not listed fails the test), and for each:
  1. --help exits 0 and names its binaries' flags: --hilo-sim PATH, --hilo-emu PATH where it runs
     hilo-emu, --sync-curves PATH where it runs sync-curves (the same names everywhere; no --bin,
     --sim or HILO_BIN);
  2. an unknown argument exits 2;
  3. $HILO_SIM / $HILO_EMU / $HILO_SYNC_CURVES pointing at a missing file makes it exit 2 naming
     that path, before running anything, so the environment is honoured as the default.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3"
S = os.path.join(ROOT, "scripts")
TINY = os.path.join(ROOT, "tests", "scripts", "tiny.textproto")
# script -> (the flags its --help names, arguments that make it start work (None: not run here),
#            the env var to break)
SCRIPTS = {
    "sweep.py": (("--hilo-sim", "--hilo-emu"), [TINY, "--grid", "seed=1,2"], "HILO_SIM"),
    "fault_table.py": (("--hilo-sim", "--hilo-emu"), [], "HILO_SIM"),
    "cost_table.py": (("--hilo-sim",), ["--workers", "2"], "HILO_SIM"),
    "compare_models.py": (("--hilo-sim",), [TINY], "HILO_SIM"),
    "compare_modes.py": (("--hilo-sim", "--hilo-emu"), [TINY], "HILO_EMU"),
    "validation_sim_rerun.py": (("--hilo-sim",), [], "HILO_SIM"),
    "validation_seeds.py": (("--hilo-sim",), ["--seeds", "1", "--out", "{tmp}/s.csv"],
                            "HILO_SIM"),
    "quality_protocol.py": (("--sync-curves",), ["--grid", "small", "--out", "{tmp}"],
                            "HILO_SYNC_CURVES"),
    "validate_emulation.sh": (("--hilo-sim", "--hilo-emu"), ["--out", "{tmp}"], "HILO_EMU"),
    "emulation_ceiling.sh": (("--hilo-sim", "--hilo-emu"), ["--out", "{tmp}"], "HILO_EMU"),
    "chaos.sh": (("--hilo-sim", "--hilo-emu"), [], "HILO_EMU"),
    "tcp_trace_overlay.sh": (("--hilo-sim", "--hilo-emu"), ["--out", "{tmp}"], "HILO_SIM"),
    "check_reproduction.py": (("--hilo-sim",), ["--only", "teaching-01"], "HILO_SIM"),
    "reproduce.sh": (("--hilo-sim",), ["--no-build", "--quick", "--only", "fig8", "--out",
                                       "{tmp}"], "HILO_SIM"),
}
# Scripts that name a binary but only document, build or read its output (no run of their own).
NOT_RUNNERS = {"build.sh", "quickstart.sh", "test.sh", "setup.sh", "fuzz.sh", "remake_results.py",
               "check_readme.py", "sweep_engine.py", "hilo_runs.py", "report.py",
               "compare_runs.py", "quality_subspace.py", "quality_same_seed.py"}
BINARY_NAMES = re.compile(r"hilo-sim|hilo-emu|sync-curves")
OLD_FLAGS = re.compile(r"""["' ](--bin|--sim)["' =]|HILO_BIN""")
_checks = Checks()
check = _checks.check


def run(cmd, env=None):
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       env=dict(os.environ, **(env or {})), timeout=120)
    return p.returncode, p.stdout


def command(name):
    return ([PY] if name.endswith(".py") else []) + [os.path.join(S, name)]


def main():
    import tempfile
    for name in sorted(os.listdir(S)):
        if not name.endswith((".py", ".sh")) or name in NOT_RUNNERS or name.startswith("plot_"):
            continue
        with open(os.path.join(S, name)) as f:
            text = f.read()
        if BINARY_NAMES.search(text):
            check(name in SCRIPTS, f"{name} names a binary and is listed in SCRIPTS")
        check(not OLD_FLAGS.search(text), f"{name} has no --bin / --sim / HILO_BIN")
    for name, (flags, start, var) in SCRIPTS.items():
        cmd = command(name)
        rc, out = run(cmd + ["--help"])
        check(rc == 0 and all(f in out for f in flags),
              f"{name} --help exits 0 and names {' and '.join(flags)}", out)
        rc, out = run(cmd + ["--no-such-flag"])
        check(rc == 2, f"{name} rejects an unknown argument with exit 2 (got {rc})", out)
        if start is None:
            continue
        missing = "/nonexistent/hilo-binary"
        env = {var: missing}
        if var == "HILO_EMU":
            env["HILO_SIM"] = missing
        with tempfile.TemporaryDirectory() as tmp:
            rc, out = run(cmd + [a.replace("{tmp}", tmp) for a in start], env)
        check(rc == 2 and missing in out,
              f"{name} takes its binary from ${var} and exits 2 when it is missing (got {rc})",
              out)
    return _checks.finish()


if __name__ == "__main__":
    sys.exit(main())

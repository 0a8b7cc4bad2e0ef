#!/usr/bin/python3
"""The scripts that run the simulator agree on their flags (CTest: scripts.flags). Runs nothing
heavy: only --help, bad arguments and missing binaries.

Usage: tests/scripts/test_script_flags.py   (from the repository root)

For every script that runs hilo-sim or hilo-emu:
  1. --help exits 0 and names --hilo-sim (and --hilo-emu where it runs hilo-emu);
  2. an unknown argument exits 2;
  3. $HILO_SIM (or $HILO_EMU) pointing at a missing file makes it exit 2 naming that path, before
     running anything, so the environment is honoured as the default.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3"
S = os.path.join(ROOT, "scripts")
TINY = os.path.join(ROOT, "tests", "scripts", "tiny.textproto")
# (command, runs hilo-emu too, arguments that make it start work, env var to break)
SCRIPTS = [
    ([PY, f"{S}/sweep.py"], True, [TINY, "--grid", "seed=1,2"], "HILO_SIM"),
    ([PY, f"{S}/fault_table.py"], False, [], "HILO_SIM"),
    ([PY, f"{S}/cost_table.py"], False, ["--workers", "2"], "HILO_SIM"),
    ([PY, f"{S}/compare_models.py"], False, [TINY], "HILO_SIM"),
    ([PY, f"{S}/compare_modes.py"], True, [TINY], "HILO_EMU"),
    ([f"{S}/validate_emulation.sh"], True, None, None),
    ([f"{S}/emulation_ceiling.sh"], True, None, None),
    ([f"{S}/reproduce.sh"], False, None, None),
]
_checks = Checks()
check = _checks.check


def run(cmd, env=None):
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       env=dict(os.environ, **(env or {})), timeout=120)
    return p.returncode, p.stdout


def main():
    for cmd, emu, start, var in SCRIPTS:
        name = os.path.basename(cmd[-1])
        rc, out = run(cmd + ["--help"])
        check(rc == 0 and "--hilo-sim" in out and (not emu or "--hilo-emu" in out),
              f"{name} --help names --hilo-sim" + (" and --hilo-emu" if emu else ""), out)
        rc, out = run(cmd + ["--no-such-flag"])
        check(rc == 2, f"{name} rejects an unknown argument with exit 2 (got {rc})", out)
        if start is not None:
            missing = "/nonexistent/hilo-binary"
            rc, out = run(cmd + start, {var: missing, "HILO_SIM" if var == "HILO_EMU"
                                        else "HILO_UNUSED": missing})
            check(rc == 2 and missing in out,
                  f"{name} takes its binary from ${var} and exits 2 when it is missing", out)
    return _checks.finish()


if __name__ == "__main__":
    sys.exit(main())

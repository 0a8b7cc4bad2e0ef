#!/usr/bin/python3
"""Runs the README's sweep examples as written (CTest: scripts.readme_examples).

Usage: tests/scripts/test_readme_examples.py HILO_SIM HILO_EMU   (from the repository root)

Takes the first ```sh block of the README's "Sweeps and figures" section, keeps its
`scripts/sweep.py` and `/usr/bin/python3 scripts/plot_*.py` command lines (a trailing backslash
continues a line, a `#` comment is dropped), and runs each with bash from the repository root,
with $HILO_SIM / $HILO_EMU naming the binaries and the README's /tmp/hilo-sweep* folders moved
into a temporary folder. Checks that every command exits 0, that the plot was written, that the
simulator sweep has one `ok` row per (bandwidth, arm) and that the hilo-emu sweep ran real
processes (mode emulation-direct).
"""
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_checks = Checks()
check = _checks.check


def readme_commands():
    text = open(os.path.join(ROOT, "README.md")).read()
    section = text[text.index("## Sweeps and figures"):]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    commands, cur = [], ""
    for line in block.splitlines():
        cur += line.rstrip("\\").rstrip() + " " if line.endswith("\\") else line
        if line.endswith("\\"):
            continue
        cmd = re.sub(r"\s+#.*$", "", cur).strip()
        cur = ""
        if cmd.startswith("scripts/sweep.py") or cmd.startswith("/usr/bin/python3 scripts/plot_"):
            commands.append(re.sub(r"\s+", " ", cmd))
    return commands


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    env = dict(os.environ, HILO_SIM=os.path.abspath(sys.argv[1]),
               HILO_EMU=os.path.abspath(sys.argv[2]))
    commands = readme_commands()
    check(len(commands) == 3 and "--runner hilo-emu" in commands[2],
          "the README shows a sweep, its plot and a hilo-emu sweep", "\n".join(commands))
    tmp = tempfile.mkdtemp(prefix="hilo-readme-examples-")
    try:
        for cmd in commands:
            moved = cmd.replace("/tmp/hilo-sweep", os.path.join(tmp, "hilo-sweep"))
            p = subprocess.run(["bash", "-c", moved], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            check(p.returncode == 0, f"exits 0: {cmd}", p.stdout)
        sweep = os.path.join(tmp, "hilo-sweep")
        check(os.path.exists(os.path.join(sweep, "speedup.png")), "the plot was written")
        rows = list(csv.DictReader(open(os.path.join(sweep, "sweep.csv")))) if os.path.exists(
            os.path.join(sweep, "sweep.csv")) else []
        bws = {r["network.worker_link.bandwidth"] for r in rows}
        check(rows and all(r["status"] == "ok" for r in rows) and len(bws) == 3 and
              len(rows) == 3 * len({r["arm"] for r in rows}),
              "the simulator sweep: one ok row per bandwidth and arm")
        emu = os.path.join(tmp, "hilo-sweep-emu", "sweep.csv")
        rows = list(csv.DictReader(open(emu))) if os.path.exists(emu) else []
        check(rows and all(r["status"] == "ok" and r.get("mode") == "emulation-direct"
                           for r in rows), "the hilo-emu sweep ran real processes on loopback")
    finally:
        if not _checks.failures:
            shutil.rmtree(tmp)
    return _checks.finish(f"; files kept in {tmp}")


if __name__ == "__main__":
    sys.exit(main())

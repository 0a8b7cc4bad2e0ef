#!/usr/bin/python3
"""Runs the README's tutorial and scripts/README.md's hilo-emu sweep as written (CTest:
scripts.readme_examples).

Usage: tests/scripts/test_readme_examples.py HILO_SIM HILO_EMU   (from the repository root)

Takes every ```sh block of the README's "Tutorial" section and the first ```sh block of
scripts/README.md's "Sweeps and figures" section, keeps their command lines (a trailing backslash
continues a line, a `#` comment is dropped; in scripts/README.md only the `--runner hilo-emu`
sweep, the others being the tutorial's or too long for a test), and runs each with bash from the
repository root, with $HILO_SIM / $HILO_EMU naming the binaries, `build/sim/hilo-sim` replaced
by HILO_SIM and the /tmp/hilo-tutorial and /tmp/hilo-sweep* folders moved into a temporary
folder. Checks that
  - every command exits 0;
  - every /tmp/hilo-tutorial/... and /tmp/hilo-sweep/... path the tutorial's text names exists
    afterwards (the files each step says it writes);
  - step 2's first command prints the header line the README shows in its ```text block;
  - step 1 prints a row per arm the README names (`full`, `train-low`, `hilo-spar`);
  - the sweep has one `ok` row per (bandwidth, arm), and the hilo-emu sweep ran real processes
    (mode emulation-direct).
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
TMP_PATHS = re.compile(r"/tmp/hilo-(?:tutorial|sweep)[\w./-]*\w")


def section(path, title):
    text = open(os.path.join(ROOT, path)).read()
    start = text.index("\n## " + title)
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else len(text)]


def commands(block):
    out, cur = [], ""
    for line in block.splitlines():
        cur += line.rstrip("\\").rstrip() + " " if line.endswith("\\") else line
        if line.endswith("\\"):
            continue
        cmd = re.sub(r"\s+#.*$", "", cur).strip()
        cur = ""
        if cmd:
            out.append(re.sub(r"\s+", " ", cmd))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sim, emu = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    env = dict(os.environ, HILO_SIM=sim, HILO_EMU=emu)
    tutorial = section("README.md", "Tutorial")
    steps = re.split(r"\n\*\*(?=\d\. )", tutorial)[1:]
    check(len(steps) == 5, "the tutorial has five steps", str(len(steps)))
    blocks = [re.findall(r"```sh\n(.*?)```", s, re.S) for s in steps]
    check(all(blocks), "every step shows its commands")
    sweeps = section("scripts/README.md", "Sweeps and figures")
    emu_sweep = [c for c in commands(re.search(r"```sh\n(.*?)```", sweeps, re.S).group(1))
                 if "--runner hilo-emu" in c]
    check(len(emu_sweep) == 1, "scripts/README.md shows the hilo-emu sweep", sweeps[:600])
    tmp = tempfile.mkdtemp(prefix="hilo-readme-examples-")

    def moved(text):
        return (text.replace("/tmp/hilo-tutorial", os.path.join(tmp, "hilo-tutorial"))
                .replace("/tmp/hilo-sweep", os.path.join(tmp, "hilo-sweep")))

    def run(cmd):
        cmd = moved(cmd)
        if cmd.startswith("build/sim/hilo-sim "):
            cmd = sim + cmd[len("build/sim/hilo-sim"):]
        p = subprocess.run(["bash", "-c", cmd], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        check(p.returncode == 0, f"exits 0: {cmd}", p.stdout + p.stderr)
        return p.stdout

    try:
        for n, (step, step_blocks) in enumerate(zip(steps, blocks), 1):
            outputs = [run(c) for b in step_blocks for c in commands(b)]
            prose = re.sub(r"```sh\n.*?```", "", step, flags=re.S)
            for path in sorted(set(TMP_PATHS.findall(prose))):
                check(os.path.exists(moved(path)), f"step {n} wrote {path}")
            if n == 1 and outputs:
                rows = [l.split()[0] for l in outputs[0].splitlines() if l.strip()]
                check(all(a in rows for a in ("full", "train-low", "hilo-spar")),
                      "step 1 prints a row per arm", outputs[0])
            if n == 2 and outputs:
                shown = re.search(r"```text\n(.*?)\n```", step, re.S)
                check(shown is not None and outputs[0].strip() == shown.group(1).strip(),
                      "step 2 prints the header the README shows", outputs[0])
        sweep = os.path.join(tmp, "hilo-sweep", "sweep.csv")
        rows = list(csv.DictReader(open(sweep))) if os.path.exists(sweep) else []
        bws = {r["network.worker_link.bandwidth"] for r in rows}
        check(rows and all(r["status"] == "ok" for r in rows) and len(bws) == 3 and
              len(rows) == 3 * len({r["arm"] for r in rows}),
              "the sweep: one ok row per bandwidth and arm")
        for cmd in emu_sweep:
            run(cmd)
        emu_csv = os.path.join(tmp, "hilo-sweep-emu", "sweep.csv")
        rows = list(csv.DictReader(open(emu_csv))) if os.path.exists(emu_csv) else []
        check(rows and all(r["status"] == "ok" and r.get("mode") == "emulation-direct"
                           for r in rows), "the hilo-emu sweep ran real processes on loopback")
    finally:
        if not _checks.failures:
            shutil.rmtree(tmp)
    return _checks.finish(f"; files kept in {tmp}")


if __name__ == "__main__":
    sys.exit(main())

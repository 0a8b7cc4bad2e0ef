#!/usr/bin/python3
"""No committed figure is older than the data it plots (CTest: scripts.png_fresh).

Usage: tests/scripts/test_png_fresh.py   (from the repository root, in a git checkout)

Every PNG committed under results/ carries the command that made it (plot_common.save writes it
into the PNG's "Description" text chunk). For each PNG:
  1. it names its command (a figure without one cannot be remade or checked);
  2. every input the command names -- a committed CSV under results/; for a sweep's joined file
     that is not committed (sweep_steps.csv, ...) the runs' files it is joined from
     (runs/*/steps.csv, ...); for a run folder its CSVs -- was last changed by a commit no later
     than the PNG's last commit (git commit times): a figure replotted after its data, or in the
     same commit. (Provenance beside the data, sweep.json or resolved.textproto, may change
     without the figure.)
Needs only git and the Python standard library.
"""
import os
import shlex
import struct
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JOINED = ("sweep_steps.csv", "sweep_workers.csv", "sweep_rollouts.csv", "sweep_allocation.csv")
_checks = Checks()
check = _checks.check


def git(*args):
    return subprocess.run(["git", "-C", ROOT, *args], stdout=subprocess.PIPE, text=True,
                          check=True).stdout


def png_text(path):
    """The PNG's tEXt / zTXt / iTXt chunks as {keyword: text}."""
    out = {}
    with open(path, "rb") as f:
        data = f.read()
    i = 8
    while i + 8 <= len(data):
        n = struct.unpack(">I", data[i:i + 4])[0]
        kind, body = data[i + 4:i + 8], data[i + 8:i + 8 + n]
        if kind == b"tEXt":
            k, v = body.split(b"\0", 1)
            out[k.decode("latin-1")] = v.decode("latin-1")
        elif kind == b"zTXt":
            k, v = body.split(b"\0", 1)
            out[k.decode("latin-1")] = zlib.decompress(v[1:]).decode("latin-1")
        elif kind == b"iTXt":
            k, v = body.split(b"\0", 1)
            flag, rest = v[0], v[2:].split(b"\0", 2)[-1]
            out[k.decode("latin-1")] = (zlib.decompress(rest) if flag else rest).decode("utf-8")
        i += 12 + n
    return out


def commit_time(path):
    t = git("log", "-1", "--format=%ct", "--", path).strip()
    return int(t) if t else None


def inputs(command, png):
    """The committed inputs (files or folders, relative to the root) a plot command names."""
    found = []
    out_stem = os.path.splitext(png)[0]
    for word in shlex.split(command):
        if not word.startswith("results/") or word == out_stem:
            continue
        base = os.path.basename(word)
        if base in JOINED and not git("ls-files", word).strip():
            # joined from the sweep's runs: runs/<combo>/steps.csv and so on
            word = os.path.join(os.path.dirname(word), "runs", "*", base[len("sweep_"):])
        elif os.path.isdir(os.path.join(ROOT, word)):
            word = os.path.join(word, "*.csv")  # a run folder: the CSVs a plotter reads
        if git("ls-files", word).strip():
            found.append(word)
    return found


def main():
    pngs = git("ls-files", "results/*.png", "results/**/*.png").split()
    check(pngs, "there are committed figures under results/")
    for png in pngs:
        command = png_text(os.path.join(ROOT, png)).get("Description", "")
        if not check(command.startswith("/usr/bin/python3 scripts/"),
                     f"{png} names the command that made it"):
            continue
        t_png = commit_time(png)
        data = inputs(command, png)
        check(data, f"{png}: its command names committed inputs", command)
        stale = [(d, commit_time(d)) for d in data if (commit_time(d) or 0) > (t_png or 0)]
        check(not stale, f"{png} is no older than its data ({', '.join(data)})",
              "; ".join(f"{d} changed {t - t_png} s after the figure" for d, t in stale))
    return _checks.finish()


if __name__ == "__main__":
    sys.exit(main())

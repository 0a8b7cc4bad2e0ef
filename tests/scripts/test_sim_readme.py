#!/usr/bin/python3
"""sim/README.md's data dictionary against the files a real run writes (CTest: scripts.sim_readme).

Usage: tests/scripts/test_sim_readme.py HILO_SIM   (from the repository root)

Runs tests/scripts/tiny.textproto (2 workers, 3 steps, full sync and HiLo + Spar: a few seconds)
with --trace-tcp (so that tcp-trace.csv is written too) into a temporary folder and checks, against the "Output files" section of sim/README.md:
  1. every file the run wrote has a `### \\`FILE\\`` entry, and every entry was written;
  2. every CSV's header names exactly the columns its table lists (a column marked "*(only ...)*"
     may be absent);
  3. summary.json's and timing.json's top-level keys and each arm's keys are exactly those listed
     (again up to the "*(only ...)*" ones);
  4. the comparison finds a column left out of the dictionary and one the run does not write
     (so the check itself cannot pass vacuously).
"""
import csv
import json
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


def dictionary(text):
    """{file: {"columns": {name: optional}, "top": [keys]}} from the Output files section."""
    section = text[text.index("\n## Output files"):]
    section = section[:section.index("\n## ", 1)]
    out = {}
    for block in re.split(r"\n### ", section)[1:]:
        m = re.match(r"`([^`]+)`", block)
        if not m:
            continue
        entry = {"columns": {}, "top": []}
        for row in re.finditer(r"^\| `([\w.]+)` \|[^|]*\| (.*) \|$", block, re.M):
            entry["columns"][row.group(1)] = row.group(2).startswith("*(only")
        top = re.search(r"Top-level keys:(.*?):\s*$", block, re.S | re.M)
        if top:
            entry["top"] = re.findall(r"`([a-z_]+)`", top.group(1))
        out[m.group(1)] = entry
    return out


def compare(name, written, documented):
    """Problems between the names a file has and those its entry documents."""
    problems = [f"{name}: `{c}` is written but not in sim/README.md" for c in written
                if c not in documented]
    problems += [f"{name}: `{c}` is in sim/README.md but the run does not write it"
                 for c, optional in documented.items() if not optional and c not in written]
    return problems


def problems_of(run, doc):
    problems = []
    files = sorted(os.listdir(run))
    problems += [f"{f}: written but not in sim/README.md" for f in files if f not in doc]
    problems += [f"{f}: in sim/README.md but not written" for f in doc if f not in files]
    for f in files:
        if f not in doc:
            continue
        entry, path = doc[f], os.path.join(run, f)
        if f.endswith(".csv"):
            with open(path) as fh:
                header = next(csv.reader(l for l in fh if not l.startswith("#")))
            problems += compare(f, header, entry["columns"])
        elif f.endswith(".json"):
            data = json.load(open(path))
            problems += compare(f + " (top level)", list(data),
                                {k: False for k in entry["top"]})
            for arm in data.get("arms", []):
                problems += compare(f"{f} (arm {arm.get('name')})", list(arm), entry["columns"])
    return problems


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    text = open(os.path.join(ROOT, "sim", "README.md")).read()
    doc = dictionary(text)
    check(len(doc) >= 8 and "steps.csv" in doc and doc["steps.csv"]["columns"],
          "sim/README.md documents the output files", str(sorted(doc)))
    tmp = tempfile.mkdtemp(prefix="hilo-sim-readme-")
    try:
        run = os.path.join(tmp, "run")
        p = subprocess.run([os.path.abspath(sys.argv[1]), "run",
                            os.path.join(ROOT, "tests", "scripts", "tiny.textproto"),
                            "--out", run, "--trace-tcp"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        check(p.returncode == 0, "hilo-sim runs the tiny scenario", p.stdout)
        if p.returncode != 0:
            return _checks.finish()
        problems = problems_of(run, doc)
        check(not problems, "every file, column and key a run writes is documented, and every "
              "documented one is written", "\n".join(problems))
        # 4. The comparison is not vacuous: drop one documented column, invent another.
        broken = json.loads(json.dumps(doc))
        del broken["steps.csv"]["columns"]["grad_norm"]
        broken["workers.csv"]["columns"]["no_such_column"] = False
        found = problems_of(run, broken)
        check(any("`grad_norm` is written but not in" in q for q in found) and
              any("`no_such_column` is in sim/README.md but the run does not" in q for q in found),
              "a column missing from the dictionary, and one the run lacks, are found",
              "\n".join(found))
    finally:
        if not _checks.failures:
            shutil.rmtree(tmp)
    return _checks.finish(f"; files kept in {tmp}")


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Tests scripts/remake_results.py (CTest: scripts.remake_results). Runs no study.

Checks:
  1. every file committed in a folder it knows (but a README.md no study makes) is made by
     exactly one study (named, or under a sub-folder "name/" the study makes whole), and each
     study's files and sub-folders are committed there (no study for a file that is gone);
  2. each study's build targets are the project's (sim/ executables, tests/bench/ stems), each
     binary a command runs is among its targets, and each script it runs exists;
  3. the folder's README.md names `scripts/remake_results.py FOLDER` as its Remake command;
  4. an unknown folder and an unknown --only file exit 2 naming them; --dry-run and --list print;
  5. the runner: studies run in order, a failing one stops the remake with exit 1 naming it and
     its log, and the study after it never runs.
"""
import glob
import importlib.util
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "remake_results.py")
_checks = Checks()
check = _checks.check


def load():
    spec = importlib.util.spec_from_file_location("remake_results", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run(args):
    p = subprocess.run(["/usr/bin/python3", SCRIPT] + args, cwd=ROOT, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def project_targets():
    names = set(os.path.splitext(os.path.basename(p))[0]
                for p in glob.glob(os.path.join(ROOT, "tests", "bench", "*.cc")))
    for cm in glob.glob(os.path.join(ROOT, "*", "CMakeLists.txt")):
        names.update(re.findall(r"add_executable\(\s*([\w-]+)", open(cm).read()))
    return names


def main():
    mod = load()
    targets = project_targets()
    for folder, studies in mod.STUDIES.items():
        tracked = subprocess.run(["git", "-C", ROOT, "ls-files", folder], stdout=subprocess.PIPE,
                                 text=True).stdout.split()
        committed = {os.path.relpath(p, folder) for p in tracked}
        made = [f for s in studies for f in s.files]
        if "README.md" not in made:  # a README is written by hand unless a study makes it
            committed.discard("README.md")
        owners = {f: [s.name for s in studies if mod.claims(s, f)] for f in committed}
        twice = sorted(f for f, o in owners.items() if len(o) > 1)
        check(not twice, f"{folder}: no file is made by two studies", twice)
        orphans = sorted(f for f, o in owners.items() if not o)
        check(not orphans, f"{folder}: every committed file has a study", orphans[:20])
        gone = sorted(f for f in made if not any(c == f or (f.endswith("/") and c.startswith(f))
                                                 for c in committed))
        check(not gone, f"{folder}: every study's files (and sub-folders) are committed", gone)
        for s in studies:
            check(set(s.targets) <= targets, f"{folder} {s.name}: its targets are the project's",
                  sorted(set(s.targets) - targets))
            bins = set(re.findall(r"build/(?:sim|tests|models)/([\w-]+)", s.cmd))
            check(bins <= set(s.targets), f"{folder} {s.name}: each binary it runs is built first",
                  sorted(bins - set(s.targets)))
            scripts = re.findall(r"scripts/[\w-]+\.(?:py|sh)", s.cmd)
            missing = [p for p in scripts if not os.path.exists(os.path.join(ROOT, p))]
            check(not missing, f"{folder} {s.name}: the scripts it runs exist", missing)
            check(s.made in ("command", "from output"), f"{folder} {s.name}: says how it makes files")
        readme = open(os.path.join(ROOT, folder, "README.md")).read()
        check(re.search(rf"^Remake: `scripts/remake_results\.py {re.escape(folder)}`", readme, re.M),
              f"{folder}/README.md names scripts/remake_results.py {folder}")

    rc, out = run(["results/nowhere"])
    check(rc == 2 and "results/nowhere" in out, "an unknown folder exits 2 naming it", out)
    rc, out = run(["results/sim", "--only", "nofile.md"])
    check(rc == 2 and "nofile.md" in out, "an unknown --only file exits 2 naming it", out)
    rc, out = run(["results/sim", "--only", "flow-vs-packet.csv", "--dry-run"])
    check(rc == 0 and len(out.strip().splitlines()) == 1 and "compare_models.py" in out,
          "--only --dry-run prints the one study's command", out)
    rc, out = run(["results/sim", "--list"])
    check(rc == 0 and all(f in out for s in mod.STUDIES["results/sim"] for f in s.files),
          "--list names every file", out)

    # The runner, on a stand-in folder of three studies whose second fails.
    scratch = os.path.join(ROOT, mod.RUNS, "stand-in")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    first, third = os.path.join(scratch, "first"), os.path.join(scratch, "third")
    mod.STUDIES["results/stand-in"] = (
        mod.Study("one", ("a",), f"echo made > {first}", "command"),
        mod.Study("two", ("b",), "echo about to fail; false", "from output"),
        mod.Study("three", ("c",), f"echo made > {third}", "command"),
    )
    rc = mod.main(["results/stand-in", "--no-build"])
    log = os.path.join(ROOT, mod.RUNS, "stand-in", "two.log")
    check(rc == 1, "a failing study stops the remake with exit 1", rc)
    check(os.path.exists(first) and not os.path.exists(third),
          "studies run in order and none after the failing one")
    check(os.path.exists(log) and "about to fail" in open(log).read(),
          "the failing study's output is in its log")
    shutil.rmtree(scratch, ignore_errors=True)

    return _checks.finish()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""scripts/validation_table.py names the commit each side of each row was made at (CTest:
scripts.validation_table). Needs only Python; runs no simulation.

Usage: tests/scripts/test_validation_table.py   (from the repository root)

Checks, on two rows of results/validation/emulation.csv:
  1. with --commits, every row shows its simulator side's and its emulation side's commit and
     date, each from its own line (the two sides of one row may differ);
  2. a row that --commits has no line for is refused with exit code 2 and a message naming the
     row and the side, rather than printed without its provenance;
  3. without --commits the table is as before (no commit columns).
"""
import csv
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "validation_table.py")


def run(*args):
    return subprocess.run(["/usr/bin/python3", SCRIPT, *args], capture_output=True, text=True)


def main():
    with open(os.path.join(ROOT, "results", "validation", "emulation.csv"), newline="") as f:
        reader = csv.DictReader(f)
        rows = [r for _, r in zip(range(2), reader)]
        fields = reader.fieldnames
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        table = os.path.join(tmp, "rows.csv")
        with open(table, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(rows)
        commits = os.path.join(tmp, "commits.csv")
        a, b = rows[0]["label"], rows[1]["label"]
        with open(commits, "w") as f:
            f.write("label,side,commit,date\n")
            f.write(f"{a},sim,aaaaaaa,2026-01-01T00:00Z\n{a},emu,bbbbbbb,2026-01-02T00:00Z\n")
            f.write(f"{b},sim,ccccccc,2026-01-03T00:00Z\n{b},emu,ddddddd,2026-01-04T00:00Z\n")
        done = run(table, "--commits", commits)
        lines = {l.split("|")[1].strip(): l for l in done.stdout.splitlines()
                 if l.startswith("| ") and not l.startswith("| scenario")}
        if done.returncode != 0:
            failures.append(f"--commits run failed: {done.stderr}")
        elif not ("| aaaaaaa, 2026-01-01T00:00Z | bbbbbbb, 2026-01-02T00:00Z |" in lines.get(a, "")
                  and "| ccccccc, 2026-01-03T00:00Z | ddddddd, 2026-01-04T00:00Z |"
                  in lines.get(b, "")):
            failures.append(f"rows do not carry their own sides' commits:\n{done.stdout}")
        if "sim made at | emu made at" not in done.stdout:
            failures.append("no commit columns in the header")

        with open(commits, "w") as f:
            f.write("label,side,commit,date\n")
            f.write(f"{a},sim,aaaaaaa,2026-01-01T00:00Z\n{a},emu,bbbbbbb,2026-01-02T00:00Z\n")
            f.write(f"{b},sim,ccccccc,2026-01-03T00:00Z\n")
        done = run(table, "--commits", commits)
        if done.returncode != 2 or f"'{b}'" not in done.stderr or "'emu'" not in done.stderr:
            failures.append(f"a missing side was not refused (exit {done.returncode}): "
                            f"{done.stderr}")

        done = run(table)
        if done.returncode != 0 or "made at" in done.stdout:
            failures.append(f"without --commits the table changed: {done.stdout}")
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    print(f"{3 - min(3, len(failures))} of 3 checks passed" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

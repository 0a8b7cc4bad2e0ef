#!/usr/bin/python3
"""scripts/check_reproduction.py: its comparison rules, and (with BUILD_DIR) a committed number
changed by one unit makes it fail (CTest: scripts.check_reproduction).

Usage: tests/scripts/test_check_reproduction.py [BUILD_DIR]   (from the repository root)
"""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_reproduction as cr  # noqa: E402
from checks import Checks  # noqa: E402

_checks = Checks()
check = _checks.check


def rules():
    with open(os.path.join(ROOT, "results", "quickstart", "summary.json")) as f:
        base = json.load(f)
    check(cr.differences(base, copy.deepcopy(base)) == [], "a summary reproduces itself")
    arms = {a["strategy"]: i for i, a in enumerate(base["arms"])}
    full, hilo = arms.get("full"), arms.get("hilo")
    check(full is not None and hilo is not None, "the case has a full and a hilo arm")
    fresh = copy.deepcopy(base)
    fresh["arms"][hilo]["update_latency_s"]["p50"] += 1e-9
    d = cr.differences(base, fresh)
    check(len(d) == 1 and d[0][1] == "update_latency_s" and d[0][4] == "exact",
          f"a latency 1e-9 s off is a difference ({d})")
    fresh = copy.deepcopy(base)
    fresh["arms"][hilo]["final_quality"] *= 1 + cr.QUALITY_TOL / 2
    check(cr.differences(base, fresh) == [], "a compressed arm within the tolerance reproduces")
    fresh["arms"][hilo]["final_quality"] = base["arms"][hilo]["final_quality"] * (
        1 + 2 * cr.QUALITY_TOL)
    check(len(cr.differences(base, fresh)) == 1, "a compressed arm beyond the tolerance differs")
    fresh = copy.deepcopy(base)
    fresh["arms"][full]["final_quality"] *= 1 + 1e-4
    check(len(cr.differences(base, fresh)) == 1, "full sync 1e-4 off differs")
    fresh = copy.deepcopy(base)
    fresh["arms"].pop()
    check(any(x[1] == "arm" for x in cr.differences(base, fresh)), "a missing arm differs")


def end_to_end(build):
    hilo_sim = os.path.join(build, "sim", "hilo-sim")
    script = [sys.executable, os.path.join(ROOT, "scripts", "check_reproduction.py"),
              "--hilo-sim", hilo_sim, "--only", "teaching-01"]
    r = subprocess.run(script, capture_output=True, text=True)
    check(r.returncode == 0 and "teaching-01: reproduces" in r.stdout,
          f"teaching-01 reproduces the committed file ({r.stdout[-400:]}{r.stderr[-400:]})")
    with tempfile.TemporaryDirectory() as d:
        folder = os.path.join(d, "results", "teaching", "01-full-sync-on-a-wan")
        shutil.copytree(os.path.join(ROOT, "results", "teaching", "01-full-sync-on-a-wan"),
                        folder)
        path = os.path.join(folder, "summary.json")
        with open(path) as f:
            s = json.load(f)
        s["arms"][0]["wire_bytes_per_update_mean"] += 1  # one committed number changed
        with open(path, "w") as f:
            json.dump(s, f)
        r = subprocess.run(script + ["--committed-root", d], capture_output=True, text=True)
        check(r.returncode == 1 and "wire_bytes_per_update_mean" in r.stdout,
              f"one committed number changed: exit 1 naming it ({r.stdout[-300:]})")
    r = subprocess.run(script[:-1] + ["nope"], capture_output=True, text=True)
    check(r.returncode == 2 and "unknown case" in r.stderr, "an unknown case: exit 2")


if __name__ == "__main__":
    rules()
    if len(sys.argv) > 1:
        end_to_end(sys.argv[1])
    sys.exit(_checks.finish())

#!/usr/bin/python3
"""Tests scripts/report.py and scripts/compare_runs.py (CTest: scripts.report).

Usage: tests/scripts/test_report.py [HILO_SIM]   (from the repository root)

With HILO_SIM the run is tests/scripts/tiny.textproto made now; without it, a copy of the
committed run results/paper/fig8/runs/max-staleness-1. Checks:
  1. report.py writes one report.html holding the summary table and four embedded PNG figures
     (update-latency CDF, link utilisation, learning curve, timeline), with nothing it would
     fetch (no http(s) src/href) and a Content-Security-Policy that forbids fetching;
  2. headless Chromium (Debian's `chromium`) opens it: the screenshot is not blank (many
     colours, enough non-white pixels) and the console logs nothing -- and the same detector
     does see the console error of a page that has one (so a silent log format cannot pass);
  3. report.py on a folder without summary.json exits 2 naming it;
  4. compare_runs.py A B prints the arms' summaries side by side with B/A ratios, writes the
     overlaid curves, and exits 2 on a folder that is not a run.
Exits 77 (CTest: skipped) with a message when chromium is not installed and cannot be run.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3"
REPORT = os.path.join(ROOT, "scripts", "report.py")
COMPARE = os.path.join(ROOT, "scripts", "compare_runs.py")
COMMITTED = os.path.join(ROOT, "results", "paper", "fig8", "runs", "max-staleness-1")
SKIP = 77
_checks = Checks()
check = _checks.check


def run(cmd):
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=300)
    return p.returncode, p.stdout


def make_run(tmp, sim):
    out = os.path.join(tmp, "run")
    if sim:
        rc, log = run([sim, "run", os.path.join(ROOT, "tests", "scripts", "tiny.textproto"),
                       "--quiet", "--out", out])
        check(rc == 0, "hilo-sim runs tests/scripts/tiny.textproto", log)
    else:
        shutil.copytree(COMMITTED, out)
    return out


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def render(browser, page, tmp, shot):
    """(exit code, console lines) of headless Chromium taking a screenshot of page."""
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           f"--user-data-dir={os.path.join(tmp, 'profile')}", "--enable-logging=stderr",
           "--v=0", "--window-size=1200,2400", f"--screenshot={shot}", "file://" + page]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=120)
    console = [l for l in p.stdout.splitlines() if ":CONSOLE" in l]
    return p.returncode, console, p.stdout


def not_blank(shot):
    import matplotlib.image as mpimg
    import numpy as np
    img = mpimg.imread(shot)[:, :, :3]
    ink = float(np.mean(np.any(img < 0.9, axis=2)))
    colours = len(np.unique((img * 255).astype(np.uint8).reshape(-1, 3), axis=0))
    return ink > 0.03 and colours > 50, f"{ink:.1%} non-white pixels, {colours} colours"


def main(argv):
    sim = argv[1] if len(argv) > 1 else ""
    browser = chromium()
    if browser is None:
        print("SKIP: chromium is not installed (Debian package `chromium`; scripts/setup.sh "
              "installs it): report.html cannot be opened in a browser here")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = make_run(tmp, sim)
        rc, out = run([PY, REPORT, run_dir])
        page = os.path.join(run_dir, "report.html")
        check(rc == 0 and os.path.exists(page), "report.py writes RUN_DIR/report.html", out)
        text = open(page).read() if os.path.exists(page) else ""
        figures = re.findall(r'<img alt="([^"]+)" src="data:image/png;base64,', text)
        check(figures == ["Update latency", "Link utilisation", "Learning curve", "Timeline"],
              "the page embeds the four figures as PNG data", figures)
        check("<h2>Summary</h2><table>" in text.replace("\n", "") and "update latency p50" in text,
              "the page has the summary table")
        check(not re.search(r"""(src|href)=["']?(https?:)?//""", text) and
              "default-src 'none'" in text,
              "the page fetches nothing (no remote src/href; its CSP forbids fetching)")
        shot = os.path.join(tmp, "shot.png")
        rc, console, log = render(browser, page, tmp, shot)
        check(rc == 0 and os.path.exists(shot), "headless chromium takes a screenshot", log[-2000:])
        if os.path.exists(shot):
            ok, what = not_blank(shot)
            check(ok, f"the screenshot is not blank ({what})")
        check(not console, "the console logs nothing", console)
        bad = os.path.join(tmp, "bad.html")
        with open(bad, "w") as f:
            f.write(text.replace("</body>", '<img src="http://192.0.2.1/x.png"></body>'))
        _, console, _ = render(browser, bad, tmp, os.path.join(tmp, "bad.png"))
        check(console, "the detector sees the console error of a page that fetches")

        rc, out = run([PY, REPORT, tmp])
        check(rc == 2 and "summary.json" in out, "a folder without summary.json exits 2", out)

        other = os.path.join(tmp, "other")
        shutil.copytree(run_dir, other)
        rc, out = run([PY, COMPARE, run_dir, other, "--out", os.path.join(tmp, "cmp")])
        check(rc == 0 and "B/A" in out and "1.000" in out,
              "compare_runs.py prints both runs side by side with B/A ratios (1.000 for a copy)",
              out)
        check(os.path.exists(os.path.join(tmp, "cmp.png")), "compare_runs.py writes the curves")
        rc, out = run([PY, COMPARE, run_dir, tmp])
        check(rc == 2 and tmp in out, "compare_runs.py exits 2 on a folder that is not a run",
              out)
    return _checks.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv))

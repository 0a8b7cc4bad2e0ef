#!/usr/bin/python3
"""Tests scripts/check_readme.py (CTest: scripts.check_readme) and the results/ layout.

Usage: tests/scripts/test_check_readme.py [HILO_SIM HILO_EMU HILO_NODE]   (from the repository root)

Checks:
  1. the README and the other documents hold every claim of results/README-claims.txt
     (with the binaries given, sim/README.md's CLI synopsis and help blocks match their --help);
  2. in a copy of the files the claims read, one committed number changed (fig1's 10 Mbps
     speed-up in results/paper/fig1.txt, as last committed, plus one) makes the check fail
     naming that number and the file;
  3. a README number changed, a number added to a checked section without a claim, and a
     path in backticks to a file that does not exist, fail;
  4. a claims line with more braced numbers than expressions is a malformed table (exit 2);
  5. with the binaries: an option missing from sim/README.md's CLI synopsis fails, and so does
     a help block that differs from the command's --help;
  7. the quickstart's table in the README changed (one digit) fails as a verbatim block; a
     an eighth teaching scenario makes "Seven small scenarios" fail, and a count without a claim
     fails; a number changed in a results folder's README (results/faults/README.md) fails, and
     a missing path named in one without claims (results/hilo/README.md) fails.
  6. every results/* folder has a README.md with `Remake:`, `Wall time` and `Commit:` lines, and
     no generated files (sweep_*.csv concatenations, run logs, timing.json, *.walltime) are
     committed under results/.
"""
import glob
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
CHECK = os.path.join(ROOT, "scripts", "check_readme.py")
_checks = Checks()
check = _checks.check


def run(args, bins):
    cmd = [PY, CHECK] + args
    for name, path in bins.items():
        cmd += [f"--{name}", path]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def copy_repo(dst):
    """A copy of README.md, results/ and the Markdown files the claims name; the other top-level
    folders the README names are linked, not copied."""
    claims = open(os.path.join(ROOT, "results", "README-claims.txt")).read()
    os.makedirs(dst)
    top = os.path.join(ROOT, "results")
    shutil.copytree(top, os.path.join(dst, "results"),  # not the generated results/runs/
                    ignore=lambda d, names: [n for n in names if d == top and
                                             n in ("runs", "paper-quick")])
    paths = {"README.md"} | {l[2:].strip() for l in claims.splitlines() if l.startswith("@ ")}
    for rel in paths:
        os.makedirs(os.path.dirname(os.path.join(dst, rel)) or dst, exist_ok=True)
        shutil.copy2(os.path.join(ROOT, rel), os.path.join(dst, rel))
    for top in ("scripts", "sim", "hilo", "models", "tests"):
        target = os.path.join(dst, top)
        if not os.path.exists(target):
            os.symlink(os.path.join(ROOT, top), target)
            continue
        for name in os.listdir(os.path.join(ROOT, top)):  # a claimed document was copied here
            if not os.path.exists(os.path.join(target, name)):
                os.symlink(os.path.join(ROOT, top, name), os.path.join(target, name))
    for src in glob.glob(os.path.join(ROOT, "scenarios", "**"), recursive=True):
        target = os.path.join(dst, os.path.relpath(src, ROOT))
        if os.path.isdir(src):
            os.makedirs(target, exist_ok=True)
        elif not os.path.exists(target):
            os.symlink(src, target)


def main():
    bins = {}
    if len(sys.argv) == 4:
        bins = dict(zip(("hilo-sim", "hilo-emu", "hilo-node"), map(os.path.abspath,
                                                                   sys.argv[1:])))
    elif len(sys.argv) != 1:
        sys.exit(__doc__)
    nobins = {b: "/nonexistent/" + b for b in ("hilo-sim", "hilo-emu", "hilo-node")}

    # 1. The committed README holds.
    rc, out = run([], bins or nobins)
    check(rc == 0, f"check_readme.py passes on the committed README (rc {rc})", out)
    if bins:
        check("CLI synopsis and help blocks match --help" in out,
              "the CLI synopsis and help blocks were checked", out)

    tmp = tempfile.mkdtemp(prefix="hilo-check-readme-")
    try:
        # 2. One committed number changed.
        repo = os.path.join(tmp, "repo")
        copy_repo(repo)
        rc, out = run(["--root", repo], nobins)
        check(rc == 0, "the copy of the claimed files passes", out)
        fig1 = os.path.join(repo, "results", "paper", "fig1.txt")
        text = open(fig1).read()
        # The speed-up as committed (whatever the last rerun made it), changed by one unit.
        pattern = r"^(hilo-spar\s+10 Mbps(?:\s+\S+){3}\s+)(\d+\.\d)\b"
        found = re.search(pattern, text, flags=re.M)
        check(found is not None, "fig1.txt's 10 Mbps speed-up found", text)
        shown = found.group(2)
        bumped = "%.1f" % (float(shown) + 1.0)
        changed = text[:found.start(2)] + bumped + text[found.end(2):]
        open(fig1, "w").write(changed)
        rc, out = run(["--root", repo], nobins)
        check(rc == 1 and ("shows " + shown) in out and "fig1.txt" in out,
              "a changed committed number fails, naming the number and its file", out)
        open(fig1, "w").write(text)

        # 3a. A README number changed.
        readme = os.path.join(repo, "README.md")
        text = open(readme).read()
        claim = "%sx lower than full sync at 10 Mbps" % shown
        check(claim in text, "the README shows fig1's 10 Mbps speed-up " + claim)
        open(readme, "w").write(text.replace(claim, "%sx lower than full sync at 10 Mbps" % bumped,
                                             1))
        rc, out = run(["--root", repo], nobins)
        check(rc == 1 and shown in out, "a changed README number fails", out)
        # 3b. An unclaimed number in a checked section.
        open(readme, "w").write(text.replace("<!-- checked -->\n",
                                             "<!-- checked -->\nAbout 42 runs.\n", 1))
        rc, out = run(["--root", repo], nobins)
        check(rc == 1 and "'42' in a checked section has no claim" in out,
              "a number without a claim in a checked section fails", out)
        open(readme, "w").write(text)
        # 3c. A path the README names that does not exist.
        open(readme, "w").write(text.replace("`results/quickstart/table.txt`",
                                             "`results/quickstart/table-old.txt`", 1))
        rc, out = run(["--root", repo], nobins)
        check(rc == 1 and "names `results/quickstart/table-old.txt`, which does not exist" in out,
              "a README path to a missing file fails", out)
        open(readme, "w").write(text)

        def fails_when(path, old, new, expect, what):
            """check_readme.py exits 1 with every string of `expect` in its output once `old`
            is replaced by `new` in path (appended when `old` is None); path is restored."""
            before = open(path).read()
            after = before + new if old is None else before.replace(old, new, 1)
            check(after != before, f"{os.path.relpath(path, repo)} has what {what} changes")
            open(path, "w").write(after)
            rc, out = run(["--root", repo], nobins)
            check(rc == 1 and all(x in out for x in expect), what, out)
            open(path, "w").write(before)

        # 7a. The quickstart's table as printed, one digit changed in the README's copy.
        row = re.search(r"^hilo-spar .*0\.708.*$", text, flags=re.M)
        check(row is not None and "<!-- verbatim results/quickstart/table.txt -->" in text,
              "the README has the quickstart's table as a verbatim block")
        if row:
            fails_when(readme, row.group(0), row.group(0).replace("0.708", "0.709"),
                       ["differs from results/quickstart/table.txt", "0.709"],
                       "a changed quickstart table fails as a verbatim block")
        # 7b. A prose count gone stale: a seventh teaching scenario added, and a count without a
        # claim.
        teaching = os.path.join(repo, "scenarios", "teaching", "README.md")
        extra = os.path.join(repo, "scenarios", "teaching", "08-extra.textproto")
        open(extra, "w").write("name: \"extra\"\n")
        rc, out = run(["--root", repo], nobins)
        check(rc == 1 and "shows Seven but" in out, "a count the files no longer match fails", out)
        os.remove(extra)
        fails_when(teaching, "Seven small scenarios", "Eight small scenarios",
                   ["the count 'Eight small scenarios' has no claim"],
                   "a count without a claim fails")
        # 7c. A number in a results folder's README.
        fails_when(os.path.join(repo, "results", "faults", "README.md"), "recovery 0.04-1.56 s",
                   "recovery 0.04-1.66 s", ["results/faults/README.md", "1.66"],
                   "a changed number in a results folder's README fails")
        # 7d. A results folder's README without claims is checked too (its backticked paths).
        fails_when(os.path.join(repo, "results", "hilo", "README.md"), None,
                   "\nSee `results/hilo/no-such-file.csv`.\n",
                   ["results/hilo/README.md", "no-such-file.csv"],
                   "a results folder's README without claims is checked")

        # 4. A malformed claims line.
        claims = os.path.join(repo, "results", "README-claims.txt")
        with open(claims, "a") as f:
            f.write("two {1} and {2} numbers | 1\n")
        rc, out = run(["--root", repo], nobins)
        check(rc == 2 and "2 braced number(s) but 1 expression(s)" in out,
              "a malformed claims line exits 2 naming the line", out)

        # 5. The CLI synopsis against --help.
        if bins:
            shutil.copy2(os.path.join(ROOT, "README.md"), readme)
            shutil.copy2(os.path.join(ROOT, "results", "README-claims.txt"), claims)
            cli_doc = os.path.join(tmp, "sim-README.md")
            text = open(os.path.join(ROOT, "sim", "README.md")).read()
            open(cli_doc, "w").write(text.replace(" --sysctl ARG,", "", 1))
            rc, out = run(["--root", repo, "--cli-doc", cli_doc], bins)
            check(rc == 1 and "the CLI synopsis differs from --help" in out and "--sysctl" in out,
                  "an option missing from the CLI synopsis fails", out)
            block = re.search(r"<!-- help: hilo-sim run -->\n```\n(.*?)```", text, re.S)
            check(block is not None and "--out" in block.group(1),
                  "sim/README.md has hilo-sim run's --help")
            if block:
                edited = block.group(1).replace("--out", "--out-dir", 1)
                open(cli_doc, "w").write(text[:block.start(1)] + edited + text[block.end(1):])
                rc, out = run(["--root", repo, "--cli-doc", cli_doc], bins)
                check(rc == 1 and "`hilo-sim run --help` differs" in out,
                      "a help block that differs from --help fails", out)
        else:
            print("skip CLI synopsis check: no binaries given", flush=True)
    finally:
        shutil.rmtree(tmp)

    # 6. results/ layout.
    for d in sorted(glob.glob(os.path.join(ROOT, "results", "*", ""))):
        name = os.path.relpath(d, ROOT) + "/"
        if name.rstrip("/") in ("results/runs", "results/paper-quick"):
            continue  # generated, ignored by git
        readme = os.path.join(d, "README.md")
        text = open(readme).read() if os.path.exists(readme) else ""
        check(re.search(r"^Remake: `[^`]+`", text, re.M) and
              re.search(r"^Wall time", text, re.M) and re.search(r"^Commit: ", text, re.M),
              f"{name}README.md names the command, wall time and commit")
    tracked = subprocess.run(["git", "-C", ROOT, "ls-files", "results"], stdout=subprocess.PIPE,
                             text=True).stdout.split()
    generated = [p for p in tracked if re.search(
        r"(^|/)(sweep_(steps|workers|rollouts|allocation)\.csv|run\.log|timing\.json|"
        r"[^/]*\.walltime|[^/]*\.sweep\.log|\.readme-parts/.*)$", p)]
    check(not generated, "no generated files committed under results/", "\n".join(generated[:10]))

    return _checks.finish()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""The executables' --help, --version and progress (CTest: scripts.cli).

Usage: tests/scripts/test_cli.py BUILD_DIR   (from the repository root)

  1. --version of every executable (hilo-sim, hilo-emu, hilo-node, hilo-netem, sync-curves,
     workload-curves, pretrain-text) prints one line naming the program, the commit the build
     was made at (as `git rev-parse --short=12 HEAD` says, +dirty allowed) and the build type;
  2. every example in every --help is run: each `--set PATH=VALUE` (validated by
     `hilo-sim validate` on scenarios/quickstart.textproto, the scenario the help names), each
     `hilo-sim list X` alternative, each --sysctl key (a file under /proc/sys); an "e.g." in a
     help text that none of these covers fails the test, so a new example gets run too;
  3. no help lists an option without a description (hilo-node's role, hilo-emu's positional
     words are not options);
  4. hilo-sim run --help names every file a run writes (as tests/scripts/tiny.textproto's run
     writes them) and hilo-emu --help the same;
  5. progress: into a file, plain lines (no '\\r') at most one per 10% of an arm's steps; on a
     terminal (a pty), redrawn with '\\r'; --quiet prints no progress but keeps "wrote DIR";
  6. output columns: steps.csv has quality_metric beside quality (summary.json's metric on every
     row), summary.json a recovery_count (recovery_s holds seconds only), and the printed table's
     %adapter is bytes per update over the full-sync arm's adapter while %own is over the arm's
     own (a run whose full arm trains at half the rank tells them apart).
"""
import os
import pty
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = os.path.join(ROOT, "tests", "scripts", "tiny.textproto")
QUICKSTART = os.path.join(ROOT, "scenarios", "quickstart.textproto")
_checks = Checks()
check = _checks.check


def run(cmd, **kw):
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=300, **kw)
    return p.returncode, p.stdout, p.stderr


def binaries(build):
    sim = os.path.join(build, "sim")
    models = os.path.join(build, "models")
    return {"hilo-sim": os.path.join(sim, "hilo-sim"), "hilo-emu": os.path.join(sim, "hilo-emu"),
            "hilo-node": os.path.join(sim, "hilo-node"),
            "hilo-netem": os.path.join(sim, "hilo-netem"),
            "sync-curves": os.path.join(models, "sync-curves"),
            "workload-curves": os.path.join(models, "workload-curves"),
            "pretrain-text": os.path.join(models, "pretrain-text")}


def versions(bins):
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"],
                          stdout=subprocess.PIPE, text=True).stdout.strip()
    for name, path in bins.items():
        if not os.path.exists(path):
            check(False, f"{name} is built ({path})")
            continue
        rc, out, err = run([path, "--version"])
        line = out.strip()
        ok = (rc == 0 and line.count("\n") == 0 and line.startswith(f"{name} ") and
              re.search(rf"commit {re.escape(head)}(\+dirty)?, build \w+$", line))
        check(ok, f"{name} --version names the commit {head} and the build type ({line!r})",
              out + err)


def helps(bins):
    """{label: text} of every --help."""
    texts = {}
    sim = bins["hilo-sim"]
    for label, cmd in [("hilo-sim --help", [sim, "--help"]),
                       ("hilo-sim run --help", [sim, "run", "--help"]),
                       ("hilo-sim validate --help", [sim, "validate", "--help"]),
                       ("hilo-sim list --help", [sim, "list", "--help"])] + [
            (f"{n} --help", [p, "--help"]) for n, p in bins.items() if n != "hilo-sim"]:
        if not os.path.exists(cmd[0]):
            continue
        rc, out, err = run(cmd)
        check(rc == 0, f"{label} exits 0", out + err)
        texts[label] = out
    return texts


PLACEHOLDERS = re.compile(r"^(path|path\.to\.field|PATH)=(value|VALUE)$")


def examples(bins, texts):
    sim = bins["hilo-sim"]
    covered = {}  # label -> number of "e.g." it has that are run
    validated = {}  # --set example -> (exit code, output): each validated once
    for label, text in texts.items():
        flat = " ".join(text.split())
        sets = re.findall(r"--set ([\w.\[\]-]+=\S+)", flat)
        sets += re.findall(r"\b((?:arms|workers|workload|network)\[?[\w\]-]*\.[\w.\[\]-]+="
                           r"[\w%.-]+)", flat)
        for s in sorted(set(x.rstrip(").,") for x in sets)):
            if PLACEHOLDERS.match(s):
                continue  # the synopsis' "--set path=value", not an example
            if s not in validated:
                rc, out, err = run([sim, "validate", QUICKSTART, "--set", s])
                validated[s] = (rc, out + err)
            rc, log = validated[s]
            check(rc == 0, f"{label}: its example --set {s} is valid on quickstart.textproto",
                  log)
        for what in re.findall(r"hilo-sim list ([\w|-]+)", text):
            for w in what.split("|"):
                rc, out, err = run([sim, "list", w])
                check(rc == 0 and out.strip(), f"{label}: its example `hilo-sim list {w}` runs",
                      out + err)
        for key in re.findall(r"e\.g\. ([a-z0-9_.]+)=\S+", flat):
            if "." in key and key.split(".")[0] in ("net", "kernel", "vm"):
                path = "/proc/sys/" + key.replace(".", "/")
                check(os.path.exists(path), f"{label}: its example sysctl {key} exists ({path})")
        # Every "e.g." must be one of the kinds above.
        for m in re.finditer(r"e\.g\.,? (\S+)", flat):
            word = m.group(1)
            ok = (word.startswith("--set") or "=" in word or word.startswith("hilo-sim") or
                  re.match(r"^\d+[:;,]?$", word) is not None)
            check(ok, f"{label}: its example 'e.g. {word}' is one the test runs (or a number)")
            covered[label] = covered.get(label, 0) + 1
    return covered


def no_bare_options(texts):
    for label, text in texts.items():
        lines = text.splitlines() + [""]
        # An option with nothing after "arg (=default)", whose next line does not carry its
        # description (Boost wraps a long default's description onto the next line).
        bare = [l.strip() for l, nxt in zip(lines, lines[1:])
                if re.match(r"^\s+--[\w-]+( arg( \(=[^)]*\))?)?\s*$", l) and
                not re.match(r"^\s{8,}[^\s-]", nxt)]
        check(not bare, f"{label}: every option it lists has a description", bare)


def outputs(bins, texts):
    sim = bins["hilo-sim"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        rc, so, se = run([sim, "run", TINY, "--out", out])
        check(rc == 0, "hilo-sim runs tests/scripts/tiny.textproto", so + se)
        files = sorted(os.listdir(out)) if os.path.isdir(out) else []
        for label in ("hilo-sim run --help", "hilo-emu --help"):
            if label not in texts:
                continue
            missing = [f for f in files if f not in texts[label]]
            check(files and not missing, f"{label} names every file a run writes {files}",
                  missing)
        # Progress into a file: plain lines, at most one per 10% of each arm's steps.
        check("\r" not in se, "progress into a file has no carriage return", repr(se[-500:]))
        lines = [l for l in se.splitlines() if l.startswith("[arm ")]
        steps = 3  # tiny.textproto
        check(0 < len(lines) <= 2 * min(steps, 10),
              f"progress into a file: a few whole lines ({len(lines)} for 2 arms x {steps} steps)",
              se)
        check(re.search(r"^wrote ", se, re.M), "a run prints the 'wrote DIR' line", se)
        rc, so, se = run([sim, "run", TINY, "--out", out, "--quiet"])
        check(rc == 0 and "[arm " not in se and re.search(rf"^wrote {re.escape(out)} ", se, re.M),
              "--quiet: no progress, the 'wrote DIR' line kept", se)
        # On a terminal: one line redrawn with '\r'.
        pid, fd = pty.fork()
        if pid == 0:
            os.chdir(ROOT)
            os.execv(sim, [sim, "run", TINY, "--out", out])
        data = b""
        while True:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
        _, status = os.waitpid(pid, 0)
        text = data.decode(errors="replace")
        check(os.waitstatus_to_exitcode(status) == 0 and "\r[arm " in text,
              "on a terminal the progress line is redrawn ('\\r')", text[-500:])


def columns(bins):
    import csv
    import json
    sim = bins["hilo-sim"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        rc, table, se = run([sim, "run", TINY, "--quiet", "--out", out,
                             "--set", "arms[0].training_rank=4"])
        check(rc == 0, "hilo-sim runs tiny.textproto with a rank-4 full arm", table + se)
        if rc != 0:
            return
        summary = json.load(open(os.path.join(out, "summary.json")))
        arms = {a["name"]: a for a in summary["arms"]}
        with open(os.path.join(out, "steps.csv"), newline="") as f:
            reader = csv.DictReader(f)
            header, rows = reader.fieldnames, list(reader)
        check(header[header.index("quality") + 1] == "quality_metric",
              "steps.csv: quality_metric right after quality", header)
        check(rows and all(r["quality_metric"] == arms[r["arm"]]["quality_metric"] for r in rows),
              "steps.csv: every row names its arm's quality metric")
        check(all("recovery_count" in a and set(a["recovery_s"]) == {"p50", "max"}
                  for a in summary["arms"]),
              "summary.json: recovery_count, and recovery_s in seconds only", summary["arms"][0])
        ref = arms["full"]["adapter_bytes"]
        lines = {l.split()[0]: l.split() for l in table.splitlines() if l.split()}
        head = lines.get("arm", [])
        check("%adapter" in head and "%own" in head, "the table has %adapter and %own", table)
        for name, a in arms.items():
            cells = [c for c in lines.get(name, []) if c.endswith("%")]
            want = (100 * a["wire_bytes_per_update_mean"] / ref,
                    100 * a["fraction_of_adapter_bytes"])
            got = tuple(float(c[:-1]) for c in cells[:2])
            check(len(got) == 2 and all(abs(g - w) < 0.006 for g, w in zip(got, want)),
                  f"table: {name}'s %adapter is over full's adapter, %own over its own "
                  f"(want {want[0]:.2f}% {want[1]:.2f}%, got {got})", table)
        check(arms["hilo-spar"]["adapter_bytes"] != ref,
              "the two arms' adapters differ (the test can tell the columns apart)")


def main(argv):
    if len(argv) < 2:
        print("usage: tests/scripts/test_cli.py BUILD_DIR", file=sys.stderr)
        return 2
    bins = binaries(argv[1])
    versions(bins)
    texts = helps(bins)
    examples(bins, texts)
    no_bare_options(texts)
    outputs(bins, texts)
    columns(bins)
    return _checks.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv))

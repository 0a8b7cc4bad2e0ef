#!/usr/bin/python3
"""Checks every number in the documentation against the committed file it comes from.

Usage:
  scripts/check_readme.py [--root DIR] [--readme README.md] [--claims results/README-claims.txt]
                          [--hilo-sim PATH] [--hilo-emu PATH] [--hilo-node PATH]
                          [--cli-doc sim/README.md] [--write-cli]

The claims table (results/README-claims.txt, one claim a line) pairs a piece of a document's text
with where its numbers come from:

    SNIPPET | EXPRESSION [| EXPRESSION ...]

SNIPPET is text that must appear in the current document (line breaks and runs of spaces count as
one space). Claims are about README.md until a line `@ PATH` makes the claims after it be about
another Markdown file (`@ results/paper/README.md`, `@ scenarios/teaching/README.md`). Each number
in a snippet written in braces, e.g. `{36.5}x lower`, is checked: the next EXPRESSION (Python,
with the helpers below) must give a value that rounds to the number as shown (as many decimals as
the text writes; "1,537" reads as 1537; a leading "~" is allowed; a number word such as "Six"
reads as 6). Numbers in a snippet without braces are the setting the checked numbers belong to
(a bandwidth, a budget, a seed count) and are covered by the claim without being computed. Blank
lines and lines starting with '#' are comments.

Coverage: between `<!-- checked -->` and `<!-- /checked -->` (invisible when rendered) every
number must lie inside some claim's snippet, so a number added to a checked section without a
claim fails the check. Numbers inside words or names (fig1, p50, Qwen2.5-7B, rank-64, 2-core) are
not counted.

CLI: the fenced block between `<!-- cli -->` and `<!-- /cli -->` of sim/README.md (--cli-doc)
must equal the usage lines the binaries print (`hilo-sim --help`, `hilo-emu --help`,
`hilo-node --help`), each command followed by every option its own `--help` documents; and each
fenced block between `<!-- help: BINARY [COMMAND] -->` and `<!-- /help -->` must be that
command's `--help` output, exactly. --write-cli rewrites them from the binaries. Without the
binaries (not built) this part is skipped with a message.

Helpers in expressions (paths relative to the repository root):
  rows(path, "col=value", ...)        the CSV rows matching every condition
  col(path, column, "col=value", ...) the number in `column` of the one matching row
  js(path, key, ...)                  a number in a JSON file; a key "arm:NAME" picks the element
                                      of a list whose "name" is NAME
  grep(path, regex, group=1)          the number the regex's group matches, first match
  num(text)                           float of "1,537", "36.5x", "1.60%"
  glob(pattern)                       the repository paths matching a glob pattern, sorted
  mean, stdev, ci95 (half-width of the 95% t-interval, scripts/stats_helper.py), min, max,
  abs, len, sum, round

Documents: README.md, CHANGELOG.md, every results/*/README.md, the READMEs under scenarios/,
sim/README.md, scripts/README.md and tests/README.md (those that exist), and every file an `@` line
names. In each, checked sections must be covered by claims, backticked paths must exist,
verbatim blocks must match their files and prose counts must be claimed:

Verbatim blocks: `<!-- verbatim PATH -->` followed by a fenced block: the block must be PATH's
text exactly (the quickstart's printed table, results/quickstart/table.txt).

Prose counts: a number word before "scenarios" or "figures" ("Six small scenarios", "the eight
figures") must lie inside a claim's snippet, whose braced word is checked like any number
(`{Six} small scenarios | len(glob("scenarios/teaching/*.textproto"))`), so a count cannot go
stale when files are added.

Paths: every repository path the checked documents write in backticks (`results/...`,
`scripts/...`, `sim/...`, ...) must exist, so a renamed or removed file cannot stay quoted.

Exit status: 0 when every claim holds; 1 on drift (each named with its README line, the value
shown and the value the file gives); 2 on a malformed claims table.
"""
import argparse
import csv
import json
import math
import os
import re
import subprocess
import sys

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, SCRIPTS)
import stats_helper  # noqa: E402

DEFAULT_ROOT = os.path.dirname(SCRIPTS)
# A number as the README writes one ("1,537", "0.79", "36.5x", "1.6%"), not part of a name
# ("fig1", "p50", "Qwen2.5-7B", "rank-64", "2-core").
NUMBER = re.compile(r"(?<![\w.])(?<![A-Za-z]-)(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
                    r"(?:x(?!\w))?(?!\w|\.\d|-[A-Za-z])")
BRACED = re.compile(r"\{([^{}]*)\}")
CHECKED = re.compile(r"<!-- checked -->(.*?)<!-- /checked -->", re.S)
CLI = re.compile(r"(<!-- cli -->\n```\n)(.*?)(```\n<!-- /cli -->)", re.S)
BINARIES = ("hilo-sim", "hilo-emu", "hilo-node")


class BadClaims(Exception):
    pass


NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())}
# A count in words before what it counts: "Six small scenarios", "the eight paper-style figures".
PROSE_COUNT = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\s+(?:[\w-]+\s+){0,2}?"
                         r"(scenarios|figures)\b", re.I)
VERBATIM = re.compile(r"<!-- verbatim (\S+) -->\n```[^\n]*\n(.*?)```", re.S)


def parse_number(text):
    if text.strip().lower() in NUMBER_WORDS:
        return float(NUMBER_WORDS[text.strip().lower()])
    t = text.strip().lstrip("~").replace(",", "").replace("−", "-")
    t = re.sub(r"[x%]$", "", t)
    return float(t)


def decimals(text):
    if text.strip().lower() in NUMBER_WORDS:
        return 0
    t = text.strip().rstrip("x%")
    return len(t.split(".")[1]) if "." in t else 0


def normalise(text):
    return re.sub(r"\s+", " ", text)


class Files:
    """The expression helpers, reading files under root (cached)."""

    def __init__(self, root):
        self.root = root
        self.cache = {}
        self.used = set()

    def path(self, rel):
        p = os.path.join(self.root, rel)
        if not os.path.exists(p):
            raise ValueError(f"{rel}: no such file")
        self.used.add(rel)
        return p

    def text(self, rel):
        if ("text", rel) not in self.cache:
            with open(self.path(rel), errors="replace") as f:
                self.cache[("text", rel)] = f.read()
        return self.cache[("text", rel)]

    def rows(self, rel, *conds):
        if ("csv", rel) not in self.cache:
            lines = [l for l in self.text(rel).splitlines(True) if not l.startswith("#")]
            self.cache[("csv", rel)] = list(csv.DictReader(lines))
        out = self.cache[("csv", rel)]
        for c in conds:
            if "=" not in c:
                raise ValueError(f"condition {c!r}: expected column=value")
            k, v = c.split("=", 1)
            if out and k not in out[0]:
                raise ValueError(f"{rel}: no column {k!r}")
            out = [r for r in out if r[k] == v]
        return out

    def col(self, rel, column, *conds):
        rs = self.rows(rel, *conds)
        if len(rs) != 1:
            raise ValueError(f"{rel} {' '.join(conds)}: {len(rs)} rows match, expected 1")
        if column not in rs[0]:
            raise ValueError(f"{rel}: no column {column!r}")
        return parse_number(rs[0][column])

    def js(self, rel, *keys):
        if ("json", rel) not in self.cache:
            self.cache[("json", rel)] = json.loads(self.text(rel))
        v = self.cache[("json", rel)]
        for k in keys:
            if isinstance(k, str) and k.startswith("arm:") and isinstance(v, dict):
                v = v.get("arms", v)
            if isinstance(k, str) and k.startswith("arm:"):
                matches = [a for a in v if a.get("name") == k[4:]]
                if len(matches) != 1:
                    raise ValueError(f"{rel}: no arm named {k[4:]!r}")
                v = matches[0]
            else:
                try:
                    v = v[k]
                except (KeyError, IndexError, TypeError):
                    raise ValueError(f"{rel}: no key {k!r}")
        return float(v)

    def grep(self, rel, regex, group=1):
        m = re.search(regex, self.text(rel), flags=re.M)
        if not m:
            raise ValueError(f"{rel}: no match for {regex!r}")
        return parse_number(m.group(group))

    def glob(self, pattern):
        import glob as globmod
        return sorted(os.path.relpath(p, self.root)
                      for p in globmod.glob(os.path.join(self.root, pattern), recursive=True))

    def env(self):
        return {"glob": self.glob, "rows": self.rows, "col": self.col, "js": self.js, "grep": self.grep,
                "num": parse_number, "mean": stats_helper.mean, "stdev": stats_helper.stdev,
                "ci95": lambda xs: stats_helper.mean_ci(xs)[1], "min": min, "max": max,
                "abs": abs, "len": len, "sum": sum, "round": round, "float": float, "int": int,
                "sorted": sorted, "set": set, "math": math, "re": re, "text": self.text}


def read_claims(path):
    """[(document, line number, snippet with braces, [expressions])]"""
    claims = []
    doc = "README.md"
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if line.startswith("@ "):
                doc = line[2:].strip()
                claims.append((doc, n, None, []))  # the document is checked even without claims
                continue
            parts = [p.strip() for p in line.split(" | ")]
            snippet, exprs = parts[0], parts[1:]
            braced = BRACED.findall(snippet)
            if len(braced) != len(exprs):
                raise BadClaims(f"{path}:{n}: {len(braced)} braced number(s) but {len(exprs)} "
                                "expression(s)")
            for b in braced:
                try:
                    parse_number(b)
                except ValueError:
                    raise BadClaims(f"{path}:{n}: {{{b}}} is not a number")
            claims.append((doc, n, snippet, exprs))
    return claims


def line_of(readme, offset):
    return readme.count("\n", 0, offset) + 1


def find_snippet(readme_norm, index_map, snippet):
    """Offsets (in the original README) of every occurrence of the snippet."""
    plain = normalise(BRACED.sub(r"\1", snippet))
    out, start = [], 0
    while True:
        i = readme_norm.find(plain, start)
        if i < 0:
            return out, plain
        out.append((index_map[i], index_map[i + len(plain) - 1] + 1))
        start = i + 1


def normalised_with_map(text):
    """A copy of text with each run of whitespace made one space, and the offset in text of each
    character of the copy."""
    norm, index_map = [], []
    prev_space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            if prev_space:
                continue
            norm.append(" ")
            prev_space = True
        else:
            norm.append(ch)
            prev_space = False
        index_map.append(i)
    return "".join(norm), index_map


def check_claims(root, readme_path, claims_path):
    """Returns (problems, number of claims)."""
    problems = []
    claims = read_claims(claims_path)
    files = Files(root)
    env = files.env()
    rel_claims = os.path.relpath(claims_path, root)
    docs = documents(root, readme_path, claims)
    nclaims = 0
    for doc, doc_path in docs.items():
        if not os.path.exists(doc_path):
            problems.append(f"{rel_claims}: {doc}: no such file")
            continue
        with open(doc_path) as f:
            text = f.read()
        text_norm, index_map = normalised_with_map(text)
        covered = []
        for d, n, snippet, exprs in claims:
            if d != doc or snippet is None:
                continue
            nclaims += 1
            spans, plain = find_snippet(text_norm, index_map, snippet)
            where = f"{rel_claims}:{n}"
            if not spans:
                problems.append(f"{where}: {doc} does not contain {plain!r}")
                continue
            covered += spans
            line = line_of(text, spans[0][0])
            for shown, expr in zip(BRACED.findall(snippet), exprs):
                try:
                    value = float(eval(expr, dict(env, __builtins__={})))  # noqa: S307
                except Exception as e:  # a missing file, column or key is drift too
                    problems.append(f"{doc}:{line} ({where}): {shown}: {e}")
                    continue
                d_ = decimals(shown)
                want = parse_number(shown)
                if not math.isfinite(value) or \
                        abs(value - want) > 0.5 * 10 ** -d_ + 1e-9 * abs(want):
                    problems.append(f"{doc}:{line} ({where}): shows {shown} but {expr} gives "
                                    f"{value:.{d_ + 2}f}")
        for m in CHECKED.finditer(text):
            for num in NUMBER.finditer(text, m.start(1), m.end(1)):
                a, b = num.start(), num.end()
                if not any(s <= a and b <= e for s, e in covered):
                    problems.append(f"{doc}:{line_of(text, a)}: {num.group()!r} in a checked "
                                    f"section has no claim in {rel_claims}")
        for m in PROSE_COUNT.finditer(text):
            a, b = m.start(1), m.end(1)
            if not any(s <= a and b <= e for s, e in covered):
                problems.append(f"{doc}:{line_of(text, a)}: the count {m.group(0)!r} has no "
                                f"claim in {rel_claims} (say where it is counted, e.g. "
                                "len(glob(...)))")
        for m in VERBATIM.finditer(text):
            rel = m.group(1)
            try:
                want = files.text(rel)
            except ValueError as e:
                problems.append(f"{doc}:{line_of(text, m.start())}: verbatim block: {e}")
                continue
            if m.group(2) != want:
                got, exp = m.group(2).splitlines(), want.splitlines()
                diff = [f"  {doc}: {l}" for l in got if l not in exp] + \
                       [f"  {rel}: {l}" for l in exp if l not in got]
                problems.append(f"{doc}:{line_of(text, m.start(2))}: the block differs from "
                                f"{rel}:\n" + "\n".join(diff[:12]))
    return problems, nclaims


def documents(root, readme_path, claims):
    """{name: path} of every document checked: README.md, CHANGELOG.md, results/*/README.md, the
    READMEs under scenarios/, sim/, scripts/ and tests/ that exist, and the claims' `@` files."""
    import glob as globmod
    docs = {"README.md": readme_path}
    patterns = ["CHANGELOG.md", "results/*/README.md", "scenarios/README.md",
                "scenarios/*/README.md", "sim/README.md", "scripts/README.md", "tests/README.md"]
    for pattern in patterns:
        for p in sorted(globmod.glob(os.path.join(root, pattern))):
            docs.setdefault(os.path.relpath(p, root), p)
    for doc, *_ in claims:
        docs.setdefault(doc, os.path.join(root, doc))
    return docs


_HELP = {}


def help_text(argv):
    """argv's `--help` output (each command asked once per run)."""
    if tuple(argv) in _HELP:
        return _HELP[tuple(argv)]
    proc = subprocess.run(argv + ["--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    _HELP[tuple(argv)] = proc.stdout
    return proc.stdout


# A repository path written in backticks: `results/sim/flow-vs-packet.md`, `sim/net/flow/`.
REPO_PATH = re.compile(r"`((?:results|scripts|scenarios|tests|sim|hilo|models)/[^`\s]*)`")


def check_paths(root, docs):
    """Every repository path a document names in backticks exists (a path with a placeholder,
    <...>, or a glob, *, needs only its fixed part before it; results/runs/ is made by runs)."""
    problems = []
    for doc, path in docs.items():
        if not os.path.exists(path):
            continue
        text = open(path).read()
        for m in REPO_PATH.finditer(text):
            rel = m.group(1)
            fixed = re.split(r"[<*]", rel)[0]
            if rel.startswith("results/runs/") or not fixed:
                continue
            target = fixed if not re.search(r"[<*]", rel) else os.path.dirname(fixed.rstrip("/"))
            if not os.path.exists(os.path.join(root, target)):
                problems.append(f"{doc}:{line_of(text, m.start())}: names `{rel}`, which does "
                                "not exist")
    return problems


def usage_lines(binary):
    """The usage lines a binary prints for --help: the indented lines after `usage:` (a line that
    does not start with the binary's name continues the one before)."""
    name = os.path.basename(binary)
    lines, inside = [], False
    for line in help_text([binary]).splitlines():
        if line.strip() == "usage:":
            inside = True
        elif inside and line.startswith("  ") and line.strip():
            if line.strip().startswith(name + " ") or not lines:
                lines.append(re.sub(r"\s+", " ", line.strip()))
            else:
                lines[-1] += " " + line.strip()
        elif inside:
            break
    return lines


# An option line of Boost.Program_options' help: name, " arg" when it takes a value, "(=default)",
# then its description (after two spaces, or one after the default when the column is full).
OPTION = re.compile(r"^  (--[\w-]+)( arg)?(?: \(=([^)]*)\))?(?:\s{2,}|(?<=\)) )\S")


def options_of(argv):
    """The documented options in argv's --help (name, takes a value, default), without -h."""
    out = []
    for line in help_text(argv).splitlines():
        m = OPTION.match(line)
        if m:
            out.append((m.group(1), bool(m.group(2)), m.group(3)))
    return out


def synopsis(binaries, width=100):
    """Each binary's usage lines, each command followed by every option its --help documents."""
    lines = []
    for b in binaries:
        name = os.path.basename(b)
        groups = []  # [(usage lines, options)]
        for usage in usage_lines(b):
            words = usage.split()
            cmd = words[1] if len(words) > 1 and not words[1].startswith("[") else None
            opts = options_of([b, cmd]) if cmd else []
            if groups and groups[-1][1] == opts and opts:
                groups[-1][0].append(usage)
            else:
                groups.append(([usage], opts))
        for usages, opts in groups:
            lines += usages
            if not opts:
                continue
            items = [o + (" ARG" if v else "") + (f" (default {d})" if d else "")
                     for o, v, d in opts]
            cur = "    options:"
            for k, item in enumerate(items):
                piece = " " + item + ("," if k < len(items) - 1 else "")
                if len(cur) + len(piece) > width:
                    lines.append(cur)
                    cur = "     "
                cur += piece
            lines.append(cur)
        del name
    return "\n".join(lines) + "\n"


HELP = re.compile(r"(<!-- help: ([^>]+?) -->\n```\n)(.*?)(```\n<!-- /help -->)", re.S)


def check_cli(doc_path, binaries, write, root=DEFAULT_ROOT):
    """The synopsis block and every help block of doc_path against the binaries' --help;
    write: rewrite them. Returns (problems, checked)."""
    doc = os.path.relpath(doc_path, root)
    if not os.path.exists(doc_path):
        return [f"{doc}: no such file (it holds the CLI synopsis)"], False
    with open(doc_path) as f:
        text = f.read()
    m = CLI.search(text)
    if not m:
        return [f"{doc}: no <!-- cli --> ... <!-- /cli --> block"], False
    missing = [b for b in binaries if not os.access(b, os.X_OK)]
    if missing:
        print(f"check_readme.py: skipping the CLI synopsis and help blocks: not built: "
              f"{', '.join(missing)}", file=sys.stderr)
        return [], False
    by_name = {os.path.basename(b): b for b in binaries}
    blocks = [(m.start(2), m.end(2), synopsis(binaries), "the CLI synopsis")]
    problems = []
    for h in HELP.finditer(text):
        words = h.group(2).split()
        if not words or words[0] not in by_name:
            problems.append(f"{doc}:{line_of(text, h.start())}: help block for unknown binary "
                            f"{h.group(2)!r}")
            continue
        blocks.append((h.start(3), h.end(3), help_text([by_name[words[0]]] + words[1:]),
                       f"the help block of `{h.group(2)} --help`"))
    stale = [b for b in blocks if text[b[0]:b[1]] != b[2]]
    if write and stale:
        for a, e, want, _ in sorted(stale, reverse=True):
            text = text[:a] + want + text[e:]
        with open(doc_path, "w") as f:
            f.write(text)
        print(f"check_readme.py: rewrote {len(stale)} CLI block(s) of {doc}", file=sys.stderr)
        return problems, True
    for a, e, want, what in stale:
        got, exp = text[a:e].splitlines(), want.splitlines()
        diff = [f"  {doc}: {l}" for l in got if l not in exp] + \
               [f"  --help: {l}" for l in exp if l not in got]
        problems.append(f"{doc}:{line_of(text, a)}: {what} differs from --help "
                        "(scripts/check_readme.py --write-cli rewrites it):\n" + "\n".join(diff))
    return problems, True


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", default=DEFAULT_ROOT, help="repository root (default: this one)")
    p.add_argument("--readme", help="default ROOT/README.md")
    p.add_argument("--claims", help="default ROOT/results/README-claims.txt")
    for b in BINARIES:
        env = "HILO_" + b.split("-")[1].upper()
        p.add_argument(f"--{b}", metavar="PATH",
                       default=os.environ.get(env) or os.path.join(DEFAULT_ROOT, "build", "sim", b),
                       help=f"{b} binary for the CLI synopsis (default ${env}, else build/sim/{b})")
    p.add_argument("--cli-doc", help="the document with the CLI synopsis and help blocks "
                   "(default ROOT/sim/README.md)")
    p.add_argument("--write-cli", action="store_true",
                   help="rewrite the CLI synopsis and help blocks from the binaries' --help")
    args = p.parse_args()
    readme = args.readme or os.path.join(args.root, "README.md")
    claims = args.claims or os.path.join(args.root, "results", "README-claims.txt")
    try:
        problems, n = check_claims(args.root, readme, claims)
    except BadClaims as e:
        print(f"check_readme.py: {e}", file=sys.stderr)
        return 2
    problems += check_paths(args.root, documents(args.root, readme, read_claims(claims)))
    cli_problems, cli_checked = check_cli(
        args.cli_doc or os.path.join(args.root, "sim", "README.md"),
        [getattr(args, b.replace("-", "_")) for b in BINARIES], args.write_cli, args.root)
    problems += cli_problems
    for q in problems:
        print(q, file=sys.stderr)
    if problems:
        print(f"check_readme.py: {len(problems)} problem(s) in {n} claim(s)", file=sys.stderr)
        return 1
    print(f"check_readme.py: {n} claim(s) hold" +
          (", CLI synopsis and help blocks match --help" if cli_checked else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

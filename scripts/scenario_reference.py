#!/usr/bin/python3
"""Writes the scenario reference, scenarios/README.md, from sim/scenario/scenario.proto.

Usage:
  scripts/scenario_reference.py [--proto PATH] [--out PATH]   write the reference
  scripts/scenario_reference.py --check [--proto PATH] [--out PATH]
                                  exit 1 (with a diff) when the committed reference differs from
                                  what the proto makes now (CTest: scripts.scenario_reference)

The proto's comments are the source of truth: each field's comment (the `//` lines right above
it, and a comment after it on its line) becomes its description, and from it the generator reads
  - the default: the sentence starting "Default" ("Default 4.", "Default: the rank."); without
    one, "required" when the comment says "Required", else the proto3 zero value of the type
    (0, false, "" or none), which is what the loader uses for a field without `optional`;
  - the allowed values: the first interval ("[1, 4096]", "(0, 1]", "[1, model.context)"), a
    bound ("> 0", ">= 0"), or for a string the quoted names before "Default" (not those after
    "e.g."), or "identifier" for names;
  - the unit: "Unit: tokens." in the comment; for strings with units, the kind the quoted
    example shows (bandwidth "100Mbps", time "40ms", bytes "64KiB", budget "1.6%"), as the
    conventions in the proto's header define them.
The file's hand-written head (what a scenario is, how to write one) is everything above the
marker line `<!-- reference below: generated -->`; the generator keeps it and writes the
reference after it (a file without the marker gets a one-line head).
A field with no comment is listed as undocumented and warned about on stderr (the reference is
still written, so the reference can be made again after any merge; --strict makes it exit 1).
Messages are listed in the order of the file, each with the field paths that reach it from
Scenario (the paths `--set` takes); nested messages, enums, oneofs and maps are understood.
"""
import argparse
import difflib
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_PROTO = os.path.join(ROOT, "sim", "scenario", "scenario.proto")
DEFAULT_OUT = os.path.join(ROOT, "scenarios", "README.md")
SCALARS = {"double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64",
           "fixed32", "fixed64", "sfixed32", "sfixed64", "bool", "string", "bytes"}
FIELD = re.compile(r"^(optional\s+|repeated\s+)?(map\s*<\s*\w+\s*,\s*[\w.]+\s*>|[\w.]+)\s+(\w+)"
                   r"\s*=\s*(\d+)\s*(\[[^\]]*\])?\s*;\s*(?://\s?(.*))?$")
OPEN = re.compile(r"^(message|enum|oneof)\s+(\w+)\s*\{\s*(?://.*)?$")
STATEMENT = re.compile(r"^(syntax|package|import|option|reserved)\b")
ENUM_VALUE = re.compile(r"^(\w+)\s*=\s*(-?\d+)\s*(\[[^\]]*\])?\s*;\s*(?://\s?(.*))?$")


class Field:
    def __init__(self, label, type_, name, number, lines, oneof):
        self.label, self.type, self.name, self.number = label, type_, name, int(number)
        self.lines = lines  # the comment's lines as written
        self.comment = re.sub(r"\s+", " ", " ".join(lines)).strip()
        self.oneof = oneof


class Message:
    def __init__(self, name, comment, kind):
        self.name, self.comment, self.kind = name, comment, kind
        self.fields, self.values = [], []  # values: enum (name, number, comment)


def code_lines(text):
    """The file's lines, stripped, with code split after each "{" and before each "}" (so that
    `message Inner { int32 x = 1; }` reads as three lines); comments are kept as they are."""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("//") or ("{" not in line and "}" not in line):
            yield line
            continue
        code, sep, trailing = line.partition("//")
        pieces = [p.strip() for p in re.split(r"(?<=\{)|(?=\})", code) if p.strip()]
        if sep and pieces:
            pieces[-1] += " //" + trailing
        yield from pieces


def parse(text):
    """[Message] in file order (nested ones under dotted names), and the file's header comment."""
    messages, stack, comment, header, seen_code = [], [], [], [], False
    for line in code_lines(text):
        if line.startswith("//"):
            comment.append(line[2:][1:] if line[2:3] == " " else line[2:])
            continue
        if not line:
            if not seen_code and comment:
                header += comment + [""]
            comment = []
            continue
        m = OPEN.match(line)
        if m:
            kind, name = m.group(1), m.group(2)
            if kind == "oneof":
                stack.append(("oneof", name))
            else:
                outer = [s[1].name for s in stack if s[0] == "msg"]
                msg = Message(".".join(outer + [name]),
                              re.sub(r"\s+", " ", " ".join(comment)).strip(), kind)
                messages.append(msg)
                stack.append(("msg", msg))
            seen_code, comment = True, []
            continue
        if line.startswith("}"):
            if stack:
                stack.pop()
            comment = []
            continue
        if STATEMENT.match(line):
            if not seen_code and comment:
                header += comment + [""]
            comment = []
            continue
        if not stack:
            comment = []
            continue
        oneof = stack[-1][1] if stack[-1][0] == "oneof" else None
        msg = next(s[1] for s in reversed(stack) if s[0] == "msg")
        if msg.kind == "enum":
            m = ENUM_VALUE.match(line)
            if m:
                msg.values.append((m.group(1), int(m.group(2)),
                                   " ".join(comment + ([m.group(4)] if m.group(4) else []))))
        else:
            m = FIELD.match(line)
            if m:
                trailing = [m.group(6)] if m.group(6) else []
                msg.fields.append(Field((m.group(1) or "").strip(), re.sub(r"\s+", "", m.group(2)),
                                        m.group(3), m.group(4), comment + trailing, oneof))
        comment = []
    return messages, "\n".join(header).strip()


def resolve(messages, type_, scope):
    """The Message a field's type names, looked up from the message `scope` outwards."""
    names = {m.name: m for m in messages}
    parts = scope.split(".")
    for i in range(len(parts), -1, -1):
        cand = ".".join(parts[:i] + [type_])
        if cand in names:
            return names[cand]
    return names.get(type_.split(".")[-1])


def paths_to(messages, root="Scenario"):
    """{message name: [field paths from the root that reach it]} (a message met again on a path
    is not followed, so recursive schemas end)."""
    out, names = {}, {m.name: m for m in messages}
    if root not in names:
        return out

    def walk(msg, path, seen):
        out.setdefault(msg.name, []).append(path)
        for f in msg.fields:
            sub = None if f.type.startswith("map<") else resolve(messages, f.type, msg.name)
            if sub is None or sub.kind != "message" or sub.name in seen:
                continue
            p = (path + "." if path else "") + f.name + ("[i]" if f.label == "repeated" else "")
            walk(sub, p, seen | {sub.name})

    walk(names[root], "", {root})
    return out


def sentences(text):
    return [s.strip() for s in re.split(r"(?<=[.;])\s+(?=[A-Z\"`(])", text) if s.strip()]


def zero_of(f, kind):
    if f.label == "repeated" or f.type.startswith("map<"):
        return "none (empty)"
    if kind == "message":
        return "unset"
    if f.type == "bool":
        return "false"
    if f.type in ("string", "bytes"):
        return '"" (empty)'
    if kind == "enum":
        return "the first value"
    return "0"


def default_of(f, kind):
    """The comment's "Default ..." sentence (not a comment that starts with the word "Default");
    else required, or the zero value (with the condition of a conditional "Required for ...")."""
    for m in re.finditer(r"\bDefault(?: value)?(?::\s*|\s+)(.+?)(?:\.(?=\s|$)|$)", f.comment):
        if m.start() > 0:
            return m.group(1).strip()
    cond = re.search(r"\bRequired\s+((?:for|with|there|when|once)\b.*?)(?:\.(?=\s|$)|;|$)",
                     f.comment)
    if cond:
        return zero_of(f, kind) + "; required " + cond.group(1).strip()
    if re.search(r"\bRequired\b", f.comment) and kind != "message":
        return "required"
    return zero_of(f, kind)


# An interval whose lower end is a number: "[1, 4096]", "(0, 1]", "[1, model.context)", "[16KiB,
# 256MiB]" (not a parenthesis of names such as "(delta_rank, decay)").
INTERVAL = re.compile(r"[\[(]\s*-?\d[\w.+-]*%?\s*,\s*[-\w.+ /*]+?%?\s*[\])]")
BOUND = re.compile(r"(?<![\w>=<])(>=?|<=?)\s*-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
# A list of quoted names, each perhaps with a parenthesis after it, joined by "," and "or":
# "fifo", "red" or "none";  "star" (a link per worker), "regions" (...) or "relay" (...).
NAME = r'"[A-Za-z_][\w.-]*"'
NAME_LIST = re.compile(NAME + r"(?:\s*\([^()]*\))?(?:\s*(?:,\s*(?:or\s+)?|or\s+)" + NAME +
                       r"(?:\s*\([^()]*\))?)+")
# A definition list: comment lines that start with a quoted name ("packet": ..., "worker_crash"
# <spaces> ...).
DEFINITION = re.compile(r'^(?:("[A-Za-z_][\w.-]*"):|\s+("[A-Za-z_][\w.-]*")\s)')
UNIT_EXAMPLES = [
    (re.compile(r'"\d[\d.]*(?:bps|kbps|Mbps|Gbps|Tbps|Bps|kBps|MBps|GBps)"'),
     "bandwidth string (bps, kbps, Mbps, Gbps, Tbps, or bytes/s: Bps, kBps, MBps, ...)"),
    (re.compile(r'"\d[\d.]*%"'), "budget string: % of the adapter's bytes, or a size"),
    (re.compile(r'"\d[\d.]*(?:ns|us|ms|s|min|h)"'), "time string (ns, us, ms, s, min, h)"),
    (re.compile(r'"\d[\d.]*(?:B|kB|MB|GB|TB|KiB|MiB|GiB|TiB)"'),
     "size string (B, kB, MB, GB, TB; KiB, MiB, GiB, TiB)"),
]


def allowed_of(f):
    """The comment's "Allowed: ..." sentence; else for a string the names it defines or lists
    (before "Default"), an identifier, an interval or a bound; true/false for a bool."""
    text = f.comment
    m = re.search(r"\bAllowed:\s*(.+?)(?:\.(?=\s|$)|$)", text)
    if m:
        return m.group(1).strip()
    if f.type == "bool":
        return "true, false"
    before_default = re.split(r"\bDefault\b", text)[0] if not text.startswith("Default") \
        else text
    if f.type == "string":
        defined = [d.group(1) or d.group(2) for d in map(DEFINITION.match, f.lines) if d]
        if len(defined) >= 2:
            return ", ".join(dict.fromkeys(defined))
        lists = [l for l in NAME_LIST.finditer(before_default)
                 if not re.search(r"(topology|kind|with|under)\s*$", before_default[:l.start()])]
        if lists:
            best = max(lists, key=lambda l: len(re.findall(NAME, l.group(0))))
            return ", ".join(dict.fromkeys(re.findall(NAME, re.sub(r"\([^()]*\)", "",
                                                                   best.group(0)))))
        if re.search(r"1-64 characters of \[A-Za-z0-9._-\]", text):
            return "identifier: 1-64 characters of A-Z a-z 0-9 . _ -"
    m = INTERVAL.search(before_default) or INTERVAL.search(text)
    if m:
        return m.group(0)
    m = BOUND.search(before_default)
    if m:
        return m.group(0)
    return ""


def unit_of(f):
    m = re.search(r"\bUnit:\s*([^.;]+)", f.comment)
    if m:
        return m.group(1).strip()
    if f.type == "string":
        for pattern, unit in UNIT_EXAMPLES:
            if pattern.search(f.comment):
                return unit
    return ""


def cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def type_text(f, sub):
    t = f.type
    if sub is not None:
        t = f"[{sub.name}](#{sub.name.lower().replace('.', '')})"
    return ("repeated " if f.label == "repeated" else "optional " if f.label == "optional" else
            "") + t


def render(messages, header, source_rel):
    undocumented = []
    paths = paths_to(messages)
    lines = [
        "## Reference",
        "",
        f"<!-- Generated by scripts/scenario_reference.py from {source_rel}: change the proto's",
        "     comments and run the script (CTest's scripts.scenario_reference fails when this part",
        "     and the proto differ). -->",
        "",
        "Each table lists a message's fields: type, default (what the loader fills in when the "
        "field",
        "is absent), allowed values, unit, and the proto's own comment. The checks behind "
        "\"allowed\" live",
        "in `sim/scenario/scenario-validator-*.cc`, one file per part of the scenario.",
        "",
        "### Conventions (from the proto)",
        "",
    ]
    lines += [("> " + l) if l else ">" for l in header.splitlines()]
    lines += ["", "### Messages", ""]
    lines += [", ".join(f"[{m.name}](#{m.name.lower().replace('.', '')})" for m in messages), ""]

    def kind_of(f, scope):
        sub = None if f.type in SCALARS or f.type.startswith("map<") else \
            resolve(messages, f.type, scope)
        return sub.kind if sub else "scalar"

    for msg in messages:
        lines += [f"### {msg.name}", ""]
        if msg.name in paths:
            where = ", ".join(f"`{p}`" if p else "the top level" for p in paths[msg.name])
            lines += [f"At: {where}.", ""]
        if msg.comment:
            lines += [msg.comment, ""]
        if msg.kind == "enum":
            lines += ["| value | number | meaning |", "|---|---|---|"]
            for name, number, comment in msg.values:
                lines.append(f"| `{name}` | {number} | {cell(comment)} |")
            lines.append("")
            continue
        lines += ["| field | type | default | allowed | unit | description |",
                  "|---|---|---|---|---|---|"]
        for f in msg.fields:
            sub = None if f.type in SCALARS or f.type.startswith("map<") else \
                resolve(messages, f.type, msg.name)
            if not f.comment:
                undocumented.append(f"{msg.name}.{f.name}")
            desc = f.comment or "**undocumented** (the proto has no comment for this field)"
            if f.oneof:
                desc = f"(one of `{f.oneof}`) " + desc
            lines.append("| `{}` | {} | {} | {} | {} | {} |".format(
                f.name, cell(type_text(f, sub)), cell(default_of(f, kind_of(f, msg.name))),
                cell(", ".join(v[0] for v in sub.values) if sub is not None and
                     sub.kind == "enum" else allowed_of(f)), cell(unit_of(f)), cell(desc)))
        lines.append("")
    return "\n".join(lines).rstrip() + "\n", undocumented


MARKER = "<!-- reference below: generated by scripts/scenario_reference.py -->"
DEFAULT_HEAD = "# Scenarios\n\n"


def head_of(path):
    """The hand-written part of the reference file, marker line included."""
    try:
        text = open(path).read()
    except OSError:
        text = ""
    i = text.find(MARKER)
    return (text[:i] if i >= 0 else DEFAULT_HEAD) + MARKER + "\n\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--proto", default=DEFAULT_PROTO, help="default sim/scenario/scenario.proto")
    p.add_argument("--out", default=DEFAULT_OUT, help="default scenarios/README.md")
    p.add_argument("--check", action="store_true",
                   help="compare with --out instead of writing it; exit 1 when they differ")
    p.add_argument("--strict", action="store_true", help="exit 1 when a field has no comment")
    args = p.parse_args()
    try:
        text = open(args.proto).read()
    except OSError as e:
        print(f"scenario_reference.py: {e}", file=sys.stderr)
        return 2
    messages, header = parse(text)
    if not any(m.name == "Scenario" for m in messages):
        print(f"scenario_reference.py: {args.proto}: no message Scenario", file=sys.stderr)
        return 2
    rel = os.path.relpath(os.path.abspath(args.proto), ROOT)
    out, undocumented = render(messages, header, rel)
    out = head_of(args.out) + out
    for name in undocumented:
        print(f"scenario_reference.py: warning: {rel}: {name} has no comment", file=sys.stderr)
    if args.check:
        try:
            committed = open(args.out).read()
        except OSError as e:
            print(f"scenario_reference.py: {e}", file=sys.stderr)
            return 1
        if committed != out:
            diff = difflib.unified_diff(committed.splitlines(), out.splitlines(),
                                        os.path.relpath(args.out, ROOT), "from " + rel,
                                        lineterm="", n=1)
            print("\n".join(list(diff)[:60]), file=sys.stderr)
            print(f"scenario_reference.py: {os.path.relpath(args.out, ROOT)} differs from what "
                  f"{rel} makes; run scripts/scenario_reference.py", file=sys.stderr)
            return 1
        print(f"scenario_reference.py: {os.path.relpath(args.out, ROOT)} matches {rel} "
              f"({sum(len(m.fields) for m in messages)} fields)")
        return 1 if args.strict and undocumented else 0
    with open(args.out, "w") as f:
        f.write(out)
    print(f"wrote {os.path.relpath(args.out, ROOT)} ({sum(len(m.fields) for m in messages)} "
          f"fields of {len(messages)} messages)")
    return 1 if args.strict and undocumented else 0


if __name__ == "__main__":
    sys.exit(main())

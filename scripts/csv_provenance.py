#!/usr/bin/python3
"""Moves a CSV's leading '#' provenance lines into its sidecar NAME.csv.meta.json.

Usage:
  scripts/csv_provenance.py FILE.csv [FILE.csv ...] [--set KEY=VALUE ...] [--check]

Every CSV of this project is plain (readable by pandas.read_csv without options): no comment
lines. Tools that print '# command: ...' lines first (the C++ benchmark and workload-curve
writers) get them moved by this script: the leading lines that start with '#' are removed from
the CSV and stored verbatim in FILE.csv.meta.json as "comment_lines"; a "# command: X" line also
sets "command" to X (the first such line). A CSV written again replaces the sidecar's
"comment_lines" and "command" with its own; --set adds (or replaces) other entries, e.g. --set workload="paper
distillation workload, step 11". An existing sidecar is kept and updated. The rest of the file
is not touched: its bytes after the removed lines are unchanged (checked before writing).
--check only reports files that still carry '#' lines (exit 1 if any).
"""
import argparse
import json
import os
import sys


def split(path):
    with open(path, "rb") as f:
        data = f.read()
    lines = data.splitlines(keepends=True)
    n = 0
    while n < len(lines) and lines[n].startswith(b"#"):
        n += 1
    head = [l.decode("utf-8").rstrip("\r\n") for l in lines[:n]]
    body = b"".join(lines[n:])
    assert data.endswith(body) and len(data) - len(body) == sum(len(l) for l in lines[:n])
    return head, body


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("csv", nargs="+", help="CSV file(s)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="an entry of the sidecar (repeatable)")
    p.add_argument("--check", action="store_true", help="only report files with '#' lines")
    args = p.parse_args()
    extra = {}
    for item in args.set:
        if "=" not in item:
            sys.exit(f"{sys.argv[0]}: --set {item!r}: expected KEY=VALUE")
        k, v = item.split("=", 1)
        extra[k] = v

    bad = 0
    for path in args.csv:
        head, body = split(path)
        if args.check:
            if head:
                print(f"{path}: {len(head)} '#' line(s)")
                bad += 1
            continue
        meta_path = path + ".meta.json"
        meta = {}
        if os.path.exists(meta_path):
            with open(meta_path) as f:
                meta = json.load(f)
        if head:
            meta["about"] = (f"provenance of {os.path.basename(path)}: its leading '#' lines, "
                             "moved here so that the CSV is plain")
            # The '#' lines describe the CSV as it is now: a rewritten CSV's lines replace the
            # earlier ones (they described the earlier contents).
            meta["comment_lines"] = head
            for line in head:
                text = line.lstrip("#").strip()
                if text.startswith("command:"):
                    meta["command"] = text[len("command:"):].strip()
                    break
        meta.update(extra)
        if not head and not extra:
            continue
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(body)
        os.replace(tmp, path)
        with open(meta_path + ".tmp", "w") as f:
            json.dump(meta, f, indent=2, ensure_ascii=False)
            f.write("\n")
        os.replace(meta_path + ".tmp", meta_path)
        print(f"{path}: moved {len(head)} line(s) to {meta_path}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

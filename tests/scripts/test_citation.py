#!/usr/bin/python3
"""CITATION.cff is valid Citation File Format 1.2.0 metadata (CTest: scripts.citation).

Usage: tests/scripts/test_citation.py   (from the repository root)

GitHub reads CITATION.cff to show "Cite this repository"; a file it cannot parse shows nothing.
Checked without a YAML library (the standard library only): the keys CFF 1.2.0 requires
(cff-version 1.2.0, message, title, authors with at least one name), date-released an ISO date
no later than today, every top-level key one the format defines, and README.md pointing at it.
"""
import datetime
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The top-level keys of CFF 1.2.0 (its schema's "properties").
KNOWN = {"abstract", "authors", "cff-version", "commit", "contact", "date-released", "doi",
         "identifiers", "keywords", "license", "license-url", "message", "preferred-citation",
         "references", "repository", "repository-artifact", "repository-code", "title", "type",
         "url", "version"}


def top_level(text):
    """{key: first-line value} of the unindented `key:` lines (comments skipped)."""
    keys = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z][A-Za-z0-9-]*):\s*(.*)$", line)
        if m:
            keys[m.group(1)] = m.group(2).strip()
    return keys


def main():
    c = Checks()
    path = os.path.join(ROOT, "CITATION.cff")
    if not c.check(os.path.isfile(path), "CITATION.cff exists"):
        return c.finish()
    text = open(path, encoding="utf-8").read()
    keys = top_level(text)
    c.check(keys.get("cff-version", "").strip("'\"") == "1.2.0", "cff-version is 1.2.0",
            keys.get("cff-version"))
    for key in ("message", "title", "authors"):
        c.check(key in keys, f"the required key {key} is present", sorted(keys))
    unknown = sorted(set(keys) - KNOWN)
    c.check(not unknown, "every top-level key is one CFF 1.2.0 defines", unknown)
    authors = re.search(r"^authors:\s*\n((?:[ \t]+.*\n)+)", text, re.M)
    c.check(authors and re.search(r"^\s+- (name|family-names|given-names):\s*\S", authors.group(1),
                                  re.M),
            "authors lists at least one name")
    c.check(keys.get("type", "software") in ("software", "dataset"), "type is software or dataset",
            keys.get("type"))
    date = keys.get("date-released", "").strip("'\"")
    try:
        released = datetime.date.fromisoformat(date)
        c.check(released <= datetime.date.today(), "date-released is not in the future", date)
    except ValueError:
        c.check(False, "date-released is an ISO date (YYYY-MM-DD)", date)
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    c.check("CITATION.cff" in readme, "README.md points at CITATION.cff")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())

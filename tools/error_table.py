#!/usr/bin/env python3
"""The table of gen's error catalogue in docs/spec-reference.md, made from
tests/gen/errors/*.case (each case's leading comment and the first message
of its expected output), so the documentation cannot drift from the cases.

    tools/error_table.py           rewrite the table in place
    tools/error_table.py --check   exit 1 (saying so) when it is stale
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "spec-reference.md")
HEADER = "| case | what is wrong | message |\n|---|---|---|\n"


def row(path):
    text = open(path).read()
    comment = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        comment.append(line[1:].strip())
    expected = text.split("--- expected\n", 1)[1]
    errors = [l for l in expected.splitlines() if ": error: " in l]
    message = errors[0].split(": error: ", 1)[1] if errors else ""
    more = " (+%d more)" % (len(errors) - 1) if len(errors) > 1 else ""
    name = os.path.splitext(os.path.basename(path))[0]
    what = " ".join(comment).replace("|", "\\|")
    return "| `%s` | %s | `%s`%s |\n" % (name, what, message.replace("|", "\\|"), more)


def table():
    cases = sorted(glob.glob(os.path.join(ROOT, "tests", "gen", "errors", "*.case")))
    return HEADER + "".join(row(p) for p in cases)


def main():
    doc = open(DOC).read()
    start = doc.index(HEADER)
    end = start + len(HEADER)
    while end < len(doc) and doc.startswith("| `", end):
        end = doc.index("\n", end) + 1
    new = doc[:start] + table() + doc[end:]
    if "--check" in sys.argv[1:]:
        if new != doc:
            print("docs/spec-reference.md's error table is stale: run tools/error_table.py")
            return 1
        print("docs/spec-reference.md's error table lists every case of tests/gen/errors/")
        return 0
    open(DOC, "w").write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())

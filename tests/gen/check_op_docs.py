#!/usr/bin/env python3
"""gen.every_public_op_has_a_doc: every op declared in the public headers
generated/include/yagrad/ops_<section>.h carries a doc under its schema.

gen prints an op's doc comment (the '#' lines directly above its '- func:'
line in specs/native_functions.yaml, see docs/spec-reference.md, "Doc
comments") inside the op's schema comment, after a ' *' line.  This reads
the headers a user reads and lists each op whose comment has no doc, with
the line of its entry in the YAML, then fails.

usage: check_op_docs.py REPO_ROOT
"""
import pathlib
import re
import sys


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    yaml = (root / "specs/native_functions.yaml").read_text().split("\n")
    func_line = {}
    for i, line in enumerate(yaml):
        m = re.match(r"- func:\s*([A-Za-z0-9_.]+)\(", line)
        if m:
            func_line[m.group(1)] = i + 1
    # A declaration: its schema comment, then "YG_NODISCARD yg_status yg_<cname>(".
    decl = re.compile(r"/\* (?P<comment>(?:[^*]|\*(?!/))*)\*/\n"
                      r"YG_NODISCARD yg_status (?P<cname>yg_\w+)\(")
    total = 0
    missing = []
    for header in sorted((root / "generated/include/yagrad").glob("ops_*.h")):
        for m in decl.finditer(header.read_text()):
            total += 1
            comment = m.group("comment")
            if "\n *\n * " not in comment:
                name = re.match(r"[A-Za-z0-9_.]+", comment).group(0)
                missing.append((func_line.get(name, 0), name, m.group("cname"), header.name))
    if total == 0:
        print("no op declarations found under generated/include/yagrad/: the pattern is stale")
        return 1
    if missing:
        for line, name, cname, header in sorted(missing):
            print(f"specs/native_functions.yaml:{line}: {name} ({cname} in {header}) has no doc "
                  "comment: write '# ...' lines directly above its '- func:' line")
        print(f"{len(missing)} of {total} public ops have no doc comment "
              "(docs/adding-an-op.md, step 1)")
        return 1
    print(f"all {total} public ops have a doc comment")
    return 0


if __name__ == "__main__":
    sys.exit(main())

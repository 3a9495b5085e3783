#!/usr/bin/env python3
"""check-env-docs.py ROOT - every UPVM_* variable the sources read is in
docs/env.md, and every variable docs/env.md lists is read somewhere.

A read is a call of a util/env.h reader, getenv or secure_getenv with the
name as a string literal, in the C files of ROOT/src, ROOT/tools and
ROOT/include, or a $UPVM_X / ${UPVM_X...} in a shell script under
ROOT/tools (upvmcc).  C code must read UPVM_* variables through util/env.h
(one parser, one way of saying a bad value): a getenv of one outside
src/util/env.c is reported too.  A documented variable is a table row of
docs/env.md that starts with | `UPVM_X` |.

Prints what is wrong, one line each, and exits 1; prints a summary and
exits 0 when the sources and the page agree.
"""
import os
import re
import sys

READERS = r"env_size|env_uint|env_choice|env_flag|env_addr|env_string|env_reject"
C_READ = re.compile(r"\b(" + READERS + r"|getenv|secure_getenv)\s*\(\s*\"(UPVM_[A-Z0-9_]+)\"")
SHELL_READ = re.compile(r"\$\{?(UPVM_[A-Z0-9_]+)")
DOC_ROW = re.compile(r"^\|\s*`(UPVM_[A-Z0-9_]+)`\s*\|", re.M)
C_EXT = (".c", ".h")
SHELL_EXT = (".sh", ".in")
PARSER = os.path.join("src", "util", "env.c")


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def source_files(root):
    for top in ("src", "tools", "include"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith(C_EXT + SHELL_EXT):
                    yield os.path.join(d, f)


def reads(root):
    """{name: [where...]} of the variables read, and the raw getenv reads."""
    found, raw = {}, []
    for path in source_files(root):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if path.endswith(C_EXT):
            for m in C_READ.finditer(text):
                where = "%s:%d" % (rel, line_of(text, m.start()))
                found.setdefault(m.group(2), []).append(where)
                if m.group(1) in ("getenv", "secure_getenv") and rel != PARSER:
                    raw.append("%s: %s(\"%s\"): read it through util/env.h (env_string, "
                               "env_uint, ...)" % (where, m.group(1), m.group(2)))
        elif "/tools/" in "/" + rel.replace(os.sep, "/"):
            for m in SHELL_READ.finditer(text):
                found.setdefault(m.group(1), []).append(
                    "%s:%d" % (rel, line_of(text, m.start())))
    return found, raw


def documented(root):
    with open(os.path.join(root, "docs", "env.md"), encoding="utf-8") as f:
        return set(DOC_ROW.findall(f.read()))


def main(argv):
    if len(argv) != 2:
        print("usage: check-env-docs.py ROOT (the source tree)", file=sys.stderr)
        return 2
    root = argv[1]
    found, raw = reads(root)
    docs = documented(root)
    problems = list(raw)
    for name in sorted(set(found) - docs):
        problems.append("undocumented: %s (read at %s): add a row to docs/env.md"
                        % (name, ", ".join(found[name][:3])))
    for name in sorted(docs - set(found)):
        problems.append("documented but never read: %s: remove its row from docs/env.md, "
                        "or read it" % name)
    for p in problems:
        print(p)
    if problems:
        return 1
    print("ok: %d UPVM_* variables read, all in docs/env.md" % len(found))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

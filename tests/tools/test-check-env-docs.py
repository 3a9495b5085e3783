#!/usr/bin/env python3
"""test-check-env-docs.py SCRIPT - check-env-docs.py on fake trees: it
passes when the page and the reads agree, and otherwise names each
undocumented variable, each documented one nobody reads and each raw
getenv of a UPVM_* variable."""
import os
import subprocess
import sys
import tempfile

SCRIPT = sys.argv[1]
ROW = "| `%s` | a number | `1` | what |\n"


def tree(files):
    root = tempfile.mkdtemp(prefix="env-docs-")
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    return root


def run(files):
    p = subprocess.run([sys.executable, SCRIPT, tree(files)], capture_output=True, text=True)
    return p.returncode, p.stdout


def expect(cond, what, out):
    if not cond:
        print("FAIL: %s:\n%s" % (what, out))
        sys.exit(1)


docs = "# Environment\n\n| variable | values | default | what |\n|---|---|---|---|\n"
good = {
    "src/a/a.c": 'x = env_uint("UPVM_A", &spec,\n &v);\nenv_choice(\n  "UPVM_B", w, 0, 0, &i);\n',
    "tools/upvmcc/upvmcc.in": 'cc=${UPVM_C:-cc}\n',
    "src/util/env.c": 'const char *s = getenv(name);\n',
    "docs/env.md": docs + ROW % "UPVM_A" + ROW % "UPVM_B" + ROW % "UPVM_C",
}
rc, out = run(good)
expect(rc == 0 and "3 UPVM_* variables" in out, "agreeing tree", out)

bad = dict(good)
bad["src/b/b.c"] = 'const char *s = getenv("UPVM_D");\n'
bad["docs/env.md"] = docs + ROW % "UPVM_A" + ROW % "UPVM_C" + ROW % "UPVM_GONE"
rc, out = run(bad)
expect(rc == 1, "a tree that disagrees passed", out)
expect("undocumented: UPVM_B (read at src/a/a.c:3)" in out, "UPVM_B not named", out)
expect("undocumented: UPVM_D (read at src/b/b.c:1)" in out, "UPVM_D not named", out)
expect("documented but never read: UPVM_GONE" in out, "UPVM_GONE not named", out)
expect('src/b/b.c:1: getenv("UPVM_D"): read it through util/env.h' in out,
       "the raw getenv not named", out)
expect(len(out.strip().split("\n")) == 4, "more than the 4 problems", out)
print("ok")

#!/usr/bin/env python3
"""test-check-doc-links.py CHECKER - check-doc-links.py on small fake trees.

Each case writes a repository of a few files into a temporary folder, runs
the checker with --root on it and compares its status and output.
"""

import os
import subprocess
import sys
import tempfile

CHECKER = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "check-doc-links.py")

CASES = [
    # (name, files, expected status, lines the output must hold)
    ("clean",
     {"README.md": "See [usage](docs/usage.md#running) and `src/a/b.c`.\n",
      "docs/usage.md": "# Usage\n\n## Running\n\n[back](../README.md), `./prog`, `build/x`\n",
      "src/a/b.c": ""},
     0, []),
    ("broken link and path",
     {"README.md": "[gone](docs/gone.md) and `src/a/missing.c`\n",
      "docs/x.md": "[anchor](../README.md#nowhere)\n", "src/a/b.c": ""},
     1, ["README.md:1: link docs/gone.md: no such file",
         "README.md:1: path src/a/missing.c: no such file or folder",
         "docs/x.md:1: link ../README.md#nowhere: no heading #nowhere in README.md"]),
    ("outside the repository",
     {"README.md": "read `../shared/papers/` or [x](../../etc)\n",
      "docs/b.md": "`PVM_BASELINE_DIR` (default `../shared/baseline/pvm`)\n"},
     1, ["README.md:1: path ../shared/papers/ is outside the repository",
         "README.md:1: link ../../etc leaves the repository"]),
    ("fenced blocks are examples",
     {"README.md": "```sh\ncat src/none.c\n```\n", "src/x.c": ""},
     0, []),
    ("plain-text paths",
     {"README.md": "Read src/a/b.c and src/a/gone.c, see tests/none/; src/tag/ctx is prose.\n",
      "src/a/b.c": "", "tests/x.c": ""},
     1, ["README.md:1: path src/a/gone.c: no such file or folder",
         "README.md:1: path tests/none/: no such file or folder"]),
    ("bare document names",
     {"README.md": "See usage.md and DESIGN.md, `env.md`, pvm-probed-\nsemantics.md.\n",
      "docs/usage.md": "", "docs/env.md": ""},
     1, ["README.md:1: document DESIGN.md: no such file (beside it, in docs/ or at the root)"]),
    ("wildcards checked up to them",
     {"README.md": "`tests/pvm/*.c` and `tests/nope/*.sh`\n", "tests/pvm/a.c": ""},
     1, ["README.md:1: path tests/nope/*.sh: no such file or folder"]),
    ("a plan's new files",
     {"README.md": "Add `src/trace/` (new) and `src/gone.c`.\n", "src/x.c": ""},
     1, ["README.md:1: path src/gone.c: no such file or folder"]),
]


def run_case(name, files, status, want):
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(text)
        r = subprocess.run([sys.executable, CHECKER, "--root", root],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        got = r.stdout.splitlines()
        ok = r.returncode == status and sorted(got) == sorted(want)
        if not ok:
            print("FAIL %s: status %d (want %d), output:\n  %s\nwanted:\n  %s"
                  % (name, r.returncode, status, "\n  ".join(got), "\n  ".join(want)))
        return ok


def main():
    failed = [c[0] for c in CASES if not run_case(*c)]
    print("%d of %d cases passed" % (len(CASES) - len(failed), len(CASES)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Self-test of tools/check-layers.py on small fake trees in a temporary folder.

usage: tests/tools/test-check-layers.py [path/to/check-layers.py] [unittest options]

Each case writes a docs/architecture.md with a 3-layer table (a <- b <- c),
include/ with two public headers and src/a, src/b, src/c, runs the script with
--root and checks its status and its output lines.  The folder is removed
afterwards, whatever the outcome.
"""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "tools", "check-layers.py")

RULE_A = "(docs/architecture.md: a may include no other layer; public: pub.h)"
RULE_B = "(docs/architecture.md: b may include a; public: pub.h)"
RULE_C = "(docs/architecture.md: c may include b a; public: pub.h api.h)"


def table(rows):
    """A docs/architecture.md whose table has rows (layer, may include, public)."""
    lines = ["# Architecture", "", "Some text.", "",
             "<!-- layers: begin (tools/check-layers.py parses this table) -->",
             "| layer | folder | what it is | may include | public headers |",
             "|---|---|---|---|---|"]
    for name, may, public in rows:
        lines.append("| %s | `src/%s` | layer %s | %s | %s |" % (name, name, name, may, public))
    lines += ["<!-- layers: end -->", "", "More text.", ""]
    return "\n".join(lines)


GOOD_TABLE = table([("a", "", "pub.h"), ("b", "a", "pub.h"), ("c", "b a", "pub.h api.h")])

GOOD_FILES = {
    "include/pub.h": "",
    "include/api.h": "",
    "src/a/a.h": "#include <stdint.h>\n#include <pub.h>\n",
    "src/a/a.c": '#include "a/a.h"\n#include "a_impl.h"\n#include <sys/mman.h>\n',
    "src/a/a_impl.h": "",
    "src/b/b.h": '#include "a/a.h"\n',
    "src/b/b.c": '#include "b/b.h"\n#  include "a/a.h"\n#include "pub.h"\n',
    "src/c/c.c": '#include "c/c.h"\n#include "b/b.h"\n#include <api.h>\n#include "a/a.h"\n',
    "src/c/c.h": "",
    "src/c/x86_64/ctx.S": '#include "a/a.h"\n',
    "src/CMakeLists.txt": "",
}


class CheckLayers(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="check-layers-test.")
        self.root = self._tmp.name
        self.addCleanup(self._tmp.cleanup)

    def write(self, files):
        for rel, text in files.items():
            path = os.path.join(self.root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)

    def tree(self, changes=None, doc=GOOD_TABLE):
        """The good tree, with changes: {path: text, or None to remove it}."""
        files = dict(GOOD_FILES)
        files["docs/architecture.md"] = doc
        for rel, text in (changes or {}).items():
            if text is None:
                files.pop(rel, None)
            else:
                files[rel] = text
        self.write(files)

    def run_script(self, *args, cwd=None):
        p = subprocess.run([sys.executable, SCRIPT, "--root", self.root] + list(args),
                           cwd=cwd or self.root, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
        return p.returncode, p.stdout.splitlines(), p.stderr

    def test_good_tree_is_silent(self):
        self.tree()
        self.assertEqual(self.run_script(), (0, [], ""))

    def test_runs_from_another_cwd(self):
        self.tree()
        with tempfile.TemporaryDirectory() as elsewhere:
            self.assertEqual(self.run_script(cwd=elsewhere), (0, [], ""))

    def test_violations(self):
        self.tree({"src/a/a.c": '#include "a/a.h"\n\n#include "b/b.h"\n',       # upward
                   "src/b/b.c": '#include "b/b.h"\n#include <api.h>\n',         # public not allowed
                   "src/b/b.h": '// b\n#include "c/c.h"\n'})                   # upward
        rc, out, err = self.run_script()
        self.assertEqual(rc, 1)
        self.assertEqual(err, "")
        self.assertEqual(out, [
            "src/a/a.c:3: a may not include b/b.h " + RULE_A,
            "src/b/b.c:2: b may not include api.h " + RULE_B,
            "src/b/b.h:2: b may not include c/c.h " + RULE_B,
        ])

    def test_fortran_include_file(self):
        # include/ may hold a Fortran include file (its text starts with '!'):
        # no C header, so neither listed as one nor #included from src/
        doc = table([("a", "", "pub.h"), ("b", "a", "pub.h f.h"), ("c", "b a", "pub.h api.h")])
        self.tree({"include/f.h": "! Fortran\n      integer X\n",
                   "src/c/c.c": '#include "c/c.h"\n#include "f.h"\n'}, doc=doc)
        rc, out, _ = self.run_script()
        self.assertEqual(rc, 1)
        self.assertEqual(out, [
            "docs/architecture.md:9: layer b's public header f.h is a Fortran include file, "
            "not a C header",
            "src/c/c.c:2: #include of f.h: a Fortran include file (for INCLUDE in Fortran "
            "programs), not a C header",
        ])

    def test_missing_header(self):
        # "gone.h" and <b/gone.h> may be the build's or the system's: not checked
        self.tree({"src/c/c.c": '#include "c/c.h"\n#include "b/nope.h"\n#include "gone.h"\n'
                                '#include <b/gone.h>\n#include "c/nope.h"\n'})
        rc, out, _ = self.run_script()
        self.assertEqual(rc, 1)
        self.assertEqual(out, [
            'src/c/c.c:2: #include "b/nope.h": src/b/nope.h does not exist',
            'src/c/c.c:5: #include "c/nope.h": src/c/nope.h does not exist',
        ])

    def test_relative_paths(self):
        self.tree({"src/b/b.c": '#include "../a/a.h"\n#include "../c/c.h"\n'
                                '#include "../../include/api.h"\n'})
        rc, out, _ = self.run_script()
        self.assertEqual(rc, 1)
        self.assertEqual(out, [
            "src/b/b.c:2: b may not include c/c.h " + RULE_B,
            "src/b/b.c:3: b may not include api.h " + RULE_B,
        ])

    def test_unknown_folder(self):
        self.tree({"src/d/d.c": '#include "a/a.h"\n',
                   "src/c/c.c": '#include "d/d.h"\n'})
        self.write({"src/d/d.h": ""})
        rc, out, _ = self.run_script()
        self.assertEqual(rc, 1)
        self.assertEqual(out, [
            "src/c/c.c:1: c may not include d/d.h (src/d is not a layer) " + RULE_C,
            "src/d: src/d is not in docs/architecture.md's layer table",
        ])

    def test_file_outside_layer_folders(self):
        self.tree({"src/main.c": ""})
        rc, out, _ = self.run_script()
        self.assertEqual(rc, 1)
        self.assertEqual(out, ["src/main.c: src/main.c is not in a layer's folder (src/<layer>/)"])

    def test_cycle_in_table(self):
        doc = table([("a", "c", "pub.h"), ("b", "a", "pub.h"), ("c", "b a", "pub.h api.h")])
        self.tree(doc=doc)
        rc, out, _ = self.run_script()
        self.assertEqual(rc, 1)
        self.assertEqual(out, ["docs/architecture.md:8: the layer table is not acyclic: "
                               "a -> c -> b -> a"])

    def test_table_errors(self):
        doc = table([("a", "", "pub.h nothere.h"), ("b", "a z", "pub.h"),
                     ("c", "b a", "pub.h api.h")])
        self.tree(doc=doc)
        rc, out, _ = self.run_script()
        self.assertEqual(rc, 1)
        self.assertEqual(out, [
            "docs/architecture.md:8: layer a's public header nothere.h is not a file of include/",
            "docs/architecture.md:9: layer b may include z, which is not a layer of the table",
        ])

    def test_no_table(self):
        self.tree(doc="# Architecture\n\nNo table here.\n")
        rc, out, err = self.run_script()
        self.assertEqual((rc, out), (2, []))
        self.assertIn("no layer table", err)

    def test_graph(self):
        self.tree({"src/a/a.c": '#include "a/a.h"\n#include "b/b.h"\n#include "b/b.h"\n'})
        rc, out, _ = self.run_script("--graph")
        self.assertEqual(rc, 0)
        self.assertEqual([l for l in out if not l.startswith("#")], [
            "a -> b (2)!; public: pub.h (1)",
            "b -> a (2); public: pub.h (1)",
            "c -> b (1) a (2); public: api.h (1)",
        ])
        self.assertIn("# these layers include each other (a cycle): a b", out)

    def test_usage(self):
        self.tree()
        rc, out, _ = self.run_script("-h")
        self.assertEqual(rc, 0)
        self.assertTrue(out[0].startswith("usage:"), out[0])
        rc, out, err = self.run_script("--bogus")
        self.assertEqual((rc, out), (2, []))
        self.assertIn("unknown argument", err)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1].endswith(".py"):
        SCRIPT = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=1)

#!/usr/bin/env python3
"""check-layers.py - check src/'s #includes against docs/architecture.md's layer table.

usage: tools/check-layers.py [--root DIR] [--graph]

The table between the markers `<!-- layers: begin` and `<!-- layers: end -->`
in docs/architecture.md is the rule: one row per layer (columns: layer,
folder, what it is, may include, public headers).  A file in src/<L>/ may
include its own layer's headers, those of the layers in L's "may include"
column, and the public headers (files of include/) in L's last column.

Checked, in every .c, .h and .S file under src/:
  - each #include "x/y.h" whose x is a folder of src/ (a project header; it
    must exist), each #include <x/y.h> that names a file of src/, and each
    "y.h" or "../x/y.h" found next to the including file;
  - each #include of a public header (<pvm3.h>, "upvm.h": a file of include/).
Other headers (<stdio.h>, <sys/mman.h>, one the build makes) are ignored.
include/ also holds Fortran include files (fpvm3.h: its text starts with a
'!' comment); they are no C header: a layer may not list one among its
public headers, and no file of src/ may #include one.
Also checked: every folder of src/ is a layer of the table, and the table's
"may include" relation names only layers of the table and has no cycle.

Output: nothing and status 0 when clean; else one line per violation,
  FILE:LINE: MESSAGE
and status 1.  Status 2: usage error, or no table to read.

options:
  --root DIR   the repository (default: the one this script is in)
  --graph      print the layer dependency graph found in src/ instead of
               checking: each layer, then the layers and public headers its
               files include, with the number of #include lines; a "!" marks
               what the table does not allow
  -h, --help   this text
"""

import os
import re
import sys

DOC = "docs/architecture.md"
BEGIN = "<!-- layers: begin"
END = "<!-- layers: end -->"
SOURCE_EXTS = (".c", ".h", ".S")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


class Layer:
    def __init__(self, name, folder, may, public, line):
        self.name = name
        self.folder = folder
        self.may = may          # list of layer names, in the table's order
        self.public = public    # list of public header names
        self.line = line        # line of its row in the doc


def is_fortran(root, name):
    """Whether include/<name> is a Fortran include file (it starts with a
    '!' comment, as include/fpvm3.h does), not a C header."""
    try:
        with open(os.path.join(root, "include", name), encoding="utf-8", errors="replace") as f:
            return f.read(1) == "!"
    except OSError:
        return False


def usage(out):
    out.write(__doc__.split("\n", 1)[1].lstrip("\n"))


def cell_words(cell):
    return cell.replace("`", " ").split()


def parse_table(root):
    """Returns (layers in table order, errors as (line, message))."""
    path = os.path.join(root, DOC)
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError as e:
        raise SystemExit("check-layers: cannot read %s: %s" % (path, e.strerror))
    begin = next((i for i, l in enumerate(lines) if l.strip().startswith(BEGIN)), None)
    end = next((i for i, l in enumerate(lines) if l.strip().startswith(END)), None)
    if begin is None or end is None or end < begin:
        raise SystemExit("check-layers: %s has no layer table between '%s' and '%s'"
                         % (path, BEGIN, END))
    layers, errors = [], []
    header_seen = False
    for i in range(begin + 1, end):
        lineno = i + 1
        row = lines[i].strip()
        if not row:
            continue
        if not row.startswith("|"):
            errors.append((lineno, "not a row of the layer table: %r" % row))
            continue
        cells = [c.strip() for c in row.strip("|").split("|")]
        if not header_seen:
            header_seen = True
            if [c.lower() for c in cells[:1]] != ["layer"]:
                errors.append((lineno, "the layer table's first row is not its header"))
            continue
        if all(re.fullmatch(r":?-+:?", c) for c in cells):
            continue  # the separator row
        if len(cells) != 5:
            errors.append((lineno, "a row of the layer table has %d columns, not 5 "
                                   "(layer, folder, what it is, may include, public headers)"
                           % len(cells)))
            continue
        name = cells[0].strip("`")
        folder = " ".join(cell_words(cells[1]))
        if not re.fullmatch(r"[A-Za-z0-9_]+", name):
            errors.append((lineno, "%r is not a layer name" % name))
            continue
        if folder != "src/" + name:
            errors.append((lineno, "layer %s's folder is %r, not src/%s" % (name, folder, name)))
        if any(l.name == name for l in layers):
            errors.append((lineno, "layer %s is in the table twice" % name))
            continue
        layers.append(Layer(name, "src/" + name, cell_words(cells[3]), cell_words(cells[4]),
                            lineno))
    names = {l.name for l in layers}
    for l in layers:
        for m in l.may:
            if m not in names:
                errors.append((l.line, "layer %s may include %s, which is not a layer of the "
                                       "table" % (l.name, m)))
            elif m == l.name:
                errors.append((l.line, "layer %s lists itself in its \"may include\"" % l.name))
        for h in l.public:
            if not os.path.isfile(os.path.join(root, "include", h)):
                errors.append((l.line, "layer %s's public header %s is not a file of include/"
                               % (l.name, h)))
            elif is_fortran(root, h):
                errors.append((l.line, "layer %s's public header %s is a Fortran include "
                                       "file, not a C header" % (l.name, h)))
    cycle = find_cycle([(l.name, l.may) for l in layers])
    if cycle:
        first = next(l for l in layers if l.name == cycle[0])
        errors.append((first.line, "the layer table is not acyclic: %s" % " -> ".join(cycle)))
    return layers, errors


def find_cycle(edges):
    """A cycle of a relation given as [(name, [names it includes])], as a list of
    names (first == last), or None."""
    may = {n: [m for m in ms if m != n] for n, ms in edges}
    state = {}  # name -> 1 on the path, 2 done
    path = []

    def visit(n):
        state[n] = 1
        path.append(n)
        for m in may.get(n, []):
            if m not in may:
                continue
            if state.get(m) == 1:
                return path[path.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        path.pop()
        state[n] = 2
        return None

    for n, _ in edges:
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def source_files(root):
    src = os.path.join(root, "src")
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames.sort()
        for fn in sorted(filenames):
            if fn.endswith(SOURCE_EXTS):
                full = os.path.join(dirpath, fn)
                yield os.path.relpath(full, root).replace(os.sep, "/"), full


def includes(full):
    """(line number, delimiter, name) of each #include of a file."""
    with open(full, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE_RE.match(line)
            if m:
                yield n, m.group(1), m.group(2).strip()


def classify(root, rel, delim, name, src_dirs):
    """What an #include names: ("layer", layer, path under src/), ("public", header),
    ("missing", path) or None (a system header, or one the build makes: ignored)."""
    parts = name.split("/")
    if delim == '"':
        # "x.h" and "../x/y.h" are looked for first next to the including file
        here = os.path.normpath(os.path.join(os.path.dirname(rel), name)).replace(os.sep, "/")
        if os.path.isfile(os.path.join(root, here)):
            top = here.split("/")
            if top[0] == "src" and len(top) > 2:
                return ("layer", top[1], "/".join(top[1:]))
            if top[0] == "include":
                return ("public", "/".join(top[1:]))
        if len(parts) > 1 and parts[0] in src_dirs:
            if os.path.isfile(os.path.join(root, "src", name)):
                return ("layer", parts[0], name)
            return ("missing", "src/" + name)
    elif len(parts) > 1 and parts[0] in src_dirs and \
            os.path.isfile(os.path.join(root, "src", name)):
        return ("layer", parts[0], name)   # <x/y.h> of src/ (not <net/if.h>)
    if os.path.isfile(os.path.join(root, "include", name)):
        return ("public", name)
    return None


def rule_text(layer):
    may = " ".join(layer.may) if layer.may else "no other layer"
    public = " ".join(layer.public) if layer.public else "none"
    return "(%s: %s may include %s; public: %s)" % (DOC, layer.name, may, public)


def scan(root, layers):
    """Returns (violations as (file, line, message), graph)."""
    by_name = {l.name: l for l in layers}
    src = os.path.join(root, "src")
    src_dirs = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))) \
        if os.path.isdir(src) else []
    violations = []
    for d in src_dirs:
        if d not in by_name:
            violations.append(("src/" + d, 0, "src/%s is not in %s's layer table" % (d, DOC)))
    # graph[layer][("layer"|"public", name)] = [count, allowed]
    graph = {}
    for rel, full in source_files(root):
        parts = rel.split("/")
        if len(parts) < 3:
            violations.append((rel, 0, "%s is not in a layer's folder (src/<layer>/)" % rel))
            continue
        layer = by_name.get(parts[1])
        for n, delim, name in includes(full):
            what = classify(root, rel, delim, name, src_dirs)
            if what is None:
                continue
            if what[0] == "missing":
                violations.append((rel, n, "#include %s%s%s: %s does not exist"
                                   % (delim, name, ">" if delim == "<" else '"', what[1])))
                continue
            if layer is None:
                continue  # its folder is reported once above
            if what[0] == "public" and is_fortran(root, what[1]):
                violations.append((rel, n, "#include of %s: a Fortran include file (for "
                                           "INCLUDE in Fortran programs), not a C header"
                                   % what[1]))
                continue
            if what[0] == "layer":
                target = what[1]
                if target == layer.name:
                    continue
                ok = target in layer.may
                key = ("layer", target)
                shown = what[2]
                if not ok and target not in by_name:
                    shown += " (src/%s is not a layer)" % target
            else:
                ok = what[1] in layer.public
                key = ("public", what[1])
                shown = what[1]
            entry = graph.setdefault(layer.name, {}).setdefault(key, [0, ok])
            entry[0] += 1
            if not ok:
                violations.append((rel, n, "%s may not include %s %s"
                                   % (layer.name, shown, rule_text(layer))))
    violations.sort(key=lambda v: (v[0], v[1]))
    return violations, graph


def print_graph(root, layers, graph, out):
    order = [l.name for l in layers] + sorted(set(graph) - {l.name for l in layers})
    out.write("# layer -> the layers and public headers its files include (#include lines);\n"
              "# ! = not allowed by %s\n" % DOC)
    width = max(len(n) for n in order) if order else 0
    for name in order:
        edges = graph.get(name, {})
        if not edges and not os.path.isdir(os.path.join(root, "src", name)):
            out.write("%-*s -> (no src/%s yet)\n" % (width, name, name))
            continue
        pos = {n: i for i, n in enumerate(order)}
        # nearest first, as the table's "may include" column lists them
        deps = sorted((k for k in edges if k[0] == "layer"),
                      key=lambda k: (-pos.get(k[1], len(order)), k[1]))
        pubs = sorted(k for k in edges if k[0] == "public")

        def fmt(k):
            count, ok = edges[k]
            return "%s (%d)%s" % (k[1], count, "" if ok else "!")
        line = "%-*s -> %s" % (width, name, " ".join(fmt(k) for k in deps) or "-")
        if pubs:
            line += "; public: " + " ".join(fmt(k) for k in pubs)
        out.write(line + "\n")
    cycles = strongly_connected([(n, [k[1] for k in graph.get(n, {}) if k[0] == "layer"])
                                 for n in order])
    for c in cycles:
        out.write("# these layers include each other (a cycle): %s\n" % " ".join(c))


def strongly_connected(edges):
    """The components of more than one node of a relation [(name, [names])], each
    listed in the relation's order (Tarjan)."""
    succ = {n: [m for m in ms if m != n] for n, ms in edges}
    pos = {n: i for i, (n, _) in enumerate(edges)}
    index, low, on_stack, stack, comps = {}, {}, set(), [], []

    def visit(n):
        index[n] = low[n] = len(index)
        stack.append(n)
        on_stack.add(n)
        for m in succ.get(n, []):
            if m not in succ:
                continue
            if m not in index:
                visit(m)
                low[n] = min(low[n], low[m])
            elif m in on_stack:
                low[n] = min(low[n], index[m])
        if low[n] == index[n]:
            comp = []
            while True:
                m = stack.pop()
                on_stack.discard(m)
                comp.append(m)
                if m == n:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp, key=pos.get))

    for n, _ in edges:
        if n not in index:
            visit(n)
    return sorted(comps, key=lambda c: pos[c[0]])


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    graph_mode = False
    args = list(argv)
    while args:
        a = args.pop(0)
        if a in ("-h", "--help"):
            usage(sys.stdout)
            return 0
        elif a == "--graph":
            graph_mode = True
        elif a == "--root" or a.startswith("--root="):
            if a == "--root":
                if not args:
                    sys.stderr.write("check-layers: --root needs a directory\n")
                    return 2
                root = args.pop(0)
            else:
                root = a[len("--root="):]
        else:
            sys.stderr.write("check-layers: unknown argument %r (try -h)\n" % a)
            return 2
    if not os.path.isdir(os.path.join(root, "src")):
        sys.stderr.write("check-layers: %s has no src/ folder\n" % root)
        return 2
    try:
        layers, table_errors = parse_table(root)
    except SystemExit as e:
        sys.stderr.write(str(e) + "\n")
        return 2
    violations, graph = scan(root, layers)
    if graph_mode:
        print_graph(root, layers, graph, sys.stdout)
        return 0
    for line, msg in table_errors:
        sys.stdout.write("%s:%d: %s\n" % (DOC, line, msg))
    for rel, line, msg in violations:
        sys.stdout.write("%s: %s\n" % (rel, msg) if line == 0 else "%s:%d: %s\n" % (rel, line, msg))
    return 1 if table_errors or violations else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

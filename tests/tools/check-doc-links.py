#!/usr/bin/env python3
"""check-doc-links.py - check that the documentation's links and paths exist.

usage: tests/tools/check-doc-links.py [--root DIR] [FILE.md ...]

Reads README.md, every docs/**/*.md and every README.md of the repository
(or the FILEs given, relative to the root) and checks:
  - each Markdown link [text](target) and <a href="target"> whose target is
    not a URL (http:, https:, mailto:): the file or folder must exist,
    relative to the document (or to the root when it starts with "/"); an
    anchor "#name" must be a heading of the target document;
  - each path in backquotes that starts with a folder of the repository
    (`src/node/vm.c`, `tests/pvm/`, `docs/env.md`, `tools/check-layers.py`):
    it must exist relative to the root (or to the document, when it does
    not start with a top-level folder but "./" or "../"); the same for such
    a path in plain text when it names a file with an extension
    (src/node/vm.c) or a folder (tests/pvm/); a path with a
    wildcard or a placeholder (*, ?, <...>, {...}, ..., $VAR) is checked
    up to it: its fixed prefix must exist;
  - each bare document name (`env.md`, DESIGN.md), in backquotes or not:
    a file of that name must exist beside the document, in docs/,
    docs/reference/ or at the root (a name cut by a line break after "-"
    is not checked);
  - no link or path leaves the repository (../ above the root, /work/...,
    the ../shared/ folder beside the repository): a reader has only the
    repository.  The one exception is the default of an option, written
    "default `../x`" (the benchmark scripts' external baseline directory):
    the option says where the reader's own copy is.
Not checked: a path in backquotes followed by " (new)" (a file a plan
names before it exists: `src/trace/` (new)); a path of the build tree
(build/...); a program the reader
builds, run as `./name` (one word, no extension); a program built from a
source beside it (`bench/proc/spawn_bench` for bench/proc/spawn_bench.c);
anything inside a fenced code block (commands and output there are
examples, not references).

Output: nothing and status 0 when every link resolves; else one line per
broken link, FILE:LINE: MESSAGE, and status 1.  Status 2: usage error.
"""

import os
import re
import sys

LINK_RE = re.compile(r'(?<!\!)\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
IMG_RE = re.compile(r'!\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
HREF_RE = re.compile(r'<a\s[^>]*href="([^"]+)"', re.I)
REFDEF_RE = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$')
CODE_RE = re.compile(r'(`+)(.+?)\1')
# a repository path in plain text: a top-level folder, then a file with an
# extension or a folder ending in "/" (prose like "src/tag/ctx" is not one)
PLAIN_RE = re.compile(r'(?<![\w/.`<$-])([a-z]+/(?:[\w.+-]+/)*(?:[\w+-]+\.[A-Za-z]{1,5}|))(?![\w/`>])')
BARE_MD_RE = re.compile(r'(?<![\w/.-])([A-Za-z][\w-]*\.md)(?![\w/])')
HEADING_RE = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')
URL_RE = re.compile(r'^[a-zA-Z][a-zA-Z0-9+.-]*:')
WILD_RE = re.compile(r'[*?<{\[$]|\.\.\.')

# Generated paths: not in the repository, made by the build or a run.
GENERATED_PREFIXES = ("build/", "build-", "_build/")


def headings(path, cache={}):
    if path in cache:
        return cache[path]
    slugs = set()
    counts = {}
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        cache[path] = slugs
        return slugs
    in_fence = False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        m = HEADING_RE.match(line)
        if not m:
            continue
        slug = github_slug(m.group(2))
        n = counts.get(slug, 0)
        counts[slug] = n + 1
        slugs.add(slug if n == 0 else "%s-%d" % (slug, n))
    for m in re.finditer(r'<a\s+(?:name|id)="([^"]+)"', text):
        slugs.add(m.group(1))
    cache[path] = slugs
    return slugs


def github_slug(title):
    t = re.sub(r'`', '', title)
    t = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', t)  # links: their text
    t = t.strip().lower()
    t = re.sub(r'[^\w\- ]', '', t)
    return t.replace(' ', '-')


def documents(root):
    found = []
    top = os.path.join(root, "README.md")
    if os.path.isfile(top):
        found.append("README.md")
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        parts = rel.split(os.sep)
        # not the build trees, not git's, not other worktrees' checkouts
        dirnames[:] = sorted(d for d in dirnames
                             if not d.startswith(".") and not d.startswith("build")
                             and d not in ("node_modules", "_deps"))
        if rel == ".":
            continue
        for name in sorted(filenames):
            relpath = os.path.normpath(os.path.join(rel, name))
            if parts[0] == "docs" and name.endswith(".md"):
                found.append(relpath)
            elif name == "README.md":
                found.append(relpath)
    return found


def inside(root, path):
    root = os.path.realpath(root)
    path = os.path.realpath(path)
    return path == root or path.startswith(root + os.sep)


class Checker:
    def __init__(self, root):
        self.root = root
        self.top = set(d for d in os.listdir(root)
                       if not d.startswith(".") and os.path.isdir(os.path.join(root, d))
                       and not d.startswith("build"))
        self.top_files = set(f for f in os.listdir(root)
                             if os.path.isfile(os.path.join(root, f)))
        self.errors = []

    def error(self, doc, lineno, msg):
        self.errors.append("%s:%d: %s" % (doc, lineno, msg))

    def check_link(self, doc, lineno, target):
        if URL_RE.match(target) or target.startswith("//"):
            return
        path, _, anchor = target.partition("#")
        docdir = os.path.dirname(os.path.join(self.root, doc))
        if path == "":
            dest = os.path.join(self.root, doc)
        elif path.startswith("/"):
            dest = os.path.join(self.root, path.lstrip("/"))
        else:
            dest = os.path.normpath(os.path.join(docdir, path))
        if not inside(self.root, dest):
            self.error(doc, lineno, "link %s leaves the repository" % target)
            return
        if not os.path.exists(dest):
            self.error(doc, lineno, "link %s: no such file" % target)
            return
        if anchor and dest.endswith(".md") and os.path.isfile(dest):
            if anchor.lower() not in headings(dest):
                self.error(doc, lineno, "link %s: no heading #%s in %s"
                           % (target, anchor, os.path.relpath(dest, self.root)))

    def check_code_path(self, doc, lineno, span, before=""):
        s = span.strip()
        if " " in s or "\t" in s or not s:
            return
        # strip a trailing :LINE, (), a trailing punctuation
        s = re.sub(r':\d+(-\d+)?$', '', s)
        s = s.rstrip(".,;:")
        option_default = re.search(r'default\s*$', before) is not None
        if s.startswith(("/work/", "/tmp/work")) or (s.startswith("..") and "shared" in s.split("/")):
            if not option_default:
                self.error(doc, lineno, "path %s is outside the repository" % s)
            return
        if s.startswith("./") and "/" not in s[2:] and "." not in s[2:]:
            return  # ./prog: a program the reader built
        if s.startswith(("./", "../")):
            base = os.path.dirname(os.path.join(self.root, doc))
            rel = s
        else:
            first = s.split("/", 1)[0]
            if "/" not in s or first not in self.top:
                return
            base = self.root
            rel = s
        if rel.startswith(GENERATED_PREFIXES):
            return
        m = WILD_RE.search(rel)
        if m:
            rel = rel[:m.start()]
            rel = rel[:rel.rfind("/") + 1] if "/" in rel else ""
            if not rel:
                return
        dest = os.path.normpath(os.path.join(base, rel))
        if not inside(self.root, dest):
            if not option_default:
                self.error(doc, lineno, "path %s leaves the repository" % s)
            return
        if os.path.exists(dest) or os.path.isfile(dest + ".c"):
            return
        # a document's own folder: tests/README.md may say `tools/x.sh`
        if base == self.root and not s.startswith(("./", "../")):
            local = os.path.normpath(os.path.join(os.path.dirname(os.path.join(self.root, doc)), rel))
            if os.path.dirname(doc) and os.path.exists(local):
                return
        self.error(doc, lineno, "path %s: no such file or folder" % s)

    def check_bare_md(self, doc, lineno, text, prev):
        for m in BARE_MD_RE.finditer(text):
            name = m.group(1)
            if m.start() == len(text) - len(text.lstrip()) and prev.rstrip().endswith("-"):
                continue  # the end of a name cut at a hyphen
            here = os.path.dirname(os.path.join(self.root, doc))
            places = (here, os.path.join(self.root, "docs"),
                      os.path.join(self.root, "docs", "reference"), self.root)
            if not any(os.path.isfile(os.path.join(d, name)) for d in places):
                self.error(doc, lineno, "document %s: no such file (beside it, in docs/ or at the root)"
                           % name)

    def check_doc(self, doc):
        path = os.path.join(self.root, doc)
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
        except OSError as e:
            self.error(doc, 0, "cannot read: %s" % e.strerror)
            return
        in_fence = False
        for i, line in enumerate(lines):
            lineno = i + 1
            if line.lstrip().startswith(("```", "~~~")):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            for m in LINK_RE.finditer(line):
                self.check_link(doc, lineno, m.group(1))
            for m in IMG_RE.finditer(line):
                self.check_link(doc, lineno, m.group(1))
            for m in HREF_RE.finditer(line):
                self.check_link(doc, lineno, m.group(1))
            m = REFDEF_RE.match(line)
            if m:
                self.check_link(doc, lineno, m.group(1))
            for m in CODE_RE.finditer(line):
                if not line[m.end():].startswith(" (new)"):
                    self.check_code_path(doc, lineno, m.group(2), line[:m.start()])
            self.check_bare_md(doc, lineno, LINK_RE.sub(" ", line),
                               lines[i - 1] if i > 0 else "")
            plain = LINK_RE.sub(" ", CODE_RE.sub(" ", line))
            plain = re.sub(r'https?://\S+', ' ', plain)
            for m in PLAIN_RE.finditer(plain):
                if m.group(1).split("/", 1)[0] in self.top:
                    self.check_code_path(doc, lineno, m.group(1), plain[:m.start()])


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    files = []
    args = argv[1:]
    while args:
        a = args.pop(0)
        if a in ("-h", "--help"):
            sys.stdout.write(__doc__.split("\n", 1)[1].lstrip("\n"))
            return 0
        if a == "--root":
            if not args:
                sys.stderr.write("check-doc-links: --root needs a folder\n")
                return 2
            root = args.pop(0)
        elif a.startswith("-"):
            sys.stderr.write("check-doc-links: unknown option %s (see --help)\n" % a)
            return 2
        else:
            files.append(a)
    if not os.path.isdir(root):
        sys.stderr.write("check-doc-links: %s is not a folder\n" % root)
        return 2
    checker = Checker(root)
    for doc in files or documents(root):
        checker.check_doc(doc)
    for e in checker.errors:
        print(e)
    return 1 if checker.errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

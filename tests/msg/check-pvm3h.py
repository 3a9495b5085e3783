#!/usr/bin/env python3
"""check-pvm3h.py - compare UPVM's include/pvm3.h (or pvmtev.h) with a real
PVM header of the same name.

Checks, using the C compiler on both headers:
  1. functions: every function the reference declares is declared in ours
     with the same type (gcc -aux-info prints each prototype normalised);
  2. macros: every macro the reference defines is defined in ours with the
     same value (integers and strings, evaluated by a compiled program) and
     the function-like ones give the same results on sample arguments;
  3. structures: the same members at the same offsets with the same sizes.

Exits 0 when ours matches, 1 (listing every difference) when not, and 77
(ctest's "skipped") when the reference header is not installed.

Usage: check-pvm3h.py --ours include/pvm3.h [--ref /usr/include/pvm3.h]
                      [--cc cc]
       check-pvm3h.py --ours include/pvmtev.h --ref /usr/include/pvmtev.h
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77

# Both headers are read with these defined, so that the conditional
# declarations (pvmtmpnam, pvm_getmwid/pvm_setmwid) are compared too, and
# with <stdio.h> first (the reference declares pvm_catchout only then).
DEFINES = ["-DNOTMPNAM", "-DPVM33COMPAT"]
PRELUDE = "#include <stdio.h>\n#include <sys/time.h>\n"

# A value of a trace mask (pvmtev.h): a mask made by TEV_MASK_INIT, the
# statement %s done on it, then its character number %d.
MASK_EXPR = "({ Pvmtmask m_; TEV_MASK_INIT(m_); %s; (int)m_[%d]; })"

# Function-like macros and the arguments to try them with (for pvmtev.h's
# mask macros: whole expressions, which start with "({").
MACRO_CALLS = {
    "PvmMboxDirectIndexOf": ["0", "0x7fffffff", "(5 << 10) | 0x3ff"],
    "PvmMboxDirectIndex": ["0", "3", "1000"],
    # pvmtev.h's mask macros: a statement expression each (a GNU C
    # extension), on a mask TEV_MASK_INIT made; the value is the characters
    # that the call touched (or the check), so both headers must agree
    "TEV_MASK_SET": [MASK_EXPR % ("TEV_MASK_SET(m_, %d)" % k, k // 4)
                     for k in (0, 47, 108)],
    "TEV_MASK_UNSET": [MASK_EXPR % ("TEV_MASK_SET(m_, 45); TEV_MASK_UNSET(m_, 45)", 11)],
    "TEV_MASK_CHECK": [MASK_EXPR % ("m_[11] = 0x4f; m_[0] = TEV_MASK_CHECK(m_, 47) != 0", 0)],
    "TEV_MASK_INIT": [MASK_EXPR % ("(void)0", 34) + " * 1000 + " +
                      MASK_EXPR % ("(void)0", 35)],
}


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def compile_ok(cc, args, what):
    r = run([cc] + args)
    if r.returncode != 0:
        sys.exit("check-pvm3h: %s failed:\n%s" % (what, r.stderr))
    return r


def prototypes(cc, header, tmp):
    """name -> normalised declaration, for the functions header declares."""
    src = os.path.join(tmp, "proto.c")
    aux = os.path.join(tmp, "proto.aux")
    with open(src, "w") as f:
        f.write(PRELUDE + '#include "%s"\n' % header)
    compile_ok(cc, ["-std=gnu11", "-aux-info", aux, "-c", src, "-o",
                    os.devnull] + DEFINES, "compiling " + header)
    protos = {}
    real = os.path.realpath(header)
    with open(aux) as f:
        for line in f:
            m = re.match(r"/\* (.*?):\d+:\w+ \*/ (.*)$", line.strip())
            if not m or os.path.realpath(m.group(1)) != real:
                continue
            decl = m.group(2)
            names = [n for n in re.findall(r"(\w+) \(", decl)
                     if n not in ("int", "void", "char")]
            if names:
                protos[names[0]] = decl
    return protos


def macros(cc, header, tmp):
    """name -> (params or None, body) for the macros header defines."""
    base = os.path.join(tmp, "base.c")
    with open(base, "w") as f:
        f.write(PRELUDE)
    with_h = os.path.join(tmp, "with.c")
    with open(with_h, "w") as f:
        f.write(PRELUDE + '#include "%s"\n' % header)

    def dm(path):
        r = compile_ok(cc, ["-std=gnu11", "-dM", "-E", path] + DEFINES,
                       "preprocessing " + header)
        out = {}
        for line in r.stdout.splitlines():
            m = re.match(r"#define (\w+)(\([^)]*\))?\s?(.*)$", line)
            if m:
                out[m.group(1)] = (m.group(2), m.group(3))
        return out

    before, after = dm(base), dm(with_h)
    return {k: v for k, v in after.items() if before.get(k) != v}


def structs(header):
    """struct name -> member names, from the header's text."""
    text = open(header).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out = {}
    for m in re.finditer(r"struct\s+(\w+)\s*\{(.*?)\}\s*;", text, re.S):
        members = re.findall(r"(\w+)\s*(?:\[[^\]]*\])?\s*;", m.group(2))
        out[m.group(1)] = members
    return out


def evaluate(cc, header, exprs, tmp, tag):
    """Compile a program printing each expression's value with header."""
    src = os.path.join(tmp, "eval_%s.c" % tag)
    exe = os.path.join(tmp, "eval_%s" % tag)
    lines = [PRELUDE, '#include <stddef.h>\n#include "%s"\n' % header,
             "int main(void) {\n"]
    for key, expr, kind in exprs:
        if kind == "str":
            lines.append('printf("%%s=%%s\\n", "%s", %s);\n' % (key, expr))
        else:
            lines.append('printf("%%s=%%lld\\n", "%s", (long long)(%s));\n'
                         % (key, expr))
    lines.append("return 0; }\n")
    with open(src, "w") as f:
        f.write("".join(lines))
    compile_ok(cc, ["-std=gnu11", "-w", src, "-o", exe] + DEFINES,
               "compiling the value printer for " + header)
    r = run([exe])
    if r.returncode != 0:
        sys.exit("check-pvm3h: value printer for %s failed" % header)
    return dict(l.split("=", 1) for l in r.stdout.splitlines())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", required=True)
    ap.add_argument("--ref", default="/usr/include/pvm3.h")
    ap.add_argument("--cc", default="cc")
    a = ap.parse_args()
    a.ours, a.ref = os.path.abspath(a.ours), os.path.abspath(a.ref)

    if not os.path.exists(a.ref):
        print("check-pvm3h: SKIPPED: no reference header at %s "
              "(on Debian: apt-get install pvm-dev)" % a.ref)
        return SKIP

    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        # 1. functions
        ref_p, our_p = prototypes(a.cc, a.ref, tmp), prototypes(a.cc, a.ours, tmp)
        for name, decl in sorted(ref_p.items()):
            if name not in our_p:
                problems.append("function %s missing (PVM: %s)" % (name, decl))
            elif our_p[name] != decl:
                problems.append("function %s differs:\n  PVM:  %s\n  ours: %s"
                                % (name, decl, our_p[name]))

        # 2. macros
        ref_m, our_m = macros(a.cc, a.ref, tmp), macros(a.cc, a.ours, tmp)
        ignore = {"_PVM3_H_", "_PVMTEV_H_", "__ProtoGlarp__"}
        exprs = []
        for name, (params, body) in sorted(ref_m.items()):
            if name in ignore:
                continue
            if name not in our_m:
                problems.append("macro %s missing" % name)
                continue
            if bool(params) != bool(our_m[name][0]):
                problems.append("macro %s: function-like in one header only"
                                % name)
                continue
            if params:
                for arg in MACRO_CALLS.get(name, []):
                    expr = arg if arg.startswith("({") else "%s(%s)" % (name, arg)
                    exprs.append((expr, expr, "int"))
            elif body.startswith('"'):
                exprs.append((name, name, "str"))
            elif re.search(r"\(\s*x\s*\)|tmpnam", body):
                continue  # PVMTMPNAMFUN-like: names compared above
            else:
                exprs.append((name, name, "int"))

        # 3. structures
        ref_s, our_s = structs(a.ref), structs(a.ours)
        for sname, members in sorted(ref_s.items()):
            if sname not in our_s:
                problems.append("struct %s missing" % sname)
                continue
            if our_s[sname] != members:
                problems.append("struct %s members differ: PVM %s, ours %s"
                                % (sname, members, our_s[sname]))
                continue
            exprs.append(("sizeof(struct %s)" % sname,
                          "sizeof(struct %s)" % sname, "int"))
            for m in members:
                for what in ("offsetof(struct %s, %s)" % (sname, m),
                             "sizeof(((struct %s *)0)->%s)" % (sname, m)):
                    exprs.append((what, what, "int"))

        ref_v = evaluate(a.cc, a.ref, exprs, tmp, "ref")
        our_v = evaluate(a.cc, a.ours, exprs, tmp, "ours")
        for key, _, _ in exprs:
            if ref_v.get(key) != our_v.get(key):
                problems.append("%s is %s, PVM has %s"
                                % (key, our_v.get(key), ref_v.get(key)))

    if problems:
        print("check-pvm3h: %s differs from %s:" % (a.ours, a.ref))
        for p in problems:
            print("  " + p)
        return 1
    print("check-pvm3h: %d functions, %d values (macros, struct layouts) "
          "as in %s" % (len(ref_p), len(exprs), a.ref))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""check-fpvm3h.py - hold include/fpvm3.h to its contract.

usage: check-fpvm3h.py REPO [GENUINE_FPVM3_H]

  - every name it declares INTEGER has one PARAMETER value, and the other
    way round;
  - each value is that of the matching constant of include/pvm3.h
    (PVMTASKHOST is PvmTaskHost, PVMSOUTPUTTID PvmSelfOutputTid, INTEGER4
    PVM_INT, ...), but for PvmDupEntry, which PVM's fpvm3.h makes -33 while
    its pvm3.h (and ours) make it PvmDenied (-8);
  - with GENUINE_FPVM3_H (PVM's own, e.g. Debian pvm-dev's
    /usr/include/fpvm3.h; skipped when the file is absent): the same names
    and values, no more, no fewer;
  - with gfortran on the PATH: a fixed-form and a free-form program that
    include it compile with -Wall -Werror.
Prints one line per problem; exit status 0 when there is none, 1 else.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Fortran names whose C name is not the same letters (any case).
C_NAME = {
    "PVMHOST": "PvmTaskHost", "PVMARCH": "PvmTaskArch", "PVMDEBUG": "PvmTaskDebug",
    "PVMTRACE": "PvmTaskTrace", "PVMDEFAULT": "PvmDataDefault", "PVMRAW": "PvmDataRaw",
    "PVMINPLACE": "PvmDataInPlace", "PVMSOUTPUTTID": "PvmSelfOutputTid",
    "PVMSOUTPUTCODE": "PvmSelfOutputCode", "PVMSTRACETID": "PvmSelfTraceTid",
    "PVMSTRACECODE": "PvmSelfTraceCode", "PVMSTRACEBUFFER": "PvmSelfTraceBuffer",
    "PVMSTRACEOPTIONS": "PvmSelfTraceOptions", "PVMOUTPUTCTX": "PvmOutputContext",
    "PVMTRACECTX": "PvmTraceContext", "PVMSOUTPUTCTX": "PvmSelfOutputContext",
    "PVMSTRACECTX": "PvmSelfTraceContext", "STRING": "PVM_STR", "BYTE1": "PVM_BYTE",
    "INTEGER2": "PVM_SHORT", "INTEGER4": "PVM_INT", "INTEGER8": "PVM_LONG",
    "REAL4": "PVM_FLOAT", "COMPLEX8": "PVM_CPLX", "REAL8": "PVM_DOUBLE",
    "COMPLEX16": "PVM_DCPLX",
}
KNOWN = {"PVMDUPENTRY": -33}  # PVM's fpvm3.h differs from its pvm3.h here


def fortran_constants(path):
    """(declared names, {NAME: value}) of an fpvm3.h, names upper-cased."""
    declared, values, problems = set(), {}, []
    for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
        if not line.strip() or line[0] in "cC*!":
            continue
        code = line.split("!")[0].strip()
        m = re.match(r"(?i)integer\s+(.*)$", code)
        if m:
            declared.update(w.strip().upper() for w in m.group(1).split(","))
            continue
        m = re.match(r"(?i)parameter\s*\(\s*(\w+)\s*=\s*(-?\d+)\s*\)$", code)
        if m:
            name = m.group(1).upper()
            if name in values:
                problems.append("%s:%d: %s given a value twice" % (path, n, name))
            values[name] = int(m.group(2))
            continue
        problems.append("%s:%d: not a declaration or a parameter: %r" % (path, n, code))
    return declared, values, problems


def c_constants(path):
    text = open(path, encoding="utf-8").read()
    raw = dict(re.findall(r"^#define\s+(\w+)\s+(-?\w+)", text, re.M))

    def value(name, depth=0):
        v = raw.get(name)
        if v is None or depth > 5:
            return None
        return int(v, 0) if re.fullmatch(r"-?(0x)?[0-9a-fA-F]+", v) else value(v, depth + 1)
    return {k.upper(): value(k) for k in raw}


def compiles(header_dir, problems):
    gfortran = shutil.which("gfortran")
    if not gfortran:
        print("check-fpvm3h: no gfortran: the compile check is skipped")
        return
    body = "include 'fpvm3.h'\nprint *, INTEGER4, PvmNoTask, PVMMBOXWAITFORINFO\nend\n"
    with tempfile.TemporaryDirectory() as d:
        for name, text in (("fixed.f", "".join("      " + l + "\n"
                                                  for l in ["program fixed"] + body.split("\n")[:-1])),
                           ("free.f90", "program free\nimplicit none\n" + body)):
            src = os.path.join(d, name)
            with open(src, "w") as f:
                f.write(text)
            r = subprocess.run([gfortran, "-Wall", "-Werror", "-fsyntax-only", "-I", header_dir, src],
                               capture_output=True, text=True)
            if r.returncode != 0:
                problems.append("fpvm3.h does not compile as %s source: %s"
                                % ("fixed-form" if name.endswith(".f") else "free-form",
                                   r.stderr.strip()[:400]))


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write(__doc__)
        return 2
    repo = argv[1]
    ours = os.path.join(repo, "include", "fpvm3.h")
    declared, values, problems = fortran_constants(ours)
    for n in sorted(declared - set(values)):
        problems.append("%s: %s declared but given no value" % (ours, n))
    for n in sorted(set(values) - declared):
        problems.append("%s: %s given a value but not declared INTEGER" % (ours, n))
    c = c_constants(os.path.join(repo, "include", "pvm3.h"))
    for n, v in sorted(values.items()):
        want = KNOWN.get(n, c.get(C_NAME.get(n, n).upper()))
        if want is None:
            problems.append("%s: %s has no constant in pvm3.h to compare with" % (ours, n))
        elif want != v:
            problems.append("%s: %s is %d, pvm3.h's %s is %d"
                            % (ours, n, v, C_NAME.get(n, n), want))
    if len(argv) == 3:
        if os.path.isfile(argv[2]):
            _, genuine, gp = fortran_constants(argv[2])
            problems += gp
            for n in sorted(set(genuine) - set(values)):
                problems.append("%s lacks %s (= %d in %s)" % (ours, n, genuine[n], argv[2]))
            for n in sorted(set(values) - set(genuine)):
                problems.append("%s has %s, which %s does not" % (ours, n, argv[2]))
            for n in sorted(set(values) & set(genuine)):
                if values[n] != genuine[n]:
                    problems.append("%s: %s is %d, %d in %s" % (ours, n, values[n], genuine[n], argv[2]))
        else:
            print("check-fpvm3h: no %s (pvm-dev): the comparison with it is skipped" % argv[2])
    compiles(os.path.join(repo, "include"), problems)
    for p in problems:
        print(p)
    if not problems:
        print("check-fpvm3h: %d constants, all as they should be" % len(values))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

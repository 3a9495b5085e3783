#!/usr/bin/env python3
"""run_case.py CASE GEN UPVM WORKDIR - one ctest case of `upvm trace` on the
synthetic trace tests/trace/gen.c writes (check_trace.py checks the outputs).

Cases:
  json        convert --json-only; the JSON, summary and dump (--synthetic)
  two-hosts   as json and otf2, node 1 on another host with its own clock
              and offset (gen --two-hosts): the same numbers
  otf2        convert; also the OTF2 archive (skip, 77, without otf2-print
              or an upvm built without OTF2)
  bad-magic   node 1's file is not a trace: said, naming it; node 0 still
              converted; status 1
  truncated   node 1's file is cut short: the same
  short       node 1's file is shorter than a header: the same
  json-max    UPVM_TRACE_JSON_MAX=4K: the JSON is cut at a time, with a note,
              and still well formed
  remove-raw  convert --remove-raw removes FILE.raw/
  usage       usage errors: status 2, one line; a missing FILE: status 1
  plot        summary --plot: a PNG, or (no matplotlib) one line naming
              python3-matplotlib and status 1
  pattern     a real job: upvm run --nodes 2 --trace of tests/trace/pattern.c
              (PATTERN, the 5th argument): 4 messages, 3 barriers, 3 tracks
  pattern-migrate   the same with its migration: 5 messages, 4 tracks, the
              migrate flow, the stages REQUEST ... RESTARTED in order
  pattern-monotonic   pattern-migrate with UPVM_TRACE_CLOCK=monotonic
              (records in CLOCK_MONOTONIC ns, not TSC ticks): the same
  killed      a real job (pattern hang) whose node 1 is killed with SIGKILL
              once every task waits: the job's status is 137, the converter
              says node 1 did not close its trace, and the trace holds
              everything before the kill (4 messages, 3 barriers)
  crash       the same with a task that dereferences NULL (pattern crash):
              status 139, "node 1 crashed (signal 11)", the same trace and
              the parent's go-ahead (5 messages)
  garbled     60 copies of the trace with random bytes changed in records
              (seeded: the same every run): convert, summary and dump end
              with status 0 or 1 and no sanitizer report (the reader takes
              untrusted files; this matters most in the ASan build)
"""

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def die(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(argv, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(argv, capture_output=True, text=True, env=e)


def fresh(gen, work, name="syn", *opts):
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work)
    base = os.path.join(work, name)
    r = run([gen, base] + list(opts))
    if r.returncode:
        die("gen: %s" % r.stderr)
    return base


def checker(base, upvm, *extra):
    r = run([sys.executable, os.path.join(HERE, "check_trace.py"), base, "--upvm", upvm]
            + list(extra))
    print(r.stdout, end="")
    return r.returncode


def corrupt(base, upvm, how):
    path = base + ".raw/node-1.utr"
    with open(path, "r+b") as f:
        if how == "bad-magic":
            f.write(b"NOTATRCE")
        elif how == "truncated":
            f.truncate(os.path.getsize(path) - 65536 + 100)
        else:
            f.truncate(100)
    r = run([upvm, "trace", "convert", base, "--json-only"])
    want = {"bad-magic": "not a UPVM trace file (bad magic)", "truncated": "truncated",
            "short": "shorter than the 4096-byte header"}[how]
    line = [l for l in r.stderr.splitlines() if "node-1.utr" in l]
    if r.returncode != 1:
        die("convert of a corrupt trace: status %d, expected 1" % r.returncode)
    if not line or want not in line[0]:
        die("convert did not say what is wrong with node-1.utr: %r" % r.stderr)
    with open(base + ".json") as f:
        doc = json.load(f)
    tracks = [e["args"]["name"] for e in doc["traceEvents"]
              if e["ph"] == "M" and e["name"] == "thread_name" and e["args"]["name"] != "node"]
    if sorted(tracks) != ["t40001", "t40002"]:
        die("node 0 not converted alone: tracks %s" % tracks)
    for argv in (["summary", base], ["dump", base]):
        r = run([upvm, "trace"] + argv)
        if r.returncode != 1 or "node-1.utr" not in r.stderr or not r.stdout:
            die("upvm trace %s on a corrupt trace: status %d" % (argv[0], r.returncode))


def usage(upvm, base):
    for argv, status, words in (([], 2, "convert, summary or dump?"),
                                (["frob", base], 2, "unexpected argument 'frob'"),
                                (["dump"], 2, "which FILE?"),
                                (["dump", base, "--json"], 2, "are for summary"),
                                (["summary", base, "--plot"], 2, "--plot wants"),
                                (["convert", base, "--no-such"], 2, "unknown option"),
                                (["dump", base + "-missing"], 1, "No such file")):
        r = run([upvm, "trace"] + argv)
        if r.returncode != status or words not in r.stderr or len(r.stderr.splitlines()) != 1:
            die("upvm trace %s: status %d, said %r; expected %d and %r"
                % (" ".join(argv), r.returncode, r.stderr, status, words))


def plot(upvm, base):
    png = base + ".png"
    r = run([upvm, "trace", "summary", base, "--plot", png])
    has_mpl = any(shutil.which(p) and run([p, "-c", "import matplotlib"]).returncode == 0
                  for p in ("python3", "/usr/bin/python3"))  # as upvm looks
    if has_mpl:
        if r.returncode or not os.path.getsize(png):
            die("--plot: status %d: %s" % (r.returncode, r.stderr))
        with open(png, "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                die("--plot: %s is not a PNG" % png)
    else:
        said = [l for l in r.stderr.splitlines() if "python3-matplotlib" in l]
        if r.returncode != 1 or len(said) != 1:
            die("--plot without matplotlib: status %d, said %r" % (r.returncode, r.stderr))
        print("(matplotlib is not installed: checked the message only)")


def garbled(gen, upvm, work):
    rnd = random.Random(21)
    for k in range(60):
        base = fresh(gen, work)
        for node in (0, 1):
            path = "%s.raw/node-%d.utr" % (base, node)
            data = bytearray(open(path, "rb").read())
            used = 4096 + 3 * 65536 if node == 0 else 4096 + 65536
            for _ in range(rnd.choice((1, 4, 32))):
                at = rnd.randrange(4096, min(used, len(data)))
                data[at] = rnd.randrange(256)
            if rnd.random() < 0.2:  # the header's counters too
                at = rnd.choice((48, 56, 64, 72))
                data[at:at + 8] = rnd.randrange(1 << 64).to_bytes(8, "little")
            open(path, "wb").write(bytes(data))
        for argv in (["convert", base], ["summary", base, "--json"], ["dump", base]):
            r = run([upvm, "trace"] + argv)
            bad = "runtime error" in r.stderr or "Sanitizer" in r.stderr
            if r.returncode not in (0, 1) or bad:
                die("garbled copy %d: upvm trace %s: status %d: %s"
                    % (k, argv[0], r.returncode, r.stderr[-2000:]))


def real_job(upvm, work, pattern, migrate, env=None):
    """upvm run --trace of pattern.c, then its trace checked."""
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work)
    base = os.path.join(work, "pat")
    argv = [upvm, "run", "--nodes", "2", "--trace", base, pattern] + (["migrate"] if migrate
                                                                      else [])
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, UPVM_VM="off", **(env or {})))
    if r.returncode or "pattern ok" not in r.stdout or "wrote" not in r.stderr + r.stdout:
        die("%s: status %d: %s %s" % (" ".join(argv), r.returncode, r.stdout, r.stderr))
    counts = ["--expect-sends", "5" if migrate else "4", "--expect-barriers", "3",
              "--expect-locations", "4" if migrate else "3", "--expect-location-groups", "2",
              "--expect-migrations", "1" if migrate else "0",
              "--msg", "t40001:t40002:7:1024", "--msg", "t40001:t40003:8:16",
              "--msg", "t40002:t40001:9:4", "--msg", "t40003:t40001:9:4",
              "--matrix", "t40001:t40002:%d:%d" % ((2, 1032) if migrate else (1, 1024))]
    if migrate:
        counts += ["--msg", "t40001:t40002:10:8", "--stages", "t40002"]
    return checker(base, upvm, *counts)


def child_named(parent, comm):
    """The pid of parent's child process called comm, or None."""
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        if ppid == parent and name == comm:
            return int(d)
    return None


def cut_short(upvm, work, pattern, crash):
    """A job whose node 1 dies mid-run (killed, or its task crashes)."""
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work)
    base = os.path.join(work, "pat")
    out = open(os.path.join(work, "out"), "w+")
    job = subprocess.Popen([upvm, "run", "--nodes", "2", "--trace", base, pattern,
                            "crash" if crash else "hang"], stdout=out, stderr=subprocess.STDOUT,
                           env=dict(os.environ, UPVM_VM="off"))
    deadline = time.monotonic() + 60
    while not crash:  # every task waits: kill node 1
        out.seek(0)
        node1 = child_named(job.pid, "upvm-node1") if "pattern waiting" in out.read() else None
        if node1:
            os.kill(node1, signal.SIGKILL)
            break
        if job.poll() is not None or time.monotonic() > deadline:
            job.kill()
            die("the job ended, or never waited: " + open(out.name).read())
        time.sleep(0.02)  # polling the job's output file, bounded by the deadline
    try:
        rc = job.wait(timeout=60)
    except subprocess.TimeoutExpired:
        job.kill()
        die("the job did not end after node 1 died: " + open(out.name).read())
    text = open(out.name).read()
    want_rc, said = (139, "node 1 crashed (signal 11)") if crash else \
        (137, "node 1 did not close its trace")
    if rc != want_rc or said not in text or "wrote" not in text:
        die("status %d (expected %d), output: %s" % (rc, want_rc, text))
    # crash: the parent's "go" (tag 12, 1 byte) is the 5th message
    return checker(base, upvm, "--expect-sends", "5" if crash else "4", "--expect-barriers", "3",
                   "--expect-locations", "3", "--expect-location-groups", "2",
                   "--msg", "t40001:t40002:7:1024", "--msg", "t40002:t40001:9:4")


def main():
    case, gen, upvm, work = sys.argv[1:5]
    if case in ("pattern", "pattern-migrate"):
        return real_job(upvm, work, sys.argv[5], case == "pattern-migrate")
    if case == "pattern-monotonic":
        return real_job(upvm, work, sys.argv[5], True, {"UPVM_TRACE_CLOCK": "monotonic"})
    if case in ("killed", "crash"):
        return cut_short(upvm, work, sys.argv[5], case == "crash")
    base = fresh(gen, work)
    if case == "json":
        return checker(base, upvm, "--convert", "--no-otf2", "--synthetic")
    if case == "two-hosts":
        base = fresh(gen, work, "syn", "--two-hosts")
        r = run([upvm, "trace", "convert", base])
        if "assumed" in r.stderr or "node 1 @ hostB" not in open(base + ".json").read():
            die("two hosts: %s" % r.stderr)
        return checker(base, upvm, "--convert", "--synthetic")
    if case == "otf2":
        if not shutil.which("otf2-print"):
            print("SKIP: otf2-print is not installed (Debian: otf2-tools)")
            return 77
        r = run([upvm, "trace", "convert", base])
        if "built without OTF2" in r.stdout:
            print("SKIP: this upvm was built without OTF2")
            return 77
        return checker(base, upvm, "--convert", "--otf2", "--synthetic")
    if case in ("bad-magic", "truncated", "short"):
        corrupt(base, upvm, case)
    elif case == "json-max":
        r = run([upvm, "trace", "convert", base, "--json-only"], {"UPVM_TRACE_JSON_MAX": "4K"})
        if r.returncode or "cut at" not in r.stderr:
            die("convert with UPVM_TRACE_JSON_MAX=4K: status %d: %r" % (r.returncode, r.stderr))
        with open(base + ".json") as f:
            doc = json.load(f)
        if "UPVM_TRACE_JSON_MAX" not in doc["otherData"].get("note", ""):
            die("no note in the cut JSON")
        if os.path.getsize(base + ".json") > 4096:
            die("the cut JSON has %d bytes" % os.path.getsize(base + ".json"))
        if checker(base, upvm, "--no-otf2"):
            return 1
    elif case == "remove-raw":
        r = run([upvm, "trace", "convert", base + ".raw/", "--json-only", "--remove-raw"])
        if r.returncode or os.path.exists(base + ".raw") or not os.path.exists(base + ".json"):
            die("convert --remove-raw: status %d, raw %s" % (r.returncode,
                                                             os.path.exists(base + ".raw")))
    elif case == "usage":
        usage(upvm, base)
    elif case == "plot":
        plot(upvm, base)
    elif case == "garbled":
        garbled(gen, upvm, work)
    else:
        print("usage: run_case.py CASE GEN UPVM WORKDIR")
        return 2
    print("ok: " + case)
    return 0


if __name__ == "__main__":
    sys.exit(main())

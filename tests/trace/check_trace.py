#!/usr/bin/env python3
"""check_trace.py - check what `upvm trace` made of a traced job FILE.

usage: check_trace.py FILE [--upvm PATH] [--convert] [--otf2 | --no-otf2]
                      [--expect-sends N] [--expect-barriers N]
                      [--expect-locations N] [--expect-location-groups N]
                      [--expect-migrations N] [--msg SRC:DST:TAG:BYTES ...]
                      [--matrix SRC:DST:COUNT:BYTES ...]
                      [--stages TID] [--synthetic]

FILE is what the job was traced to (FILE.raw/, FILE.json, FILE.otf2/).
Checked, each failure one line "FAIL: ..." (status 1; 77 when --otf2 is
asked for and otf2-print is not installed; 2 for a usage error):

  --convert     first run `upvm trace convert FILE`: status 0
  always        FILE.json: its structure (a trace-event file: every event
                has the fields its "ph" needs, of the right types); every
                flow "s" has one "f" with its id and cat (and "bp":"e"),
                not earlier; every X slice of a track nests in the slices
                around it (no partial overlap); each track's events are
                sorted by ts; one thread_name per track, named tNNNN or
                "tNNNN (from node K)"
  --otf2        FILE.otf2/traces.otf2 with otf2-print (default: when
                otf2-print is installed): `otf2-print --silent` exits 0;
                every MPI_SEND in comm PVM matched FIFO by an MPI_RECV
                with the same (sender, receiver, tag, length), not earlier;
                with -G, the LOCATIONs and LOCATION_GROUPs counted
  --expect-sends N           N messages: OTF2 MPI_SEND and MPI_RECV in comm
                             "PVM", JSON "msg" flows
  --expect-barriers N        N MPI_COLLECTIVE_END with Operation: BARRIER
  --expect-locations N       N OTF2 locations and N JSON task tracks
  --expect-location-groups N N OTF2 location groups (nodes)
  --expect-migrations N      N migration sends in comm "migration" and N
                             JSON "migrate" flows
  --msg SRC:DST:TAG:BYTES    such a message exists (names of tasks, t40001;
                             a track "t40002 (from node 0)" is t40002), in
                             OTF2 and in the JSON
  --matrix SRC:DST:COUNT:BYTES   `upvm trace summary FILE --json` has this
                             pair with exactly these numbers
  --stages TID               `upvm trace dump FILE` has TID's migration
                             stages REQUEST ... RESTARTED, each node's in
                             protocol order, FROZEN <= ARRIVED <= RESTARTED
  --synthetic                all of the above for tests/trace/gen.c's trace,
                             and its known times (summary, within 1 ns)

Only the Python standard library.  The lead's tests on real jobs call it
with the counts of their program.
"""

import argparse
import decimal
import json
import os
import re
import shutil
import subprocess
import sys

FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL: " + msg)


def ns(v):
    """A JSON ts/dur (us with 3 decimals, parsed as Decimal) in int ns."""
    return int(decimal.Decimal(v) * 1000)


def task_of(name):
    """t40002 (from node 0) -> t40002"""
    return name.split(" ")[0]


# ---------------------------------------------------------------- JSON

# What each phase needs: field -> type(s).
NUM = (int, decimal.Decimal)
SCHEMA = {
    "M": {"pid": int, "tid": int, "name": str, "args": dict},
    "X": {"pid": int, "tid": int, "ts": NUM, "dur": NUM, "name": str, "cat": str},
    "i": {"pid": int, "tid": int, "ts": NUM, "name": str, "s": str},
    "s": {"pid": int, "tid": int, "ts": NUM, "name": str, "cat": str, "id": int},
    "f": {"pid": int, "tid": int, "ts": NUM, "name": str, "cat": str, "id": int, "bp": str},
    "C": {"pid": int, "ts": NUM, "name": str, "args": dict},
}


def check_schema(doc):
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("JSON: no traceEvents list at the top")
        return []
    if doc.get("displayTimeUnit") not in (None, "ns", "ms"):
        fail("JSON: displayTimeUnit %r" % doc.get("displayTimeUnit"))
    evs = doc["traceEvents"]
    for k, e in enumerate(evs):
        if not isinstance(e, dict) or e.get("ph") not in SCHEMA:
            fail("JSON: event %d: unknown ph: %r" % (k, e))
            continue
        for field, typ in SCHEMA[e["ph"]].items():
            if not isinstance(e.get(field), typ) or isinstance(e.get(field), bool):
                fail("JSON: event %d (%s): field %s missing or not %s: %r"
                     % (k, e["ph"], field, typ, e))
        if e["ph"] == "X" and ns(e["dur"]) < 0:
            fail("JSON: event %d: negative dur" % k)
    return evs


def check_json(path, args):
    try:
        with open(path) as f:
            doc = json.load(f, parse_float=decimal.Decimal)
    except (OSError, ValueError) as e:
        fail("JSON %s: %s" % (path, e))
        return
    evs = check_schema(doc)
    if FAILS:
        return
    names = {}
    for e in evs:
        if e["ph"] == "M" and e["name"] == "thread_name":
            key = (e["pid"], e["tid"])
            if key in names:
                fail("JSON: two thread_name for %s" % (key,))
            names[key] = e["args"].get("name", "")
    tracks = {k: v for k, v in names.items() if v != "node"}
    for k, v in tracks.items():
        if not re.fullmatch(r"t[0-9a-f]+( \(from node \d+\))?", v):
            fail("JSON: track %s named %r" % (k, v))
    if args.expect_locations is not None and len(tracks) != args.expect_locations:
        fail("JSON: %d task tracks, expected %d: %s"
             % (len(tracks), args.expect_locations, sorted(tracks.values())))
    # sorted per track, X nested
    per = {}
    for e in evs:
        if e["ph"] != "M":
            per.setdefault((e["pid"], e.get("tid", 0)), []).append(e)
    for key, lst in per.items():
        ts = [ns(e["ts"]) for e in lst]
        if ts != sorted(ts):
            fail("JSON: track %s not sorted by ts" % (key,))
        stack = []
        for e in sorted((e for e in lst if e["ph"] == "X"),
                        key=lambda e: (ns(e["ts"]), -ns(e["dur"]))):
            b, d = ns(e["ts"]), ns(e["dur"])
            while stack and stack[-1][1] <= b:
                stack.pop()
            if stack and b + d > stack[-1][1]:
                fail("JSON: track %s: %r [%d, %d] overlaps %r [%d, %d]"
                     % (key, e["name"], b, b + d, stack[-1][2], stack[-1][0], stack[-1][1]))
            stack.append((b, b + d, e["name"]))
    # flows
    flows = {}
    for e in evs:
        if e["ph"] in ("s", "f"):
            flows.setdefault((e["cat"], e["id"]), {}).setdefault(e["ph"], []).append(e)
    counts = {"msg": 0, "migrate": 0}
    found_msgs = []
    for (cat, fid), d in flows.items():
        if len(d.get("s", [])) != 1 or len(d.get("f", [])) != 1:
            fail("JSON: flow %s %s: %d starts, %d ends"
                 % (cat, fid, len(d.get("s", [])), len(d.get("f", []))))
            continue
        s, f = d["s"][0], d["f"][0]
        if f.get("bp") != "e":
            fail("JSON: flow %s %s: its end has no \"bp\":\"e\"" % (cat, fid))
        if ns(f["ts"]) < ns(s["ts"]):
            fail("JSON: flow %s %s ends before it starts" % (cat, fid))
        counts[cat] = counts.get(cat, 0) + 1
        if cat == "msg":
            src = task_of(names.get((s["pid"], s["tid"]), "?"))
            dst = task_of(names.get((f["pid"], f["tid"]), "?"))
            found_msgs.append((src, dst, s["args"]["tag"], s["args"]["bytes"]))
    if args.expect_sends is not None and counts["msg"] != args.expect_sends:
        fail("JSON: %d message flows, expected %d" % (counts["msg"], args.expect_sends))
    if args.expect_migrations is not None and counts["migrate"] != args.expect_migrations:
        fail("JSON: %d migrate flows, expected %d" % (counts["migrate"],
                                                      args.expect_migrations))
    for m in args.msg:
        if m not in found_msgs:
            fail("JSON: no message flow %s -> %s tag %d %d bytes (have %s)"
                 % (m + (found_msgs,)))


# ---------------------------------------------------------------- OTF2

LINE = re.compile(r"^(\S+)\s+(\d+)\s+(\d+)\s*(.*)$")
PEER = re.compile(r'(Receiver|Sender): (\d+) \("([^"]*)" <\d+>\), Communicator: "([^"]*)" '
                  r'<\d+>, Tag: (\d+), Length: (\d+)')


def otf2_print(*argv):
    return subprocess.run(["otf2-print"] + list(argv), capture_output=True, text=True)


def check_otf2(archive, args):
    r = otf2_print("--silent", archive)
    if r.returncode != 0:
        fail("otf2-print --silent %s: status %d: %s" % (archive, r.returncode, r.stderr[-500:]))
        return
    r = otf2_print("-G", archive)
    if r.returncode != 0:
        fail("otf2-print -G: status %d" % r.returncode)
        return
    locs = {}
    groups = 0
    for line in r.stdout.splitlines():
        m = re.match(r'^LOCATION\s+(\d+)\s+Name: "([^"]*)"', line)
        if m:
            locs[int(m.group(1))] = m.group(2)
        if line.startswith("LOCATION_GROUP "):
            groups += 1
    if args.expect_locations is not None and len(locs) != args.expect_locations:
        fail("OTF2: %d locations, expected %d" % (len(locs), args.expect_locations))
    if args.expect_location_groups is not None and groups != args.expect_location_groups:
        fail("OTF2: %d location groups, expected %d" % (groups, args.expect_location_groups))
    r = otf2_print(archive)
    if r.returncode != 0:
        fail("otf2-print: status %d" % r.returncode)
        return
    sends, recvs, barriers, migs = [], [], 0, 0
    for line in r.stdout.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        kind, loc, ts, rest = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
        if kind in ("MPI_SEND", "MPI_RECV"):
            p = PEER.search(rest)
            if not p:
                fail("OTF2: cannot read %r" % line)
                continue
            peer, comm, tag, length = int(p.group(2)), p.group(4), int(p.group(5)), int(p.group(6))
            if comm == "migration":
                migs += kind == "MPI_SEND"
                continue
            if comm != "PVM":
                fail("OTF2: a message in communicator %r" % comm)
            if kind == "MPI_SEND":
                sends.append((loc, peer, tag, length, ts))
            else:
                recvs.append((peer, loc, tag, length, ts))
        elif kind == "MPI_COLLECTIVE_END" and "Operation: BARRIER" in rest:
            barriers += 1
    if args.expect_sends is not None:
        if len(sends) != args.expect_sends:
            fail("OTF2: %d MPI_SEND, expected %d" % (len(sends), args.expect_sends))
        if len(recvs) != args.expect_sends:
            fail("OTF2: %d MPI_RECV, expected %d" % (len(recvs), args.expect_sends))
    if args.expect_barriers is not None and barriers != args.expect_barriers:
        fail("OTF2: %d barrier ends, expected %d" % (barriers, args.expect_barriers))
    if args.expect_migrations is not None and migs != args.expect_migrations:
        fail("OTF2: %d migration sends, expected %d" % (migs, args.expect_migrations))
    pending = list(sends)  # FIFO per (src, dst, tag, length)
    for rv in recvs:
        for k, s in enumerate(pending):
            if s[:4] == rv[:4]:
                if rv[4] < s[4]:
                    fail("OTF2: a RECV at %d before its SEND at %d: %s" % (rv[4], s[4], rv))
                del pending[k]
                break
        else:
            fail("OTF2: an MPI_RECV without its MPI_SEND: %s" % (rv,))
    if pending:
        fail("OTF2: MPI_SEND without their MPI_RECV: %s" % pending)
    named = [(task_of(locs.get(s[0], "?")), task_of(locs.get(s[1], "?")), s[2], s[3])
             for s in sends]
    for m in args.msg:
        if m not in named:
            fail("OTF2: no MPI_SEND %s -> %s tag %d %d bytes (have %s)" % (m + (named,)))


# ---------------------------------------------------------------- summary, dump

SYNTHETIC_TIMES = {  # us, from gen.c's table (running ends at a BLOCK: t40001
                     # blocks at 65 us, the switch away comes at 66)
    "t40001": dict(running=142, wait_msg=31, wait_other=50, ready=57, runtime=117,
                   migrating=0),
    "t40002": dict(running=105, wait_msg=0, wait_other=53, ready=9, runtime=42,
                   migrating=40),
    "t40003": dict(running=73, wait_msg=35, wait_other=148, ready=2, runtime=27,
                   migrating=0),
}


def run_upvm(args, *argv):
    return subprocess.run([args.upvm, "trace"] + list(argv), capture_output=True, text=True)


def check_summary(args):
    r = run_upvm(args, "summary", args.file, "--json")
    if r.returncode != 0:
        fail("upvm trace summary --json: status %d: %s" % (r.returncode, r.stderr))
        return
    try:
        s = json.loads(r.stdout)
    except ValueError as e:
        fail("upvm trace summary --json: not JSON: %s" % e)
        return
    pairs = {(p["src"], p["dst"]): (p["count"], p["bytes"]) for p in s["messages"]}
    for src, dst, count, nbytes in args.matrix:
        if pairs.get((src, dst)) != (count, nbytes):
            fail("summary: %s -> %s: %s, expected (%d, %d)"
                 % (src, dst, pairs.get((src, dst)), count, nbytes))
    if args.synthetic:
        if len(pairs) != len(args.matrix):
            fail("summary: %d pairs, expected %d: %s" % (len(pairs), len(args.matrix), pairs))
        tasks = {t["task"]: t for t in s["tasks"]}
        for tid, want in SYNTHETIC_TIMES.items():
            for what, us in want.items():
                got = tasks.get(tid, {}).get(what + "_ns")
                if got is None or abs(got - us * 1000) > 1:
                    fail("summary: %s %s = %s ns, expected %d" % (tid, what, got, us * 1000))
        if s["clock_violations"]["count"] != 0 or s["lost"] != 0:
            fail("summary: clock violations or lost records: %s" % s["clock_violations"])
        states = {n["node"]: n["state"] for n in s["nodes"]}
        if states != {0: "closed", 1: "open"}:
            fail("summary: node states %s" % states)
    r = run_upvm(args, "summary", args.file)
    if r.returncode != 0 or "Time per task" not in r.stdout:
        fail("upvm trace summary: status %d: %s" % (r.returncode, r.stdout[:300]))


STAGES = ["REQUEST", "PREPARE_ASKED", "SLOT_READY", "PREPARED", "FROZEN", "STATE_SENT",
          "DATA_SENT", "ARRIVED", "RESTARTED"]


def check_dump(args):
    r = run_upvm(args, "dump", args.file)
    if r.returncode != 0:
        fail("upvm trace dump: status %d: %s" % (r.returncode, r.stderr))
        return
    lines = r.stdout.splitlines()
    last = None
    for line in lines:
        m = re.match(r"^(-?\d+) node (\d+) w(\d+) ([A-Z_?a-z]+) id=", line)
        if not m:
            fail("dump: line %r" % line)
            return
        t = int(m.group(1))
        if last is not None and t < last:
            fail("dump: not sorted by time at %r" % line)
        last = t
    for tid in args.stages:
        # (time, node, stage) of each MIGRATE record of tid
        got = [(int(l.split()[0]), l.split()[2], re.search(r"stage=(\w+)", l).group(1))
               for l in lines if " MIGRATE id=%s " % tid in l]
        stages = [g[2] for g in got]
        if sorted(set(stages) & set(STAGES)) != sorted(STAGES):
            fail("dump: %s's stages %s, expected all of %s" % (tid, stages, STAGES))
            continue
        # each node's own stages are in protocol order; across nodes only
        # what causality orders (the source records STATE_SENT once sent:
        # the destination may record ARRIVED first)
        for node in sorted({g[1] for g in got}):
            mine = [g[2] for g in got if g[1] == node and g[2] in STAGES]
            if mine != sorted(mine, key=STAGES.index):
                fail("dump: %s's stages on node %s out of order: %s" % (tid, node, mine))
        at = {g[2]: g[0] for g in got}
        if not at["FROZEN"] <= at["ARRIVED"] <= at["RESTARTED"]:
            fail("dump: %s: FROZEN, ARRIVED, RESTARTED not in order: %s" % (tid, got))
    if args.synthetic:
        strs = [l for l in lines if " STR " in l]
        if not any('c=0x401003 str="pvm_send"' in l and " node 0 " in l for l in strs) or \
           not any('c=0x401003 str="pvm_recv"' in l and " node 1 " in l for l in strs):
            fail("dump: string keys not resolved per file")
        if len([l for l in lines if " CHUNK " in l]) != 4:
            fail("dump: expected 4 CHUNK records")


# ---------------------------------------------------------------- main

def msg_arg(s):
    a = s.split(":")
    if len(a) != 4:
        raise argparse.ArgumentTypeError("SRC:DST:N:M expected")
    return (a[0], a[1], int(a[2]), int(a[3]))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("file")
    p.add_argument("--upvm", default=shutil.which("upvm") or "upvm")
    p.add_argument("--convert", action="store_true")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--otf2", dest="otf2", action="store_true", default=None)
    g.add_argument("--no-otf2", dest="otf2", action="store_false")
    for opt in ("sends", "barriers", "locations", "location-groups", "migrations"):
        p.add_argument("--expect-" + opt, type=int)
    p.add_argument("--msg", type=msg_arg, action="append", default=[])
    p.add_argument("--matrix", type=msg_arg, action="append", default=[])
    p.add_argument("--stages", action="append", default=[])
    p.add_argument("--synthetic", action="store_true")
    args = p.parse_args()
    have_otf2 = shutil.which("otf2-print") is not None
    if args.otf2 and not have_otf2:
        print("SKIP: otf2-print is not installed (Debian: otf2-tools)")
        return 77
    if args.synthetic:
        args.expect_sends, args.expect_barriers = 4, 3
        args.expect_locations, args.expect_location_groups = 4, 2
        args.expect_migrations = 1
        args.msg += [("t40001", "t40002", 7, 1024), ("t40001", "t40003", 8, 16),
                     ("t40002", "t40001", 9, 4), ("t40003", "t40001", 9, 4)]
        args.matrix += [m[:2] + (1, m[3]) for m in args.msg]
        args.stages.append("t40002")
    if args.convert:
        r = run_upvm(args, "convert", args.file) if args.otf2 is not False else \
            run_upvm(args, "convert", args.file, "--json-only")
        if r.returncode != 0:
            fail("upvm trace convert: status %d: %s" % (r.returncode, r.stderr))
            return 1
    base = re.sub(r"\.raw/*$", "", args.file.rstrip("/"))
    check_json(base + ".json", args)
    if args.otf2 or (args.otf2 is None and have_otf2):
        check_otf2(os.path.join(base + ".otf2", "traces.otf2"), args)
    if args.matrix or args.synthetic:
        check_summary(args)
    if args.stages or args.synthetic:
        check_dump(args)
    if FAILS:
        return 1
    print("ok: %s" % base)
    return 0


if __name__ == "__main__":
    sys.exit(main())

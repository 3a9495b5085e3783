# upvm.py - gdb commands for looking at a node's ULPs.
#
#   (gdb) source tools/gdb/upvm.py
#   (gdb) upvm ulps          every ULP of the node: id, state, name, stack, what it waits on
#   (gdb) upvm bt ID         backtrace of a suspended ULP (the running one: plain `bt`)
#
# Works on a live process or a core file of a program linked with libupvm
# built with debug information (the default RelWithDebInfo build).

import gdb

STATES = {0: "ready", 1: "running", 2: "blocked", 3: "sleeping", 4: "dead", 5: "coupled"}


def _ulps():
    """Yield every ULP the node has not reclaimed, in id order."""
    ids = gdb.parse_and_eval("core_ids")
    nchunks = int(ids["nchunks"])
    chunk_len = 1 << 12
    next_id = int(ids["next_id"])
    for c in range(nchunks):
        chunk = ids["chunks"][c]
        if int(chunk) == 0:
            continue
        for j in range(chunk_len):
            if c * chunk_len + j + 1 >= next_id:
                return
            u = chunk[j]
            if int(u) != 0:
                yield u.dereference()


def _symbol(addr):
    if addr == 0:
        return None
    block = gdb.block_for_pc(addr)
    while block is not None and block.function is None:
        block = block.superblock
    return block.function.name if block is not None and block.function else hex(addr)


def _name(u):
    if int(u["name"]) != 0:
        return u["name"].string()
    entry = u["entry"]["ordinal"] if bool(u["ordinal_entry"]) else u["entry"]["plain"]
    return _symbol(int(entry)) or "?"


def _find(ulp_id):
    for u in _ulps():
        if int(u["id"]) == ulp_id:
            return u
    raise gdb.GdbError("no ULP %d (it never existed or was reclaimed)" % ulp_id)


class UpvmPrefix(gdb.Command):
    """Commands for UPVM's user-level processes: upvm ulps, upvm bt ID."""

    def __init__(self):
        super().__init__("upvm", gdb.COMMAND_USER, prefix=True)


class UpvmUlps(gdb.Command):
    """List the node's ULPs: id, state, name, stack and what each waits on."""

    def __init__(self):
        super().__init__("upvm ulps", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        current = int(gdb.parse_and_eval("core_sched.current"))
        print("%6s  %-8s  %-24s  %-30s  %s" % ("ULP", "state", "name", "stack", "waits on"))
        for u in _ulps():
            state = STATES.get(int(u["state"]), "?")
            if int(u.address) == current:
                state = "running"
            lo = int(u["stack_lo"])
            size = int(u["stack_size"])
            stack = "%#x-%#x (%d KiB)" % (lo, lo + size, size // 1024) if lo else "-"
            waits = ""
            if state == "blocked" and int(u["waitq"]) != 0:
                q = u["waitq"].dereference()
                waits = q["name"].string() if int(q["name"]) != 0 else "a wait queue"
            elif state == "sleeping":
                waits = "timer"
            print("%6d  %-8s  %-24s  %-30s  %s" % (int(u["id"]), state, _name(u), stack, waits))


class UpvmBt(gdb.Command):
    """Backtrace of a suspended ULP: upvm bt ID."""

    def __init__(self):
        super().__init__("upvm bt", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        if not arg.strip():
            raise gdb.GdbError("usage: upvm bt ID")
        u = _find(int(arg.strip(), 0))
        if int(u.address) == int(gdb.parse_and_eval("core_sched.current")):
            gdb.execute("bt")
            return
        if not bool(u["started"]):
            print("ULP %d has not run yet: no frames" % int(u["id"]))
            return
        if int(u["state"]) == 4:
            print("ULP %d has exited: no frames" % int(u["id"]))
            return
        # A suspended ULP resumes at arch_ctx_resume_pc with sp = ctx.sp; the
        # CFI there describes the saved frame, so gdb can unwind from it.
        # Point the innermost frame's registers there, print, put them back.
        gdb.execute("select-frame 0")
        saved = {r: int(gdb.parse_and_eval("$" + r)) for r in ("pc", "sp", "rbp")}
        sp = int(u["ctx"]["sp"])
        rbp = int(gdb.parse_and_eval("*(unsigned long *)(%d + 48)" % sp))
        try:
            gdb.execute("set $pc = (unsigned long) &arch_ctx_resume_pc")
            gdb.execute("set $sp = %d" % sp)
            gdb.execute("set $rbp = %d" % rbp)
            gdb.execute("bt")
        finally:
            for r, v in saved.items():
                gdb.execute("set $%s = %d" % (r, v))


UpvmPrefix()
UpvmUlps()
UpvmBt()

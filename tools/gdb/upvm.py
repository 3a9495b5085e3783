# upvm.py - gdb support for UPVM nodes: process-mode programs' symbols, and
# commands for looking at a node's ULPs.
#
# gdb loads it by itself as libupvm's auto-load script (libupvm.so.N-gdb.py,
# installed under $datadir/gdb/auto-load; `upvm run --gdb` and `upvm attach`
# point gdb at it), or by hand:
#
#   (gdb) source tools/gdb/upvm.py
#   (gdb) upvm ulps          every ULP of the node: id, PVM tid, state, name,
#                            program, stack, what it waits on
#   (gdb) upvm bt ID         backtrace of a ULP, running or suspended: ID is a
#                            PVM tid (t40002, 0x40002) or a ULP id (3)
#   (gdb) upvm images        the program images gdb has symbols for
#   (gdb) upvm symbols ID|all  add the symbols of a task's program (past the
#                            limit below)
#   (gdb) set upvm max-images N   how many images get symbols as they come
#
# Process-mode programs: UPVM's loader maps each task's copy of its program
# at the task's own base, which glibc's link map (so gdb) never hears of.
# The node lists those images in `upvm_debug` (src/proc/debug.h) and calls
# upvm_debug_state() after every change; an internal breakpoint there adds
# each new image's symbols at its base (add-symbol-file FILE -o BASE) and
# removes those of images that went, so that breakpoints by file:line or
# function, bt, frame, info locals work in tasks.
#
# Works on a live process or a core file of a program linked with libupvm
# built with debug information (the default RelWithDebInfo build); the image
# list is read by its fixed layout, so it works with a stripped libupvm too.

import os
import struct

import gdb

STATES = {0: "ready", 1: "running", 2: "blocked", 3: "sleeping", 4: "dead", 5: "coupled"}
ULP_EXT_PVM, ULP_EXT_PROC = 0, 1

# ------------------------------------------------------------------ the image list

# struct upvm_debug_list and struct upvm_debug_image (src/proc/debug.h),
# version 1: fields are only ever added at their ends.
LIST = struct.Struct("<iiQQIiQ")  # version state generation images count last_event last_base
IMAGE = struct.Struct("<QQQii")  # base span path ulp slot
ADDED, REMOVED = 1, 2


def _inferior():
    inf = gdb.selected_inferior()
    return inf if inf is not None and inf.pid != 0 else None


def _address_of(name):
    """The address of a global of the inferior, or None (not loaded yet)."""
    try:
        sym = gdb.lookup_global_symbol(name)
        if sym is not None:
            return int(sym.value().address)
        return int(gdb.parse_and_eval("(unsigned long) &%s" % name))
    except gdb.error:
        return None


def _read_string(inf, addr, limit=4096):
    data = bytes(inf.read_memory(addr, limit if limit < 256 else 256))
    while b"\0" not in data and len(data) < limit:
        data += bytes(inf.read_memory(addr + len(data), 256))
    return data.split(b"\0", 1)[0].decode("utf-8", "replace")


class _List:
    """The node's list as read now: version, generation, and its entries as
    {base: (span, path pointer, ulp, slot)} (paths are read only for images
    gdb does not know yet: see Images._sync)."""

    def __init__(self, inf, addr, want_images=True):
        head = LIST.unpack(bytes(inf.read_memory(addr, LIST.size)))
        self.version, self.state, self.generation, arr, count, self.last_event, self.last_base = head
        self.entries = {}
        if not want_images or count == 0:
            return
        raw = bytes(inf.read_memory(arr, count * IMAGE.size))
        for i in range(count):
            base, span, path, ulp, slot = IMAGE.unpack_from(raw, i * IMAGE.size)
            self.entries[base] = (span, path, ulp, slot)


class Image:
    def __init__(self, base, span, path_ptr, path, ulp, slot):
        self.base, self.span, self.path_ptr, self.path = base, span, path_ptr, path
        self.ulp, self.slot = ulp, slot


_text_vaddr_cache = {}


def _text_vaddr(path):
    """The vaddr of the file's .text section (an address remove-symbol-file
    -a finds the objfile by), or 0."""
    if path in _text_vaddr_cache:
        return _text_vaddr_cache[path]
    vaddr = 0
    try:
        with open(path, "rb") as f:
            ehdr = f.read(64)
            shoff, = struct.unpack_from("<Q", ehdr, 0x28)
            shentsize, shnum, shstrndx = struct.unpack_from("<HHH", ehdr, 0x3A)
            f.seek(shoff)
            shdrs = f.read(shentsize * shnum)
            sec = lambda i: struct.unpack_from("<IIQQQQ", shdrs, i * shentsize)
            _, _, _, _, stroff, strsize = sec(shstrndx)
            f.seek(stroff)
            names = f.read(strsize)
            for i in range(shnum):
                name, _, _, addr, _, _ = sec(i)
                if names[name:names.index(b"\0", name)] == b".text":
                    vaddr = addr
                    break
    except (OSError, struct.error, ValueError):
        pass
    _text_vaddr_cache[path] = vaddr
    return vaddr


class Images:
    """What gdb has added of the node's list: {base: Image}."""

    def __init__(self):
        self.loaded = {}
        self.known = {}  # the node's list as last read (also images without symbols)
        self.generation = None
        self.max_images = 100
        self.skipped_said = False
        self.busy = False  # adding symbols makes new objfiles: no sync inside a sync

    def reset(self):
        for img in list(self.loaded.values()):
            self._remove(img)
        self.known = {}
        self.generation = None

    def _gdb(self, cmd):
        confirm = gdb.parameter("confirm")
        gdb.execute("set confirm off", to_string=True)
        try:
            gdb.execute(cmd, to_string=True)
        finally:
            if confirm:
                gdb.execute("set confirm on", to_string=True)

    def add(self, img):
        if img.base in self.loaded:
            return True
        if not os.path.exists(img.path):
            print("upvm: %s (ULP %d) is not readable here: no symbols for it" % (img.path, img.ulp))
            return False
        try:
            self._gdb("add-symbol-file %s -o %#x" % (img.path, img.base))
        except gdb.error as e:
            print("upvm: cannot add the symbols of %s at %#x: %s" % (img.path, img.base, e))
            return False
        self.loaded[img.base] = img
        return True

    def _remove(self, img):
        self.loaded.pop(img.base, None)
        text = _text_vaddr(img.path)
        if not text:
            return
        try:
            self._gdb("remove-symbol-file -a %#x" % (img.base + text))
        except gdb.error:
            pass  # gone already (the inferior was re-run)

    def _take(self, img):
        """A new image: symbols now, unless the limit is reached."""
        self.known[img.base] = img
        if len(self.loaded) < self.max_images:
            self.add(img)
        elif not self.skipped_said:
            self.skipped_said = True
            print("upvm: more than %d program images (set upvm max-images): the others get "
                  "symbols on demand (upvm symbols ID|all, upvm bt ID, a stop in one)"
                  % self.max_images)

    def _drop(self, base):
        self.known.pop(base, None)
        img = self.loaded.get(base)
        if img is not None:
            self._remove(img)

    def sync(self, incremental=True):
        """Bring gdb's symbols in line with the node's list."""
        if self.busy:
            return
        self.busy = True
        try:
            self._sync(incremental)
        finally:
            self.busy = False

    def _sync(self, incremental):
        inf = _inferior()
        addr = _address_of("upvm_debug")
        if inf is None or addr is None:
            return
        head = _List(inf, addr, want_images=False)
        if head.version < 1 or head.generation == self.generation:
            return
        if incremental and self.generation is not None and head.generation == self.generation + 1:
            self.generation = head.generation
            if head.last_event == REMOVED:
                self._drop(head.last_base)
                return
            # added: find it in the list (read whole only when needed)
        full = _List(inf, addr)
        self.generation = full.generation
        for base in [b for b in self.known if b not in full.entries or
                     full.entries[b][1] != self.known[b].path_ptr]:
            self._drop(base)
        for base, (span, path_ptr, ulp, slot) in full.entries.items():
            known = self.known.get(base)
            if known is not None:
                known.ulp, known.slot = ulp, slot  # a task that left and came back
            else:
                self._take(Image(base, span, path_ptr, _read_string(inf, path_ptr), ulp, slot))

    def containing(self, pc):
        for img in self.known.values():
            if img.base <= pc < img.base + img.span:
                return img
        return None

    def for_ulp(self, ulp_id):
        for img in self.known.values():
            if img.ulp == ulp_id:
                return img
        return None


IMAGES = Images()


class _Hook(gdb.Breakpoint):
    """The node calls upvm_debug_state() after each change of its list.  Set
    by address: every add-symbol-file makes gdb re-set all breakpoints, and
    one by name would be looked up again in every image each time."""

    def __init__(self, addr):
        super().__init__("*%#x" % addr, internal=True)
        self.silent = True

    def stop(self):
        try:
            IMAGES.sync()
        except gdb.error as e:
            print("upvm: reading the node's program images failed: %s" % e)
        return False


_hook = None


def _on_new_objfile(event):
    # libupvm came (run, attach): the breakpoint on its hook, and what the
    # node already has gets symbols now
    global _hook
    if IMAGES.busy:
        return  # one of the images being added: nothing new of libupvm
    hook_addr = _address_of("upvm_debug_state")
    if _address_of("upvm_debug") is None or hook_addr is None:
        return
    if _hook is None:
        _hook = _Hook(hook_addr)
    if _inferior() is not None:
        try:
            IMAGES.sync(incremental=False)
        except gdb.error:
            pass  # the process is not there yet (a core file's libraries)


def _on_stop(event):
    # missed changes (attached in mid-change), and an image past the limit
    # in which the program stopped
    try:
        IMAGES.sync()
        pc = int(gdb.selected_frame().pc())
    except gdb.error:
        return
    img = IMAGES.containing(pc)
    if img is not None and img.base not in IMAGES.loaded:
        IMAGES.add(img)


def _on_exited(event):
    # a run again may put libupvm elsewhere: the hook is set again then
    global _hook
    IMAGES.reset()
    if _hook is not None:
        _hook.delete()
        _hook = None


# ------------------------------------------------------------------ ULPs


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
        try:
            return u["name"].string()
        except gdb.MemoryError:
            return "?"
    entry = u["entry"]["ordinal"] if bool(u["ordinal_entry"]) else u["entry"]["plain"]
    return _symbol(int(entry)) or "?"


def _tid(u):
    """The ULP's PVM tid, or 0 for a ULP that is no PVM task."""
    task = int(u["ext"][ULP_EXT_PVM])
    if task == 0:
        return 0
    try:
        t = gdb.Value(task).cast(gdb.lookup_type("struct pvm_task").pointer())
        return int(t["tid"])
    except gdb.error:
        return 0


def _program(u):
    img = IMAGES.for_ulp(int(u["id"]))
    if img is not None:
        return img.path
    return "-" if int(u["ext"][ULP_EXT_PROC]) == 0 else "?"


def _find(spec):
    """The ULP named by a PVM tid (t40002, 0x40002, or its decimal value)
    or a ULP id (decimal)."""
    spec = spec.strip()
    try:
        if spec.startswith("t"):
            want_tid, want_id = int(spec[1:], 16), None
        elif spec.lower().startswith("0x"):
            want_tid, want_id = int(spec, 16), None
        else:
            want_tid = want_id = int(spec, 10)
    except ValueError:
        raise gdb.GdbError("upvm: %r is neither a PVM tid (t40002, 0x40002) nor a ULP id" % spec)
    by_tid = None
    for u in _ulps():
        if want_id is not None and int(u["id"]) == want_id:
            return u
        if by_tid is None and _tid(u) == want_tid:
            by_tid = u
    if by_tid is not None:
        return by_tid
    raise gdb.GdbError("upvm: no task or ULP %s here (upvm ulps lists this node's; it may "
                       "have ended, or run on another node)" % spec)


class UpvmPrefix(gdb.Command):
    """UPVM's commands: upvm ulps, upvm bt ID, upvm images, upvm symbols ID|all."""

    def __init__(self):
        super().__init__("upvm", gdb.COMMAND_USER, prefix=True)


class UpvmUlps(gdb.Command):
    """List the node's ULPs: id, PVM tid, state, name, program, stack, what each waits on."""

    def __init__(self):
        super().__init__("upvm ulps", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        IMAGES.sync()
        current = int(gdb.parse_and_eval("core_sched.current"))
        print("%5s  %-8s  %-8s  %-20s  %-30s  %-32s  %s"
              % ("ULP", "tid", "state", "name", "program", "stack", "waits on"))
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
            tid = _tid(u)
            print("%5d  %-8s  %-8s  %-20s  %-30s  %-32s  %s"
                  % (int(u["id"]), "t%x" % tid if tid else "-", state, _name(u), _program(u),
                     stack, waits))


class UpvmBt(gdb.Command):
    """Backtrace of a ULP, running or suspended: upvm bt ID (a PVM tid, t40002 or
    0x40002, or a ULP id).  Extra arguments go to bt (upvm bt t40002 full)."""

    def __init__(self):
        super().__init__("upvm bt", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        args = arg.split(None, 1)
        if not args:
            raise gdb.GdbError("usage: upvm bt ID [bt options]  (ID: t40002, 0x40002 or a ULP id)")
        IMAGES.sync()
        u = _find(args[0])
        bt = "bt " + (args[1] if len(args) > 1 else "")
        img = IMAGES.for_ulp(int(u["id"]))
        if img is not None and img.base not in IMAGES.loaded:
            IMAGES.add(img)
        if int(u.address) == int(gdb.parse_and_eval("core_sched.current")):
            gdb.execute(bt)
            return
        if not bool(u["started"]):
            print("ULP %d has not run yet: no frames" % int(u["id"]))
            return
        if int(u["state"]) == 4:
            print("ULP %d has exited: no frames" % int(u["id"]))
            return
        if int(u["state"]) == 5:
            print("ULP %d runs on a kernel context now (a coupled call): find its thread with "
                  "`info threads` and use bt there" % int(u["id"]))
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
            gdb.execute(bt)
        finally:
            for r, v in saved.items():
                gdb.execute("set $%s = %d" % (r, v))


class UpvmImages(gdb.Command):
    """The node's process-mode program images: base, ULP, whether gdb has their symbols."""

    def __init__(self):
        super().__init__("upvm images", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        IMAGES.sync()
        print("%-18s  %5s  %-7s  %s" % ("base", "ULP", "symbols", "program"))
        for base in sorted(IMAGES.known):
            img = IMAGES.known[base]
            print("%#-18x  %5d  %-7s  %s" % (base, img.ulp,
                                              "yes" if base in IMAGES.loaded else "no", img.path))


class UpvmSymbols(gdb.Command):
    """Add the symbols of a task's program image: upvm symbols ID (a PVM tid or a
    ULP id), or upvm symbols all.  Images get them as they come, up to
    `set upvm max-images`; this is for the others."""

    def __init__(self):
        super().__init__("upvm symbols", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        IMAGES.sync()
        if arg.strip() == "all":
            for img in list(IMAGES.known.values()):
                IMAGES.add(img)
            return
        u = _find(arg)
        img = IMAGES.for_ulp(int(u["id"]))
        if img is None:
            raise gdb.GdbError("upvm: ULP %d runs no process-mode program" % int(u["id"]))
        IMAGES.add(img)


class UpvmSet(gdb.Command):
    """Settings of UPVM's gdb support."""

    def __init__(self):
        super().__init__("set upvm", gdb.COMMAND_DATA, prefix=True)


class UpvmShow(gdb.Command):
    """Settings of UPVM's gdb support."""

    def __init__(self):
        super().__init__("show upvm", gdb.COMMAND_DATA, prefix=True)


class UpvmMaxImages(gdb.Parameter):
    """How many process-mode program images get their symbols as they come
    (each costs gdb time and memory); the others get them on demand."""

    set_doc = "Set how many program images get symbols as they come."
    show_doc = "Show how many program images get symbols as they come."

    def __init__(self):
        super().__init__("upvm max-images", gdb.COMMAND_DATA, gdb.PARAM_ZUINTEGER)
        self.value = IMAGES.max_images

    def get_set_string(self):
        IMAGES.max_images = int(self.value)
        return ""

    def get_show_string(self, svalue):
        return "Program images that get symbols as they come: %s" % svalue


def _install():
    UpvmPrefix()
    UpvmUlps()
    UpvmBt()
    UpvmImages()
    UpvmSymbols()
    UpvmSet()
    UpvmShow()
    UpvmMaxImages()
    gdb.events.new_objfile.connect(_on_new_objfile)
    gdb.events.stop.connect(_on_stop)
    gdb.events.exited.connect(_on_exited)
    _on_new_objfile(None)  # sourced while attached already


# Loaded once per gdb: auto-load and an explicit `source` may both run it.
if not getattr(gdb, "_upvm_loaded", False):
    gdb._upvm_loaded = True
    _install()

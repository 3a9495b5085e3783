/*
 * backtrace.c - the crash report's backtrace: a walk of the frame-pointer
 * chain (UPVM and programs built for it keep frame pointers) that checks
 * every word before it reads it.
 *
 * libgcc's unwinder (backtrace()) reads the stack and the code wherever
 * the registers point: after a call through a bad pointer it reads the
 * instructions at the unmapped pc, after a corrupt frame it follows the
 * garbage, and either faults inside the handler.  Here every read goes
 * through core_peek (probe.c), and is also kept within the ULP's stack:
 *
 *   - a frame record [fp] = caller's fp, [fp + 8] = return address must lie
 *     in the stack, above the frame before it, and its return address must
 *     follow a call instruction in an executable mapping;
 *   - the innermost function may not have pushed its record yet (stopped
 *     in its prologue) or never does (a leaf: gcc leaves leaves without a
 *     frame even with -fno-omit-frame-pointer): its first bytes say which,
 *     and its caller's return address is then found on the top of the
 *     stack, or by scanning up to rbp's record;
 *   - code without frame pointers (libc: abort, memcpy; process-mode
 *     programs built without -fno-omit-frame-pointer) leaves rbp holding
 *     anything: then the words from sp upwards are scanned for return
 *     addresses (shown as "(scanned)") up to the first frame record;
 *   - a chain that leaves the stack or goes backwards ends the backtrace
 *     with a line saying so.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "core/crash.h"

#define MAX_WALK 1024  /* frames followed (deep recursion is compressed) */
#define MAX_LINES 48   /* lines printed */
#define SCAN_SPAN ((uintptr_t)64 * 1024) /* bytes scanned for a frame record */
#define UNKNOWN_STACK_SPAN ((uintptr_t)1 << 20)
#define SOURCE_DEADLINE_MS 3000 /* for every addr2line run together */

/* The report's lines, kept until the walk ends: their source lines are
 * looked up all at once (srcline.c), then they are printed. */
static struct crash_line kept[MAX_LINES + 4];
static int nkept;

enum frame_kind { FRAME_CHAIN, FRAME_SCANNED };

struct walk {
    uintptr_t lo, hi;       /* the stack the frames must lie in */
    uintptr_t pc, sp, fp;   /* the frame reached */
    int walked, lines;
    /* the frame waiting to be printed, with its run of repeats */
    uintptr_t last_pc;
    enum frame_kind last_kind;
    int last_index, repeats;
    bool last_outermost;
};

/* ------------------------------------------------------------ code */

/* The length of a ModRM operand (ModRM, SIB, displacement) from its
 * first byte and the SIB byte that may follow. */
static int modrm_length(uint8_t modrm, uint8_t sib)
{
    int mod = modrm >> 6, rm = modrm & 7;
    if (mod == 3)
        return 1;
    int len = 1 + (rm == 4);
    if (mod == 1)
        return len + 1;
    if (mod == 2 || (mod == 0 && rm == 5))
        return len + 4;
    return len + (rm == 4 && (sib & 7) == 5 ? 4 : 0);
}

/* Whether the bytes before ra end with a call (e8 rel32, or ff /2 in any
 * addressing form); *target is a direct call's destination, else 0. */
static bool call_before(uintptr_t ra, uintptr_t *target)
{
    uint8_t b[8];
    *target = 0;
    if (ra < sizeof b || !core_peek(ra - sizeof b, b, sizeof b))
        return false;
    if (b[3] == 0xe8) {
        int32_t rel;
        memcpy(&rel, &b[4], sizeof rel);
        *target = ra + (uintptr_t)(intptr_t)rel;
        return true;
    }
    for (int k = 2; k <= 7; k++) {
        const uint8_t *op = &b[sizeof b - k];
        if (op[0] == 0xff && (op[1] >> 3 & 7) == 2 &&
            1 + modrm_length(op[1], k > 2 ? op[2] : 0) == k)
            return true;
    }
    return false;
}

/* Whether v may be a return address: it follows a call in code. */
static bool return_address(uintptr_t v)
{
    uintptr_t target;
    struct crash_mapping m;
    return call_before(v, &target) && crash_exec_mapping(v - 1, &m);
}

/* ------------------------------------------------------------ symbols */

static core_symboliser_t symboliser;

void core_set_symboliser(core_symboliser_t fn)
{
    symboliser = fn;
}

/* Whether dladdr's answer is libupvm itself, whose internal functions
 * have no names to give. */
static bool in_runtime(const Dl_info *info)
{
    Dl_info self;
    return dladdr((void *)crash_backtrace, &self) && self.dli_fbase == info->dli_fbase;
}

/* The function and file around addr: from dladdr, else from the layer
 * that loaded code dladdr does not know.  *runtime: in libupvm. */
static bool symbol_of(uintptr_t addr, struct core_symbol *s, bool *runtime)
{
    Dl_info info;
    struct link_map *map = NULL;
    *runtime = false;
    if (dladdr1((void *)addr, &info, (void **)&map, RTLD_DL_LINKMAP) && info.dli_fname) {
        s->name = info.dli_sname;
        s->start = (uintptr_t)info.dli_saddr;
        s->file = info.dli_fname;
        /* the address in the file's own terms (its ELF vaddr): what
         * addr2line wants, also for a program that is not a PIE */
        s->file_off = addr - (map ? (uintptr_t)map->l_addr : (uintptr_t)info.dli_fbase);
        *runtime = !s->name && in_runtime(&info);
        return true;
    }
    return symboliser && symboliser(addr, s);
}

/* How far the function at pc had come in setting up its frame. */
enum frame_setup {
    SETUP_DONE,      /* push %rbp; mov %rsp,%rbp done, or unknown: rbp is its frame */
    SETUP_NONE,      /* at its first instruction: the return address is at [sp] */
    SETUP_PUSHED,    /* after push %rbp: the return address is at [sp + 8] */
    SETUP_NO_FRAME,  /* it keeps no frame pointer (a leaf, libc): scan [sp, rbp) */
};

/* From the function's first bytes (its symbol gives where it starts): an
 * optional endbr64, then push %rbp (55) and mov %rsp,%rbp (48 89 e5).  A
 * function without a name may be anything: it is scanned like code
 * without frame pointers (process-mode programs are usually built so). */
static enum frame_setup frame_setup_at(uintptr_t pc, bool innermost)
{
    struct core_symbol sym;
    bool runtime;
    uint8_t b[8];
    uintptr_t lookup = innermost ? pc : pc - 1;
    if (!symbol_of(lookup, &sym, &runtime) || !sym.name || !sym.start)
        return runtime ? SETUP_DONE : SETUP_NO_FRAME;
    uintptr_t start = sym.start;
    if (!core_peek(start, b, sizeof b))
        return SETUP_DONE;
    int i = b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa ? 4 : 0;
    if (b[i] != 0x55 || b[i + 1] != 0x48 || b[i + 2] != 0x89 || b[i + 3] != 0xe5)
        return SETUP_NO_FRAME;
    if (!innermost || pc >= start + (uintptr_t)i + 4)
        return SETUP_DONE;
    return pc <= start + (uintptr_t)i ? SETUP_NONE : SETUP_PUSHED;
}

/* ------------------------------------------------------------ printing */

static const char *base(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* "symbol+0x1d (object+0x3a4d)" for code at pc.  pc is a return address
 * unless innermost: that may be past the end of the calling function (a
 * call to a noreturn function is often its last instruction), so pc - 1
 * is looked up instead, as debuggers do.  Code nobody can name is named
 * by its mapping. */
void crash_locate(char *buf, size_t len, uintptr_t pc, bool innermost, bool outermost)
{
    uintptr_t lookup = innermost ? pc : pc - 1;
    struct core_symbol s;
    struct crash_mapping m;
    bool runtime;
    if (!symbol_of(lookup, &s, &runtime)) {
        if (crash_exec_mapping(lookup, &m) && m.path[0])
            snprintf(buf, len, "?? (%s+0x%lx)", base(m.path),
                     (unsigned long)(pc - m.lo + m.offset));
        else
            snprintf(buf, len, "?? (no code here)");
        return;
    }
    const char *file = base(s.file);
    unsigned long off = (unsigned long)(s.file_off + (pc - lookup));
    if (s.name)
        snprintf(buf, len, "%s+0x%lx (%s+0x%lx)", s.name, (unsigned long)(pc - s.start), file,
                 off);
    else if (runtime)
        snprintf(buf, len, "[UPVM%s] (%s+0x%lx)", outermost ? ": ULP start" : "", file, off);
    else
        snprintf(buf, len, "?? (%s+0x%lx)", file, off);
}

/* A note about the walk, printed among the frames where it happened. */
static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
    if (nkept == (int)ARRAY_SIZE(kept))
        return;
    struct crash_line *l = &kept[nkept++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->head, sizeof l->head, fmt, ap);
    va_end(ap);
    l->tail[0] = l->object[0] = l->source[0] = '\0';
    l->vaddr = 0;
}

/* Where addr2line finds the code at pc: the file (an absolute path, from
 * the mappings; "" if none) and the address in it. */
static void object_of(struct crash_line *l, uintptr_t pc, bool innermost)
{
    uintptr_t lookup = innermost ? pc : pc - 1;
    struct core_symbol s;
    struct crash_mapping m;
    bool runtime;
    l->object[0] = '\0';
    if (!symbol_of(lookup, &s, &runtime) || !crash_exec_mapping(lookup, &m) ||
        m.path[0] != '/' || strstr(m.path, " (deleted)"))
        return;
    snprintf(l->object, sizeof l->object, "%s", m.path);
    l->vaddr = s.file_off;
}

static void flush(struct walk *w)
{
    if (!w->repeats)
        return;
    char where[256], rep[48] = "";
    if (w->repeats > 1)
        snprintf(rep, sizeof rep, "  (this frame %d times)", w->repeats);
    crash_locate(where, sizeof where, w->last_pc, w->last_index == 0, w->last_outermost);
    if (++w->lines <= MAX_LINES && nkept < (int)ARRAY_SIZE(kept)) {
        struct crash_line *l = &kept[nkept++];
        snprintf(l->head, sizeof l->head, "    #%-2d 0x%lx %s", w->last_index,
                 (unsigned long)w->last_pc, where);
        snprintf(l->tail, sizeof l->tail, "%s%s",
                 w->last_kind == FRAME_SCANNED ? "  (scanned)" : "", rep);
        l->source[0] = '\0';
        object_of(l, w->last_pc, w->last_index == 0);
    }
    w->repeats = 0;
}

/* One more frame; a run of the same one (recursion) is printed once. */
static void emit(struct walk *w, uintptr_t pc, enum frame_kind kind)
{
    if (w->repeats && pc == w->last_pc && kind == w->last_kind) {
        w->repeats++;
    } else {
        flush(w);
        w->last_pc = pc;
        w->last_kind = kind;
        w->last_index = w->walked;
        w->last_outermost = false;
        w->repeats = 1;
    }
    w->walked++;
}

/* ------------------------------------------------------------ walking */

/* A word of the stack, read a page at a time (a scan of a deep stack
 * would otherwise cost a system call per word). */
static bool read_word(const struct walk *w, uintptr_t addr, uintptr_t *out)
{
    static uintptr_t page = 1, words[4096 / sizeof(uintptr_t)];
    if (addr < w->lo || addr > w->hi - 8 || (addr & 7) != 0)
        return false;
    uintptr_t pg = addr & ~(uintptr_t)4095;
    if (pg != page) {
        if (!core_peek(pg, words, sizeof words)) {
            page = 1;
            return core_peek(addr, out, sizeof *out);
        }
        page = pg;
    }
    *out = words[(addr - pg) / sizeof(uintptr_t)];
    return true;
}

/* A frame record found by scanning, at fp: the caller's fp (0 ends the
 * chain) and a return address after it.  Code without frame pointers
 * also saves registers next to return addresses (push %r15 just below
 * one, holding a stack address): so the record it links to must have a
 * return address too. */
static bool frame_record(const struct walk *w, uintptr_t fp, uintptr_t *next, uintptr_t *ra)
{
    uintptr_t outer_ra;
    if (fp < w->sp || !read_word(w, fp, next) || !read_word(w, fp + 8, ra) ||
        !return_address(*ra))
        return false;
    if (*next == 0)
        return true;
    return *next > fp && read_word(w, *next + 8, &outer_ra) && return_address(outer_ra);
}

/* Print the return addresses in [from, to); with find_record, stop at the
 * first frame record instead and return its address (0: none). */
static uintptr_t scan(struct walk *w, uintptr_t from, uintptr_t to, bool find_record)
{
    uintptr_t v, next, ra;
    for (uintptr_t s = (from + 7) & ~(uintptr_t)7; s < to && w->walked < MAX_WALK; s += 8) {
        if (find_record && frame_record(w, s, &next, &ra))
            return s;
        if (read_word(w, s, &v) && return_address(v))
            emit(w, v, FRAME_SCANNED);
    }
    return 0;
}

/* Whether fp may start a chain: a word in the stack at or above sp, and
 * a return address after it.  Its link is checked as the walk goes. */
static bool chain_start(const struct walk *w, uintptr_t fp, uintptr_t *ra)
{
    uintptr_t next;
    return fp >= w->sp && read_word(w, fp, &next) && read_word(w, fp + 8, ra) &&
           return_address(*ra);
}

/* Print one frame record's caller and move to it; false at the end of
 * the chain, after the line that says why it ends there when it is not
 * the outermost frame. */
static bool step(struct walk *w)
{
    uintptr_t next, ra, fp = w->fp;
    if (!read_word(w, fp, &next) || !read_word(w, fp + 8, &ra)) {
        flush(w);
        note("    -- the backtrace ends: the next frame pointer, %p, does not point into "
             "the stack (a corrupt stack, or code without frame pointers)", (void *)fp);
        return false;
    }
    if (!return_address(ra)) {
        flush(w);
        note("    -- the backtrace ends: the frame at %p holds %p, which is not a return "
             "address (a corrupt stack, or code without frame pointers)",
             (void *)fp, (void *)ra);
        return false;
    }
    if (next == 0) { /* the outermost frame (arch_ctx_bottom clears rbp) */
        w->last_outermost = true;
        return false;
    }
    emit(w, ra, FRAME_CHAIN);
    if (next <= fp || next >= w->hi) {
        flush(w);
        note("    -- the backtrace ends: the frame at %p links to %p, which is not a "
             "frame further up the stack (a corrupt stack, or code without frame "
             "pointers)",
             (void *)fp, (void *)next);
        return false;
    }
    w->pc = ra;
    w->sp = fp + 16;
    w->fp = next;
    return true;
}

/* The frames of the innermost code (pc) that rbp does not describe: a
 * function stopped before its frame was set up (its caller's return
 * address is on the top of the stack), or one that keeps no frame pointer
 * (its callers are found by scanning up to rbp's frame). */
static void frames_below_rbp(struct walk *w, bool innermost)
{
    uintptr_t ra;
    switch (frame_setup_at(w->pc, innermost)) {
    case SETUP_DONE:
        return;
    case SETUP_PUSHED:
        w->sp += 8;
        /* fall through */
    case SETUP_NONE:
        if (read_word(w, w->sp, &ra) && return_address(ra)) {
            emit(w, ra, FRAME_CHAIN);
            w->pc = ra;
            w->sp += 8;
        }
        return;
    case SETUP_NO_FRAME:
        scan(w, w->sp, w->fp, false);
        return;
    }
}

/* Follow the frame records outwards from w->fp.  When rbp holds no frame
 * (code without frame pointers used it for something else), the first
 * record is found by scanning the stack from sp. */
static void follow_chain(struct walk *w, bool innermost)
{
    uintptr_t ra;
    if (!chain_start(w, w->fp, &ra)) {
        uintptr_t limit = w->sp + SCAN_SPAN < w->hi ? w->sp + SCAN_SPAN : w->hi;
        uintptr_t rec = scan(w, w->sp, limit, true);
        if (!rec) {
            flush(w);
            note("    -- the backtrace ends: no frame record on the stack above %p",
                 (void *)w->sp);
            return;
        }
        w->fp = rec;
    } else {
        frames_below_rbp(w, innermost);
    }
    while (w->walked < MAX_WALK && step(w)) {
    }
}

/* The ULP's stack when the interrupted code ran on it (the guard page
 * below counts: an overflow's sp may already lie there); else the 1 MiB
 * above sp, whatever it is. */
static void stack_bounds(struct walk *w, const struct ulp *u)
{
    uintptr_t lo = u ? (uintptr_t)u->stack_lo : 0, hi = lo + (u ? u->stack_size : 0);
    uintptr_t guard = core_stack_guard_size();
    if (lo && w->sp + guard >= lo && w->sp < hi) {
        w->lo = w->sp < lo ? w->sp : lo;
        w->hi = hi;
    } else {
        w->lo = w->sp;
        w->hi = w->sp + UNKNOWN_STACK_SPAN > w->sp ? w->sp + UNKNOWN_STACK_SPAN : UINTPTR_MAX;
    }
}

/* For a call through a bad pointer: the caller's return address, from the
 * top of the stack, if it is one. */
bool crash_came_from(const ucontext_t *uc, uintptr_t *ra)
{
    uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    return (sp & 7) == 0 && core_peek(sp, ra, sizeof *ra) && return_address(*ra);
}

/* The kept lines, with their source lines where addr2line found them;
 * without addr2line, the command that would find the first frame's. */
static void print_lines(void)
{
    int placed = crash_source_lines(kept, nkept, SOURCE_DEADLINE_MS);
    for (int i = 0; i < nkept; i++)
        crash_say("%s%s%s\n", kept[i].head, kept[i].source, kept[i].tail);
    for (int i = 0; placed < 0 && i < nkept; i++)
        if (kept[i].object[0]) {
            crash_say("    (addr2line, of binutils, is not installed: the frames would have "
                      "their source lines; by hand, for frame %d: addr2line -f -i -C -e %s "
                      "0x%lx)\n", i, kept[i].object, (unsigned long)kept[i].vaddr);
            break;
        }
}

void crash_backtrace(const ucontext_t *uc, const struct ulp *u)
{
    struct walk w = {
        .pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP],
        .sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP],
        .fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP],
    };
    nkept = 0;
    stack_bounds(&w, u);
    struct crash_mapping m;
    uintptr_t ra;
    emit(&w, w.pc, FRAME_CHAIN);
    if (!crash_exec_mapping(w.pc, &m)) {
        /* A jump to no code: go on from the caller that [sp] names. */
        if (!crash_came_from(uc, &ra)) {
            flush(&w);
            note("    -- the backtrace ends: the top of the stack holds no return "
                 "address (a jump, not a call, went there)");
            print_lines();
            return;
        }
        emit(&w, ra, FRAME_CHAIN);
        w.pc = ra;
        w.sp += 8;
    }
    follow_chain(&w, w.walked == 1);
    flush(&w);
    print_lines();
    if (w.lines > MAX_LINES)
        crash_say("    ... (%d more lines of outer frames not shown)\n", w.lines - MAX_LINES);
    else if (w.walked >= MAX_WALK)
        crash_say("    ... (outer frames not shown)\n");
}

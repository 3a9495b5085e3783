/*
 * fault.c - a ULP touches a shared page its node does not hold with the
 * access it needs (design notes §15.2 and §15.7).
 *
 * The fault is a signal on the faulting thread (SIGBUS from userfaultfd,
 * or SIGSEGV), caught by core's crash handler, which asks svm_fault first.
 * When the page can be given without a frame (this node owns it), that is
 * done in the handler and the access repeats.  Otherwise the ULP must wait
 * while the page travels -- and the node must not: the handler runs on the
 * thread's alternate signal stack, which the next fault of another ULP
 * reuses, so the signal frame is copied onto the faulting ULP's own stack
 * (below the interrupted stack pointer and its red zone), the handler
 * continues there in svm_fault_wait, an ordinary function that blocks the
 * ULP (core_block), and when the page is in, rt_sigreturn on the copy
 * restores the interrupted code (registers, FP state, signal mask) and the
 * access repeats (frame.S).  The handler is installed SA_NODEFER with an
 * empty mask (core/fault.c), so a ULP waiting inside it leaves the thread's
 * signal mask as the other ULPs need it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "svm/svm_impl.h"

void svm_frame_run(void *new_sp, void (*fn)(void *), void *arg) HIDDEN __attribute__((noreturn));

#define X86_PF_WRITE 0x2
#ifndef FP_XSTATE_MAGIC1
#define FP_XSTATE_MAGIC1 0x46505853u
#endif
#define FRAME_MAX (16u * 1024) /* an rt_sigframe with AVX-512 state is ~3.5 KiB */
#define RED_ZONE 128

/* What a waiting fault asks for (on the ULP's stack, below the frame). */
struct fault_wait {
    struct svm_region *r;    /* a shared page; or */
    struct svm_lazy *lazy;   /* a page a lazy move still owes this node */
    uintptr_t addr;
    uint32_t page;
    enum svm_access want;
};

/* ------------------------------------------------------------ waiting */

int svm_page_acquire(struct svm_region *r, uint32_t p, enum svm_access a)
{
    struct svm_page *e = &r->pages[p];
    struct ulp *u = core_current();
    core_ulp_pin(u); /* a migration waits until the page is here */
    int rc = 0;
    while (e->access < a) {
        if (e->flags & PG_LOST) {
            rc = -EHOSTDOWN;
            break;
        }
        if (!(e->flags & PG_BUSY) && svm_resolve_local(r, p, a))
            break;
        if (!(e->flags & PG_BUSY))
            svm_start_request(r, p, a);
        if (e->access >= a)
            break;
        (void)core_block(svm_page_queue(r, p), -1);
    }
    core_ulp_unpin(u);
    return rc;
}

/*
 * A page cannot come any more.  A shared page: the ULP ends (its own
 * memory is intact).  A page of the ULP's own memory that a lazy move
 * still owed: the task's memory is gone in part -- and with it records the
 * runtime keeps there (its PVM state, its streams, its heap's own
 * bookkeeping), so it cannot even be ended cleanly: as for a crash, the
 * node ends, and the job's node-death rules decide what follows.
 */
static _Noreturn void lost_page(uintptr_t addr, bool lazy)
{
    char name[160];
    struct ulp *u = core_current();
    if (lazy) {
        fprintf(stderr, "upvm: page %#lx of ULP %d (%s, node %d) lost: the node it moved from "
                        "lazily died before sending it; its memory is gone in part, so, as for "
                        "a crash, the node ends with exit status %d\n",
                (unsigned long)addr, u->id, core_ulp_name(u, name, sizeof name), svm.self,
                128 + SIGBUS);
        fflush(NULL);
        _exit(128 + SIGBUS);
    }
    fprintf(stderr, "upvm: shared page %#lx lost (ULP %d, %s, node %d): the node that held "
                    "its only copy died; the ULP ends\n",
            (unsigned long)addr, u->id, core_ulp_name(u, name, sizeof name), svm.self);
    fflush(stderr);
    upvm_exit(128 + SIGBUS);
}

/* On the ULP's stack, inside the moved signal frame. */
static void svm_fault_wait(void *arg)
{
    struct fault_wait *w = arg;
    if (w->lazy) {
        if (svm_lazy_acquire(w->lazy, w->page) != 0)
            lost_page(w->addr, true);
    } else if (svm_page_acquire(w->r, w->page, w->want) != 0) {
        lost_page(svm_page_addr(w->r, w->page), false);
    }
}

/* ------------------------------------------------------------ the handler */

/* Bytes of the kernel's signal frame from its first word (the return
 * address, 8 below the ucontext) to the end of its FP state. */
static size_t frame_size(const ucontext_t *uc)
{
    const char *start = (const char *)uc - 8;
    const char *fp = (const char *)uc->uc_mcontext.fpregs;
    if (!fp || fp < start)
        return 0;
    uint32_t magic, ext;
    memcpy(&magic, fp + 464, 4); /* struct _fpx_sw_bytes in the FXSAVE area's spare bytes */
    memcpy(&ext, fp + 468, 4);
    size_t fpsize = magic == FP_XSTATE_MAGIC1 ? ext : 512;
    size_t n = (size_t)(fp - start) + fpsize;
    return n <= FRAME_MAX ? n : 0;
}

/* Copy the frame to the ULP's stack and wait there; does not return. */
static _Noreturn void wait_on_own_stack(ucontext_t *uc, size_t n, struct fault_wait *w_in)
{
    const char *start = (const char *)uc - 8;
    /* [copy, copy + n) the frame, then the request, below the red zone */
    uintptr_t limit = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP] - RED_ZONE - n - 64;
    /* the same offset mod 64 as the original: the FP state must stay
     * 64-byte aligned for XRSTOR */
    uintptr_t sp = (limit & ~(uintptr_t)63) | ((uintptr_t)start & 63);
    if (sp > limit)
        sp -= 64;
    char *copy = (char *)sp;
    memcpy(copy, start, n);
    ucontext_t *cuc = (ucontext_t *)(copy + 8);
    cuc->uc_mcontext.fpregs =
        (struct _libc_fpstate *)(copy + ((const char *)uc->uc_mcontext.fpregs - start));
    struct fault_wait *w = (struct fault_wait *)(copy + n + 15 - ((uintptr_t)(copy + n + 15) & 15));
    *w = *w_in;
    svm_frame_run(copy, svm_fault_wait, w);
}

/* Enough of the ULP's stack left for the frame and the wait's calls? */
static bool room_on_stack(const struct ulp *u, uintptr_t rsp, size_t n)
{
    if (!u->stack_lo) /* the thread's own stack (main): the kernel grows it */
        return true;
    return rsp > (uintptr_t)u->stack_lo + RED_ZONE + n + 8192;
}

/* Can the ULP wait for a page here, with the frame n bytes long? (said
 * when not) */
static bool can_wait(const ucontext_t *uc, uintptr_t addr, size_t n)
{
    if (!core_on_sched_thread_now()) {
        fprintf(stderr, "upvm: node %d: shared page %#lx touched on a kernel context (a ULP "
                        "coupled by upvm_couple or a blocking call): bring it in first with "
                        "upvm_svm_touch\n", svm.self, (unsigned long)addr);
        return false;
    }
    struct ulp *u = core_current();
    if (!n || !room_on_stack(u, (uintptr_t)uc->uc_mcontext.gregs[REG_RSP], n)) {
        fprintf(stderr, "upvm: node %d: ULP %d faulted on shared page %#lx with too little "
                        "stack left to wait for it: give it a bigger stack (UPVM_STACK_SIZE)\n",
                svm.self, u->id, (unsigned long)addr);
        return false;
    }
    return true;
}

/* A page a lazy move still owes this node (lazy.c). */
static bool lazy_fault(uintptr_t addr, ucontext_t *uc)
{
    uint32_t idx;
    struct svm_lazy *l = svm_lazy_of(addr, &idx);
    if (!l)
        return false;
    size_t n = frame_size(uc);
    if (!can_wait(uc, addr, n))
        return false;
    struct fault_wait w = {.lazy = l, .addr = addr, .page = idx};
    wait_on_own_stack(uc, n, &w);
}

static bool svm_fault(int sig, siginfo_t *si, void *uctx)
{
    if (!svm.ops || sig != svm.ops->signal)
        return false;
    uintptr_t addr = (uintptr_t)si->si_addr;
    ucontext_t *uc = uctx;
    struct svm_region *r = svm_region_of(addr);
    if (!r)
        return lazy_fault(addr, uc);
    if (r->shared) /* a memfd region never faults: a real crash */
        return false;
    uint32_t p = svm_page_index(r, addr);
    struct svm_page *e = &r->pages[p];
    bool write = e->access == SVM_READ || (uc->uc_mcontext.gregs[REG_ERR] & X86_PF_WRITE);
    enum svm_access want = write ? SVM_WRITE : SVM_READ;
    if (want == SVM_READ)
        svm.stats.read_faults++;
    else
        svm.stats.write_faults++;
    if (e->access >= want) /* another ULP's fault brought it meanwhile */
        return true;
    if (!(e->flags & (PG_BUSY | PG_LOST)) && svm_resolve_local(r, p, want))
        return true;
    size_t n = frame_size(uc);
    if (!can_wait(uc, addr, n))
        return false;
    struct fault_wait w = {.r = r, .addr = addr, .page = p, .want = want};
    wait_on_own_stack(uc, n, &w);
}

int svm_fault_install(void)
{
    core_set_fault_filter(svm_fault);
    return 0;
}

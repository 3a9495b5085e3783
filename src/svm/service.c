/*
 * service.c - page requests answered while the node computes (IVY served
 * them at interrupt level: "Remote Operation").
 *
 * A node handles frames only when its scheduler thread polls -- between
 * ULPs, or when one yields, blocks or calls UPVM.  A ULP that computes
 * for a second without doing so would keep every page it owns from every
 * other node for that second (bench/svm/ivy/stall.c measured 900 ms for
 * one read fault).  So a node with shared regions arms a timer on its
 * scheduler thread's CPU time (CLOCK_THREAD_CPUTIME_ID: it runs only
 * while the thread does -- an idle node is never woken by it): every
 * UPVM_SVM_SERVICE_US of computing, a signal.  Its handler looks at where
 * the thread was interrupted; in a program's own code (a thread-mode
 * program's executable, a process-mode program's slot -- not UPVM, not
 * libc, not any library UPVM's calls may pass through: nothing of the node
 * is half-changed, no lock of libc is held) it polls the transport for the shared-memory
 * frames only (node_poll_urgent: the others wait for the next ordinary
 * poll), and pages held for the ULPs they woke are let go after a whole
 * tick (proto.c).  Elsewhere it does nothing: the next tick tries again.
 *
 * Jobs of one host only: the MPI transport is not to be entered from a
 * signal handler.  Off under ThreadSanitizer, which delivers signals at
 * points of its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "mem/mem.h"
#include "svm/svm_impl.h"
#include "util/env.h"

#define SERVICE_SIG (SIGRTMIN + 5)

static uint64_t service_us = 100;
static bool armed;

/* The executable code of the program (the main executable: a thread-mode
 * program's own code).  A process-mode program's code lies in the window's
 * slots.  Anything else -- UPVM, libc, the dynamic linker, a sanitizer's
 * runtime that UPVM's own calls pass through -- is not the program's. */
#define TEXT_MAX 8
static struct {
    uintptr_t lo, hi;
} text[TEXT_MAX];
static int ntext;

static int collect_text(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size, (void)ctx;
    if (info->dlpi_name && info->dlpi_name[0])
        return 1; /* the main executable comes first, with an empty name */
    for (int i = 0; i < info->dlpi_phnum && ntext < TEXT_MAX; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            text[ntext].lo = info->dlpi_addr + ph->p_vaddr;
            text[ntext].hi = text[ntext].lo + ph->p_memsz;
            ntext++;
        }
    }
    return 1;
}

static bool in_program(uintptr_t pc)
{
    if (mem_slot_of((const void *)pc) >= 0)
        return true;
    for (int i = 0; i < ntext; i++)
        if (pc - text[i].lo < text[i].hi - text[i].lo)
            return true;
    return false;
}

static void service_signal(int sig, siginfo_t *si, void *uctx)
{
    (void)sig, (void)si;
    const ucontext_t *uc = uctx;
    if (!core_on_sched_thread_now() || !in_program((uintptr_t)uc->uc_mcontext.gregs[REG_RIP]))
        return;
    if (core_current() == svm.touch_ulp && core_sched.tsc_mark == svm.touch_mark)
        return; /* between upvm_svm_touch and the call it prepared: its pages stay */
    int saved = errno;
    svm_service_tick();
    (void)node_poll_urgent();
    errno = saved;
}

void svm_service_read_settings(void)
{
    static const struct env_num spec = {.min = 0, .max = 1000000, .dflt = 100};
    uint64_t v;
    if (env_uint("UPVM_SVM_SERVICE_US", &spec, &v) >= 0)
        service_us = v;
}

void svm_service_start(void)
{
#if UPVM_TSAN
    return;
#endif
    if (armed || !service_us || !node_job_multi() || node_job_host(svm.self))
        return;
    armed = true;
    dl_iterate_phdr(collect_text, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = service_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SERVICE_SIG;
    ev._sigev_un._tid = gettid();
    timer_t timer;
    struct itimerspec every = {
        .it_interval = {.tv_sec = (time_t)(service_us / 1000000),
                        .tv_nsec = (long)(service_us % 1000000) * 1000},
    };
    every.it_value = every.it_interval;
    if (sigaction(SERVICE_SIG, &sa, NULL) != 0 ||
        timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &timer) != 0 ||
        timer_settime(timer, 0, &every, NULL) != 0)
        fprintf(stderr, "upvm: node %d: no service timer (%s): a node that computes answers "
                        "page requests only when it polls\n", svm.self, strerror(errno));
    static const unsigned kinds[] = {K_SVM_REQ, K_SVM_PAGE, K_SVM_INVAL, K_SVM_ACK,
                                     K_SVM_NACK, K_SVM_PUSH, K_SVM_WAKE};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        node_set_urgent(kinds[i]);
}

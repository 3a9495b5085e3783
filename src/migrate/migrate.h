/*
 * migrate.h - moving a process-mode ULP to another node of its job (the
 * MPVM/UPVM protocol: migration event, message flushing, state transfer,
 * restart).  docs/migration.md tells users what it does; design-notes §9
 * how.
 *
 * Threading: the node's scheduler thread, like everything of the node.
 */
#ifndef UPVM_MIGRATE_H
#define UPVM_MIGRATE_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "util/compiler.h"

struct loader_image;

/* What a finished request reports.  rc: 0 or a PVM error code (see
 * upvm_migrate in upvm.h); why: the refusal's sentence ("" on success),
 * valid only during the callback. */
struct migrate_result {
    int rc;
    const char *why;
    int tid, from, to;      /* from: the node it left (-1 if unknown) */
    uint64_t total_ns;      /* request made -> running on `to` */
    uint64_t obtrusive_ns;  /* request at `from` -> last byte left it */
    uint64_t bytes;         /* memory moved */
};

typedef void (*migrate_done_fn)(void *ctx, const struct migrate_result *r);

/*
 * Ask for task tid to move to node `to`, from any code on the scheduler
 * thread that must not block (the control socket's server): done(ctx, r)
 * is called once, later, on the scheduler thread, when the task runs on
 * `to` or the request failed.  Returns 0, or when the request could not
 * even be sent (done is then not called) -ESRCH (no such task), -ENOSYS
 * (a job of one node), -ENOMEM.
 */
int migrate_request_async(int tid, int to, migrate_done_fn done, void *ctx) HIDDEN;

/* The same, asked by the global scheduler (src/gs).  Any other request
 * (upvm_migrate, `upvm migrate`) marks the task placed: the balancer
 * leaves it where it was asked to be. */
int migrate_request_balance(int tid, int to, migrate_done_fn done, void *ctx) HIDDEN;

/*
 * Lazy moves (IVY's process migration; design notes §15.10): the task
 * restarts on the destination with the page its stack pointer is in, and
 * the rest of its memory follows -- pulled by its faults, pushed in the
 * background.  The migration protocol is the same; the pages are the
 * shared-memory layer's to carry (src/svm registers these ops).
 *   possible  may this node move a task lazily?  0, or -errno with why;
 *   busy      is slot's memory still on its way (to or from here)? A task
 *             moves again only once it has all arrived;
 *   expect    destination, before the task runs: the n page-aligned
 *             ranges v of slot are still at node from;
 *   serve     source, once the task runs at `to`: serve those ranges from
 *             here until they have all left, then let the slot go
 *             (proc_move_gone(slot, img), which this call now owns).
 */
struct migrate_lazy_ops {
    int (*possible)(char *why, size_t len);
    bool (*busy)(int slot);
    int (*expect)(int tid, int slot, int from, const struct iovec *v, int n);
    void (*serve)(int tid, int slot, struct loader_image *img, int to, const struct iovec *v,
                  int n);
};
void migrate_set_lazy_ops(const struct migrate_lazy_ops *ops) HIDDEN;

/* migrate_request_async for a lazy move. */
int migrate_request_lazy(int tid, int to, migrate_done_fn done, void *ctx) HIDDEN;

/* Register this node's migration frames and hooks (every node of a job of
 * several, at its start: src/run). */
void migrate_init(void) HIDDEN;

#endif /* UPVM_MIGRATE_H */

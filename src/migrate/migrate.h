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
#include <stdint.h>

#include "util/compiler.h"

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

/* Register this node's migration frames and hooks (every node of a job of
 * several, at its start: src/run). */
void migrate_init(void) HIDDEN;

#endif /* UPVM_MIGRATE_H */

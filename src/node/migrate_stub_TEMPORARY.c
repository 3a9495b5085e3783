/*
 * migrate_stub_TEMPORARY.c - TEMPORARY stand-in for migrate_request_async
 * (src/migrate/migrate.h), so that the control socket (control_server.c)
 * builds and is tested before the real migration lands.
 *
 * It is a weak definition: the real one (src/migrate/) replaces it in the
 * same link with no other change.  Delete this file when that is merged.
 *
 * Every request is refused with PvmNotImpl, "not implemented yet", from a
 * ULP of its own: later, as the real one answers, not inside the call.
 */
#include <stdlib.h>

#include <pvm3.h>
#include <upvm.h>

#include "migrate/migrate.h"

struct stub_call {
    int tid, to;
    migrate_done_fn done;
    void *ctx;
};

static void stub_answer(void *arg)
{
    struct stub_call c = *(struct stub_call *)arg;
    free(arg);
    struct migrate_result r = {PvmNotImpl, "not implemented yet", c.tid, -1, c.to, 0, 0, 0};
    c.done(c.ctx, &r);
}

__attribute__((weak)) int migrate_request_async(int tid, int to, migrate_done_fn done,
                                                void *ctx)
{
    struct stub_call *c = malloc(sizeof *c);
    if (!c)
        return PvmSysErr;
    *c = (struct stub_call){tid, to, done, ctx};
    upvm_attr_t attr = {.flags = UPVM_DETACHED, .name = "migrate-stub"};
    if (upvm_create(stub_answer, c, &attr) < 0) {
        free(c);
        return PvmSysErr;
    }
    return 0;
}

/*
 * tracer.c - pvm_reg_tracer: the job's registered tracer, as PVM 3.4.6's
 * pvmd keeps it (tm_tracer in its tdpro.c; docs/pvm-tracing.md).
 *
 * PVM has one registration per virtual machine, kept by the master pvmd
 * and copied to every other (DM_SLCONF_TRACE, also to a host added later).
 * Here node 0 keeps it and decides (a second tracer: PvmAlready), and every
 * node holds a copy, sent by node 0 (K_TRACER, TRACER_COPY) to every node
 * when it changes and to a node that comes up later: a spawn reads the
 * copy of the spawner's node (pvm_tev_child_tracer).  Node 0 sends the
 * copies before it answers the task that registered, so that the task's
 * own node has it when the task goes on (frames between two nodes keep
 * their order).
 */
#include <errno.h>
#include <string.h>

#include "pvm/remote.h"
#include "pvm/tev.h"

/* K_TRACER's a. */
enum tracer_op {
    TRACER_REGISTER = 1, /* to node 0, a request: c: the task; payload: struct reg */
    TRACER_UNREGISTER,   /* to node 0, a request: c: the task */
    TRACER_GONE,         /* to node 0, a notice: task c ended */
    TRACER_COPY,         /* from node 0, a notice: payload: struct reg */
};

/* The registration (tid 0: none): tr is what the tasks it applies to get
 * (its tid the tracer's); outctx/outtag the output's, kept, not used
 * (docs/pvm-tracing.md). */
struct reg {
    struct pvm_tracer tr;
    int32_t outctx, outtag;
};

static struct reg reg; /* this node's copy */

static void copy_to(int node)
{
    struct node_frame f = {.kind = K_TRACER, .a = TRACER_COPY};
    node_post(node, &f, &reg, sizeof reg, NULL, 0);
}

/* Node 0: the registration changed: every other node's copy. */
static void copy_to_all(void)
{
    for (int n = 1; pvm_multi() && n < node_job_slots(); n++)
        if (node_job_up(n))
            copy_to(n);
}

/* Node 0: what tm_tracer answers task tid. */
static int decide(int op, int tid, const struct reg *r)
{
    switch (op) {
    case TRACER_REGISTER:
        if (reg.tr.tid)
            return PvmAlready;
        reg = *r;
        reg.tr.tid = tid;
        break;
    case TRACER_UNREGISTER:
    case TRACER_GONE:
        if (reg.tr.tid != tid)
            return PvmNoTask;
        memset(&reg, 0, sizeof reg);
        break;
    default: return PvmBadParam;
    }
    copy_to_all();
    return 0;
}

static void on_tracer(int src, const struct node_frame *f, const void *p, size_t len)
{
    const struct reg *r = len >= sizeof(struct reg) ? p : NULL;
    if (f->a == TRACER_COPY) {
        if (r)
            reg = *r;
        return;
    }
    if (node_job_self() != 0)
        return; /* only node 0 decides */
    if (f->a == TRACER_REGISTER && !r) {
        node_rpc_reply(src, f->b, PvmBadParam, NULL, 0);
        return;
    }
    int rc = decide(f->a, f->c, r);
    if (f->a != TRACER_GONE)
        node_rpc_reply(src, f->b, rc, NULL, 0);
}

/* Ask node 0 (itself: at once). */
static int ask_node0(int op, int tid, const struct reg *r)
{
    if (node_job_self() == 0)
        return decide(op, tid, r);
    return pvm_rpc(0, K_TRACER, op, tid, r, r ? sizeof *r : 0, NULL, 0, PvmSysErr, NULL, NULL);
}

int pvm_tracer_register(struct pvm_task *t, int tctx, int ttag, int octx, int otag,
                        const char *tmask, int tbuf, int topt)
{
    /* libpvm's toggle: a task that is the tracer unregisters, whatever it
     * passes; any other registers */
    if (reg.tr.tid == t->tid)
        return ask_node0(TRACER_UNREGISTER, t->tid, NULL);
    struct reg r = {.tr = {.tid = t->tid, .ctx = tctx, .tag = ttag, .buf = tbuf, .opt = topt},
                    .outctx = octx,
                    .outtag = otag};
    /* the pvmd's upkstr into a mask: at most TEV_MASK_LENGTH - 1 characters */
    memset(r.tr.mask, '@', TEV_MASK_LENGTH - 1);
    r.tr.mask[TEV_MASK_LENGTH - 1] = '\0';
    if (tmask) {
        size_t n = strnlen(tmask, TEV_MASK_LENGTH - 1);
        memcpy(r.tr.mask, tmask, n);
        r.tr.mask[n] = '\0';
    }
    return ask_node0(TRACER_REGISTER, t->tid, &r);
}

bool pvm_tracer_registered(struct pvm_tracer *out)
{
    if (!reg.tr.tid || !reg.tr.tag)
        return false; /* the pvmd's test: a tracer, and its tag not 0 */
    *out = reg.tr;
    return true;
}

void pvm_tracer_task_left(int tid)
{
    if (!reg.tr.tid || reg.tr.tid != tid)
        return;
    if (node_job_self() == 0) {
        (void)decide(TRACER_GONE, tid, NULL);
        return;
    }
    struct node_frame f = {.kind = K_TRACER, .a = TRACER_GONE, .c = tid};
    node_post(0, &f, NULL, 0, NULL, 0);
}

void pvm_tracer_peer_up(int n)
{
    if (node_job_self() == 0 && reg.tr.tid)
        copy_to(n);
}

void pvm_tracer_peer_gone(int n)
{
    /* node 0: a tracer that died with its node is no tracer (its task_left
     * never comes) */
    if (node_job_self() == 0 && reg.tr.tid && pvm_tid_node(reg.tr.tid) == n)
        (void)decide(TRACER_GONE, reg.tr.tid, NULL);
}

void pvm_tracer_register_frames(void)
{
    node_on_frame(K_TRACER, on_tracer);
}

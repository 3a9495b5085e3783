/*
 * frames.h - the PVM layer's frame kinds (node/job.h's range for pvm):
 * private to src/pvm.
 */
#ifndef UPVM_PVM_FRAMES_H
#define UPVM_PVM_FRAMES_H

#include "node/job.h"

/*
 * The PVM layer's frames between nodes (node/job.h: kind and three
 * integers, then a payload), numbered in the PVM layer's range.  Requests
 * that need an answer (node/rpc.h) carry the request's id in `b`.
 */
enum pvm_frame_kind {
    K_MSG = NODE_KINDS_PVM, /* a: dst tid; payload: serialised message */
    K_SPAWN,                /* b: id, c: count; payload: struct spawn_spec + strings */
    K_SIBS,                 /* c: n; payload: n tids */
    K_NOTIFY,               /* a: watched tid, b: id, c: watcher; payload: ctx, cancel, tag */
    K_NOTIFY_FIRE,          /* a: watcher, b: watched tid, c: tag; payload: ctx */
    K_KILL,                 /* a: tid, b: signal */
    K_PSTAT,                /* a: tid, b: id */
    K_TASKS,                /* a: where, b: id; reply: struct wire_task records */
    K_ADDHOST,              /* b: id (to node 0); payload: the host's name, NUL
                               at its end; reply: the node that joined */
    K_DELHOST,              /* a: node, b: id (to node 0) */
    K_STATUS,               /* a: tid, b: its exit status (PVM_SPAWN_REPORT_STATUS) */
    K_GROUP,                /* to node 0, a: op, b: id, c: arg; payload: tid, name (groups.c) */
    K_MBOX,                 /* to node 0, a: op, b: id; payload: mailbox.c's request */
    /* migration: routing (pvm/move.h) */
    K_MIG_MOVED,            /* a: tid, b: its new node */
    K_MIG_MARK,             /* a: tid, b: the node that sent it (routed like a message) */
    K_REPLY_TID,            /* a: tid, b: result, c: request id; payload: data (an answer
                             * that follows its task, routed like a message) */
    K_TASK_LOST,            /* a: tid, lost in a move (pvm_task_lost), b: the node that says so */
    K_OUTPUT,               /* a: catcher tid, b: writer tid, c: OUT_* (catchout.c); payload:
                             * output (routed like a message) */
    K_TASK_GONE,            /* a: tid: it ended on the sending node (to every node; its
                             * home frees the tid; sent once its flush there is over) */
    K_LOCATED,              /* c: n; payload: n tids of other nodes' now on the sender
                             * (spawned there): to every node but their home */
    K_WHERE,                /* a: tid, b: id, to its home: the node it is on (the answer) */
    K_TIDS,                 /* a: n, b: id, to node 0 of a VM: reserve n consecutive tids of
                             * its own for a joined program's spawn; reply: the tids */
    K_TRACER,               /* pvm_reg_tracer (tracer.c): a: op, b: id, c: tid; payload:
                             * the registration (to node 0; node 0's copies to every node) */
};

_Static_assert(K_TRACER < NODE_KINDS_MIGRATE, "the PVM layer's frame kinds overflow its range");

#endif /* UPVM_PVM_FRAMES_H */

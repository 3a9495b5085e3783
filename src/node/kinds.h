/*
 * kinds.h - the node layer's own frame kinds (its range, job.h), shared
 * by job.c and rpc.c and by nobody else.
 */
#ifndef UPVM_NODE_KINDS_H
#define UPVM_NODE_KINDS_H

#include "node/job.h"

enum node_kind {
    K_PROBE = NODE_KINDS_NODE + 1, /* a: wave */
    K_PROBE_ACK,  /* a: wave, b: idle, c: live ULPs; payload: u64 sent, recvd */
    K_SHUTDOWN,   /* a: enum shutdown_mode */
    K_BYE,        /* a node is about to exit after a shutdown */
    K_GONE_ACK,   /* a: a dead node, b: notifications delivered for it here */
    K_RPC_REPLY,  /* a: request id, b: result; payload: the answer's bytes */
    K_HOST,       /* a job of MPI ranks, at its start; a: standby; payload: the
                     sender's host names (hostname.h) */
    K_NODE_STATE, /* a job of MPI ranks, from node 0: a: node, b: its new state */
    K_BOARD_ASK,  /* a job of MPI ranks, node 0 lists the tasks: send your board */
    K_BOARD,      /* the answer; payload: the board's bytes */
    K_SLOT_FREE,  /* a: a slot of the receiver's share of the window, free again */
};

#endif /* UPVM_NODE_KINDS_H */

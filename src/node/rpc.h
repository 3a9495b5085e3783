/*
 * rpc.h - requests between nodes that wait for an answer.
 *
 * A ULP sends a request frame to a node and blocks until that node's
 * handler for the frame's kind answers with node_rpc_reply.  The request
 * id travels in the frame's `b`; the answer is the node layer's own reply
 * frame {id, result, payload}.  The result is the server's to choose (the
 * PVM layer answers with PVM codes); the node layer adds only one value,
 * the caller's `fail`, returned when the request cannot be made or its
 * server dies before it answers.
 *
 * A request to this node itself is served at once, in the asking ULP
 * (node 0's own groups and mailbox calls).
 *
 * Requests and migration.  The waiting record lives on the asking ULP's
 * stack, and ids are unique in the job (the asking node in the high bits),
 * so a record can leave with its ULP (node_rpc_move_*): the server still
 * answers the node that asked, which passes the answer on through the
 * forward op that the layer routing tasks registers (node_rpc_set_ops):
 * it sends the answer by tid to wherever the task is, where
 * node_rpc_complete delivers it.  A caller that holds node memory across
 * the wait asks with NODE_RPC_PINNED: its ULP cannot move until the answer
 * came.
 *
 * Threading: the node's scheduler thread.
 */
#ifndef UPVM_NODE_RPC_H
#define UPVM_NODE_RPC_H

#include <stdbool.h>
#include <stddef.h>

#include "core/core.h"
#include "node/job.h"
#include "util/bytes.h"

enum node_rpc_mode {
    NODE_RPC_PINNED,  /* the caller cannot move while it waits */
    NODE_RPC_MOVABLE, /* it holds nothing of its node's: the answer may follow it */
};

/* A request: the frame {kind, a, <id>, c} to node, its payload p1 + p2,
 * and the results when node is not running or there is no memory for the
 * request (down) and when node dies before it answers (died). */
struct node_rpc_req {
    int node;
    unsigned kind;
    int a, c;
    const void *p1, *p2;
    size_t l1, l2;
    int down, died;
};

/*
 * node_rpc_call - send req and block the calling ULP until its answer: the
 * answer's result, and in *data (malloc'ed, NULL when empty) and *len the
 * bytes that came with it (data NULL: dropped), or req's down or died.
 */
int node_rpc_call(const struct node_rpc_req *req, enum node_rpc_mode mode, void **data,
                  size_t *len) HIDDEN;

/* node_rpc_call for at most limit_ns, pinned, the answer's bytes dropped:
 * -ETIMEDOUT when no answer came in time (a late one is dropped).  For a
 * request whose answer only tells when it is done, not what to do: one
 * the caller must not wait on for ever (its server may be stalled). */
int node_rpc_call_within(const struct node_rpc_req *req, int64_t limit_ns) HIDDEN;

/* The server's answer to request id from node. */
void node_rpc_reply(int node, int id, int result, const void *p, size_t len) HIDDEN;

/* An answer that followed its task to this node (after its forward):
 * wake the request id's ULP, if it still waits. */
void node_rpc_complete(int id, int result, const void *p, size_t len) HIDDEN;

struct node_rpc_ops {
    /* An answer came for request id, whose ULP left as task tid: pass it
     * on to wherever that task is now. */
    void (*forward)(int tid, int id, int result, const void *p, size_t len);
};
void node_rpc_set_ops(const struct node_rpc_ops *ops) HIDDEN;

/* Moving a ULP that waits for answers: the source writes its records
 * (address, and an answer already there), then lets go of them and
 * remembers where answers for them go (task tid); the destination links
 * them in again.  lo..hi: the memory the records must lie in (the ULP's
 * slot).  Unpack: 0, -EBADMSG (not in lo..hi, truncated), -ENOMEM. */
void node_rpc_move_pack(const struct ulp *u, struct bytes_out *w) HIDDEN;
void node_rpc_move_release(const struct ulp *u, int tid) HIDDEN;
int node_rpc_move_unpack(struct bytes_in *r, struct ulp *u, const void *lo,
                         const void *hi) HIDDEN;

/* Node layer only (job.c): node n is gone, its answers never come. */
void node_rpc_node_gone(int n) HIDDEN;
/* Node layer only (job.c): register the reply frame.  (The exit hook
 * that drops a killed ULP's records is added at the first request.) */
void node_rpc_init(void) HIDDEN;

#endif /* UPVM_NODE_RPC_H */

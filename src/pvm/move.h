/*
 * move.h - the PVM layer's part of a migration (move.c, remote.c): a
 * task's state as bytes, and the routing of tid-addressed frames while a
 * task moves (the flush: every message sent to it arrives exactly once and
 * in order, docs/design-notes.md §9).
 */
#ifndef UPVM_PVM_MOVE_H
#define UPVM_PVM_MOVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "node/job.h"
#include "pvm/pvm.h"
#include "util/bytes.h"


/* The source: t's node-side state (queue, buffers, notifications) into w;
 * then, once it is decided, release it all and take t out of the node's
 * tables (pvm_move_release).  0 or PvmNoMem. */
int pvm_move_pack(struct pvm_task *t, struct bytes_out *w) HIDDEN;
void pvm_move_release(struct pvm_task *t) HIDDEN;
/* The destination: t (arrived with its memory, lo..hi) for ULP u (already
 * where it waits), from pvm_move_pack's bytes.  0 or a PVM error. */
int pvm_move_unpack(struct pvm_task *t, struct ulp *u, const void *p, size_t len,
                    const void *lo, const void *hi) HIDDEN;

/* remote.c: the notification records of tid's that this node keeps (on
 * other nodes' tasks, on hosts). */
void pvm_remote_move_pack(int tid, struct bytes_out *w) HIDDEN;
void pvm_remote_move_release(int tid) HIDDEN;
int pvm_remote_move_unpack(struct bytes_in *r, int tid) HIDDEN;

/* ------------------------------------------------------------ tracing */

/* UPVM_TRACE=migrate: one line on stderr per routing and migration event
 * ("upvm-trace SECONDS.MICROS node N: ...", the monotonic clock), to follow a move or find a lost frame. */
extern bool pvm_tracing HIDDEN;
/* Read UPVM_TRACE (the launcher, before the nodes fork: said once). */
void pvm_trace_init(void) HIDDEN;
void pvm_trace_line(const char *fmt, ...) HIDDEN __attribute__((format(printf, 1, 2)));
#define pvm_trace(...)                 \
    do {                               \
        if (unlikely(pvm_tracing))     \
            pvm_trace_line(__VA_ARGS__); \
    } while (0)

/* ------------------------------------------------------------ routing */

/* The source, as tid leaves for node to: frames for tid go there from now
 * on, and every other running node is told (K_MIG_MOVED): each sends a
 * marker behind what it sent the old way, then sends to `to`.  Returns
 * the nodes told (a bit per node). */
uint64_t pvm_route_moved(int tid, int to) HIDDEN;

/* The destination: tid is coming.  Frames for it are held until
 * pvm_route_arrived; those from the nodes in `blocked` (and this node's
 * own sends) are held further, until that node's marker has come. */
int pvm_route_expect(int tid) HIDDEN NODISCARD;
void pvm_route_arrived(int tid, uint64_t blocked) HIDDEN;
/* The move did not happen: frames held for tid go on as if nothing was. */
void pvm_route_unexpect(int tid) HIDDEN;
/* Is tid's flush still going on here (markers missing)?  It cannot move
 * on until it is over. */
bool pvm_route_flushing(int tid) HIDDEN;
/* tid ended here while its flush goes on: true, and pvm_remote_task_gone
 * is called again when the flush is over (flush.c says why). */
bool pvm_route_gone_later(int tid) HIDDEN;
/* Called when a flush ends (the migration layer retries what waited). */
void pvm_route_on_flushed(void (*fn)(int tid)) HIDDEN;
/* The routing frames' handlers (K_MIG_MOVED, K_MIG_MARK), and a node's
 * death: its markers never come. */
void pvm_route_register(void) HIDDEN;
void pvm_route_node_gone(int n) HIDDEN;

/*
 * A frame for task tid came from node src: true when it is to be handled
 * here now; false when it was forwarded (the task is elsewhere), dropped
 * (no such task) or held (a flush).  Every tid-addressed frame handler
 * starts with it.
 */
bool pvm_route_here(int src, const struct node_frame *f, const void *p, size_t len,
                    int tid) HIDDEN;

/* A message of this node's for dst while its flush holds them: kept, in
 * order, until this node's marker has come back.  0 or PvmNoMem. */
int pvm_route_hold_local(struct pvm_task *dst, msg_buf_t *b) HIDDEN;

/* A message from src_tid (a task of this node) to dst_tid on another
 * node: while src_tid's own flush goes on here (it has just arrived), it
 * waits, in order, so that it cannot overtake what src_tid sent before it
 * moved.  0: held (b is not kept); 1: not held, send it now; PvmNoMem. */
int pvm_route_hold_send(int src_tid, msg_buf_t *b, int dst_tid) HIDDEN;

/* pvm_deliver without the flush check (messages the flush releases). */
int pvm_deliver_now(struct pvm_task *dst, msg_buf_t *b) HIDDEN;

#endif /* UPVM_PVM_MOVE_H */

/*
 * board.c - a node's table of its tasks in the shared segment (board.h).
 *
 * Layout of one board (NET_BOARD_BYTES, shared memory, zero at first):
 *
 *   0   pid      i32   the node process (written once, at open)
 *   4   ntasks   i32   its live tasks, listed or not
 *   8   outerr   i32   why its output could not be written (util/output.h):
 *                      0 it could, an errno value, -1 unknown
 *   12  reserved
 *   32  task[0..254]   { i32 tid (0: free); char name[28] }
 *
 * A task's entry is found by hashing its tid (tids of one node are mostly
 * consecutive, so they spread evenly), then probing PROBES entries.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/net.h"
#include "node/board.h"
#include "util/output.h"

#define NAME_BYTES 28
#define PROBES 8
#define PRINT_MAX 60
#define PER_LINE 6

struct board_task {
    _Atomic int32_t tid;
    char name[NAME_BYTES];
};

struct board {
    _Atomic int32_t pid;
    _Atomic int32_t ntasks;
    _Atomic int32_t outerr;
    uint32_t reserved[5];
    struct board_task task[NODE_BOARD_TASKS];
};

_Static_assert(sizeof(struct board_task) == 32, "board entries are 32 bytes");
_Static_assert(sizeof(struct board) <= NET_BOARD_BYTES, "a board fits its space");

static struct board *own;

void node_board_open(void *board)
{
    own = board;
    if (own)
        atomic_store(&own->pid, (int32_t)getpid());
}

const void *node_board_own(void)
{
    return own;
}

static unsigned slot_of(int tid, int probe)
{
    return ((unsigned)tid + (unsigned)probe) % NODE_BOARD_TASKS;
}

void node_board_add(int tid, const char *name)
{
    if (!own || tid <= 0)
        return;
    /* single writer: plain read-modify-write, published for later readers */
    atomic_store_explicit(&own->ntasks, atomic_load_explicit(&own->ntasks, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    for (int p = 0; p < PROBES; p++) {
        struct board_task *e = &own->task[slot_of(tid, p)];
        if (atomic_load_explicit(&e->tid, memory_order_relaxed) != 0)
            continue;
        size_t len = name ? strnlen(name, NAME_BYTES - 1) : 0;
        memcpy(e->name, name ? name : "", len);
        e->name[len] = '\0';
        atomic_store_explicit(&e->tid, tid, memory_order_release); /* after the name */
        return;
    }
}

void node_board_remove(int tid)
{
    if (!own || tid <= 0)
        return;
    atomic_store_explicit(&own->ntasks, atomic_load_explicit(&own->ntasks, memory_order_relaxed) - 1,
                          memory_order_relaxed);
    for (int p = 0; p < PROBES; p++) {
        struct board_task *e = &own->task[slot_of(tid, p)];
        if (atomic_load_explicit(&e->tid, memory_order_relaxed) == tid) {
            atomic_store_explicit(&e->tid, 0, memory_order_relaxed);
            return;
        }
    }
}

int node_board_pid(const void *board)
{
    return board ? atomic_load(&((const struct board *)board)->pid) : 0;
}

int node_board_ntasks(const void *board)
{
    return board ? atomic_load(&((const struct board *)board)->ntasks) : 0;
}

bool node_board_note_output(void)
{
    int err = out_check();
    if (own && err)
        atomic_store(&own->outerr, (int32_t)err);
    return err != 0;
}

int node_board_output_error(const void *board)
{
    return board ? atomic_load(&((const struct board *)board)->outerr) : 0;
}

static int by_tid(const void *a, const void *b)
{
    unsigned x = (unsigned)((const struct board_task *)a)->tid;
    unsigned y = (unsigned)((const struct board_task *)b)->tid;
    return x < y ? -1 : x > y;
}

int node_board_print(FILE *f, const void *board, const char *prefix)
{
    int ntasks = node_board_ntasks(board);
    if (!board || ntasks <= 0)
        return ntasks > 0 ? ntasks : 0;
    /* a private copy, in tid order (cold path: a report; static, not on
     * the stack, which may be a small ULP stack) */
    static struct board_task list[NODE_BOARD_TASKS];
    int n = 0;
    const struct board *b = board;
    for (int i = 0; i < NODE_BOARD_TASKS; i++) {
        int32_t tid = atomic_load_explicit(&b->task[i].tid, memory_order_acquire);
        if (tid == 0)
            continue;
        list[n].tid = tid;
        memcpy(list[n].name, b->task[i].name, NAME_BYTES);
        list[n].name[NAME_BYTES - 1] = '\0';
        n++;
    }
    qsort(list, (size_t)n, sizeof list[0], by_tid);
    int shown = n < PRINT_MAX ? n : PRINT_MAX;
    for (int i = 0; i < shown; i++) {
        if (i % PER_LINE == 0)
            fprintf(f, "%s%s", i ? "\n" : "", prefix);
        fprintf(f, " t%x%s%s", (unsigned)list[i].tid, *list[i].name ? "/" : "",
                list[i].name);
    }
    if (ntasks > shown)
        fprintf(f, "%s%s ... and %d more", shown ? "\n" : "", prefix, ntasks - shown);
    fputc('\n', f);
    return ntasks;
}

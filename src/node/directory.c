/*
 * directory.c - the tid -> node directory (directory.h): an open-addressing
 * hash table of ints (linear probing, tombstones, grown at 3/4 load and
 * rebuilt when tombstones pile up).  Everything not in the table is at its
 * home node.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "node/directory.h"

#define HOST_SHIFT 18
#define HOST_MASK  0x3ffc0000
#define EMPTY      0
#define DELETED    (-1)

int node_dir_init(struct node_dir *d, int self, int nnodes)
{
    if (nnodes < 1 || nnodes > 4095 || self < 0 || self >= nnodes)
        return -EINVAL;
    *d = (struct node_dir){.self = self, .nnodes = nnodes};
    return 0;
}

void node_dir_fini(struct node_dir *d)
{
    free(d->slots);
    d->slots = NULL;
    d->cap = d->used = d->tombs = 0;
}

int node_dir_home(const struct node_dir *d, int tid)
{
    if (tid <= 0)
        return -1;
    int node = ((tid & HOST_MASK) >> HOST_SHIFT) - 1;
    return node >= 0 && node < d->nnodes ? node : -1;
}

static uint32_t hash(int32_t tid)
{
    uint32_t h = (uint32_t)tid * 0x9e3779b1u; /* Fibonacci hashing */
    return h ^ (h >> 15);
}

/* The slot holding tid, or NULL. */
static struct node_dir_entry *find(const struct node_dir *d, int tid)
{
    if (!d->cap)
        return NULL;
    for (uint32_t i = hash(tid) & (d->cap - 1);; i = (i + 1) & (d->cap - 1)) {
        struct node_dir_entry *e = &d->slots[i];
        if (e->tid == tid)
            return e;
        if (e->tid == EMPTY)
            return NULL;
    }
}

/* Rebuild into cap slots (dropping tombstones). */
static int rehash(struct node_dir *d, uint32_t cap)
{
    struct node_dir_entry *old = d->slots, *s = calloc(cap, sizeof *s);
    uint32_t oldcap = d->cap;
    if (!s)
        return -ENOMEM;
    d->slots = s;
    d->cap = cap;
    d->tombs = 0;
    for (uint32_t i = 0; i < oldcap; i++)
        if (old[i].tid != EMPTY && old[i].tid != DELETED) {
            uint32_t k = hash(old[i].tid) & (cap - 1);
            while (s[k].tid != EMPTY)
                k = (k + 1) & (cap - 1);
            s[k] = old[i];
        }
    free(old);
    return 0;
}

int node_dir_set(struct node_dir *d, int tid, int node)
{
    if (node < 0 || node >= d->nnodes || node_dir_home(d, tid) < 0)
        return -EINVAL;
    struct node_dir_entry *e = find(d, tid);
    if (e) {
        e->node = node;
        return 0;
    }
    if ((d->used + d->tombs + 1) * 4 > d->cap * 3) {
        uint32_t cap = d->cap ? d->cap : 64;
        while ((d->used + 1) * 4 > cap * 3 / 2) /* room to grow after the rebuild */
            cap *= 2;
        int rc = rehash(d, cap);
        if (rc)
            return rc;
    }
    uint32_t i = hash(tid) & (d->cap - 1);
    while (d->slots[i].tid != EMPTY && d->slots[i].tid != DELETED)
        i = (i + 1) & (d->cap - 1);
    if (d->slots[i].tid == DELETED)
        d->tombs--;
    d->slots[i] = (struct node_dir_entry){tid, node};
    d->used++;
    return 0;
}

void node_dir_forget(struct node_dir *d, int tid)
{
    struct node_dir_entry *e = find(d, tid);
    if (!e)
        return;
    e->tid = DELETED;
    d->used--;
    d->tombs++;
}

int node_dir_route(const struct node_dir *d, int tid)
{
    const struct node_dir_entry *e = find(d, tid);
    return e ? e->node : node_dir_home(d, tid);
}

int node_dir_next_hop(struct node_dir *d, int tid, int from)
{
    int home = node_dir_home(d, tid);
    if (home < 0)
        return -1;
    (void)from; /* back where it came from is a real route: a migration's
                 * marker goes out the old way and comes back (pvm/move.h) */
    return node_dir_route(d, tid);
}

/*
 * timerheap.c - the node's sleeping and timed-waiting ULPs, in a binary
 * min-heap ordered by (deadline, arrival).  Each ULP remembers its heap
 * index, so a wake before the deadline cancels in O(log n).
 */
#include <stdlib.h>
#include <errno.h>

#include "core/core.h"

static struct ulp **heap;
static uint32_t heap_cap;
static uint64_t next_seq;

static bool earlier(const struct ulp *a, const struct ulp *b)
{
    if (a->deadline_ns != b->deadline_ns)
        return a->deadline_ns < b->deadline_ns;
    return a->timer_seq < b->timer_seq;
}

static void place(uint32_t i, struct ulp *u)
{
    heap[i] = u;
    u->timer_index = i;
}

static void sift_up(uint32_t i)
{
    struct ulp *u = heap[i];
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!earlier(u, heap[parent]))
            break;
        place(i, heap[parent]);
        i = parent;
    }
    place(i, u);
}

static void sift_down(uint32_t i)
{
    uint32_t n = core_sched.ntimers;
    struct ulp *u = heap[i];
    for (;;) {
        uint32_t child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && earlier(heap[child + 1], heap[child]))
            child++;
        if (!earlier(heap[child], u))
            break;
        place(i, heap[child]);
        i = child;
    }
    place(i, u);
}

int core_timer_reserve(uint32_t n)
{
    if (n <= heap_cap)
        return 0;
    uint32_t cap = heap_cap ? heap_cap : 64;
    while (cap < n)
        cap *= 2;
    struct ulp **grown = realloc(heap, (size_t)cap * sizeof *heap);
    if (!grown)
        return -ENOMEM;
    heap = grown;
    heap_cap = cap;
    return 0;
}

void core_timer_add(struct ulp *u, uint64_t deadline_ns)
{
    /* Room was reserved when u was created (core_timer_reserve), so adding
     * a timer never fails. */
    u->deadline_ns = deadline_ns;
    u->timer_seq = next_seq++;
    uint32_t i = core_sched.ntimers++;
    heap[i] = u;
    sift_up(i);
}

void core_timer_cancel(struct ulp *u)
{
    uint32_t i = u->timer_index;
    if (i == ULP_NO_TIMER)
        return;
    u->timer_index = ULP_NO_TIMER;
    uint32_t last = --core_sched.ntimers;
    if (i == last)
        return;
    place(i, heap[last]);
    if (i > 0 && earlier(heap[i], heap[(i - 1) / 2]))
        sift_up(i);
    else
        sift_down(i);
}

uint64_t core_timer_next(void)
{
    return core_sched.ntimers ? heap[0]->deadline_ns : UINT64_MAX;
}

struct ulp *core_timer_pop_due(uint64_t now_ns)
{
    if (!core_sched.ntimers || heap[0]->deadline_ns > now_ns)
        return NULL;
    struct ulp *u = heap[0];
    core_timer_cancel(u);
    return u;
}

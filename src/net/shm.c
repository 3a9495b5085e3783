/*
 * shm.c - the shared-memory transport for the nodes of one host.
 *
 * The launcher creates one segment before it forks the nodes (a memfd, so
 * it has no name anywhere and dies with its last mapping, even after
 * SIGKILL).  It holds:
 *
 *   header | node slot x N | board x N | ring (0->1) | ring (0->2) | ... | ring (N-1->N-2)
 *
 * A board (NET_BOARD_BYTES per node) is the node layer's: the transport
 * never reads or writes it (net_board).
 *
 * One single-producer / single-consumer byte ring per ordered pair of
 * nodes, N*(N-1) in all, so no two processes ever write the same index and
 * no lock exists.  A ring is a header of two 128-byte blocks (the producer's
 * tail, the consumer's head: apart, so that neither side's writes bounce
 * the other's line, adjacent-line prefetch included) and C data bytes, C a
 * power of two.  tail and head count bytes for ever (64 bits never wrap).
 *
 * Records start on a 64-byte line: a header word {u32 len, u32 kind}, then
 * len payload bytes.  The consumer learns that a record is there from its
 * header alone, never from the producer's tail: the producer writes the
 * payload, then the header with a release store, and keeps the header
 * slot after its tail 0 (it clears slots ahead of need, in free space), so
 * the slot at the consumer's head is 0 or a published header, never a
 * leftover of an older lap.  A waiting consumer thus polls one line, and a
 * small frame (up to 56 bytes: a PVM message without data is 56) costs it
 * one cache miss; with an index to read first it was two or three.  The
 * consumer frees space with a release store of head; the producer keeps a
 * cached copy and rereads head only when the copy says full.  tail is
 * still published, for a producer that attaches again.
 *
 * A frame of up to C/4 - 16 bytes is one WHOLE record, handed to the
 * receiver's callback straight from the ring.  A bigger one
 * is a FIRST record (its payload starts with the frame's u64 total length)
 * and FRAG records, reassembled by the receiver in a private buffer.  A
 * record never wraps: when it does not fit before the end, a PAD record
 * fills the rest and it starts at offset 0.  Fragments that do not fit yet
 * wait in the sender's private backlog (net.h's contract).  Frames are
 * sent from pieces (net_sendv): each piece is copied once, into the ring.
 *
 * Sleeping: each node has a futex word in the segment, AWAKE normally.
 * A node about to sleep stores SLEEPING, checks its rings once more, and
 * FUTEX_WAITs.  A sender, after publishing, fences and looks at the word:
 * only if it reads SLEEPING does it swap it to AWAKE and FUTEX_WAKE.  The
 * two seq_cst fences (store word / load headers against store header / load
 * word) make a lost wake-up impossible, and a send to an awake node costs a
 * fence and a load, never a syscall.  net_wake sets WAKE_PENDING, which the
 * next wait consumes.  A sender that found a ring full sets the ring's
 * want_space; the consumer, after freeing space, fences, sees it and wakes
 * the producer the same way, so a blocked sender never needs to poll.
 */
#define _GNU_SOURCE
#include "net/net_impl.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/copy.h"

#define LINE 128
#define SEG_MAGIC 0x55504e4554534847ull /* "UPNETSHG" */
#define SEG_VERSION 6 /* 2: boards; 3: records on a line, polled by header; 4: once;
                         5: slots used again; 6: states kept */
#define REC_ALIGN 64 /* records start on a cache line */
#define CLEAR_AHEAD 2048 /* header slots the producer keeps clear past its tail */
#define MAX_NODES 4096

enum { W_AWAKE = 0, W_SLEEPING = 1, W_WAKE_PENDING = 2 };
enum { R_PAD = 1, R_WHOLE = 2, R_FIRST = 3, R_FRAG = 4 };

struct seg_hdr {
    uint64_t magic;
    uint32_t version, nnodes;
    uint64_t ring_bytes, size;
    _Atomic uint32_t events;  /* +1 at every change of a node's state */
    _Atomic uint32_t once;    /* net_job_once's bits */
    uint32_t states;          /* the launcher keeps every slot's state (net_shm_keep_states) */
};

struct node_slot {
    alignas(LINE) _Atomic uint32_t word;
    _Atomic uint32_t state;   /* enum net_peer_state, set by the launcher */
    _Atomic int32_t status;   /* GONE: exit status, or 128 + signal */
    _Atomic int32_t waker_cpu; /* the cpu of the last node that woke it, -1 */
    _Atomic uint32_t recycle;  /* GONE, and every node has forgotten it: the
                                  launcher may give the slot out again */
};

struct ring_hdr {
    /* producer's line; tail is published for a producer that attaches
     * again, never read by the consumer (record headers say what is there) */
    alignas(LINE) _Atomic uint64_t tail;
    _Atomic uint32_t want_space;         /* producer sets, consumer clears */
    alignas(LINE) _Atomic uint64_t head; /* consumer's line */
};

/* A record header: one 64-bit word, 0 while nothing is published there. */
#define REC_HDR 8u
static uint64_t rec_word(uint32_t kind, uint32_t len) { return (uint64_t)kind << 32 | len; }
static uint32_t rec_kind(uint64_t w) { return (uint32_t)(w >> 32); }
static uint32_t rec_len(uint64_t w) { return (uint32_t)w; }

struct net_shm_seg {
    void *base;
    size_t size;
    int fd;
};

/* The sending side of one ring (private to the producer). */
struct out {
    struct ring_hdr *r;
    uint8_t *data;
    uint64_t tail, head_cache;
    uint64_t clear;          /* the header slots in [tail, clear) are 0 */
    bool wants;              /* want_space set by us, not yet answered */
    uint8_t *bl;             /* backlog: the unsent rest of one frame */
    size_t bl_off, bl_len;
};

/* The receiving side of one ring (private to the consumer). */
struct in {
    struct ring_hdr *r;
    uint8_t *data;
    uint64_t head;
    bool consumed, broken;
    uint8_t *as;             /* reassembly of a fragmented frame */
    size_t as_cap, as_total, as_got;
    bool in_frame;
};

static struct {
    int self, n;             /* this node, the segment's node count */
    struct seg_hdr *hdr;
    struct node_slot *slots;
    void *map;               /* mapped by net_init_shm_fd: ours to unmap */
    size_t map_size;
    uint64_t cap, mask, frag_max;
    struct out *outs;
    struct in *ins;
    int nbacklog, next_src;  /* next_src: an index into srcs */
    /* the peers whose rings are looked at: every other node, or, where
     * slots are used again (a launcher's segment: by_state), only those
     * that are not ABSENT and not forgotten: a persistent VM has dozens of
     * empty slots, and a poll that looked at each of their rings cost a
     * cache line apiece on every message */
    int *srcs, nsrcs;
    bool by_state, srcs_dirty;
    uint32_t srcs_events;    /* hdr->events when srcs was made */
    bool any_consumed;       /* since the last answer_want_space */
    uint64_t spin_win;       /* adaptive: how long a wait spins now */
} node_shm;

/* --------------------------------------------------------------- layout */

static size_t round_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

static size_t slots_off(void) { return round_up(sizeof(struct seg_hdr), LINE); }

static size_t boards_off(int n)
{
    return round_up(slots_off() + (size_t)n * sizeof(struct node_slot), 4096);
}

static size_t rings_off(int n)
{
    return boards_off(n) + (size_t)n * NET_BOARD_BYTES;
}

static struct node_slot *seg_slots(void *base)
{
    return (struct node_slot *)((char *)base + slots_off());
}

static size_t ring_stride(uint64_t cap) { return sizeof(struct ring_hdr) + cap; }

static size_t seg_size(int n, uint64_t cap)
{
    return rings_off(n) + (size_t)n * (size_t)(n - 1) * ring_stride(cap);
}

static struct ring_hdr *ring_at(void *base, int n, uint64_t cap, int src, int dst)
{
    size_t idx = (size_t)src * (size_t)(n - 1) + (size_t)(dst < src ? dst : dst - 1);
    return (struct ring_hdr *)((char *)base + rings_off(n) + idx * ring_stride(cap));
}

static uint64_t ring_cap(size_t want)
{
    uint64_t c = NET_RING_MIN;
    while (c < want)
        c <<= 1;
    return c;
}

/* ------------------------------------------------------------- launcher */

static void *seg_map(size_t size, int *fd)
{
    *fd = memfd_create("upvm-net", MFD_CLOEXEC);
    if (*fd >= 0 && ftruncate(*fd, (off_t)size) < 0) {
        close(*fd);
        return MAP_FAILED;
    }
    int flags = *fd >= 0 ? MAP_SHARED : MAP_SHARED | MAP_ANONYMOUS;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, *fd, 0);
    if (p == MAP_FAILED && *fd >= 0)
        close(*fd);
    return p;
}

int net_shm_create(int nnodes, const net_config_t *cfg, net_shm_seg_t **out)
{
    net_config_t env;
    if (!cfg) {
        net_config_from_env(&env);
        cfg = &env;
    }
    if (nnodes < 1 || nnodes > MAX_NODES || cfg->ring_bytes < NET_RING_MIN ||
        cfg->ring_bytes > NET_RING_MAX)
        return -EINVAL;
    uint64_t cap = ring_cap(cfg->ring_bytes);
    struct net_shm_seg *seg = calloc(1, sizeof *seg);
    if (!seg)
        return -ENOMEM;
    seg->size = seg_size(nnodes, cap);
    seg->base = seg_map(seg->size, &seg->fd);
    if (seg->base == MAP_FAILED) {
        int e = errno;
        free(seg);
        return -e;
    }
    struct seg_hdr *h = seg->base; /* the rest is zero: awake, empty rings */
    *h = (struct seg_hdr){.magic = SEG_MAGIC, .version = SEG_VERSION, .nnodes = (uint32_t)nnodes,
                          .ring_bytes = cap, .size = seg->size};
    for (int i = 0; i < nnodes; i++) /* no node has woken another yet */
        atomic_store(&seg_slots(seg->base)[i].waker_cpu, -1);
    *out = seg;
    return 0;
}

int net_shm_fd(const net_shm_seg_t *seg) { return seg->fd; }

void net_shm_drop_handle(net_shm_seg_t *seg)
{
    if (seg->fd >= 0)
        close(seg->fd);
    free(seg);
}

void net_shm_destroy(net_shm_seg_t *seg)
{
    if (!seg)
        return;
    munmap(seg->base, seg->size);
    if (seg->fd >= 0)
        close(seg->fd);
    free(seg);
}

/* ---------------------------------------------------------- membership */

static void futex_wake(_Atomic uint32_t *w);

void net_shm_set_state(net_shm_seg_t *seg, int node, enum net_peer_state state, int status)
{
    struct seg_hdr *h = seg->base;
    struct node_slot *slots = seg_slots(seg->base);
    if (node < 0 || node >= (int)h->nnodes)
        return;
    atomic_store(&slots[node].status, status);
    atomic_store(&slots[node].state, (uint32_t)state);
    atomic_fetch_add(&h->events, 1);
    for (uint32_t i = 0; i < h->nnodes; i++) /* every node looks again */
        if (atomic_exchange(&slots[i].word, W_WAKE_PENDING) == W_SLEEPING)
            futex_wake(&slots[i].word);
}

/* A node's view, through net.c (node in range, a transport up). */
static enum net_peer_state shm_peer_state(int node)
{
    return (enum net_peer_state)atomic_load(&node_shm.slots[node].state);
}

enum net_peer_state net_shm_state(net_shm_seg_t *seg, int node)
{
    struct seg_hdr *h = seg->base;
    if (node < 0 || node >= (int)h->nnodes)
        return NET_PEER_ABSENT;
    return (enum net_peer_state)atomic_load(&seg_slots(seg->base)[node].state);
}

int net_shm_nslots(net_shm_seg_t *seg)
{
    return (int)((struct seg_hdr *)seg->base)->nnodes;
}

/* Zero len bytes at p of a shared mapping: whole pages are given back
 * (MADV_REMOVE: they read as zero and cost no memory), the edges set. */
static void zero_shared(void *p, size_t len)
{
    uintptr_t a = (uintptr_t)p, end = a + len, page = 4096;
    uintptr_t lo = (a + page - 1) & ~(page - 1), hi = end & ~(page - 1);
    if (hi <= lo || madvise((void *)lo, hi - lo, MADV_REMOVE) != 0) {
        memset(p, 0, len);
        return;
    }
    memset(p, 0, lo - a);
    memset((void *)hi, 0, end - hi);
}

void net_shm_keep_states(net_shm_seg_t *seg)
{
    ((struct seg_hdr *)seg->base)->states = 1;
}

int net_shm_recycle(net_shm_seg_t *seg, int node)
{
    struct seg_hdr *h = seg->base;
    int n = (int)h->nnodes;
    if (node < 0 || node >= n)
        return -EINVAL;
    struct node_slot *slot = &seg_slots(seg->base)[node];
    if (atomic_load(&slot->state) != NET_PEER_GONE || !atomic_load(&slot->recycle))
        return -EBUSY;
    for (int p = 0; p < n; p++) {
        if (p == node)
            continue;
        zero_shared(ring_at(seg->base, n, h->ring_bytes, node, p), ring_stride(h->ring_bytes));
        zero_shared(ring_at(seg->base, n, h->ring_bytes, p, node), ring_stride(h->ring_bytes));
    }
    zero_shared(net_shm_board(seg, node), NET_BOARD_BYTES);
    atomic_store(&slot->word, W_AWAKE);
    atomic_store(&slot->waker_cpu, -1);
    atomic_store(&slot->recycle, 0);
    net_shm_set_state(seg, node, NET_PEER_ABSENT, 0);
    return 0;
}

bool net_shm_recycle_asked(net_shm_seg_t *seg, int node)
{
    struct seg_hdr *h = seg->base;
    return node >= 0 && node < (int)h->nnodes &&
           atomic_load(&seg_slots(seg->base)[node].recycle) != 0;
}

static int shm_peer_status(int node)
{
    return atomic_load(&node_shm.slots[node].status);
}

static int shm_request_start(int node)
{
    uint32_t absent = NET_PEER_ABSENT;
    if (!atomic_compare_exchange_strong(&node_shm.slots[node].state, &absent, NET_PEER_STARTING))
        return -EBUSY;
    return 0;
}

/* A peer that is gone: nothing more is read from it or kept for it. */
static void shm_forget(int node)
{
    struct in *in = &node_shm.ins[node];
    in->broken = true;
    node_shm.srcs_dirty = true;
    free(in->as);
    in->as = NULL;
    in->as_cap = in->as_total = in->as_got = 0;
    in->in_frame = false;
    in->consumed = false;
    struct out *o = &node_shm.outs[node];
    if (o->bl) {
        free(o->bl);
        o->bl = NULL;
        o->bl_off = o->bl_len = 0;
        node_shm.nbacklog--;
    }
    o->wants = false;
}

static int shm_request_recycle(int node)
{
    if (shm_peer_state(node) != NET_PEER_GONE)
        return -EBUSY;
    atomic_store(&node_shm.slots[node].recycle, 1);
    return 0;
}

/* The launcher zeroed the slot's rings (net_shm_recycle): start them
 * afresh, as for a slot never used. */
static void shm_reset(int node)
{
    shm_forget(node);
    struct in *in = &node_shm.ins[node];
    in->head = 0;
    in->broken = false;
    node_shm.srcs_dirty = true;
    struct out *o = &node_shm.outs[node];
    o->tail = o->head_cache = 0;
    o->clear = REC_ALIGN;
}

static void *shm_board(int node)
{
    return (char *)node_shm.hdr + boards_off(node_shm.n) + (size_t)node * NET_BOARD_BYTES;
}

void *net_shm_board(net_shm_seg_t *seg, int node)
{
    struct seg_hdr *h = seg->base;
    if (node < 0 || node >= (int)h->nnodes)
        return NULL;
    return (char *)seg->base + boards_off((int)h->nnodes) + (size_t)node * NET_BOARD_BYTES;
}

/* ---------------------------------------------------------------- futex */

static void futex_wake(_Atomic uint32_t *w)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* Sleeps while *w == val, at most until deadline (0: no limit).  False
 * when the deadline passed. */
static bool futex_wait_until(_Atomic uint32_t *w, uint32_t val, uint64_t deadline)
{
    struct timespec ts, *tp = NULL;
    if (deadline) {
        uint64_t now = net_now_ns();
        if (now >= deadline)
            return false;
        ts.tv_sec = (time_t)((deadline - now) / 1000000000u);
        ts.tv_nsec = (long)((deadline - now) % 1000000000u);
        tp = &ts;
    }
    long rc = syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, val, tp, NULL, 0);
    return !(rc < 0 && errno == ETIMEDOUT);
}

/* A node wakes a sleeping one, and says from which cpu (adapt_after_sleep). */
static void wake_sleeper(int node)
{
    atomic_store_explicit(&node_shm.slots[node].waker_cpu, sched_getcpu(), memory_order_relaxed);
    futex_wake(&node_shm.slots[node].word);
}

/* Wake `node` if it sleeps; otherwise leave it a pending wake-up. */
void shm_wake(int node)
{
    _Atomic uint32_t *w = &node_shm.slots[node].word;
    if (atomic_exchange(w, W_WAKE_PENDING) == W_SLEEPING)
        wake_sleeper(node);
}

/* After publishing to dst: a syscall only if dst sleeps. */
static void notify(int dst)
{
    _Atomic uint32_t *w = &node_shm.slots[dst].word;
    atomic_thread_fence(memory_order_seq_cst);
    uint32_t v = atomic_load_explicit(w, memory_order_relaxed);
    if (unlikely(v == W_SLEEPING) &&
        atomic_compare_exchange_strong(w, &v, W_AWAKE))
        wake_sleeper(dst);
}

/* -------------------------------------------------------------- sending */

static uint64_t rec_size(size_t plen) { return round_up(REC_HDR + plen, REC_ALIGN); }

/* The header word at ring offset off (any lap). */
static uint64_t *rec_at(uint8_t *data, uint64_t pos)
{
    return (uint64_t *)(void *)(data + (pos & node_shm.mask));
}

/* Space the record needs at o's tail (a PAD to the end included). */
static uint64_t rec_need(const struct out *o, uint64_t rs)
{
    uint64_t to_end = node_shm.cap - (o->tail & node_shm.mask);
    return rs > to_end ? to_end + rs : rs;
}

/* Room for need bytes at o's tail, and for the empty header after them
 * (ring_put clears it): the ring is never completely full. */
static bool has_room(struct out *o, uint64_t need)
{
    need += REC_ALIGN;
    if (node_shm.cap - (o->tail - o->head_cache) >= need)
        return true;
    o->head_cache = atomic_load_explicit(&o->r->head, memory_order_acquire);
    return node_shm.cap - (o->tail - o->head_cache) >= need;
}

/* A read cursor over the pieces of a frame (net_sendv's iovec). */
struct gather {
    const struct iovec *iov;
    int i;       /* current piece */
    size_t off;  /* bytes of it already taken */
};

/* Copies the next n bytes of g to dst and moves past them. */
static void gather_copy(struct gather *g, uint8_t *dst, size_t n)
{
    while (n) {
        const struct iovec *v = &g->iov[g->i];
        size_t k = v->iov_len - g->off;
        if (k > n)
            k = n;
        if (k) /* an empty piece may have no address at all */
            util_copy(dst, (const uint8_t *)v->iov_base + g->off, k);
        dst += k;
        n -= k;
        g->off += k;
        if (g->off == v->iov_len) {
            g->i++;
            g->off = 0;
        }
    }
}

/*
 * Header slots (the first word of each REC_ALIGN block) in free space past
 * the tail are cleared ahead of need, after a record is published: these
 * stores then never delay a publication (x86 commits stores in order, and
 * a store to a line the consumer holds waits for that line).
 */
static void clear_ahead(struct out *o)
{
    uint64_t lim = o->tail + CLEAR_AHEAD, free_end = o->head_cache + node_shm.cap;
    if (lim > free_end)
        lim = free_end;
    for (; o->clear < lim; o->clear += REC_ALIGN)
        __atomic_store_n(rec_at(o->data, o->clear), 0, __ATOMIC_RELAXED);
}

/*
 * One record: the u64 prefix pre (FIRST's total length; NULL: none), then
 * the next len bytes of g, published; false (nothing written or taken)
 * when the ring has no room for it.
 *
 * The payload is written first, then the record's header with a release
 * store: a consumer that sees a non-zero header sees the whole record.
 * The header slot after the record is 0 before that (cleared ahead, or
 * here), so the next header the consumer looks at is either published or
 * 0, never a leftover of an older lap.  A PAD (when the record does not
 * fit before the ring's end) is published last, since the consumer
 * reaches the record only through it.
 */
static bool ring_put(struct out *o, uint32_t kind, const uint64_t *pre, struct gather *g,
                     size_t len)
{
    size_t plen = len + (pre ? sizeof *pre : 0);
    uint64_t rs = rec_size(plen), need = rec_need(o, rs);
    if (!has_room(o, need))
        return false;
    uint64_t pad_at = o->tail, at = o->tail + need - rs, end = at + rs;
    uint8_t *p = o->data + (at & node_shm.mask) + REC_HDR;
    if (pre) {
        memcpy(p, pre, sizeof *pre);
        p += sizeof *pre;
    }
    gather_copy(g, p, len);
    if (o->clear <= end) { /* a record longer than what was cleared ahead */
        __atomic_store_n(rec_at(o->data, end), 0, __ATOMIC_RELAXED);
        o->clear = end + REC_ALIGN;
    }
    __atomic_store_n(rec_at(o->data, at), rec_word(kind, (uint32_t)plen), __ATOMIC_RELEASE);
    if (at != pad_at)
        __atomic_store_n(rec_at(o->data, pad_at),
                         rec_word(R_PAD, (uint32_t)(need - rs - REC_HDR)), __ATOMIC_RELEASE);
    o->tail = end;
    atomic_store_explicit(&o->r->tail, end, memory_order_relaxed);
    clear_ahead(o);
    return true;
}

/* Asks the consumer to wake us when it frees space. */
static void want_space(struct out *o)
{
    o->wants = true;
    atomic_store(&o->r->want_space, 1);
}

/* FRAG records from g while they fit, *left bytes in all; true when all
 * went. */
static bool put_frags(struct out *o, struct gather *g, size_t *left)
{
    while (*left) {
        size_t n = *left < node_shm.frag_max ? *left : node_shm.frag_max;
        if (!ring_put(o, R_FRAG, NULL, g, n))
            return false;
        *left -= n;
    }
    return true;
}

/* Pushes o's backlog; true when it is empty. */
static bool flush_one(struct out *o, int dst)
{
    size_t left = o->bl_len - o->bl_off;
    struct iovec v = {o->bl + o->bl_off, left};
    struct gather g = {&v, 0, 0};
    bool done = put_frags(o, &g, &left);
    size_t sent = o->bl_len - o->bl_off - left;
    o->bl_off += sent;
    if (sent)
        notify(dst);
    if (!done) {
        want_space(o);
        return false;
    }
    free(o->bl);
    o->bl = NULL;
    o->bl_off = o->bl_len = 0;
    node_shm.nbacklog--;
    return true;
}

int shm_flush(void)
{
    if (likely(node_shm.nbacklog == 0))
        return 0;
    for (int d = 0; d < node_shm.n; d++)
        if (node_shm.outs[d].bl)
            flush_one(&node_shm.outs[d], d);
    return node_shm.nbacklog ? -EAGAIN : 0;
}

/* A frame bigger than one record: FIRST, FRAGs, the rest to the backlog. */
static int send_big(struct out *o, int dst, struct gather *g, size_t len)
{
    uint64_t total = len;
    size_t first = node_shm.frag_max - sizeof total, left = len - first;
    /* The backlog is allocated before anything is written: the worst case
     * needs it, and after FIRST there is no way back. */
    uint8_t *bl = NULL;
    uint64_t worst = len + (len / node_shm.frag_max + 2) * 16 + node_shm.frag_max + 16;
    if (!has_room(o, worst)) {
        bl = malloc(left);
        if (!bl)
            return -ENOMEM;
    }
    if (!ring_put(o, R_FIRST, &total, g, first)) {
        free(bl);
        want_space(o);
        return -EAGAIN;
    }
    bool done = put_frags(o, g, &left);
    notify(dst);
    if (done) {
        free(bl);
        return 0;
    }
    gather_copy(g, bl, left);
    o->bl = bl;
    o->bl_off = 0;
    o->bl_len = left;
    node_shm.nbacklog++;
    want_space(o);
    return 0;
}

int shm_sendv(int dst, const struct iovec *iov, int iovcnt, size_t len)
{
    struct out *o = &node_shm.outs[dst];
    struct gather g = {iov, 0, 0};
    (void)iovcnt;
    if (unlikely(o->bl) && !flush_one(o, dst))
        return -EAGAIN;
    if (len > node_shm.frag_max)
        return send_big(o, dst, &g, len);
    if (unlikely(!ring_put(o, R_WHOLE, NULL, &g, len))) {
        want_space(o);
        return -EAGAIN;
    }
    notify(dst);
    return 0;
}

/* ------------------------------------------------------------ receiving */

static void consume(struct in *in, uint64_t bytes)
{
    in->head += bytes;
    in->consumed = true;
    node_shm.any_consumed = true;
    atomic_store_explicit(&in->r->head, in->head, memory_order_release);
}

static int frag_start(struct in *in, const uint8_t *p, uint32_t len)
{
    uint64_t total;
    memcpy(&total, p, sizeof total);
    if (unlikely(total < len - sizeof total || total > NET_FRAME_MAX)) {
        in->broken = true; /* a corrupt ring: ignore the peer from now on */
        return 0;
    }
    if (total > in->as_cap) {
        uint8_t *b = malloc(total);
        if (!b)
            return -ENOMEM;
        free(in->as);
        in->as = b;
        in->as_cap = total;
    }
    in->as_total = total;
    in->as_got = len - sizeof total;
    in->in_frame = true;
    util_copy(in->as, p + sizeof total, in->as_got);
    return 0;
}

/* A reassembly buffer above this size goes back after its frame. */
#define AS_KEEP ((size_t)1 << 20)

static void frag_done(struct in *in, int src, net_handler_fn fn, void *ctx)
{
    in->in_frame = false;
    fn(ctx, src, in->as, in->as_total);
    if (in->as_cap > AS_KEEP) {
        free(in->as);
        in->as = NULL;
        in->as_cap = 0;
    }
}

/* One record at in's head.  1: a frame delivered, 0: not, <0: error. */
static int take_record(struct in *in, int src, net_handler_fn fn, void *ctx)
{
    uint64_t w = __atomic_load_n(rec_at(in->data, in->head), __ATOMIC_ACQUIRE);
    const uint8_t *p = in->data + (in->head & node_shm.mask) + REC_HDR;
    struct {
        uint32_t len, kind;
    } h = {rec_len(w), rec_kind(w)};
    if (h.kind == R_PAD) {
        consume(in, node_shm.cap - (in->head & node_shm.mask));
        return 0;
    }
    bool bad = h.len > node_shm.frag_max || (h.kind == R_FRAG) != in->in_frame ||
               (h.kind == R_FRAG && h.len > in->as_total - in->as_got) ||
               (h.kind == R_FIRST && h.len < 8);
    if (unlikely(bad || (h.kind != R_WHOLE && h.kind != R_FIRST && h.kind != R_FRAG))) {
        in->broken = true; /* a corrupt ring: ignore the peer from now on */
        return 0;
    }
    int got = 0;
    if (h.kind == R_WHOLE) {
        fn(ctx, src, p, h.len);
        got = 1;
    } else if (h.kind == R_FIRST) {
        int rc = frag_start(in, p, h.len);
        if (rc < 0 || in->broken)
            return rc;
    } else {
        util_copy(in->as + in->as_got, p, h.len);
        in->as_got += h.len;
    }
    consume(in, rec_size(h.len));
    if (in->in_frame && in->as_got == in->as_total) {
        frag_done(in, src, fn, ctx);
        got = 1;
    }
    return got;
}

/* One load of the line the next record will be in: no index to read
 * first, so a waiting consumer takes one cache miss per small frame. */
static bool in_empty(struct in *in)
{
    return __atomic_load_n(rec_at(in->data, in->head), __ATOMIC_ACQUIRE) == 0;
}

static int drain(struct in *in, int src, net_handler_fn fn, void *ctx, int max)
{
    int n = 0;
    while (n < max && !in->broken && !in_empty(in)) {
        int rc = take_record(in, src, fn, ctx);
        if (rc < 0)
            return n ? n : rc;
        n += rc;
    }
    return n;
}

/* Producers we freed space for get woken if they asked. */
static void answer_want_space(void)
{
    if (!node_shm.any_consumed)
        return;
    node_shm.any_consumed = false;
    atomic_thread_fence(memory_order_seq_cst);
    for (int s = 0; s < node_shm.n; s++) {
        struct in *in = &node_shm.ins[s];
        if (!in->consumed)
            continue;
        in->consumed = false;
        if (atomic_load_explicit(&in->r->want_space, memory_order_relaxed) &&
            atomic_exchange(&in->r->want_space, 0))
            shm_wake(s);
    }
}

/* The peers worth looking at (see node_shm.srcs), made again when a
 * node's state changed. */
static void refresh_srcs(void)
{
    uint32_t ev = atomic_load_explicit(&node_shm.hdr->events, memory_order_acquire);
    if (!node_shm.srcs_dirty && (!node_shm.by_state || ev == node_shm.srcs_events))
        return;
    node_shm.srcs_events = ev;
    node_shm.srcs_dirty = false;
    int k = 0;
    for (int p = 0; p < node_shm.n; p++)
        if (p != node_shm.self && !node_shm.ins[p].broken &&
            (!node_shm.by_state || shm_peer_state(p) != NET_PEER_ABSENT))
            node_shm.srcs[k++] = p;
    node_shm.nsrcs = k;
    if (node_shm.next_src >= k)
        node_shm.next_src = 0;
}

int shm_poll(net_handler_fn fn, void *ctx, int max)
{
    int n = 0, err = 0;
    shm_flush();
    refresh_srcs();
    int N = node_shm.nsrcs, i0 = node_shm.next_src;
    /* (no % N: a division costs more than the rest of an empty poll) */
    for (int i = 0, k = i0; i < N && n < max; i++, k = k + 1 == N ? 0 : k + 1) {
        int s = node_shm.srcs[k];
        int rc = drain(&node_shm.ins[s], s, fn, ctx, max - n);
        if (rc < 0)
            err = rc;
        else
            n += rc;
    }
    node_shm.next_src = i0 + 1 >= N ? 0 : i0 + 1;
    answer_want_space();
    return n ? n : err;
}

/* ------------------------------------------------------------- idleness */

/* Anything to do: a frame, freed space we wait for, a pending wake. */
static bool ready(void)
{
    refresh_srcs();
    for (int k = 0; k < node_shm.nsrcs; k++) {
        struct in *in = &node_shm.ins[node_shm.srcs[k]];
        if (!in->broken && !in_empty(in))
            return true;
    }
    for (int d = 0; d < node_shm.n; d++) {
        struct out *o = &node_shm.outs[d];
        if (o->wants && atomic_load(&o->r->head) != o->head_cache) {
            o->wants = false;
            return true;
        }
    }
    return false;
}

static bool take_pending_wake(void)
{
    _Atomic uint32_t *w = &node_shm.slots[node_shm.self].word;
    uint32_t v = W_WAKE_PENDING;
    return atomic_load_explicit(w, memory_order_relaxed) == W_WAKE_PENDING &&
           atomic_compare_exchange_strong(w, &v, W_AWAKE);
}

/* A wait's clock (net_impl.h) is first read after SPIN_CHECK rounds of
 * polling; every duration below is counted from that first read. */
#define SPIN_CHECK 64

/* Spins until something is ready (true) or ns passed (false). */
static bool spin_for(struct net_wait_clock *c, uint64_t ns)
{
    for (unsigned i = 1;; i++) {
        if (take_pending_wake() || ready())
            return true;
        if (i % SPIN_CHECK == 0 && net_clock_since(c) >= ns)
            return false;
        __builtin_ia32_pause();
    }
}

static int sleep_until(uint64_t deadline)
{
    _Atomic uint32_t *w = &node_shm.slots[node_shm.self].word;
    if (atomic_exchange(w, W_SLEEPING) == W_WAKE_PENDING) {
        atomic_store(w, W_AWAKE);
        return 1;
    }
    atomic_thread_fence(memory_order_seq_cst);
    bool woke = ready() || futex_wait_until(w, W_SLEEPING, deadline);
    /* Anything but SLEEPING means someone woke us. */
    if (atomic_exchange(w, W_AWAKE) != W_SLEEPING)
        woke = true;
    return woke || ready();
}

/*
 * The adaptive policy's spin window, between spin_ns and spin_max_ns.  A
 * sleep costs the sender a FUTEX_WAKE and the sleeper a wake-up (several
 * µs each), so when a sleep ended soon, because the peer answered within
 * spin_max_ns / 2 (a large message takes that long to copy and unpack),
 * the window grows to twice that gap and later waits of that length spin
 * through; a long sleep, or short gaps (spins that ended in the first
 * quarter of the window), bring it back down.
 *
 * Only when the waker ran on another cpu, though: one that ran on ours
 * (the cores are shared with other work, or there are more nodes than
 * cores) could run only because we slept, and spinning longer would only
 * have kept it off the cpu (measured: 0 B ping-pong on two busy cores,
 * 13 µs with a fixed window, 30 µs growing it regardless).
 */
static uint64_t adapt_after_spin(uint64_t win, struct net_wait_clock *c)
{
    uint64_t lo = net_cur.cfg.spin_ns;
    if (win > lo && (!c->t0 || net_clock_since(c) < win / 4))
        win = win / 2 > lo ? win / 2 : lo;
    return win;
}

static uint64_t adapt_after_sleep(uint64_t win, uint64_t gap)
{
    _Atomic int32_t *wc = &node_shm.slots[node_shm.self].waker_cpu;
    int waker = atomic_exchange_explicit(wc, -1, memory_order_relaxed);
    if (gap < net_cur.cfg.spin_max_ns / 2 && waker >= 0 && waker != sched_getcpu())
        return 2 * gap > win ? 2 * gap : win;
    return net_cur.cfg.spin_ns;
}

static int shm_wait(int64_t timeout_ns)
{
    if (take_pending_wake() || ready())
        return 1;
    if (timeout_ns == 0)
        return 0;
    uint64_t limit = net_wait_limit(timeout_ns);
    struct net_wait_clock c = {0};
    net_idle_t idle = net_cur.cfg.idle;
    uint64_t spin = net_policy_spin(limit, node_shm.spin_win);
    spin = net_spin_window(spin, limit);
    if (spin && spin_for(&c, spin)) {
        if (idle == NET_IDLE_ADAPTIVE)
            node_shm.spin_win = adapt_after_spin(node_shm.spin_win, &c);
        return 1;
    }
    if (spin == limit)
        return 0;
    (void)net_clock_since(&c); /* the start, for the deadline and the gap */
    int woke = sleep_until(timeout_ns < 0 ? 0 : c.t0 + limit);
    if (woke && idle == NET_IDLE_ADAPTIVE)
        node_shm.spin_win = adapt_after_sleep(node_shm.spin_win, net_clock_since(&c));
    return woke;
}

/* ------------------------------------------------------------ lifecycle */

void shm_fini(void)
{
    for (int i = 0; i < node_shm.n; i++) {
        free(node_shm.outs[i].bl);
        free(node_shm.ins[i].as);
    }
    free(node_shm.outs);
    free(node_shm.ins);
    free(node_shm.srcs);
    if (node_shm.map)
        munmap(node_shm.map, node_shm.map_size);
    memset(&node_shm, 0, sizeof node_shm);
}

static int shm_path(int node)
{
    (void)node;
    return NET_PATH_SHM;
}

static const struct net_ops shm_ops = {
    .sendv = shm_sendv, .poll = shm_poll, .wait = shm_wait,
    .wake = shm_wake, .flush = shm_flush, .fini = shm_fini,
    .peer_state = shm_peer_state, .peer_status = shm_peer_status,
    .request_start = shm_request_start, .board = shm_board, .path = shm_path,
    .forget = shm_forget, .request_recycle = shm_request_recycle, .reset = shm_reset,
};

static void attach_rings(void *base, int n, int me)
{
    for (int p = 0; p < n; p++) {
        if (p == me)
            continue;
        struct out *o = &node_shm.outs[p];
        o->r = ring_at(base, n, node_shm.cap, me, p);
        o->data = (uint8_t *)(o->r + 1);
        o->tail = o->head_cache = atomic_load(&o->r->tail);
        o->clear = o->tail + REC_ALIGN; /* the slot at the tail is always 0 */
        struct in *in = &node_shm.ins[p];
        in->r = ring_at(base, n, node_shm.cap, p, me);
        in->data = (uint8_t *)(in->r + 1);
        in->head = atomic_load(&in->r->head);
    }
}

/* node_shm becomes node `node` of the segment at base (size bytes mapped;
 * 0: not known, a forked node's inherited mapping). */
static int attach_seg(void *base, size_t size, int node)
{
    struct seg_hdr *h = base;
    if (node_shm.hdr)
        return -EBUSY;
    if (h->magic != SEG_MAGIC || h->version != SEG_VERSION || (size && h->size > size))
        return -EINVAL;
    int n = (int)h->nnodes;
    if (node < 0 || node >= n)
        return -EINVAL;
    node_shm.outs = calloc((size_t)n, sizeof *node_shm.outs);
    node_shm.ins = calloc((size_t)n, sizeof *node_shm.ins);
    node_shm.srcs = calloc((size_t)n, sizeof *node_shm.srcs);
    if (!node_shm.outs || !node_shm.ins || !node_shm.srcs) {
        free(node_shm.outs);
        free(node_shm.ins);
        free(node_shm.srcs);
        node_shm.outs = NULL;
        node_shm.ins = NULL;
        node_shm.srcs = NULL;
        return -ENOMEM;
    }
    node_shm.srcs_dirty = true; /* made at the first poll */
    node_shm.hdr = h;
    node_shm.slots = seg_slots(base);
    node_shm.cap = h->ring_bytes;
    node_shm.mask = node_shm.cap - 1;
    node_shm.frag_max = node_shm.cap / 4 - 16;
    node_shm.self = node;
    node_shm.n = n;
    attach_rings(base, n, node);
    return 0;
}

/* node_shm, attached, becomes this process's transport. */
static void install(const net_config_t *cfg)
{
    if (cfg)
        net_cur.cfg = *cfg;
    else
        net_config_from_env(&net_cur.cfg);
    if (net_cur.cfg.spin_max_ns < net_cur.cfg.spin_ns)
        net_cur.cfg.spin_max_ns = net_cur.cfg.spin_ns; /* a fixed window */
    node_shm.spin_win = net_cur.cfg.spin_ns;
    /* a job launcher's segment: its empty slots need no look */
    node_shm.by_state = node_shm.hdr->states != 0;
    node_shm.srcs_dirty = true;
    net_cur.node = node_shm.self;
    net_cur.nnodes = node_shm.n;
    net_cur.events = &node_shm.hdr->events;
    net_cur.once = &node_shm.hdr->once;
    net_cur.ops = &shm_ops;
}

int net_init_shm(net_shm_seg_t *seg, int node, const net_config_t *cfg)
{
    if (net_cur.ops)
        return -EBUSY;
    int rc = attach_seg(seg->base, seg->size, node);
    if (rc == 0)
        install(cfg);
    return rc;
}

/* Maps the segment behind fd (which stays open). */
static int map_fd(int fd, void **p, size_t *size)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -errno;
    if ((size_t)st.st_size < sizeof(struct seg_hdr))
        return -EINVAL;
    *size = (size_t)st.st_size;
    *p = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return *p == MAP_FAILED ? -errno : 0;
}

int net_init_shm_fd(int fd, int node, const net_config_t *cfg)
{
    if (net_cur.ops)
        return -EBUSY;
    int rc = shm_part_init_fd(fd, node);
    if (rc == 0)
        install(cfg);
    return rc;
}

/* ------------------------------------------------- a part of the hybrid */

int shm_part_init(net_shm_seg_t *seg, int node)
{
    int rc = attach_seg(seg->base, seg->size, node);
    if (rc < 0)
        return rc;
    node_shm.map = seg->base; /* ours to unmap: net_shm_drop_handle leaves it */
    node_shm.map_size = seg->size;
    return 0;
}

int shm_part_init_fd(int fd, int node)
{
    void *p = NULL;
    size_t size = 0;
    if (node_shm.hdr)
        return -EBUSY;
    int rc = map_fd(fd, &p, &size);
    if (rc < 0)
        return rc;
    rc = attach_seg(p, size, node);
    if (rc < 0) {
        munmap(p, size);
        return rc;
    }
    node_shm.map = p;
    node_shm.map_size = size;
    return 0;
}

/* (The static ones stay shm_wait's to inline, as before the hybrid.) */
bool shm_look(void)
{
    return take_pending_wake() || ready();
}

int shm_sleep_until(uint64_t deadline)
{
    return sleep_until(deadline);
}

uint64_t shm_adapt_after_spin(uint64_t win, struct net_wait_clock *c)
{
    return adapt_after_spin(win, c);
}

uint64_t shm_adapt_after_sleep(uint64_t win, uint64_t gap)
{
    return adapt_after_sleep(win, gap);
}

_Atomic uint32_t *shm_word(void)
{
    return &node_shm.slots[node_shm.self].word;
}

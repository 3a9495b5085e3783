/*
 * proto.c - keeping pages coherent across nodes: IVY's write-invalidate
 * protocol with its three managers (design notes §15.5).
 *
 * The invariant (Li's): a page is writable on one node and mapped nowhere
 * else, or readable on several with the same contents.  The owner of a
 * page keeps its copy set and serves requests one at a time:
 *
 *   read   the owner adds the requester to the copy set, drops its own
 *          access to READ if it was WRITE, and sends the page (K_SVM_PAGE);
 *   write  the owner sends the page with ownership (no data when the
 *          requester holds a read copy, none either for a page nobody
 *          wrote), sends K_SVM_INVAL to every other copy holder and drops
 *          its own copy; the holders acknowledge to the new owner
 *          (K_SVM_ACK), which opens the page for writing once all have.
 *
 * The old owner, not the new one, invalidates: its copies went out from it,
 * and frames between two nodes keep their order, so an invalidation can
 * never overtake the copy it invalidates.
 *
 * Where a request goes first (svm_manager_of): node 0, which knows every
 * owner (improved centralized: it forwards to the owner and, for a write,
 * records the requester as the owner at once); node H(page), the same for
 * its share of the pages (fixed distributed); or the page's probable owner
 * (dynamic distributed: a node that is not the owner forwards to its own
 * hint and, for a write, points its hint at the requester; the owner that
 * gives a page away points at its new owner; an invalidation points at
 * the new owner).  The owner answers the requester directly.
 *
 * A request that reaches a node busy with the same page (its own request
 * or invalidation round is out, or the page arrived so recently that the
 * ULPs waiting for it have not run yet: PG_HELD) waits there, in order,
 * and is served at the next transport poll after the page settled.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "svm/svm_impl.h"

static inline uint64_t bit(int node)
{
    return 1ull << node;
}

static void req_arrived(int src, const struct node_frame *f, const void *payload, size_t len);
static void nack(struct svm_region *r, uint32_t p, int req);

/* ------------------------------------------------------------ requests kept */

struct deferred {
    struct deferred *next;
    struct svm_region *r;
    uint32_t page;
    uint8_t want, req, hops, passed;
};

static struct deferred *deferred_head, **deferred_tail = &deferred_head;

static void defer(struct svm_region *r, uint32_t p, int want, int req, int hops, int passed)
{
    struct deferred *d = malloc(sizeof *d);
    if (!d) {
        fprintf(stderr, "upvm: node %d: out of memory keeping a shared-page request\n", svm.self);
        _exit(71);
    }
    *d = (struct deferred){NULL, r, p, (uint8_t)want, (uint8_t)req, (uint8_t)hops, (uint8_t)passed};
    *deferred_tail = d;
    deferred_tail = &d->next;
    r->pages[p].ndeferred++;
}

/* Pages that arrived in this poll: settled at the next one (or, while a
 * ULP computes without polling, at the second service tick: service.c). */
struct held_page {
    struct svm_region *r;
    uint32_t page, tick; /* the service tick it arrived in */
};
static struct {
    struct held_page *v;
    int n, cap;
} held;
static uint32_t service_ticks;

static void hold(struct svm_region *r, uint32_t p)
{
    struct svm_page *e = &r->pages[p];
    if (e->flags & PG_HELD)
        return;
    if (held.n == held.cap) {
        int cap = held.cap ? held.cap * 2 : 64;
        struct held_page *v = realloc(held.v, (size_t)cap * sizeof *v);
        if (!v) {
            fprintf(stderr, "upvm: node %d: out of memory holding a shared page\n", svm.self);
            _exit(71);
        }
        held.v = v;
        held.cap = cap;
    }
    e->flags |= PG_HELD;
    held.v[held.n++] = (struct held_page){r, p, service_ticks};
}

static void handle_req(struct svm_region *r, uint32_t p, int want, int req, int hops, int passed,
                       bool queued);

/* Serve, in their order, the requests page p kept while it was busy. */
static void drain(struct svm_region *r, uint32_t p)
{
    struct svm_page *e = &r->pages[p];
    struct deferred **link = &deferred_head, *mine = NULL, **mine_tail = &mine;
    while (*link) { /* take them out first: serving one may defer another */
        struct deferred *d = *link;
        if (d->r == r && d->page == p) {
            *link = d->next;
            d->next = NULL;
            *mine_tail = d;
            mine_tail = &d->next;
            e->ndeferred--;
        } else {
            link = &d->next;
        }
    }
    deferred_tail = link;
    while (mine) {
        struct deferred *d = mine;
        mine = d->next;
        if (e->flags & (PG_BUSY | PG_HELD)) { /* busy again: the rest wait on */
            defer(r, p, d->want, d->req, d->hops, d->passed);
        } else {
            handle_req(r, p, d->want, d->req, d->hops, d->passed, true);
        }
        free(d);
    }
}

/* Serve what waited for the held pages that arrived before service tick
 * `before` (UINT32_MAX: all of them); the others stay held.  In place:
 * serving a request (drain) sends or forwards or keeps it, and never
 * holds a page -- only a page's arrival does. */
static void settle(uint32_t before)
{
    int kept = 0;
    for (int i = 0; i < held.n; i++) {
        struct held_page h = held.v[i];
        if (h.tick >= before) {
            held.v[kept++] = h;
            continue;
        }
        struct svm_page *e = &h.r->pages[h.page];
        e->flags &= (uint8_t)~PG_HELD;
        if (e->ndeferred)
            drain(h.r, h.page);
    }
    held.n = kept;
}

/* At the start of every poll: the pages that arrived in earlier polls have
 * had their waiting ULPs run; serve what waited for them. */
static void settle_held(void)
{
    settle(UINT32_MAX);
}

void svm_service_tick(void)
{
    settle(service_ticks++); /* those that arrived before the last tick */
}

/* ------------------------------------------------------------ sending */

int svm_manager_of(const struct svm_region *r, uint32_t p)
{
    switch (r->manager) {
    case SVM_MGR_FIXED: {
        int m = (int)((p + (uint32_t)r->slot * 31u) % r->nmgr);
        return node_job_up(m) ? m : 0;
    }
    case SVM_MGR_DYNAMIC:
        return r->pages[p].prob;
    default:
        return 0;
    }
}

static void send_req(int dst, struct svm_region *r, uint32_t p, int want, int req, int hops,
                     int passed)
{
    if (dst == svm.self) {
        handle_req(r, p, want, req, hops, passed, false);
        return;
    }
    if (!node_job_up(dst)) {
        nack(r, p, req);
        return;
    }
    svm_send(dst, K_SVM_REQ, r->slot, (int32_t)p, want | req << 8 | hops << 16 | passed << 24,
             NULL, 0);
}

static void finish(struct svm_region *r, uint32_t p);

/* Our write round on page p: done once every node told to drop its copy
 * has acknowledged. */
static void round_check(struct svm_region *r, uint32_t p)
{
    struct svm_page *e = &r->pages[p];
    if (!(e->flags & PG_OWNER) || !(e->flags & PG_BUSY) || (e->inval_out & ~e->acked))
        return;
    e->inval_out = e->acked = 0;
    finish(r, p);
}

static void ack_arrived_at(struct svm_region *r, uint32_t p, int from)
{
    r->pages[p].acked |= bit(from);
    round_check(r, p);
}

/* Tell every node of `copies` to drop its copy and acknowledge to the new
 * owner; the nodes told. */
static uint64_t invalidate(struct svm_region *r, uint32_t p, uint64_t copies, int new_owner)
{
    uint64_t told = 0;
    for (int node = 0; copies >> node; node++) {
        if (!(copies & bit(node)) || node == svm.self || node == new_owner)
            continue;
        if (!node_job_up(node))
            continue; /* a dead node's copy died with it */
        svm_send(node, K_SVM_INVAL, r->slot, (int32_t)p, new_owner, NULL, 0);
        told |= bit(node);
    }
    return told;
}

/* Page p cannot be had any more (its owner died, or the way to it did):
 * the ULPs waiting for it here end with a report (fault.c). */
static void page_lost(struct svm_region *r, uint32_t p)
{
    struct svm_page *e = &r->pages[p];
    e->flags |= PG_LOST;
    e->flags &= (uint8_t)~PG_BUSY;
    core_wake_all_front(svm_page_queue(r, p));
}

static void nack(struct svm_region *r, uint32_t p, int req)
{
    if (req == svm.self)
        page_lost(r, p);
    else
        svm_send(req, K_SVM_NACK, r->slot, (int32_t)p, -EHOSTDOWN, NULL, 0);
}

/* ------------------------------------------------------------ local */

bool svm_resolve_local(struct svm_region *r, uint32_t p, enum svm_access a)
{
    struct svm_page *e = &r->pages[p];
    if (!(e->flags & PG_OWNER) || (e->flags & PG_LOST))
        return false;
    if (a == SVM_WRITE && (e->copyset & ~bit(svm.self)))
        return false; /* copies to invalidate first */
    uintptr_t addr = svm_page_addr(r, p);
    if (e->access == SVM_NIL) /* a page nobody wrote yet */
        svm.ops->install(r, addr, NULL, a == SVM_WRITE);
    else if (e->access < a)
        svm.ops->protect(r, addr, a);
    e->flags &= (uint8_t)~PG_ZERO;
    if (e->access < a)
        e->access = (uint8_t)a;
    return true;
}

void svm_start_request(struct svm_region *r, uint32_t p, enum svm_access a)
{
    struct svm_page *e = &r->pages[p];
    e->flags |= PG_BUSY;
    e->want = (uint8_t)a;
    if (e->flags & PG_OWNER) { /* a write with copies out: an invalidation round */
        uint64_t copies = e->copyset;
        e->copyset = 0;
        e->acked = 0;
        e->inval_out = invalidate(r, p, copies, svm.self);
        round_check(r, p);
        return;
    }
    e->flags &= (uint8_t)~PG_PROB_MOVED;
    send_req(svm_manager_of(r, p), r, p, a, svm.self, 0, 0);
}

/* The page is here with the access asked for: wake who waits for it. */
static void finish(struct svm_region *r, uint32_t p)
{
    struct svm_page *e = &r->pages[p];
    if (e->want == SVM_WRITE && e->access != SVM_WRITE) {
        if (e->access == SVM_NIL)
            svm.ops->install(r, svm_page_addr(r, p), NULL, true);
        else
            svm.ops->protect(r, svm_page_addr(r, p), SVM_WRITE);
        e->access = SVM_WRITE;
        e->flags &= (uint8_t)~PG_ZERO;
    }
    e->flags &= (uint8_t)~PG_BUSY;
    hold(r, p); /* requests wait until the ULPs woken here made their access */
    core_wake_all_front(svm_page_queue(r, p));
}

/* ------------------------------------------------------------ serving */

/* The owner answers req (no request of its own is out for the page). */
static void serve(struct svm_region *r, uint32_t p, int want, int req)
{
    struct svm_page *e = &r->pages[p];
    uintptr_t addr = svm_page_addr(r, p);
    bool zero = e->access == SVM_NIL; /* owner without a copy: nobody wrote it */
    if (want == SVM_READ) {
        if (e->access == SVM_WRITE) {
            svm.ops->protect(r, addr, SVM_READ);
            e->access = SVM_READ;
        }
        e->copyset |= bit(req);
        svm_send(req, K_SVM_PAGE, r->slot, (int32_t)p, SVM_READ | (zero ? SVM_PF_ZERO : 0) << 8,
                 zero ? NULL : (const void *)addr, zero ? 0 : SVM_PAGE_SIZE);
        svm.stats.pages_out += !zero;
    } else {
        bool nodata = zero || (e->copyset & bit(req));
        uint64_t told = invalidate(r, p, e->copyset, req);
        int flags = SVM_PF_OWNER | (zero ? SVM_PF_ZERO : nodata ? SVM_PF_NODATA : 0);
        svm_send2(req, K_SVM_PAGE, r->slot, (int32_t)p, SVM_WRITE | flags << 8,
                  nodata ? NULL : (const void *)addr, nodata ? 0 : SVM_PAGE_SIZE, &told,
                  sizeof told);
        svm.stats.pages_out += !nodata;
        if (e->access != SVM_NIL)
            svm.ops->drop(r, addr);
        e->access = SVM_NIL;
        e->flags &= (uint8_t) ~(PG_OWNER | PG_ZERO);
        e->copyset = 0;
        e->prob = (int8_t)req;
        e->moves++;
    }
}

static void handle_req(struct svm_region *r, uint32_t p, int want, int req, int hops, int passed,
                       bool queued)
{
    struct svm_page *e = &r->pages[p];
    if (r->manager != SVM_MGR_DYNAMIC && !passed) { /* this node manages p */
        int owner = r->owner[p];
        if (owner < 0 || !node_job_up(owner)) { /* died with the page */
            r->owner[p] = -1;
            nack(r, p, req);
            return;
        }
        if (want == SVM_WRITE)
            r->owner[p] = (int8_t)req;
        if (owner != svm.self) {
            svm.stats.forwards++;
            send_req(owner, r, p, want, req, hops + 1, 1);
            return;
        }
        passed = 1;
    }
    if (e->flags & PG_OWNER) {
        if (req == svm.self) /* our own request, sent again after a death: we have it */
            return;
        if ((e->flags & (PG_BUSY | PG_HELD)) || (!queued && e->ndeferred))
            defer(r, p, want, req, hops, passed);
        else
            serve(r, p, want, req);
        return;
    }
    if ((e->flags & PG_BUSY) && e->want == SVM_WRITE) { /* ownership is on its way here */
        defer(r, p, want, req, hops, passed);
        return;
    }
    if (r->manager != SVM_MGR_DYNAMIC) {
        fprintf(stderr, "upvm: node %d: shared page %#lx: a request of node %d reached a node "
                        "that neither owns it nor awaits it (a bug in UPVM's protocol)\n",
                svm.self, (unsigned long)svm_page_addr(r, p), req);
        return;
    }
    /* dynamic: pass it on along the hints */
    int next = e->prob;
    if (hops > 2 * svm.slots || next == svm.self || next < 0 || !node_job_up(next)) {
        /* the hints lead nowhere: after a node's death, the owner with it */
        nack(r, p, req);
        return;
    }
    if (want == SVM_WRITE) {
        e->prob = (int8_t)req;
        if (e->flags & PG_BUSY)
            e->flags |= PG_PROB_MOVED;
    }
    svm.stats.forwards++;
    send_req(next, r, p, want, req, hops + 1, passed);
}

/* ------------------------------------------------------------ frames */

static struct svm_region *frame_region(const struct node_frame *f, const char *what)
{
    struct svm_region *r = svm_region_by_slot(f->a);
    if (!r || f->b < 0 || (uint32_t)f->b >= r->npages) {
        fprintf(stderr, "upvm: node %d: a shared-memory %s for page %d of region %d, which "
                        "this node does not have (a bug in UPVM)\n", svm.self, what, f->b, f->a);
        return NULL;
    }
    return r;
}

static void req_arrived(int src, const struct node_frame *f, const void *payload, size_t len)
{
    (void)src, (void)payload, (void)len;
    struct svm_region *r = frame_region(f, "request");
    if (r)
        handle_req(r, (uint32_t)f->b, f->c & 0xff, (f->c >> 8) & 0xff, (f->c >> 16) & 0xff,
                   (f->c >> 24) & 0xff, false);
}

static void page_arrived(int src, const struct node_frame *f, const void *payload, size_t len)
{
    struct svm_region *r = frame_region(f, "page");
    if (!r)
        return;
    uint32_t p = (uint32_t)f->b;
    struct svm_page *e = &r->pages[p];
    int access = f->c & 0xff, flags = (f->c >> 8) & 0xff;
    uintptr_t addr = svm_page_addr(r, p);
    const void *data = len >= SVM_PAGE_SIZE ? payload : NULL;
    if (data)
        svm.stats.pages_in++;
    if (!(flags & SVM_PF_OWNER)) { /* a read copy */
        if (e->flags & PG_OWNER)
            return; /* the answer to a request sent twice (after a death): ours is newer */
        svm.ops->install(r, addr, data, false);
        e->access = SVM_READ;
        e->flags &= (uint8_t)~PG_LOST;
        if (!(e->flags & PG_PROB_MOVED))
            e->prob = (int8_t)src;
        finish(r, p);
        return;
    }
    uint64_t told = 0;
    if (len >= (data ? SVM_PAGE_SIZE : 0) + sizeof told)
        memcpy(&told, (const char *)payload + (data ? SVM_PAGE_SIZE : 0), sizeof told);
    e->flags |= PG_OWNER | PG_BUSY;
    e->flags &= (uint8_t) ~(PG_ZERO | PG_LOST);
    e->want = SVM_WRITE;
    e->copyset = 0;
    e->prob = (int8_t)svm.self;
    e->moves++;
    told &= ~bit(svm.self);
    for (int n = 0; told >> n; n++) /* the dead do not answer */
        if ((told & bit(n)) && !node_job_up(n))
            e->acked |= bit(n);
    e->inval_out = told;
    bool now = !(told & ~e->acked);
    if (!(flags & SVM_PF_NODATA) || e->access == SVM_NIL) {
        if (flags & SVM_PF_NODATA && !(flags & SVM_PF_ZERO))
            fprintf(stderr, "upvm: node %d: shared page %#lx came without its contents to a "
                            "node that has none (a bug in UPVM's protocol)\n",
                    svm.self, (unsigned long)addr);
        svm.ops->install(r, addr, data, now && access == SVM_WRITE);
        e->access = now && access == SVM_WRITE ? SVM_WRITE : SVM_READ;
    }
    round_check(r, p);
}

static void inval_arrived(int src, const struct node_frame *f, const void *payload, size_t len)
{
    (void)src, (void)payload, (void)len;
    struct svm_region *r = frame_region(f, "invalidation");
    if (!r)
        return;
    uint32_t p = (uint32_t)f->b;
    struct svm_page *e = &r->pages[p];
    if (e->access != SVM_NIL) {
        svm.ops->drop(r, svm_page_addr(r, p));
        e->access = SVM_NIL;
        svm.stats.invalidations++;
    }
    e->prob = (int8_t)f->c;
    e->moves++;
    if (f->c == svm.self)
        ack_arrived_at(r, p, svm.self);
    else
        svm_send(f->c, K_SVM_ACK, r->slot, (int32_t)p, 0, NULL, 0);
}

static void ack_arrived(int src, const struct node_frame *f, const void *payload, size_t len)
{
    (void)src, (void)payload, (void)len;
    struct svm_region *r = frame_region(f, "acknowledgement");
    if (r)
        ack_arrived_at(r, (uint32_t)f->b, src);
}

static void nack_arrived(int src, const struct node_frame *f, const void *payload, size_t len)
{
    (void)src, (void)payload, (void)len;
    struct svm_region *r = frame_region(f, "refusal");
    if (r)
        page_lost(r, (uint32_t)f->b);
}

/*
 * Node n died.  What it owed never comes: its acknowledgements count as
 * given; a request of ours that may have passed through it (or waited
 * there) is sent again (a request that got through all the same is
 * answered twice: harmless, see page_arrived and handle_req); the pages it
 * owned are lost where a manager knows it (central, fixed), or where the
 * hints lead to it (dynamic): their next requests are refused.  Read
 * copies elsewhere stay readable.
 */
void svm_proto_node_gone(int n)
{
    for (int i = 0; i < svm.nregions; i++) {
        struct svm_region *r = svm.regions[i];
        for (uint32_t p = 0; p < r->npages && !r->shared; p++) {
            struct svm_page *e = &r->pages[p];
            if (r->owner[p] == n)
                r->owner[p] = -1;
            if (e->prob == n)
                e->prob = -1;
            e->copyset &= ~bit(n);
            if (e->inval_out & bit(n)) {
                e->acked |= bit(n);
                round_check(r, p);
            }
            if ((e->flags & PG_BUSY) && !(e->flags & PG_OWNER)) {
                e->flags &= (uint8_t)~PG_BUSY; /* its waiters ask again */
                core_wake_all_front(svm_page_queue(r, p));
            }
        }
    }
}

void svm_pages_reset(struct svm_region *r, uint32_t first, uint32_t n)
{
    if (r->shared) { /* one memfd: its home zeroes the pages for every node */
        if (r->home == svm.self && n &&
            madvise((void *)svm_page_addr(r, first), (size_t)n * SVM_PAGE_SIZE, MADV_REMOVE) != 0)
            fprintf(stderr, "upvm: node %d: cannot free shared pages: %s\n", svm.self,
                    strerror(errno));
        return;
    }
    for (uint32_t p = first; p < first + n && p < r->npages; p++) {
        struct svm_page *e = &r->pages[p];
        if (e->access != SVM_NIL)
            svm.ops->drop(r, svm_page_addr(r, p));
        uint16_t nd = e->ndeferred;
        *e = (struct svm_page){.prob = (int8_t)r->home, .ndeferred = nd};
        if (!node_job_up(r->home) && node_job_multi())
            e->flags = PG_LOST;
        if (r->home == svm.self)
            e->flags = PG_OWNER | PG_ZERO;
        r->owner[p] = (int8_t)r->home;
    }
}

void svm_proto_register(void)
{
    node_on_frame(K_SVM_REQ, req_arrived);
    node_on_frame(K_SVM_PAGE, page_arrived);
    node_on_frame(K_SVM_INVAL, inval_arrived);
    node_on_frame(K_SVM_ACK, ack_arrived);
    node_on_frame(K_SVM_NACK, nack_arrived);
    (void)node_on_poll(settle_held);
}

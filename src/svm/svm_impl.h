/*
 * svm_impl.h - the svm layer's private state, shared by its files and by
 * nobody else (the contract for the rest of UPVM is svm.h; for programs,
 * include/upvm_svm.h).
 *
 * Vocabulary (Kai Li's IVY, docs/design-notes.md §15):
 *   region   a chunk of the job's window (one slot) that holds shared
 *            blocks; the node that took the slot is its home and its
 *            allocator; every node maps it at the same address;
 *   page     4 KiB, the unit of coherence; each has one owner node, which
 *            keeps its copy set (the nodes with a read copy);
 *   manager  who knows a page's owner: node 0 (central), node H(page)
 *            (fixed), or nobody but hints (dynamic: probable owners).
 *
 * Threading: everything runs on the node's scheduler thread, in a ULP
 * (the fault path, the API) or in a frame handler; nothing locks.
 */
#ifndef UPVM_SVM_IMPL_H
#define UPVM_SVM_IMPL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <upvm.h>
#include <upvm_svm.h>

#include "core/core.h"
#include "node/job.h"

#define SVM_PAGE_SIZE 4096u
#define SVM_REGIONS_MAX 256

enum svm_access { SVM_NIL, SVM_READ, SVM_WRITE };

enum svm_page_flag {
    PG_OWNER = 0x01, /* this node owns the page (it serves requests) */
    PG_BUSY = 0x02,  /* a request or an invalidation round of ours is out */
    PG_ZERO = 0x04,  /* owner: nobody wrote it since it was allocated */
    PG_HELD = 0x08,  /* it just arrived: requests wait for the next poll, so
                      * that the ULPs it woke make their access first */
    PG_LOST = 0x10,  /* its only copy died with a node */
    PG_PROB_MOVED = 0x20, /* dynamic: the hint changed while our read was out */
};

/* One page as this node sees it (IVY's page table entry). */
struct svm_page {
    uint64_t copyset;  /* owner only: nodes with a read copy */
    uint8_t access;    /* enum svm_access: what this node's mapping allows */
    uint8_t flags;     /* enum svm_page_flag */
    int8_t prob;       /* dynamic manager: the probable owner */
    uint8_t want;      /* PG_BUSY: the access our request asked for */
    uint16_t ndeferred; /* requests from others waiting for this page here */
    uint16_t reserved;
    uint32_t moves;    /* ownership changes seen here (the ping-pong count) */
    /* a write of ours waits for these nodes to drop their copies (known
     * when the page arrives, or when our own round starts) ... */
    uint64_t inval_out;
    /* ... and these have acknowledged (an ack may come before the page) */
    uint64_t acked;
};

enum svm_manager { SVM_MGR_CENTRAL = 1, SVM_MGR_FIXED = 2, SVM_MGR_DYNAMIC = 3 };

/* A stretch of a region's pages in its home's allocator. */
enum svm_extent_state { EXT_FREE, EXT_USED, EXT_FREEING };
struct svm_extent {
    uint32_t first, npages;
    uint8_t state; /* enum svm_extent_state */
};

struct svm_region {
    uintptr_t base;
    size_t size;
    uint32_t npages;
    int slot;          /* the window slot: the region's id across the job */
    int home;          /* the node that allocated it */
    uint8_t manager;   /* enum svm_manager */
    uint8_t nmgr;      /* fixed manager: the nodes that share the duty */
    bool shared;       /* UPVM_SVM_SHARED: one memfd on every node, no protocol */
    int shared_fd;     /* ... kept open by the home */
    struct svm_page *pages;
    int8_t *owner;     /* manager's table: the owner of each page it manages */
    /* mprotect mechanism: a second, writable view of the region's memory */
    char *alias;
    /* home only: its blocks, in address order */
    struct svm_extent *ext;
    int next, cap;
};

/* How pages are mapped and faults caught: userfaultfd in SIGBUS mode, or
 * mprotect with SIGSEGV (design notes §15.2). */
struct svm_access_ops {
    const char *name;
    int signal;                                  /* what a fault raises */
    int (*map)(struct svm_region *r);            /* make the region's range, empty */
    /* put a page in with its contents (NULL: zeros), read-only or writable */
    void (*install)(struct svm_region *r, uintptr_t addr, const void *data, bool writable);
    void (*protect)(struct svm_region *r, uintptr_t addr, enum svm_access a); /* READ, WRITE */
    void (*drop)(struct svm_region *r, uintptr_t addr); /* back to absent, no memory */
};

struct svm_state {
    const struct svm_access_ops *ops;
    uint8_t default_manager;
    int self, slots;                 /* this node; node slots of the job */
    struct svm_region *regions[SVM_REGIONS_MAX];
    int nregions;
    upvm_waitq_t page_q[64];         /* ULPs waiting for pages (hashed) */
    upvm_waitq_t sync_q[64];         /* ULPs in upvm_ec_await / upvm_svm_lock */
    struct upvm_svm_stats stats;
    int lazy_pending;                /* lazy moves into this node not complete (lazy.c) */
    /* upvm_svm_touch's promise: the pages stay until the ULP next switches,
     * so the service tick leaves them while it has not (service.c) */
    const struct ulp *touch_ulp;
    uint64_t touch_mark;             /* core_sched.tsc_mark at the touch */
    bool ready;
};

extern struct svm_state svm HIDDEN;

/* ------------------------------------------------------------ svm.c */

int svm_ensure(void) HIDDEN;
/* Start the node's fault mechanism (once): 0 or -errno. */
int svm_start(void) HIDDEN;
struct svm_region *svm_region_of(uintptr_t addr) HIDDEN;
struct svm_region *svm_region_by_slot(int slot) HIDDEN;
/* Send a frame of the layer's kinds (node_send): counted in the stats. */
void svm_send(int dst, uint32_t kind, int32_t a, int32_t b, int32_t c, const void *p1,
              size_t l1) HIDDEN;
void svm_send2(int dst, uint32_t kind, int32_t a, int32_t b, int32_t c, const void *p1,
               size_t l1, const void *p2, size_t l2) HIDDEN;

static inline uint32_t svm_page_index(const struct svm_region *r, uintptr_t addr)
{
    return (uint32_t)((addr - r->base) / SVM_PAGE_SIZE);
}
static inline uintptr_t svm_page_addr(const struct svm_region *r, uint32_t p)
{
    return r->base + (uintptr_t)p * SVM_PAGE_SIZE;
}

/* ------------------------------------------------------------ access_*.c */

const struct svm_access_ops *svm_access_uffd(char *why, size_t len) HIDDEN;
const struct svm_access_ops *svm_access_mprotect(void) HIDDEN;
/* userfaultfd only (lazy moves): missing-page faults on a range, and pages
 * put in writable. */
int svm_uffd_register_missing(uintptr_t lo, size_t len) HIDDEN;
void svm_uffd_unregister(uintptr_t lo, size_t len) HIDDEN;
void svm_uffd_fill(uintptr_t addr, const void *data, size_t n) HIDDEN;

/* ------------------------------------------------------------ lazy.c */

struct svm_lazy;
void svm_lazy_register(void) HIDDEN;
/* A fault at addr in memory a lazy move still owes this node: the lazy
 * record and the page's index in it, or NULL. */
struct svm_lazy *svm_lazy_of(uintptr_t addr, uint32_t *page) HIDDEN;
/* Block the calling ULP until that page is here.  0, -EHOSTDOWN (its
 * source died before sending it). */
int svm_lazy_acquire(struct svm_lazy *l, uint32_t page) HIDDEN;
bool svm_lazy_bounce(uintptr_t lo, uintptr_t hi) HIDDEN;
void svm_lazy_node_gone(int n) HIDDEN;

/* ------------------------------------------------------------ fault.c */

int svm_fault_install(void) HIDDEN;
/* The calling ULP needs page p of r with access a: it blocks until this
 * node has it.  0, -EHOSTDOWN (lost). */
int svm_page_acquire(struct svm_region *r, uint32_t p, enum svm_access a) HIDDEN;

/* ------------------------------------------------------------ proto.c */

void svm_proto_register(void) HIDDEN;
/* Try to give this node access a to page p without any frame (it owns the
 * page and nobody else holds a copy in the way).  True when done. */
bool svm_resolve_local(struct svm_region *r, uint32_t p, enum svm_access a) HIDDEN;
/* Start what brings page p with access a here (a request, or the owner's
 * invalidation round); the page is BUSY until it completes. */
void svm_start_request(struct svm_region *r, uint32_t p, enum svm_access a) HIDDEN;
/* The first node a request goes to. */
int svm_manager_of(const struct svm_region *r, uint32_t p) HIDDEN;
/* Node n died: answers and acknowledgements it owed never come. */
void svm_proto_node_gone(int n) HIDDEN;
/* A service tick (service.c), in an urgent poll: pages held since before
 * the previous tick are served now (their ULPs had a whole tick to run). */
void svm_service_tick(void) HIDDEN;
/* Reset pages [first, first + n) to their allocation state (a block freed). */
void svm_pages_reset(struct svm_region *r, uint32_t first, uint32_t n) HIDDEN;

static inline upvm_waitq_t *svm_page_queue(const struct svm_region *r, uint32_t p)
{
    return &svm.page_q[(p ^ (uint32_t)r->slot * 7u) % 64u];
}

/* ------------------------------------------------------------ syscalls.c */

/* Does [p, p + len) touch a region whose pages travel? (proc's bounce) */
bool svm_bounce_test(const void *p, size_t len) HIDDEN;

/* ------------------------------------------------------------ service.c */

void svm_service_read_settings(void) HIDDEN; /* UPVM_SVM_SERVICE_US */
/* Serve page requests while this node's ULPs compute (once; a job of
 * several nodes of one host). */
void svm_service_start(void) HIDDEN;

/* ------------------------------------------------------------ sync.c */

void svm_sync_register(void) HIDDEN;

/* Frame kinds (NODE_KINDS_SVM .. + 7), design notes §15.5. */
enum svm_kind {
    K_SVM_REQ = NODE_KINDS_SVM, /* a slot, b page, c: want | req << 8 | hops << 16 | passed << 24 */
    K_SVM_PAGE,   /* a slot, b page, c: access | flags << 8; payload: 4 KiB or none, then
                   * with OWNER the nodes told to drop their copies (8 bytes) */
    K_SVM_INVAL,  /* a slot, b page, c the new owner (the ack goes there) */
    K_SVM_ACK,    /* a slot, b page */
    K_SVM_NACK,   /* a slot, b page, c -errno */
    K_SVM_REGION, /* a slot, b op, c: manager | nmgr << 8 | home << 16; FREE: payload */
    K_SVM_PUSH,   /* a lazy move's pages (lazy.c): a slot, b first page owed, c count |
                   * flags (pull, stop, all); payload: the pages */
    K_SVM_WAKE,   /* a slot, b offset / 64 of the eventcount or lock */
};

/* K_SVM_PAGE flags */
#define SVM_PF_ZERO   0x1
#define SVM_PF_NODATA 0x2
#define SVM_PF_OWNER  0x4

#endif /* UPVM_SVM_IMPL_H */

/*
 * svm.c - shared virtual memory's regions, allocator and API
 * (include/upvm_svm.h; design notes §15.6 and §15.13).
 *
 * Regions.  A node that needs room for shared blocks takes a slot of the
 * job's window (a slot is handed out once in the job, so its addresses are
 * free on every node) and uses its first SVM_CHUNK bytes (more for a block
 * larger than that, up to the slot) as a region: it is the region's home,
 * owner of all its pages at first (zero: nobody wrote them), and the
 * region's allocator.  Before the first block of a region is handed out,
 * every node of the job has mapped it (a request to each, answered once it
 * is mapped), so a pointer passed in a message is valid where it arrives.
 *
 * The allocator is IVY's proposed two-level one: the window's slot
 * bitmap is the central level (no message), and each node cuts its own
 * regions first-fit into page-aligned blocks, one current region per
 * manager kind; a block freed on another node goes back to its home by a
 * request.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mem/mem.h"
#include "node/rpc.h"
#include "proc/proc.h"
#include "pvm/pvm.h"
#include "svm/svm.h"
#include "svm/svm_impl.h"
#include "util/env.h"

struct svm_state svm;

#define SVM_CHUNK ((size_t)64 << 20)

/* K_SVM_REGION's operations (c >> 28). */
enum region_op {
    OP_NEW = 1,   /* request: map region a (c: manager | nmgr << 8 | home << 16) */
    OP_FREE = 2,  /* request to the home: the block at page c & 0xfffffff is being
                   * freed (answer: its pages; it is not handed out again yet) */
    OP_RESET = 3, /* request to every other node: drop the pages of the block at page
                   * c & 0xfffffff (payload: uint32 count) */
    OP_FREED = 5, /* to the home: every node dropped them: the block may be reused */
    OP_SHOW = 4,  /* home to a node that came up: region a exists (as NEW, no answer) */
};

static uint8_t manager_setting = SVM_MGR_CENTRAL;
static bool shared_setting; /* UPVM_SVM=memfd */
static int fault_setting = -1; /* -1 auto, 0 uffd, 1 mprotect */

void svm_read_settings(void)
{
    static const char *const managers[] = {"central", "fixed", "dynamic", NULL};
    static const char *const faults[] = {"uffd", "mprotect", NULL};
    static const char *const kinds[] = {"protocol", "memfd", NULL};
    int m, f, k;
    if (env_choice("UPVM_SVM", kinds, 0, 0, &k) >= 0)
        shared_setting = k == 1;
    if (env_choice("UPVM_SVM_MANAGER", managers, 0, 0, &m) >= 0)
        manager_setting = (uint8_t)(m + 1);
    if (env_choice("UPVM_SVM_FAULT", faults, -1, 0, &f) > 0)
        fault_setting = f;
    svm_service_read_settings();
}

void svm_send2(int dst, uint32_t kind, int32_t a, int32_t b, int32_t c, const void *p1,
               size_t l1, const void *p2, size_t l2)
{
    struct node_frame f = {kind, a, b, c};
    svm.stats.frames++;
    node_post(dst, &f, p1, l1, p2, l2);
}

void svm_send(int dst, uint32_t kind, int32_t a, int32_t b, int32_t c, const void *p1, size_t l1)
{
    svm_send2(dst, kind, a, b, c, p1, l1, NULL, 0);
}

/* ------------------------------------------------------------ the mechanism */

/* Pick the fault mechanism and catch faults: once per node, at its first
 * shared region (its own or another node's). */
int svm_start(void)
{
    if (svm.ops)
        return 0;
    char why[200] = "";
    if (fault_setting != 1)
        svm.ops = svm_access_uffd(why, sizeof why);
    if (!svm.ops && fault_setting == 0) {
        fprintf(stderr, "upvm: UPVM_SVM_FAULT=uffd, but %s\n", why);
        return -ENOSYS;
    }
    if (!svm.ops)
        svm.ops = svm_access_mprotect();
    for (int i = 0; i < 64; i++) {
        upvm_waitq_init(&svm.page_q[i], "a shared page");
        upvm_waitq_init(&svm.sync_q[i], "an eventcount or lock");
    }
    svm.self = node_job_self();
    svm.slots = node_job_multi() ? node_job_slots() : 1;
    svm_service_start();
    /* system calls look for shared buffers only once there can be some */
    proc_set_bounce_test(svm_bounce_test);
    return svm_fault_install();
}

/* ------------------------------------------------------------ regions */

struct svm_region *svm_region_by_slot(int slot)
{
    for (int i = 0; i < svm.nregions; i++)
        if (svm.regions[i]->slot == slot)
            return svm.regions[i];
    return NULL;
}

struct svm_region *svm_region_of(uintptr_t addr)
{
    for (int i = 0; i < svm.nregions; i++) {
        struct svm_region *r = svm.regions[i];
        if (addr - r->base < r->size)
            return r;
    }
    return NULL;
}

static void *table(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* What every node needs to map a region (K_SVM_REGION's payload). */
struct region_desc {
    uint32_t npages;
    int32_t pid, fd; /* UPVM_SVM_SHARED: the home's memfd, opened as /proc/PID/fd/FD */
};

/* UPVM_SVM_SHARED (design notes §15.12): the region is one memfd that
 * every node of the host maps at the same address -- the hardware keeps it
 * coherent, no page ever faults or travels.  The home creates it and keeps
 * it open; the others open it through /proc (same user, same host). */
static int shared_map(struct svm_region *r, const struct region_desc *d)
{
    int fd;
    if (r->home == svm.self) {
        fd = memfd_create("upvm-svm-shared", MFD_CLOEXEC);
        if (fd < 0)
            return -errno;
        if (ftruncate(fd, (off_t)r->size) != 0) {
            int rc = -errno;
            close(fd);
            return rc;
        }
    } else {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)d->pid, (int)d->fd);
        fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0)
            return -errno;
    }
    void *p = mmap((void *)r->base, r->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
                   0);
    int rc = p == MAP_FAILED ? -errno : 0;
    if (rc == 0 && r->home == svm.self)
        r->shared_fd = fd; /* kept: nodes added later open it too */
    else
        close(fd);
    return rc;
}

/* Region `slot` on this node: its tables and its mapping.  manager: enum
 * svm_manager, | SVM_SHARED_BIT for a memfd region. */
#define SVM_SHARED_BIT 0x80
static int region_make(int slot, const struct region_desc *d, int home, int manager, int nmgr,
                       struct svm_region **out)
{
    uint32_t npages = d->npages;
    int rc = svm_start();
    if (rc != 0)
        return rc;
    if (svm.nregions == SVM_REGIONS_MAX)
        return -ENOMEM;
    if (mem_window_init() != 0)
        return -ENOMEM;
    const struct mem_window *w = mem_window();
    struct svm_region *r = calloc(1, sizeof *r);
    if (!r)
        return -ENOMEM;
    *r = (struct svm_region){
        .base = (uintptr_t)mem_slot_base(w, slot),
        .size = (size_t)npages * SVM_PAGE_SIZE,
        .npages = npages,
        .slot = slot,
        .home = home,
        .manager = (uint8_t)(manager & ~SVM_SHARED_BIT),
        .nmgr = (uint8_t)nmgr,
        .shared = (manager & SVM_SHARED_BIT) != 0,
        .shared_fd = -1,
    };
    r->pages = table((size_t)npages * sizeof *r->pages);
    r->owner = table(npages);
    if (!r->pages || !r->owner ||
        (rc = r->shared ? shared_map(r, d) : svm.ops->map(r)) != 0) {
        if (r->pages)
            munmap(r->pages, (size_t)npages * sizeof *r->pages);
        if (r->owner)
            munmap(r->owner, npages);
        free(r);
        return rc ? rc : -ENOMEM;
    }
    svm_pages_reset(r, 0, npages);
    /* other threads look (libupvm's read/write in thread mode, an MPI
     * progress thread's): the entry first, then the count */
    svm.regions[svm.nregions] = r;
    __atomic_store_n(&svm.nregions, svm.nregions + 1, __ATOMIC_RELEASE);
    *out = r;
    return 0;
}

static int32_t region_word(int op, const struct svm_region *r)
{
    return op << 28 | r->manager | (r->shared ? SVM_SHARED_BIT : 0) | r->nmgr << 8 | r->home << 16;
}

static struct region_desc region_desc_of(const struct svm_region *r)
{
    return (struct region_desc){r->npages, (int32_t)getpid(), r->shared_fd};
}

/* A new region of this node's: every other node maps it before it is used. */
static int region_announce(struct svm_region *r)
{
    if (!node_job_multi())
        return 0;
    struct region_desc d = region_desc_of(r);
    for (int n = 0; n < svm.slots; n++) {
        if (n == svm.self || !node_job_up(n))
            continue;
        struct node_rpc_req req = {
            .node = n, .kind = K_SVM_REGION, .a = r->slot, .c = region_word(OP_NEW, r),
            .p1 = &d, .l1 = sizeof d, .down = 0, .died = 0,
        };
        int rc = node_rpc_call(&req, NODE_RPC_PINNED, NULL, NULL);
        if (rc != 0) {
            fprintf(stderr, "upvm: node %d: node %d cannot map a shared region: %s\n", svm.self,
                    n, strerror(-rc));
            return rc;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ blocks */

static int extent_insert(struct svm_region *r, int at, struct svm_extent x)
{
    if (r->next == r->cap) {
        int cap = r->cap ? r->cap * 2 : 16;
        struct svm_extent *n = realloc(r->ext, (size_t)cap * sizeof *n);
        if (!n)
            return -ENOMEM;
        r->ext = n;
        r->cap = cap;
    }
    memmove(&r->ext[at + 1], &r->ext[at], (size_t)(r->next - at) * sizeof *r->ext);
    r->ext[at] = x;
    r->next++;
    return 0;
}

/* First fit in r: the block's first page, or -1. */
static long block_take(struct svm_region *r, uint32_t npages)
{
    for (int i = 0; i < r->next; i++) {
        struct svm_extent *x = &r->ext[i];
        if (x->state != EXT_FREE || x->npages < npages)
            continue;
        if (x->npages > npages &&
            extent_insert(r, i + 1, (struct svm_extent){x->first + npages, x->npages - npages,
                                                        EXT_FREE}) != 0)
            return -1;
        x = &r->ext[i];
        x->npages = npages;
        x->state = EXT_USED;
        return x->first;
    }
    return -1;
}

/*
 * Freeing a block takes two steps, so that no node still holds one of its
 * pages when it is handed out again: block_freeing marks it (its size in
 * pages, 0 when no block in use starts at `first`), every node drops its
 * pages, and block_freed makes it free (merged with free neighbours).
 */
static uint32_t block_freeing(struct svm_region *r, uint32_t first)
{
    for (int i = 0; i < r->next; i++) {
        struct svm_extent *x = &r->ext[i];
        if (x->first == first && x->state == EXT_USED) {
            x->state = EXT_FREEING;
            return x->npages;
        }
    }
    return 0;
}

static void block_freed(struct svm_region *r, uint32_t first)
{
    for (int i = 0; i < r->next; i++) {
        struct svm_extent *x = &r->ext[i];
        if (x->first != first || x->state != EXT_FREEING)
            continue;
        x->state = EXT_FREE;
        if (i + 1 < r->next && r->ext[i + 1].state == EXT_FREE) { /* merge with the next */
            x->npages += r->ext[i + 1].npages;
            memmove(&r->ext[i + 1], &r->ext[i + 2], (size_t)(r->next - i - 2) * sizeof *r->ext);
            r->next--;
        }
        if (i > 0 && r->ext[i - 1].state == EXT_FREE) { /* and with the one before */
            r->ext[i - 1].npages += x->npages;
            memmove(&r->ext[i], &r->ext[i + 1], (size_t)(r->next - i - 1) * sizeof *r->ext);
            r->next--;
        }
        return;
    }
}

/* A block of npages in a region of this node's for manager m: from a
 * region it has, else from a new one. */
static void *block_alloc(uint32_t npages, int m)
{
    for (int i = 0; i < svm.nregions; i++) {
        struct svm_region *r = svm.regions[i];
        if (r->home != svm.self || (r->manager | (r->shared ? SVM_SHARED_BIT : 0)) != m)
            continue;
        long first = block_take(r, npages);
        if (first >= 0)
            return (void *)svm_page_addr(r, (uint32_t)first);
    }
    size_t bytes = (size_t)npages * SVM_PAGE_SIZE;
    if (mem_window_init() != 0)
        return errno = ENOMEM, NULL;
    size_t slot_size = mem_window()->slot_size;
    if (bytes > slot_size)
        return errno = ENOMEM, NULL;
    size_t size = bytes > SVM_CHUNK ? bytes : SVM_CHUNK < slot_size ? SVM_CHUNK : slot_size;
    int slot = mem_slot_alloc();
    if (slot < 0)
        return errno = ENOMEM, NULL;
    struct svm_region *r;
    int nmgr = node_job_multi() ? node_job_slots() : 1;
    struct region_desc d = {(uint32_t)(size / SVM_PAGE_SIZE), 0, -1};
    int rc = region_make(slot, &d, svm.self, m, nmgr, &r);
    if (rc == 0 && (rc = extent_insert(r, 0, (struct svm_extent){0, r->npages, EXT_FREE})) == 0)
        rc = region_announce(r);
    if (rc != 0) {
        if (rc == -ENOSYS)
            return errno = ENOSYS, NULL;
        return errno = ENOMEM, NULL; /* the slot stays taken: some node may map it */
    }
    return (void *)svm_page_addr(r, (uint32_t)block_take(r, npages));
}

/* ------------------------------------------------------------ frames */

static void region_frame(int src, const struct node_frame *f, const void *payload, size_t len)
{
    int op = (int)((uint32_t)f->c >> 28);
    uint32_t low = (uint32_t)f->c & 0xfffffffu;
    struct svm_region *r = svm_region_by_slot(f->a);
    switch (op) {
    case OP_NEW:
    case OP_SHOW: {
        int rc = 0;
        struct region_desc d = {0, 0, -1};
        if (len >= sizeof d)
            memcpy(&d, payload, sizeof d);
        if (!r)
            rc = d.npages ? region_make(f->a, &d, (int)(low >> 16), (int)(low & 0xff),
                                        (int)((low >> 8) & 0xff), &r)
                          : -EBADMSG;
        if (op == OP_NEW)
            node_rpc_reply(src, f->b, rc, NULL, 0);
        else if (rc != 0)
            fprintf(stderr, "upvm: node %d: cannot map shared region %d: %s\n", svm.self, f->a,
                    strerror(-rc));
        return;
    }
    case OP_FREE: {
        uint32_t n = r && r->home == svm.self ? block_freeing(r, low) : 0;
        if (n)
            svm_pages_reset(r, low, n);
        node_rpc_reply(src, f->b, n ? (int)n : -EINVAL, NULL, 0);
        return;
    }
    case OP_RESET: {
        uint32_t n = 0;
        if (len >= sizeof n)
            memcpy(&n, payload, sizeof n);
        if (r)
            svm_pages_reset(r, low, n);
        node_rpc_reply(src, f->b, 0, NULL, 0);
        return;
    }
    case OP_FREED:
        if (r && r->home == svm.self)
            block_freed(r, low);
        return;
    default:
        fprintf(stderr, "upvm: node %d: an unknown shared-region frame (%d) from node %d\n",
                svm.self, op, src);
    }
}

/* A node that came up (added to the job) learns of every region there is
 * from its home. */
static void peer_up(int n)
{
    for (int i = 0; i < svm.nregions; i++) {
        struct svm_region *r = svm.regions[i];
        if (r->home == svm.self) {
            struct region_desc d = region_desc_of(r);
            svm_send(n, K_SVM_REGION, r->slot, 0, region_word(OP_SHOW, r), &d, sizeof d);
        }
    }
}

static int peer_gone(int n, int status, bool deleted)
{
    (void)status, (void)deleted;
    if (svm.ops)
        svm_proto_node_gone(n);
    svm_lazy_node_gone(n);
    return 0;
}

static const struct node_job_hooks svm_hooks = {.peer_up = peer_up, .peer_gone = peer_gone};

void svm_init(void)
{
    svm_read_settings();
    node_on_frame(K_SVM_REGION, region_frame);
    svm_proto_register();
    svm_sync_register();
    svm_lazy_register();
    (void)node_job_add_hooks(&svm_hooks);
    svm.ready = true;
}

/* ------------------------------------------------------------ API */

/* A memfd region needs every node on this host: 0, or -EOPNOTSUPP with a
 * line saying why (once). */
static int shared_possible(void)
{
    const char *mine = node_job_host(svm.self);
    for (int n = 0; mine && n < svm.slots; n++) {
        const char *theirs = node_job_host(n);
        if (node_job_up(n) && theirs && strcmp(theirs, mine) != 0) {
            static bool said;
            if (!said)
                fprintf(stderr, "upvm: shared memory as one memfd (UPVM_SVM=memfd or "
                                "UPVM_SVM_SHARED) needs every node on one host, and node %d "
                                "runs on %s: allocate without it (the protocol spans hosts)\n",
                        n, theirs);
            said = true;
            return -EOPNOTSUPP;
        }
    }
    return 0;
}

int svm_ensure(void)
{
    if (core_enter() != 0 || !core_on_sched_thread_now())
        return -EPERM;
    if (pvm_node_ensure() != 0) /* the job's nodes start at its first call */
        return -ENOMEM;
    if (!svm.ready) /* a job of one node: nothing wired it */
        svm_init();
    return svm_start();
}

void *upvm_svm_alloc_flags(size_t size, unsigned flags)
{
    int rc = svm_ensure();
    if (rc != 0)
        return errno = -rc, NULL;
    if (size == 0 || (flags & ~(UPVM_SVM_MANAGER_MASK | UPVM_SVM_SHARED | UPVM_SVM_PROTOCOL)))
        return errno = EINVAL, NULL;
    if (size > ((size_t)1 << 40))
        return errno = ENOMEM, NULL;
    int m = (int)(flags & UPVM_SVM_MANAGER_MASK);
    if (!m)
        m = manager_setting;
    if ((flags & UPVM_SVM_SHARED) || (shared_setting && !(flags & UPVM_SVM_PROTOCOL))) {
        if ((rc = shared_possible()) != 0)
            return errno = -rc, NULL;
        m |= SVM_SHARED_BIT;
    }
    uint32_t npages = (uint32_t)((size + SVM_PAGE_SIZE - 1) / SVM_PAGE_SIZE);
    return block_alloc(npages, m);
}

void *upvm_svm_alloc(size_t size)
{
    return upvm_svm_alloc_flags(size, 0);
}

int upvm_svm_free(void *p)
{
    int rc = svm_ensure();
    if (rc != 0)
        return rc;
    struct svm_region *r = svm_region_of((uintptr_t)p);
    if (!r || ((uintptr_t)p & (SVM_PAGE_SIZE - 1)))
        return -EINVAL;
    uint32_t first = svm_page_index(r, (uintptr_t)p);
    /* 1: the home marks it and drops its pages */
    int n;
    if (r->home == svm.self) {
        n = (int)block_freeing(r, first);
        if (n)
            svm_pages_reset(r, first, (uint32_t)n);
    } else {
        struct node_rpc_req req = {
            .node = r->home, .kind = K_SVM_REGION, .a = r->slot, .c = OP_FREE << 28 | (int)first,
            .down = -EHOSTDOWN, .died = -EHOSTDOWN,
        };
        n = node_rpc_call(&req, NODE_RPC_PINNED, NULL, NULL);
    }
    if (n <= 0)
        return n ? n : -EINVAL;
    /* 2: every other node drops them, and says so */
    uint32_t count = (uint32_t)n;
    for (int node = 0; node < svm.slots; node++) {
        if (node == r->home || !node_job_up(node))
            continue;
        if (node == svm.self) {
            svm_pages_reset(r, first, count);
            continue;
        }
        struct node_rpc_req req = {
            .node = node, .kind = K_SVM_REGION, .a = r->slot, .c = OP_RESET << 28 | (int)first,
            .p1 = &count, .l1 = sizeof count, .down = 0, .died = 0,
        };
        (void)node_rpc_call(&req, NODE_RPC_PINNED, NULL, NULL);
    }
    /* 3: the block may be handed out again */
    if (r->home == svm.self)
        block_freed(r, first);
    else
        svm_send(r->home, K_SVM_REGION, r->slot, 0, OP_FREED << 28 | (int)first, NULL, 0);
    return 0;
}

int upvm_svm_touch(const void *p, size_t len, int access)
{
    if (access != UPVM_SVM_READ && access != UPVM_SVM_WRITE &&
        access != (UPVM_SVM_READ | UPVM_SVM_WRITE))
        return -EINVAL;
    int rc = svm_ensure();
    if (rc != 0)
        return rc;
    enum svm_access want = access & UPVM_SVM_WRITE ? SVM_WRITE : SVM_READ;
    uintptr_t lo = (uintptr_t)p & ~(uintptr_t)(SVM_PAGE_SIZE - 1), hi = (uintptr_t)p + len;
    for (bool waited = true; waited;) { /* until every page is here at once */
        waited = false;
        for (uintptr_t a = lo; a < hi; a += SVM_PAGE_SIZE) { /* all requests out first */
            struct svm_region *r = svm_region_of(a);
            if (!r || r->shared)
                continue;
            uint32_t pg = svm_page_index(r, a);
            struct svm_page *e = &r->pages[pg];
            if (e->access < want && !(e->flags & (PG_BUSY | PG_LOST)) &&
                !svm_resolve_local(r, pg, want))
                svm_start_request(r, pg, want);
        }
        for (uintptr_t a = lo; a < hi; a += SVM_PAGE_SIZE) {
            struct svm_region *r = svm_region_of(a);
            if (!r || r->shared)
                continue;
            uint32_t pg = svm_page_index(r, a);
            if (r->pages[pg].access >= want)
                continue;
            waited = true;
            if ((rc = svm_page_acquire(r, pg, want)) != 0)
                return rc;
        }
    }
    svm.touch_ulp = core_current();
    svm.touch_mark = core_sched.tsc_mark;
    return 0;
}

int upvm_svm_stats(struct upvm_svm_stats *out)
{
    if (!out)
        return -EINVAL;
    *out = svm.stats;
    return 0;
}

long upvm_svm_page_moves(const void *p)
{
    struct svm_region *r = svm_region_of((uintptr_t)p);
    if (!r)
        return -EINVAL;
    return r->pages[svm_page_index(r, (uintptr_t)p)].moves;
}

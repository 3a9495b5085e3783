/*
 * access_uffd.c - pages through userfaultfd in SIGBUS mode (design notes
 * §15.2): a region is private anonymous memory registered for missing and
 * write-protect faults; a fault is a SIGBUS on the faulting thread (no
 * monitor thread: the ULP blocks in the signal, the node goes on);
 * UFFDIO_COPY puts a page in with its contents in one step, read-only
 * (UFFDIO_COPY_MODE_WP) or writable; UFFDIO_WRITEPROTECT changes READ and
 * WRITE; MADV_DONTNEED makes a page absent again, freeing its memory.
 * Opened with UFFD_USER_MODE_ONLY, which SIGBUS mode makes free and which
 * needs no privilege.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "svm/svm_impl.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

static int uffd = -1;
static _Alignas(4096) const char zero_page[SVM_PAGE_SIZE];

/* A failed ioctl on a page of ours is a bug (the range is registered and
 * the page's state known): said with the page, then the node ends. */
static _Noreturn void uffd_broke(const char *what, uintptr_t addr)
{
    fprintf(stderr, "upvm: node %d: shared memory: %s of page %#lx failed: %s\n", svm.self,
            what, (unsigned long)addr, strerror(errno));
    fflush(stderr);
    _exit(71);
}

static int uffd_map(struct svm_region *r)
{
    void *p = mmap((void *)r->base, r->size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -errno;
    struct uffdio_register reg = {
        .range = {.start = r->base, .len = r->size},
        .mode = UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_WP,
    };
    if (ioctl(uffd, UFFDIO_REGISTER, &reg) != 0)
        return -errno;
    return 0;
}

static void uffd_install(struct svm_region *r, uintptr_t addr, const void *data, bool writable)
{
    (void)r;
    struct uffdio_copy c = {
        .dst = addr,
        .src = (uintptr_t)(data ? data : zero_page),
        .len = SVM_PAGE_SIZE,
        .mode = writable ? 0 : UFFDIO_COPY_MODE_WP,
    };
    if (ioctl(uffd, UFFDIO_COPY, &c) == 0)
        return;
    if (errno == EEXIST) { /* a stale copy is still mapped: replace it */
        if (madvise((void *)addr, SVM_PAGE_SIZE, MADV_DONTNEED) != 0)
            uffd_broke("dropping", addr);
        c.copy = 0;
        if (ioctl(uffd, UFFDIO_COPY, &c) == 0)
            return;
    }
    uffd_broke("installing", addr);
}

static void uffd_protect(struct svm_region *r, uintptr_t addr, enum svm_access a)
{
    (void)r;
    struct uffdio_writeprotect wp = {
        .range = {.start = addr, .len = SVM_PAGE_SIZE},
        .mode = a == SVM_WRITE ? 0 : UFFDIO_WRITEPROTECT_MODE_WP,
    };
    if (ioctl(uffd, UFFDIO_WRITEPROTECT, &wp) != 0)
        uffd_broke("changing the protection", addr);
}

static void uffd_drop(struct svm_region *r, uintptr_t addr)
{
    (void)r;
    if (madvise((void *)addr, SVM_PAGE_SIZE, MADV_DONTNEED) != 0)
        uffd_broke("dropping", addr);
}

/* ------------------------------------------------------------ lazy moves */

int svm_uffd_register_missing(uintptr_t lo, size_t len)
{
    struct uffdio_register reg = {.range = {.start = lo, .len = len},
                                  .mode = UFFDIO_REGISTER_MODE_MISSING};
    return uffd >= 0 && ioctl(uffd, UFFDIO_REGISTER, &reg) == 0 ? 0 : -errno;
}

void svm_uffd_unregister(uintptr_t lo, size_t len)
{
    struct uffdio_range range = {.start = lo, .len = len};
    if (uffd >= 0)
        (void)ioctl(uffd, UFFDIO_UNREGISTER, &range);
}

/* Put n bytes (whole pages) at addr, writable, skipping pages already
 * there. */
void svm_uffd_fill(uintptr_t addr, const void *data, size_t n)
{
    for (size_t off = 0; off < n;) {
        struct uffdio_copy c = {.dst = addr + off, .src = (uintptr_t)data + off, .len = n - off};
        if (ioctl(uffd, UFFDIO_COPY, &c) == 0)
            return;
        if (errno == EEXIST || errno == EAGAIN) {
            off += c.copy > 0 ? (size_t)c.copy : 0;
            if (errno == EEXIST && c.copy <= 0)
                off += SVM_PAGE_SIZE; /* this page came by another way: keep it */
            continue;
        }
        uffd_broke("filling", addr + off);
    }
}

static const struct svm_access_ops uffd_ops = {
    .name = "uffd",
    .signal = SIGBUS,
    .map = uffd_map,
    .install = uffd_install,
    .protect = uffd_protect,
    .drop = uffd_drop,
};

/* Open the node's userfaultfd in SIGBUS mode with write-protection of
 * anonymous memory; NULL with why when this kernel or its policy refuses. */
const struct svm_access_ops *svm_access_uffd(char *why, size_t len)
{
    if (uffd >= 0)
        return &uffd_ops;
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    if (fd < 0 && errno == EINVAL) /* before 5.11: no user-mode-only flag */
        fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        snprintf(why, len, "userfaultfd: %s", strerror(errno));
        return NULL;
    }
    struct uffdio_api api = {.api = UFFD_API, .features = UFFD_FEATURE_SIGBUS};
    if (ioctl(fd, UFFDIO_API, &api) != 0) {
        snprintf(why, len, "userfaultfd without SIGBUS mode: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    if (!(api.ioctls & (1ull << _UFFDIO_REGISTER))) {
        snprintf(why, len, "userfaultfd cannot register ranges");
        close(fd);
        return NULL;
    }
    /* write-protection of anonymous memory (5.7): try it on a scratch page */
    void *scratch = mmap(NULL, SVM_PAGE_SIZE, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct uffdio_register reg = {
        .range = {.start = (uintptr_t)scratch, .len = SVM_PAGE_SIZE},
        .mode = UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_WP,
    };
    bool wp = scratch != MAP_FAILED && ioctl(fd, UFFDIO_REGISTER, &reg) == 0;
    int err = errno;
    if (scratch != MAP_FAILED)
        munmap(scratch, SVM_PAGE_SIZE);
    if (!wp) {
        snprintf(why, len, "userfaultfd without write-protection of anonymous memory: %s",
                 strerror(err));
        close(fd);
        return NULL;
    }
    uffd = fd;
    return &uffd_ops;
}

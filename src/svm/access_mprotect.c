/*
 * access_mprotect.c - pages through mprotect and SIGSEGV, the classic way
 * (IVY's, and the fallback where userfaultfd is refused: design notes
 * §15.2).  A region is a memfd mapped twice: at its address with the
 * protection each page's access allows (PROT_NONE, PROT_READ, or read and
 * write), and once more, writable, elsewhere (the alias), through which
 * a page's contents are written before its protection opens, so that no
 * ULP ever sees half a page.  Dropping a page frees its memory
 * (MADV_REMOVE on the alias).  Costs: a per-page mprotect splits the
 * mapping, so pages of alternating access count against vm.max_map_count.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "svm/svm_impl.h"

static _Noreturn void mprotect_broke(const char *what, uintptr_t addr)
{
    fprintf(stderr, "upvm: node %d: shared memory: %s of page %#lx failed: %s%s\n", svm.self,
            what, (unsigned long)addr, strerror(errno),
            errno == ENOMEM ? " (the mapping limit, vm.max_map_count: raise it, or use "
                              "UPVM_SVM_FAULT=uffd)" : "");
    fflush(stderr);
    _exit(71);
}

static int mprotect_map(struct svm_region *r)
{
    int fd = memfd_create("upvm-svm", MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = 0;
    if (ftruncate(fd, (off_t)r->size) != 0) {
        rc = -errno;
    } else if (mmap((void *)r->base, r->size, PROT_NONE, MAP_SHARED | MAP_FIXED, fd, 0) ==
               MAP_FAILED) {
        rc = -errno;
    } else {
        void *alias = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (alias == MAP_FAILED)
            rc = -errno;
        else
            r->alias = alias;
    }
    close(fd);
    return rc;
}

static void mprotect_install(struct svm_region *r, uintptr_t addr, const void *data,
                             bool writable)
{
    char *view = r->alias + (addr - r->base);
    if (data)
        memcpy(view, data, SVM_PAGE_SIZE);
    else
        memset(view, 0, SVM_PAGE_SIZE);
    if (mprotect((void *)addr, SVM_PAGE_SIZE, writable ? PROT_READ | PROT_WRITE : PROT_READ))
        mprotect_broke("opening", addr);
}

static void mprotect_protect(struct svm_region *r, uintptr_t addr, enum svm_access a)
{
    (void)r;
    if (mprotect((void *)addr, SVM_PAGE_SIZE, a == SVM_WRITE ? PROT_READ | PROT_WRITE : PROT_READ))
        mprotect_broke("changing the protection", addr);
}

static void mprotect_drop(struct svm_region *r, uintptr_t addr)
{
    if (mprotect((void *)addr, SVM_PAGE_SIZE, PROT_NONE) != 0)
        mprotect_broke("closing", addr);
    if (madvise(r->alias + (addr - r->base), SVM_PAGE_SIZE, MADV_REMOVE) != 0)
        mprotect_broke("freeing", addr);
}

static const struct svm_access_ops mprotect_ops = {
    .name = "mprotect",
    .signal = SIGSEGV,
    .map = mprotect_map,
    .install = mprotect_install,
    .protect = mprotect_protect,
    .drop = mprotect_drop,
};

const struct svm_access_ops *svm_access_mprotect(void)
{
    return &mprotect_ops;
}

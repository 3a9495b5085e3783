/*
 * tls.c - thread-local variables of process-mode programs.
 *
 * All ULPs of a node run on the node's few threads and share one C
 * library, whose own TLS (errno, malloc's cache, the locale) and UPVM's sit
 * at fixed offsets from those threads' thread pointer (%fs): giving each
 * ULP a thread pointer of its own is not possible, and switching %fs at
 * each ULP switch would cost more than the switch (design notes §11).  So
 * a program's TLS is reached the general-dynamic way: upvmcc links it
 * -shared, its code calls __tls_get_addr(&{module, offset}), the pair in
 * its GOT (relocations DTPMOD64, DTPOFF64), and the loader writes, as the
 * program's module id, the address of the instance's own block with
 * LOADER_TLS_OWN set.  The GOT and the block are in the ULP's slot: they
 * move with it, at the same address, and the answer does not depend on
 * the thread that asks (scheduler or kernel context).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <string.h>

#include "loader/loader_impl.h"

/* The C library's (ld.so's): libraries' TLS, module ids from its link map. */
extern void *__tls_get_addr(struct loader_tls_index *ti);

void *loader_tls_get_addr(struct loader_tls_index *ti)
{
    if (__builtin_expect((ti->module & LOADER_TLS_OWN) != 0, 1))
        return (void *)(uintptr_t)((ti->module & ~LOADER_TLS_OWN) + ti->offset);
    return __tls_get_addr(ti);
}

uint64_t tls_own_module(const struct loader_image *img, uintptr_t base)
{
    return (base + img->tls_vaddr) | LOADER_TLS_OWN;
}

void tls_init_block(const struct loader_image *img, uintptr_t base)
{
    if (!img->has_tls)
        return;
    uint8_t *block = (uint8_t *)(base + img->tls_vaddr);
    memcpy(block, img->tls_init, img->tls_filesz);
    memset(block + img->tls_filesz, 0, img->tls_memsz - img->tls_filesz);
}

/* ------------------------------------------------------------ libraries */

struct tls_find {
    uintptr_t addr;
    uint64_t mod, off;
    bool found;
};

/* The module whose block on this thread holds f->addr. */
static int tls_find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct tls_find *f = arg;
    (void)size;
    if (info->dlpi_tls_modid == 0 || !info->dlpi_tls_data)
        return 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = (uintptr_t)info->dlpi_tls_data;
        if (ph->p_type == PT_TLS && f->addr >= lo && f->addr - lo < ph->p_memsz) {
            f->mod = info->dlpi_tls_modid;
            f->off = f->addr - lo;
            f->found = true;
            return 1;
        }
    }
    return 0;
}

int tls_import(const void *addr, uint64_t *mod, uint64_t *off)
{
    struct tls_find f = {.addr = (uintptr_t)addr};
    dl_iterate_phdr(tls_find_cb, &f);
    if (!f.found)
        return -ENOENT;
    *mod = f.mod;
    *off = f.off;
    return 0;
}

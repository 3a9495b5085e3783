/*
 * loader_impl.h - what the loader's three files share: the parsed image.
 *
 *   elf.c       reads a mapped file, checks every header, offset, size and
 *               index against it, and fills struct loader_image (segments,
 *               symbol tables, relocation tables, the symbols the
 *               relocations bind to).  Touches nothing outside the image.
 *   image.c     opens files, keeps the (st_dev, st_ino) cache, loads the
 *               DT_NEEDED libraries and looks imports up in the node.
 *   instance.c  maps an image at a base, relocates it, runs init/fini.
 *
 * Everything a relocation can do is checked once, at open: instantiation
 * then trusts the image and only maps, resolves and writes.  The tables
 * point into a read-only mapping of the whole file (img->file), which lives
 * as long as the image.
 */
#ifndef UPVM_LOADER_IMPL_H
#define UPVM_LOADER_IMPL_H

#include <elf.h>
#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#include "loader/loader.h"

#define LOADER_MAX_SEGS 16                 /* PT_LOADs: a PIE has 4 */
#define LOADER_MAX_SPAN ((uint64_t)1 << 40) /* larger is taken as corrupt */
#define LOADER_PAGE 4096u                  /* ELF pages on x86-64 */

struct loader_seg {
    uint64_t vaddr, memsz;  /* where, relative to the base */
    uint64_t offset, filesz; /* what of the file goes there */
    int prot;               /* PROT_* from p_flags */
};

/* How a symbol that relocations bind to is resolved. */
enum loader_ref_kind {
    REF_OWN,       /* defined by the program: base + value */
    REF_OWN_IFUNC, /* defined, STT_GNU_IFUNC: call base + value */
    REF_ABS,       /* SHN_ABS: value as is */
    REF_IMPORT,    /* undefined: resolver, then the node */
    REF_OWN_TLS,   /* STT_TLS defined by the program: value is its offset in
                    * the program's TLS block (tls.c) */
    REF_IMPORT_TLS, /* STT_TLS of a library: tls_mod, tls_off (image.c) */
    REF_TLS_GET_ADDR, /* __tls_get_addr: always loader_tls_get_addr */
};

struct loader_ref {
    const char *name;
    uint64_t value;
    uint8_t kind;     /* enum loader_ref_kind */
    bool weak;        /* undefined weak: 0 when nobody has it */
    void *node_addr;  /* dlsym(RTLD_DEFAULT) at open, NULL if none */
    uint64_t tls_mod, tls_off; /* REF_IMPORT_TLS: the library's module id
                                * and the symbol's offset in its block */
};

struct loader_image {
    /* the file */
    char *path;
    char *abspath;         /* path made absolute (realpath), for debuggers */
    int fd;
    const uint8_t *file;   /* the whole file, PROT_READ */
    size_t size;
    dev_t dev;
    ino_t ino;
    struct timespec mtime;
    uint64_t id;           /* loader_image_id, 0 until asked */
    int refs;
    struct loader_image *next; /* in the cache (refs 0: kept idle, image.c) */

    /* the memory image, relative to the base */
    struct loader_seg seg[LOADER_MAX_SEGS];
    unsigned nseg;
    uint64_t span;                   /* page rounded, from vaddr 0 */
    uint64_t relro_start, relro_end; /* page rounded; empty if equal */
    uint64_t main_vaddr;
    /* PT_GNU_EH_FRAME (.eh_frame_hdr: the sorted table of the unwinder's
     * FDEs), 0 if none: loader_image_eh_frame_hdr */
    uint64_t eh_frame_hdr_vaddr;

    /* thread-local storage (PT_TLS; tls.c): each instance's block is at
     * base + tls_vaddr, just after the last segment's memory, which is
     * writable and whose memsz (hence span and writable range) covers the
     * block: it is mapped, dropped, migrated and reloaded with the data */
    bool has_tls;
    const uint8_t *tls_init;         /* .tdata's bytes, in img->file */
    uint64_t tls_filesz, tls_memsz;  /* .tdata; .tdata + .tbss */
    uint64_t tls_vaddr;

    /* dynamic symbols */
    const Elf64_Sym *symtab;
    uint32_t nsyms;
    const char *strtab;
    uint64_t strsz;
    const uint32_t *gnu_hash;  /* one of the two, GNU preferred */
    const uint32_t *sysv_hash;

    /* relocations (RELA entries point into img->file) */
    const Elf64_Rela *rela;
    size_t nrela;
    const Elf64_Rela *jmprel;
    size_t njmprel;
    const uint64_t *relr;
    size_t nrelr;
    bool runs_code;            /* IRELATIVE or an own ifunc symbol is bound */

    /* initialisers and finalisers (vaddrs; 0 if none) */
    uint64_t init, fini, preinit_array, init_array, fini_array;
    size_t npreinit, ninit, nfini;

    /* libraries */
    uint64_t *needed;          /* strtab offsets of the DT_NEEDED names */
    unsigned nneeded;
    uint64_t runpath;          /* strtab offset of DT_RUNPATH/DT_RPATH, or ~0 */
    void **handles;            /* dlopen'ed, one per needed */

    /* the symbols the relocations bind to */
    struct loader_ref *refs_tab;
    uint32_t nrefs;
    uint32_t *ref_of_sym;      /* nsyms entries: index in refs_tab */
};

/* elf.c */
int elf_parse(struct loader_image *img, struct loader_error *err) HIDDEN NODISCARD;
const Elf64_Sym *elf_lookup(const struct loader_image *img, const char *name) HIDDEN;
void elf_free(struct loader_image *img) HIDDEN;
/* Walk the RELR table: with base != 0 apply it; with base 0 only check
 * that every address it names is in a writable segment (0 or -ENOEXEC). */
int elf_relr_walk(const struct loader_image *img, uintptr_t base) HIDDEN;
/* [vaddr, vaddr + len) inside one writable segment's memory. */
bool elf_writable(const struct loader_image *img, uint64_t vaddr, uint64_t len) HIDDEN;
/* vaddr inside an executable segment. */
bool elf_in_text(const struct loader_image *img, uint64_t vaddr) HIDDEN;

/* tls.c */
/* The module id a DTPMOD64 of the program's own TLS gets in the instance
 * at base: its block's address, tagged (loader_tls_get_addr). */
uint64_t tls_own_module(const struct loader_image *img, uintptr_t base) HIDDEN;
/* Copy the TLS image into the instance's block, zero its .tbss. */
void tls_init_block(const struct loader_image *img, uintptr_t base) HIDDEN;
/* A library's TLS symbol, whose address on this thread is addr: its module
 * id and offset (0), or -ENOENT when no loaded module's block holds it. */
int tls_import(const void *addr, uint64_t *mod, uint64_t *off) HIDDEN;

/* Fill *err: code and printf-style message; returns code. */
int loader_fail(struct loader_error *err, int code, const char *fmt, ...) HIDDEN COLD
    __attribute__((format(printf, 3, 4)));

static inline uint64_t page_down(uint64_t v) { return v & ~(uint64_t)(LOADER_PAGE - 1); }
static inline uint64_t page_up(uint64_t v)
{
    return (v + LOADER_PAGE - 1) & ~(uint64_t)(LOADER_PAGE - 1);
}

#endif /* UPVM_LOADER_IMPL_H */

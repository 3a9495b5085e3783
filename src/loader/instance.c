/*
 * instance.c - one loaded copy of an image: mapping, relocation, RELRO,
 * initialisers and finalisers.
 *
 * Mapping: each PT_LOAD goes over the caller's PROT_NONE reservation with
 * MAP_FIXED.  A read-only segment's file part is mapped MAP_PRIVATE from the
 * image's file descriptor with the segment's own protections, so text and
 * read-only data are the page cache's pages, shared by every instance (and
 * every node).  A writable segment is anonymous memory that its file bytes
 * are copied into (from the image's read-only view of the file): relocation
 * writes most of its pages anyway, and being anonymous it merges with the
 * anonymous memory the caller puts right after the image (stack, heap) into
 * one mapping.  Memory mappings per ULP are what limits how many ULPs a
 * node holds (vm.max_map_count), so they are counted: three for the
 * read-only segments of a typical program, one for everything writable.
 * For the same reason PT_GNU_RELRO is not made read-only (it would split
 * the writable mapping in two): a hardening measure process-mode ULPs do
 * without, as docs/process-mode.md says.
 *
 * Relocation, in three steps so that no program code runs before the data
 * it may read is in place (as ld.so orders it):
 *   1. resolve every imported symbol (own definition, resolver, node);
 *   2. apply RELR, RELATIVE, 64, GLOB_DAT, JUMP_SLOT (all bound now: no
 *      lazy binding, so no PLT resolver is ever needed), DTPMOD64 and
 *      DTPOFF64 (thread-local variables: tls.c);
 *   3. call ifunc resolvers: own STT_GNU_IFUNC symbols, then IRELATIVE.
 * Then PT_GNU_RELRO becomes read-only.  elf.c checked every relocation at
 * open, so nothing here re-checks offsets; what only relocation makes
 * known, the init/fini arrays' values, is checked here before any runs.
 *
 * The instance's TLS block (PT_TLS) is part of its last writable segment
 * (elf.c extends it): it is mapped with it and initialised from .tdata and
 * .tbss before relocation, on instantiation and reinstantiation alike.
 *
 * Failure or loader_unmap puts a PROT_NONE reservation back over the whole
 * span: the slot is as the caller gave it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "loader/loader_impl.h"

#define STACK_REFS 128 /* resolved symbols kept on the stack; more: malloc */

static void reserve(uintptr_t base, uint64_t span)
{
    /* Replacing a mapping by a fresh PROT_NONE one cannot fail for lack of
     * memory (MAP_NORESERVE), and it frees the pages. */
    mmap((void *)base, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
         -1, 0);
}

/* ------------------------------------------------------------ mapping */

static int map_file_part(const struct loader_image *img, const struct loader_seg *s,
                         uintptr_t base)
{
    uint64_t start = page_down(s->vaddr), file_end = s->vaddr + s->filesz;
    /* the last file page gets a zeroed tail: writable until then */
    bool tail = s->memsz > s->filesz && file_end % LOADER_PAGE;
    int prot = tail ? s->prot | PROT_WRITE : s->prot;
    void *want = (void *)(base + start);
    size_t len = page_up(file_end) - start;
    if (mmap(want, len, prot, MAP_PRIVATE | MAP_FIXED, img->fd, (off_t)page_down(s->offset)) !=
        want)
        return -errno;
    if (tail) {
        memset((void *)(base + file_end), 0, page_up(file_end) - file_end);
        if (prot != s->prot && mprotect(want, len, s->prot) != 0) /* a read-only .bss */
            return -errno;
    }
    return 0;
}

/* A writable segment: anonymous memory with the file's bytes copied in. */
static int map_writable(const struct loader_image *img, const struct loader_seg *s,
                        uintptr_t base)
{
    uint64_t start = page_down(s->vaddr), end = page_up(s->vaddr + s->memsz);
    void *want = (void *)(base + start);
    if (mmap(want, end - start, s->prot, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0) !=
        want)
        return -errno;
    memcpy((void *)(base + s->vaddr), img->file + s->offset, s->filesz);
    return 0;
}

static int map_segment(const struct loader_image *img, const struct loader_seg *s,
                       uintptr_t base, bool rw_mapped)
{
    if ((s->prot & PROT_WRITE) && rw_mapped) { /* the caller mapped it */
        memcpy((void *)(base + s->vaddr), img->file + s->offset, s->filesz);
        return 0;
    }
    if (s->prot & PROT_WRITE)
        return map_writable(img, s, base);
    uint64_t anon = page_down(s->vaddr), end = page_up(s->vaddr + s->memsz);
    if (s->filesz) {
        int rc = map_file_part(img, s, base);
        if (rc)
            return rc;
        anon = page_up(s->vaddr + s->filesz);
    }
    if (end > anon) {
        void *want = (void *)(base + anon);
        if (mmap(want, end - anon, s->prot, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0) !=
            want)
            return -errno;
    }
    return 0;
}

static int map_all(const struct loader_image *img, uintptr_t base, bool rw_mapped,
                   struct loader_error *err)
{
    for (unsigned i = 0; i < img->nseg; i++) {
        int rc = map_segment(img, &img->seg[i], base, rw_mapped);
        if (rc)
            return loader_fail(err, rc, "%s: cannot map a segment: %s", img->path,
                               strerror(-rc));
    }
    return 0;
}

/* ------------------------------------------------------------ symbols */

static COLD int undefined(const struct loader_image *img, const char *name,
                          struct loader_error *err)
{
    char libs[256] = "";
    size_t n = 0;
    for (unsigned i = 0; i < img->nneeded && n < sizeof libs; i++)
        n += (size_t)snprintf(libs + n, sizeof libs - n, "%s, ", img->strtab + img->needed[i]);
    return loader_fail(err, -ENOENT, "%s: undefined symbol '%s' (searched: the program, "
                       "UPVM's interposition table, %sand the node's libraries)",
                       img->path, name, libs);
}

static int resolve_import(const struct loader_ref *r, loader_resolver_t resolver, void *ctx,
                          uint64_t *val)
{
    void *p = resolver ? resolver(r->name, ctx) : NULL;
    if (!p)
        p = r->node_addr;
    if (!p && !r->weak)
        p = dlsym(RTLD_DEFAULT, r->name); /* a library opened since */
    if (!p && !r->weak)
        return -ENOENT;
    *val = (uint64_t)(uintptr_t)p;
    return 0;
}

/* Step 1: every symbol but own ifuncs (step 3). */
static int resolve_refs(const struct loader_image *img, uintptr_t base,
                        loader_resolver_t resolver, void *ctx, uint64_t *vals,
                        struct loader_error *err)
{
    for (uint32_t i = 0; i < img->nrefs; i++) {
        const struct loader_ref *r = &img->refs_tab[i];
        vals[i] = 0;
        if (r->kind == REF_OWN)
            vals[i] = base + r->value;
        else if (r->kind == REF_ABS)
            vals[i] = r->value;
        else if (r->kind == REF_IMPORT && resolve_import(r, resolver, ctx, &vals[i]) != 0)
            return undefined(img, r->name, err);
        else if (r->kind == REF_OWN_TLS)
            vals[i] = r->value; /* its offset in the block */
        else if (r->kind == REF_TLS_GET_ADDR) /* the loader's: see loader.h */
            vals[i] = (uint64_t)(uintptr_t)loader_tls_get_addr;
        else if (r->kind == REF_IMPORT_TLS && !r->node_addr && !r->weak)
            return undefined(img, r->name, err);
        else if (r->kind == REF_IMPORT_TLS)
            vals[i] = r->tls_off;
    }
    return 0;
}

/* ------------------------------------------------------------ relocations */

static void store(uintptr_t where, uint64_t v)
{
    memcpy((void *)where, &v, sizeof v); /* no alignment promised */
}

static uint64_t call_ifunc(uintptr_t fn)
{
    return (uint64_t)((uintptr_t(*)(void))fn)();
}

/* DTPMOD64's value: the program's own TLS (no symbol: local-dynamic) or
 * a library's module. */
static uint64_t dtpmod(const struct loader_image *img, uintptr_t base, uint32_t sym)
{
    const struct loader_ref *r = sym ? &img->refs_tab[img->ref_of_sym[sym]] : NULL;
    return !r || r->kind == REF_OWN_TLS ? tls_own_module(img, base) : r->tls_mod;
}

/* Steps 2 (late false) and 3 (late true) over one RELA table. */
static void apply_rela(const struct loader_image *img, const Elf64_Rela *t, size_t n,
                       uintptr_t base, const uint64_t *vals, bool late)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t type = ELF64_R_TYPE(t[i].r_info), sym = ELF64_R_SYM(t[i].r_info);
        if (type == R_X86_64_NONE) /* its symbol index was not checked */
            continue;
        uintptr_t where = base + t[i].r_offset;
        uint64_t s = 0;
        bool runs_code = type == R_X86_64_IRELATIVE;
        if (sym && type != R_X86_64_RELATIVE && type != R_X86_64_IRELATIVE) {
            uint32_t ref = img->ref_of_sym[sym];
            s = vals[ref];
            runs_code = img->refs_tab[ref].kind == REF_OWN_IFUNC;
        }
        if (runs_code != late)
            continue;
        if (type == R_X86_64_RELATIVE)
            store(where, base + (uint64_t)t[i].r_addend);
        else if (type == R_X86_64_IRELATIVE)
            store(where, call_ifunc(base + (uint64_t)t[i].r_addend));
        else if (type == R_X86_64_DTPMOD64)
            store(where, dtpmod(img, base, sym));
        else /* DTPOFF64 (S is an offset, 0 without a symbol), 64, GLOB_DAT, JUMP_SLOT: S + A (A is 0 for the last two) */
            store(where, s + (uint64_t)t[i].r_addend);
    }
}

static void resolve_own_ifuncs(const struct loader_image *img, uintptr_t base, uint64_t *vals)
{
    for (uint32_t i = 0; i < img->nrefs; i++)
        if (img->refs_tab[i].kind == REF_OWN_IFUNC)
            vals[i] = call_ifunc(base + img->refs_tab[i].value);
}

/* Can the loader call v?  Inside the image: only its code.  Outside: a
 * function of a loaded library (a symbol relocation put it there, e.g. a
 * sanitizer's __asan_init in the preinit array). */
static bool callable(const struct loader_image *img, uintptr_t base, uint64_t v)
{
    if (v >= base && v - base < img->span)
        return elf_in_text(img, v - base);
    Dl_info info;
    return dladdr((void *)(uintptr_t)v, &info) != 0 && info.dli_fbase != NULL;
}

/* After relocation, before anything calls them: every init/fini array
 * entry must be callable.  Their values come from relocations (RELATIVE
 * addends) that elf.c cannot tie to the arrays, and the loader itself
 * calls them (loader_run_init): a corrupt addend would be a call to
 * anywhere, made by the runtime. */
static int check_arrays(const struct loader_image *img, uintptr_t base,
                        struct loader_error *err)
{
    const struct {
        uint64_t vaddr;
        size_t n;
        const char *name;
    } a[] = {{img->preinit_array, img->npreinit, "DT_PREINIT_ARRAY"},
             {img->init_array, img->ninit, "DT_INIT_ARRAY"},
             {img->fini_array, img->nfini, "DT_FINI_ARRAY"}};
    for (size_t t = 0; t < sizeof a / sizeof a[0]; t++) {
        for (size_t k = 0; k < a[t].n; k++) {
            uint64_t v;
            memcpy(&v, (const void *)(base + a[t].vaddr + k * 8), sizeof v);
            if (!callable(img, base, v))
                return loader_fail(err, -ENOEXEC, "malformed ELF file %s: entry %zu of %s "
                                   "(%#llx after relocation) is not in an executable segment",
                                   img->path, k, a[t].name, (unsigned long long)(v - base));
        }
    }
    return 0;
}

static int relocate(const struct loader_image *img, uintptr_t base, loader_resolver_t resolver,
                    void *ctx, struct loader_error *err)
{
    uint64_t stack_vals[STACK_REFS];
    uint64_t *vals = img->nrefs <= STACK_REFS ? stack_vals : malloc(img->nrefs * sizeof *vals);
    if (!vals)
        return loader_fail(err, -ENOMEM, "%s: out of memory", img->path);
    int rc = resolve_refs(img, base, resolver, ctx, vals, err);
    if (rc == 0) {
        elf_relr_walk(img, base);
        apply_rela(img, img->rela, img->nrela, base, vals, false);
        apply_rela(img, img->jmprel, img->njmprel, base, vals, false);
        if (img->runs_code) {
            resolve_own_ifuncs(img, base, vals);
            apply_rela(img, img->rela, img->nrela, base, vals, true);
            apply_rela(img, img->jmprel, img->njmprel, base, vals, true);
        }
        rc = check_arrays(img, base, err);
    }
    if (vals != stack_vals)
        free(vals);
    return rc;
}

/* ------------------------------------------------------------ instances */

static void fill_instance(struct loader_image *img, uintptr_t base, struct loader_instance *out)
{
    *out = (struct loader_instance){
        .img = img,
        .base = base,
        .main = (int (*)(int, char **, char **))(base + img->main_vaddr),
        .preinit_array = (void (**)(int, char **, char **))(base + img->preinit_array),
        .npreinit = img->npreinit,
        .init_array = (void (**)(int, char **, char **))(base + img->init_array),
        .ninit = img->ninit,
        .init = img->init ? (void (*)(void))(base + img->init) : NULL,
        .fini_array = (void (**)(void))(base + img->fini_array),
        .nfini = img->nfini,
        .fini = img->fini ? (void (*)(void))(base + img->fini) : NULL,
    };
}

int loader_instantiate(struct loader_image *img, void *base, loader_resolver_t resolver,
                       void *inst_ctx, struct loader_instance *out, struct loader_error *err)
{
    return loader_instantiate_flags(img, base, resolver, inst_ctx, 0, out, err);
}

int loader_instantiate_flags(struct loader_image *img, void *base, loader_resolver_t resolver,
                             void *inst_ctx, unsigned flags, struct loader_instance *out,
                             struct loader_error *err)
{
    uintptr_t b = (uintptr_t)base;
    if (!b || b % LOADER_PAGE)
        return loader_fail(err, -EINVAL, "%s: load address %p is not page-aligned", img->path,
                           base);
    int rc = map_all(img, b, (flags & LOADER_RW_MAPPED) != 0, err);
    if (!rc) {
        tls_init_block(img, b);
        rc = relocate(img, b, resolver, inst_ctx, err);
    }
    if (rc) {
        reserve(b, img->span);
        return rc;
    }
    fill_instance(img, b, out);
    return 0;
}

int loader_map_readonly(struct loader_image *img, void *base, struct loader_error *err)
{
    uintptr_t b = (uintptr_t)base;
    for (unsigned i = 0; i < img->nseg; i++) {
        const struct loader_seg *sg = &img->seg[i];
        if (sg->prot & PROT_WRITE)
            continue; /* the caller's: it brings the bytes */
        int rc = map_segment(img, sg, b, false);
        if (rc)
            return loader_fail(err, rc, "%s: cannot map a segment: %s", img->path,
                               strerror(-rc));
    }
    return 0;
}

/* The writable segments' pages: [*lo, *hi) relative to the base. */
static void writable_range(const struct loader_image *img, uint64_t *lo, uint64_t *hi)
{
    *lo = img->span;
    *hi = 0;
    for (unsigned i = 0; i < img->nseg; i++) {
        const struct loader_seg *sg = &img->seg[i];
        if (!(sg->prot & PROT_WRITE))
            continue;
        if (page_down(sg->vaddr) < *lo)
            *lo = page_down(sg->vaddr);
        if (page_up(sg->vaddr + sg->memsz) > *hi)
            *hi = page_up(sg->vaddr + sg->memsz);
    }
    if (*hi < *lo)
        *lo = *hi = 0;
}

size_t loader_image_writable(const struct loader_image *img, size_t *offset)
{
    uint64_t lo, hi;
    writable_range(img, &lo, &hi);
    *offset = (size_t)lo;
    return (size_t)(hi - lo);
}

int loader_reinstantiate(struct loader_image *img, void *base, loader_resolver_t resolver,
                         void *inst_ctx, struct loader_instance *out,
                         struct loader_error *err)
{
    uintptr_t b = (uintptr_t)base;
    for (unsigned i = 0; i < img->nseg; i++) { /* the file's bytes again */
        const struct loader_seg *sg = &img->seg[i];
        if (sg->prot & PROT_WRITE)
            memcpy((void *)(b + sg->vaddr), img->file + sg->offset, sg->filesz);
    }
    tls_init_block(img, b);
    int rc = relocate(img, b, resolver, inst_ctx, err);
    if (rc) {
        reserve(b, img->span);
        return rc;
    }
    fill_instance(img, b, out);
    return 0;
}

void *loader_instance_sym(const struct loader_instance *in, const char *name)
{
    const Elf64_Sym *s = elf_lookup(in->img, name);
    if (!s)
        return NULL;
    if (s->st_shndx == SHN_ABS)
        return (void *)(uintptr_t)s->st_value;
    uintptr_t addr = in->base + s->st_value;
    if (ELF64_ST_TYPE(s->st_info) == STT_GNU_IFUNC)
        addr = elf_in_text(in->img, s->st_value) ? (uintptr_t)call_ifunc(addr) : 0;
    return (void *)addr;
}

void loader_run_init(const struct loader_instance *in, int argc, char **argv, char **envp)
{
    for (size_t i = 0; i < in->npreinit; i++)
        in->preinit_array[i](argc, argv, envp);
    if (in->init)
        in->init();
    for (size_t i = 0; i < in->ninit; i++)
        in->init_array[i](argc, argv, envp);
}

void loader_run_fini(const struct loader_instance *in)
{
    for (size_t i = in->nfini; i-- > 0;)
        in->fini_array[i]();
    if (in->fini)
        in->fini();
}

void loader_unmap(struct loader_instance *in)
{
    if (!in->img)
        return;
    reserve(in->base, in->img->span);
    *in = (struct loader_instance){0};
}

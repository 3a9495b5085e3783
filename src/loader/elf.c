/*
 * elf.c - reading and checking an x86-64 PIE (ELF64, little endian).
 *
 * The whole file is mapped read-only (img->file, img->size) and every
 * table is reached through file_at(), which translates a virtual address
 * into the file through the PT_LOAD that holds it and checks bounds and
 * alignment: nothing read from the file is used before it is checked, so a
 * corrupt or hostile file gives an error, never a crash (tests/loader
 * fuzzes this).
 *
 * The checks run in the order a user wants to hear about problems: not
 * ELF / wrong machine / not a PIE first, then unsupported features (TLS,
 * text relocations), then "is it a program" (PT_INTERP or DF_1_PIE, an
 * exported main), then each relocation.  Relocations are checked here once
 * (their type, that they write inside a writable segment, the symbol they
 * name) so that instance.c can apply them without checking anything.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "loader/loader_impl.h"

/* Thread-local variables work in programs linked as upvmcc links them
 * (-shared: general-dynamic TLS through __tls_get_addr, see tls.c); these
 * are the ways a program can reach TLS that cannot be given per ULP. */
#define TLS_PIE_MSG "thread-local variables in a PIE are reached at fixed offsets from the " \
                    "thread pointer (local-exec), which all ULPs of a node share: rebuild it " \
                    "with upvmcc (it links programs with -shared, keeping general-dynamic TLS)"
#define TLS_IE_MSG "initial-exec thread-local access (thread-pointer offsets) is not " \
                   "supported in process-mode programs: rebuild it with upvmcc without " \
                   "-ftls-model=initial-exec or local-exec"
#define TLS_DESC_MSG "TLS descriptors (-mtls-dialect=gnu2) are not supported in " \
                     "process-mode programs: rebuild it with upvmcc without -mtls-dialect=gnu2"

/* The dynamic section's values that matter here, by tag. */
struct dyn {
    uint64_t v[DT_NUM];
    bool has[DT_NUM];
    uint64_t gnu_hash, flags_1;
    bool has_gnu_hash;
};

struct phinfo {
    const Elf64_Phdr *dynamic, *relro, *tls, *eh_frame_hdr;
    bool interp;
};

int loader_fail(struct loader_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
    return code;
}

static COLD __attribute__((format(printf, 3, 4))) int
malformed(const struct loader_image *img, struct loader_error *err, const char *fmt, ...)
{
    char what[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return loader_fail(err, -ENOEXEC, "malformed ELF file %s: %s", img->path, what);
}

/* ------------------------------------------------------------ addresses */

/* a + b <= limit, without overflow. */
static bool fits(uint64_t a, uint64_t b, uint64_t limit)
{
    return a <= limit && b <= limit - a;
}

/* The file bytes at [vaddr, vaddr + len), inside one segment's file part,
 * aligned to align; NULL if not. */
static const void *file_at(const struct loader_image *img, uint64_t vaddr, uint64_t len,
                           uint64_t align)
{
    if (vaddr % align)
        return NULL;
    for (unsigned i = 0; i < img->nseg; i++) {
        const struct loader_seg *s = &img->seg[i];
        if (vaddr >= s->vaddr && fits(vaddr - s->vaddr, len, s->filesz))
            return img->file + s->offset + (vaddr - s->vaddr);
    }
    return NULL;
}

/* How many bytes of file follow vaddr inside its segment (0 if none). */
static uint64_t file_avail(const struct loader_image *img, uint64_t vaddr)
{
    for (unsigned i = 0; i < img->nseg; i++) {
        const struct loader_seg *s = &img->seg[i];
        if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz)
            return s->filesz - (vaddr - s->vaddr);
    }
    return 0;
}

static bool in_segment(const struct loader_image *img, uint64_t vaddr, uint64_t len, int prot)
{
    for (unsigned i = 0; i < img->nseg; i++) {
        const struct loader_seg *s = &img->seg[i];
        if ((s->prot & prot) == prot && vaddr >= s->vaddr &&
            fits(vaddr - s->vaddr, len, s->memsz))
            return true;
    }
    return false;
}

bool elf_writable(const struct loader_image *img, uint64_t vaddr, uint64_t len)
{
    return in_segment(img, vaddr, len, PROT_WRITE);
}

bool elf_in_text(const struct loader_image *img, uint64_t vaddr)
{
    return in_segment(img, vaddr, 1, PROT_EXEC);
}

/* ------------------------------------------------------------ ELF header */

static const char *not_a_pie_reason(uint16_t type)
{
    switch (type) {
    case ET_EXEC:
        return "not a position-independent executable: rebuild it with upvmcc";
    case ET_REL:
        return "an object file (.o), not a program: link it with upvmcc";
    case ET_CORE:
        return "a core dump, not a program";
    default:
        return NULL;
    }
}

/* e_ident: is it an ELF file, and one of ours? */
static int check_ident(struct loader_image *img, struct loader_error *err)
{
    const unsigned char *id = img->file;
    if (img->size < SELFMAG || memcmp(id, ELFMAG, SELFMAG) != 0) {
        if (img->size >= 2 && id[0] == '#' && id[1] == '!')
            return loader_fail(err, -ENOEXEC, "%s is a script, not a compiled program: "
                               "build the program with upvmcc", img->path);
        return loader_fail(err, -ENOEXEC, "%s is not an ELF file (not a compiled program)",
                           img->path);
    }
    if (img->size < sizeof(Elf64_Ehdr))
        return malformed(img, err, "truncated ELF header (%zu bytes)", img->size);
    if (id[EI_CLASS] == ELFCLASS32)
        return loader_fail(err, -ENOEXEC, "%s is a 32-bit program: UPVM runs x86-64 programs",
                           img->path);
    if (id[EI_CLASS] != ELFCLASS64 || id[EI_DATA] != ELFDATA2LSB ||
        id[EI_VERSION] != EV_CURRENT)
        return malformed(img, err, "not a little-endian ELF64 header (class %u, data %u)",
                         id[EI_CLASS], id[EI_DATA]);
    return 0;
}

static int check_ehdr(struct loader_image *img, struct loader_error *err)
{
    int rc = check_ident(img, err);
    if (rc)
        return rc;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img->file;
    if (eh->e_machine != EM_X86_64)
        return loader_fail(err, -ENOEXEC, "%s is built for another machine (e_machine %u), "
                           "not x86-64", img->path, eh->e_machine);
    if (eh->e_type != ET_DYN) {
        const char *why = not_a_pie_reason(eh->e_type);
        if (why)
            return loader_fail(err, -ENOEXEC, "%s: %s", img->path, why);
        return malformed(img, err, "unknown e_type %u", eh->e_type);
    }
    if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum == 0 ||
        eh->e_phnum >= PN_XNUM || eh->e_phoff % 8 ||
        !fits(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr), img->size))
        return malformed(img, err, "program headers out of the file (offset %llu, %u of %u bytes)",
                         (unsigned long long)eh->e_phoff, eh->e_phnum, eh->e_phentsize);
    return 0;
}

/* ------------------------------------------------------------ program headers */

static int prot_of(uint32_t flags)
{
    return (flags & PF_R ? PROT_READ : 0) | (flags & PF_W ? PROT_WRITE : 0) |
           (flags & PF_X ? PROT_EXEC : 0);
}

/* Bits of p_flags a loadable segment may have: R, W, X and the OS's and
 * processor's own ranges (which mean nothing here and are ignored). */
#define PF_KNOWN (PF_R | PF_W | PF_X | PF_MASKOS | PF_MASKPROC)

/* Program header i alone: bounds in the file and in memory, flags,
 * alignment.  Each message says which header and which field. */
static int check_load(struct loader_image *img, struct loader_error *err, unsigned i,
                      const Elf64_Phdr *ph)
{
    if (!fits(ph->p_offset, ph->p_filesz, img->size))
        return malformed(img, err, "segment %u (PT_LOAD): file bytes %#llx + %#llx extend "
                         "past the end of the file (%zu bytes; truncated?)", i,
                         (unsigned long long)ph->p_offset, (unsigned long long)ph->p_filesz,
                         img->size);
    if (ph->p_filesz > ph->p_memsz)
        return malformed(img, err, "segment %u (PT_LOAD): p_filesz %#llx is larger than "
                         "p_memsz %#llx", i, (unsigned long long)ph->p_filesz,
                         (unsigned long long)ph->p_memsz);
    /* code has no zero-filled tail (.bss is never executable): a shorter
     * file part means the code is cut off */
    if ((ph->p_flags & PF_X) && ph->p_filesz != ph->p_memsz)
        return malformed(img, err, "segment %u (PT_LOAD): executable, but p_filesz %#llx is "
                         "not p_memsz %#llx (code cut off)", i,
                         (unsigned long long)ph->p_filesz, (unsigned long long)ph->p_memsz);
    if (!fits(ph->p_vaddr, ph->p_memsz, LOADER_MAX_SPAN))
        return malformed(img, err, "segment %u (PT_LOAD): address %#llx + %#llx is out of "
                         "range", i, (unsigned long long)ph->p_vaddr,
                         (unsigned long long)ph->p_memsz);
    /* p_align 0 and 1 mean none; otherwise a power of two that p_vaddr and
     * p_offset agree modulo (the ELF specification's rule) */
    if ((ph->p_align & (ph->p_align - 1)) ||
        (ph->p_align > 1 && (ph->p_vaddr - ph->p_offset) % ph->p_align) ||
        (ph->p_vaddr - ph->p_offset) % LOADER_PAGE)
        return malformed(img, err, "segment %u (PT_LOAD): alignment %#llx does not fit "
                         "address %#llx and file offset %#llx", i,
                         (unsigned long long)ph->p_align, (unsigned long long)ph->p_vaddr,
                         (unsigned long long)ph->p_offset);
    if ((ph->p_flags & ~(uint32_t)PF_KNOWN) || !(ph->p_flags & PF_R))
        return malformed(img, err, "segment %u (PT_LOAD): flags %#x (not readable, or "
                         "unknown bits)", i, ph->p_flags);
    /* the writable segments are anonymous memory the node maps without
     * execute permission (instance.c): code there could not run */
    if ((ph->p_flags & PF_W) && (ph->p_flags & PF_X))
        return loader_fail(err, -ENOEXEC, "%s: segment %u is both writable and executable: "
                           "not supported; build the program with upvmcc", img->path, i);
    return 0;
}

/* Does segment s overlap, in the file, an earlier one? (Index or -1.) */
static int file_overlap(const struct loader_image *img, const struct loader_seg *s)
{
    for (unsigned k = 0; k < img->nseg; k++) {
        const struct loader_seg *o = &img->seg[k];
        if (s->filesz && o->filesz && s->offset < o->offset + o->filesz &&
            o->offset < s->offset + s->filesz)
            return (int)k;
    }
    return -1;
}

static int add_load(struct loader_image *img, struct loader_error *err, unsigned i,
                    const Elf64_Phdr *ph)
{
    if (ph->p_memsz == 0)
        return 0;
    if (img->nseg == LOADER_MAX_SEGS)
        return malformed(img, err, "more than %d PT_LOAD segments", LOADER_MAX_SEGS);
    int rc = check_load(img, err, i, ph);
    if (rc)
        return rc;
    if (img->nseg > 0) {
        const struct loader_seg *prev = &img->seg[img->nseg - 1];
        if (page_down(ph->p_vaddr) < page_up(prev->vaddr + prev->memsz))
            return malformed(img, err, "segment %u (PT_LOAD) at %#llx overlaps the one before "
                             "it or is out of order", i, (unsigned long long)ph->p_vaddr);
    }
    struct loader_seg seg = {
        .vaddr = ph->p_vaddr, .memsz = ph->p_memsz,
        .offset = ph->p_offset, .filesz = ph->p_filesz, .prot = prot_of(ph->p_flags)};
    /* a linker never lets two segments share file bytes: one that does
     * would map some other segment's bytes as its own */
    int o = file_overlap(img, &seg);
    if (o >= 0)
        return malformed(img, err, "segment %u (PT_LOAD): its file bytes %#llx + %#llx "
                         "overlap those of the PT_LOAD at %#llx", i,
                         (unsigned long long)seg.offset, (unsigned long long)seg.filesz,
                         (unsigned long long)img->seg[o].vaddr);
    img->seg[img->nseg++] = seg;
    return 0;
}

static int scan_phdrs(struct loader_image *img, struct loader_error *err, struct phinfo *pi)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img->file;
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(img->file + eh->e_phoff);
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        int rc = 0;
        switch (ph[i].p_type) {
        case PT_LOAD: rc = add_load(img, err, i, &ph[i]); break;
        case PT_DYNAMIC: pi->dynamic = &ph[i]; break;
        case PT_INTERP: pi->interp = true; break;
        case PT_GNU_RELRO: pi->relro = &ph[i]; break;
        case PT_GNU_EH_FRAME: pi->eh_frame_hdr = &ph[i]; break;
        case PT_TLS:
            if (pi->tls)
                rc = malformed(img, err, "two PT_TLS program headers");
            pi->tls = &ph[i];
            break;
        default: break;
        }
        if (rc)
            return rc;
    }
    if (img->nseg == 0)
        return malformed(img, err, "no PT_LOAD segment");
    const struct loader_seg *last = &img->seg[img->nseg - 1];
    img->span = page_up(last->vaddr + last->memsz);
    return 0;
}

/* PT_GNU_RELRO: made read-only after relocation, so it must lie in a
 * writable segment (whole pages only, as ld.so does). */
static int set_relro(struct loader_image *img, struct loader_error *err, const Elf64_Phdr *ph)
{
    if (!ph || !fits(ph->p_vaddr, ph->p_memsz, LOADER_MAX_SPAN))
        return ph ? malformed(img, err, "PT_GNU_RELRO out of range") : 0;
    uint64_t start = page_down(ph->p_vaddr), end = page_down(ph->p_vaddr + ph->p_memsz);
    if (end <= start)
        return 0;
    for (unsigned i = 0; i < img->nseg; i++) {
        const struct loader_seg *s = &img->seg[i];
        if ((s->prot & PROT_WRITE) && start >= page_down(s->vaddr) &&
            end <= page_up(s->vaddr + s->memsz)) {
            img->relro_start = start;
            img->relro_end = end;
            return 0;
        }
    }
    return malformed(img, err, "PT_GNU_RELRO is not inside a writable segment");
}

/* PT_GNU_EH_FRAME: the unwinder reads it in every instance (C++
 * exceptions: src/proc/cxx.c), so it must lie in the file bytes of a
 * segment that is not writable (mapped from the file, never relocated). */
static int set_eh_frame_hdr(struct loader_image *img, struct loader_error *err,
                            const Elf64_Phdr *ph)
{
    if (!ph)
        return 0;
    if (fits(ph->p_vaddr, ph->p_memsz, LOADER_MAX_SPAN) && ph->p_memsz >= 4) {
        for (unsigned i = 0; i < img->nseg; i++) {
            const struct loader_seg *s = &img->seg[i];
            if (!(s->prot & PROT_WRITE) && ph->p_vaddr >= s->vaddr &&
                ph->p_vaddr + ph->p_memsz <= s->vaddr + s->filesz) {
                img->eh_frame_hdr_vaddr = ph->p_vaddr;
                return 0;
            }
        }
    }
    return malformed(img, err, "PT_GNU_EH_FRAME at %#llx + %#llx is not inside the file bytes of "
                     "a read-only segment", (unsigned long long)ph->p_vaddr,
                     (unsigned long long)ph->p_memsz);
}

/* ------------------------------------------------------------ dynamic section */

static int read_dynamic(struct loader_image *img, struct loader_error *err,
                        const Elf64_Phdr *ph, struct dyn *d)
{
    if (!ph)
        return loader_fail(err, -ENOEXEC, "%s has no dynamic section: it is statically "
                           "linked; build it with upvmcc", img->path);
    const Elf64_Dyn *dyn = file_at(img, ph->p_vaddr, ph->p_filesz, 8);
    if (!dyn)
        return malformed(img, err, "the dynamic section is outside the loaded segments");
    size_t n = ph->p_filesz / sizeof *dyn;
    for (size_t i = 0; i < n; i++) {
        uint64_t tag = (uint64_t)dyn[i].d_tag, val = dyn[i].d_un.d_val;
        if (tag == DT_NULL)
            return 0;
        if (tag == DT_NEEDED)
            img->nneeded++;
        else if (tag < DT_NUM) {
            d->v[tag] = val;
            d->has[tag] = true;
        } else if (tag == DT_GNU_HASH) {
            d->gnu_hash = val;
            d->has_gnu_hash = true;
        } else if (tag == DT_FLAGS_1) {
            d->flags_1 = val;
        }
    }
    return malformed(img, err, "the dynamic section has no DT_NULL end");
}

/* A -static-pie program (no interpreter, no libraries, yet a PIE) carries
 * its own C library, whose TLS segment would be the first thing refused:
 * say what the file is instead.  Then TLS itself. */
static int check_linkage(struct loader_image *img, struct loader_error *err,
                         const struct phinfo *pi, const struct dyn *d)
{
    if (!pi->interp && img->nneeded == 0 && (d->flags_1 & DF_1_PIE))
        return loader_fail(err, -ENOEXEC, "%s is statically linked (-static-pie): UPVM runs "
                           "programs linked dynamically with the C library; rebuild it with "
                           "upvmcc, without -static or -static-pie", img->path);
    if (pi->tls && (d->flags_1 & DF_1_PIE))
        return loader_fail(err, -ENOEXEC, "%s: " TLS_PIE_MSG, img->path);
    return 0;
}

/* PT_TLS: its initial image inside one segment's file bytes, sizes and
 * alignment sane.  The instance's block goes right after the last
 * segment, which must be writable (it always is as linkers lay programs
 * out): that segment's memory is extended over the block, so that
 * everything done with the writable data (mapping, dropping, moving,
 * reloading) is done with the block too. */
static int setup_tls(struct loader_image *img, struct loader_error *err, const Elf64_Phdr *ph)
{
    if (!ph)
        return 0;
    if (ph->p_filesz > ph->p_memsz)
        return malformed(img, err, "PT_TLS: p_filesz %#llx is larger than p_memsz %#llx",
                         (unsigned long long)ph->p_filesz, (unsigned long long)ph->p_memsz);
    if (ph->p_align & (ph->p_align - 1))
        return malformed(img, err, "PT_TLS: alignment %#llx is not a power of two",
                         (unsigned long long)ph->p_align);
    if (ph->p_align > LOADER_PAGE)
        return loader_fail(err, -ENOEXEC, "%s: thread-local variables aligned to %#llx bytes: "
                           "more than a page (4096) is not supported", img->path,
                           (unsigned long long)ph->p_align);
    if (!fits(ph->p_vaddr, ph->p_memsz, LOADER_MAX_SPAN))
        return malformed(img, err, "PT_TLS: address %#llx + %#llx is out of range",
                         (unsigned long long)ph->p_vaddr, (unsigned long long)ph->p_memsz);
    const uint8_t *init = ph->p_filesz ? file_at(img, ph->p_vaddr, ph->p_filesz, 1) : img->file;
    if (!init)
        return malformed(img, err, "PT_TLS: its initial image %#llx + %#llx is not inside a "
                         "segment's file bytes", (unsigned long long)ph->p_vaddr,
                         (unsigned long long)ph->p_filesz);
    struct loader_seg *last = &img->seg[img->nseg - 1];
    if (!(last->prot & PROT_WRITE))
        return malformed(img, err, "PT_TLS in a program whose last PT_LOAD is not writable");
    uint64_t align = ph->p_align > 1 ? ph->p_align : 1;
    uint64_t at = (last->vaddr + last->memsz + align - 1) & ~(align - 1);
    if (!fits(at, ph->p_memsz, LOADER_MAX_SPAN))
        return malformed(img, err, "PT_TLS: the block does not fit the address range");
    img->has_tls = true;
    img->tls_init = init;
    img->tls_filesz = ph->p_filesz;
    img->tls_memsz = ph->p_memsz;
    img->tls_vaddr = at;
    last->memsz = at + ph->p_memsz - last->vaddr;
    img->span = page_up(last->vaddr + last->memsz);
    return 0;
}

static int check_dynamic_features(struct loader_image *img, struct loader_error *err,
                                  const struct dyn *d)
{
    if (d->has[DT_TEXTREL] || (d->v[DT_FLAGS] & DF_TEXTREL))
        return loader_fail(err, -ENOEXEC, "%s has text relocations (DT_TEXTREL): rebuild it "
                           "with upvmcc (-fPIC)", img->path);
    if (d->has[DT_REL] || d->has[DT_RELSZ])
        return malformed(img, err, "REL-format relocations (x86-64 uses RELA)");
    if (d->has[DT_PLTREL] && d->v[DT_PLTREL] != DT_RELA)
        return malformed(img, err, "DT_PLTREL is not DT_RELA");
    return 0;
}

/* The DT_NEEDED names and DT_RUNPATH (or DT_RPATH), as string table offsets. */
static int read_needed(struct loader_image *img, struct loader_error *err,
                       const Elf64_Phdr *ph, const struct dyn *d)
{
    const Elf64_Dyn *dyn = file_at(img, ph->p_vaddr, ph->p_filesz, 8);
    img->runpath = UINT64_MAX;
    if (d->has[DT_RUNPATH] || d->has[DT_RPATH]) {
        img->runpath = d->has[DT_RUNPATH] ? d->v[DT_RUNPATH] : d->v[DT_RPATH];
        if (img->runpath >= img->strsz)
            return malformed(img, err, "DT_RUNPATH outside the string table");
    }
    img->needed = calloc(img->nneeded + 1, sizeof *img->needed);
    if (!img->needed)
        return loader_fail(err, -ENOMEM, "%s: out of memory", img->path);
    for (unsigned i = 0, k = 0; k < img->nneeded; i++) {
        if ((uint64_t)dyn[i].d_tag != DT_NEEDED)
            continue;
        if (dyn[i].d_un.d_val >= img->strsz)
            return malformed(img, err, "DT_NEEDED name outside the string table");
        img->needed[k++] = dyn[i].d_un.d_val;
    }
    return 0;
}

/* ------------------------------------------------------------ symbols */

/* GNU hash: the symbol count is not stored; it is one past the last entry
 * of the longest-reaching chain (the chain of the highest bucket value). */
static int gnu_hash_setup(struct loader_image *img, struct loader_error *err, uint64_t vaddr)
{
    const uint32_t *h = file_at(img, vaddr, 16, 8);
    if (!h)
        return malformed(img, err, "DT_GNU_HASH outside the file");
    uint64_t nbuckets = h[0], symoffset = h[1], bloom = h[2];
    uint64_t head = 16 + bloom * 8 + nbuckets * 4;
    if (nbuckets == 0 || !file_at(img, vaddr, head, 8))
        return malformed(img, err, "DT_GNU_HASH table truncated");
    const uint32_t *buckets = (const uint32_t *)((const uint8_t *)h + 16 + bloom * 8);
    uint64_t max = 0;
    for (uint64_t i = 0; i < nbuckets; i++)
        max = buckets[i] > max ? buckets[i] : max;
    uint64_t nsyms = symoffset;
    if (max) {
        if (max < symoffset)
            return malformed(img, err, "DT_GNU_HASH bucket below its symbol offset");
        const uint32_t *chain = buckets + nbuckets;
        uint64_t avail = file_avail(img, vaddr + head) / 4;
        uint64_t i = max - symoffset;
        while (i < avail && !(chain[i] & 1))
            i++;
        if (i >= avail)
            return malformed(img, err, "DT_GNU_HASH chain runs off the file");
        nsyms = symoffset + i + 1;
    }
    if (nsyms > UINT32_MAX / 2)
        return malformed(img, err, "DT_GNU_HASH symbol count out of range");
    img->gnu_hash = h;
    img->nsyms = (uint32_t)nsyms;
    return 0;
}

static int sysv_hash_setup(struct loader_image *img, struct loader_error *err, uint64_t vaddr)
{
    const uint32_t *h = file_at(img, vaddr, 8, 4);
    if (!h || !file_at(img, vaddr, 8 + ((uint64_t)h[0] + h[1]) * 4, 4) || h[0] == 0)
        return malformed(img, err, "DT_HASH table truncated");
    if (h[1] > UINT32_MAX / 2)
        return malformed(img, err, "DT_HASH symbol count out of range");
    img->sysv_hash = h;
    img->nsyms = h[1];
    return 0;
}

static int setup_symbols(struct loader_image *img, struct loader_error *err, const struct dyn *d)
{
    if (!d->has[DT_SYMTAB] || !d->has[DT_STRTAB] || !d->has[DT_STRSZ])
        return malformed(img, err, "no dynamic symbol table");
    if (d->has[DT_SYMENT] && d->v[DT_SYMENT] != sizeof(Elf64_Sym))
        return malformed(img, err, "DT_SYMENT is %llu", (unsigned long long)d->v[DT_SYMENT]);
    img->strsz = d->v[DT_STRSZ];
    img->strtab = file_at(img, d->v[DT_STRTAB], img->strsz, 1);
    /* A string table ends with NUL: then every offset inside it names a
     * terminated string, and one bound check per name is enough. */
    if (!img->strtab || img->strsz == 0 || img->strtab[img->strsz - 1] != '\0')
        return malformed(img, err, "the dynamic string table is out of the file or unterminated");
    int rc = d->has_gnu_hash ? gnu_hash_setup(img, err, d->gnu_hash)
             : d->has[DT_HASH] ? sysv_hash_setup(img, err, d->v[DT_HASH])
             : malformed(img, err, "no symbol hash table (DT_GNU_HASH or DT_HASH)");
    if (rc)
        return rc;
    img->symtab = file_at(img, d->v[DT_SYMTAB], (uint64_t)img->nsyms * sizeof(Elf64_Sym), 8);
    if (!img->symtab)
        return malformed(img, err, "the dynamic symbol table is out of the file");
    return 0;
}

static const char *sym_name(const struct loader_image *img, const Elf64_Sym *s)
{
    return s->st_name < img->strsz ? img->strtab + s->st_name : NULL;
}

const char *loader_image_symbol_at(const struct loader_image *img, uint64_t vaddr,
                                   uint64_t *value)
{
    for (uint32_t i = 0; i < img->nsyms; i++) {
        const Elf64_Sym *s = &img->symtab[i];
        if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx == SHN_UNDEF ||
            vaddr < s->st_value || vaddr - s->st_value >= s->st_size)
            continue;
        *value = s->st_value;
        return sym_name(img, s);
    }
    return NULL;
}

static bool sym_matches(const struct loader_image *img, uint32_t i, const char *name)
{
    const Elf64_Sym *s = &img->symtab[i];
    const char *n = sym_name(img, s);
    int bind = ELF64_ST_BIND(s->st_info);
    return n && s->st_shndx != SHN_UNDEF && (bind == STB_GLOBAL || bind == STB_WEAK) &&
           strcmp(n, name) == 0;
}

static uint32_t gnu_hash_of(const char *s)
{
    uint32_t h = 5381;
    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h;
}

static uint32_t sysv_hash_of(const char *s)
{
    uint32_t h = 0;
    for (; *s; s++) {
        h = (h << 4) + (unsigned char)*s;
        h ^= (h >> 24) & 0xf0;
    }
    return h & 0x0fffffff;
}

static const Elf64_Sym *gnu_lookup(const struct loader_image *img, const char *name)
{
    const uint32_t *h = img->gnu_hash;
    uint32_t nbuckets = h[0], symoffset = h[1], bloom = h[2];
    const uint32_t *buckets = h + 4 + (size_t)bloom * 2;
    const uint32_t *chain = buckets + nbuckets;
    uint32_t hash = gnu_hash_of(name);
    /* chain[] was checked up to index nsyms - symoffset (gnu_hash_setup) */
    for (uint32_t i = buckets[hash % nbuckets]; i >= symoffset && i < img->nsyms; i++) {
        uint32_t c = chain[i - symoffset];
        if ((c | 1) == (hash | 1) && sym_matches(img, i, name))
            return &img->symtab[i];
        if (c & 1)
            break;
    }
    return NULL;
}

static const Elf64_Sym *sysv_lookup(const struct loader_image *img, const char *name)
{
    const uint32_t *h = img->sysv_hash;
    uint32_t nbucket = h[0], nchain = h[1];
    const uint32_t *chain = h + 2 + nbucket;
    uint32_t i = h[2 + sysv_hash_of(name) % nbucket];
    /* at most nchain steps: a corrupt chain may loop */
    for (uint32_t steps = 0; i != STN_UNDEF && i < nchain && steps < nchain; steps++) {
        if (sym_matches(img, i, name))
            return &img->symtab[i];
        i = chain[i];
    }
    return NULL;
}

const Elf64_Sym *elf_lookup(const struct loader_image *img, const char *name)
{
    if (img->gnu_hash)
        return gnu_lookup(img, name);
    return img->sysv_hash ? sysv_lookup(img, name) : NULL;
}

/* ------------------------------------------------------------ program checks */

static int check_program(struct loader_image *img, struct loader_error *err,
                         const struct phinfo *pi, const struct dyn *d)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img->file;
    if (!pi->interp && !(d->flags_1 & DF_1_PIE))
        return loader_fail(err, -ENOEXEC, "%s is a shared library, not a program: build the "
                           "program with upvmcc", img->path);
    if (eh->e_entry == 0 || !elf_in_text(img, eh->e_entry))
        return malformed(img, err, "the entry point is not in an executable segment");
    const Elf64_Sym *m = elf_lookup(img, "main");
    if (!m)
        return loader_fail(err, -ENOEXEC, "%s: no exported main: build it with upvmcc (it "
                           "links with -rdynamic)", img->path);
    if (m->st_shndx == SHN_ABS || !elf_in_text(img, m->st_value))
        return malformed(img, err, "main is not in an executable segment");
    img->main_vaddr = m->st_value;
    return 0;
}

/* An array of n pointers at DT_<tag>, DT_<tag>SZ bytes long. */
static int init_array(struct loader_image *img, struct loader_error *err, const struct dyn *d,
                      int tag, int sztag, uint64_t *vaddr, size_t *n)
{
    if (!d->has[tag])
        return d->has[sztag] && d->v[sztag] ? malformed(img, err, "array size without array")
                                            : 0;
    uint64_t sz = d->v[sztag];
    if (sz % 8 || !in_segment(img, d->v[tag], sz, PROT_READ) || d->v[tag] % 8)
        return malformed(img, err, "an init/fini array is out of the loaded segments");
    *vaddr = d->v[tag];
    *n = sz / 8;
    return 0;
}

static int setup_init_fini(struct loader_image *img, struct loader_error *err,
                           const struct dyn *d)
{
    if ((d->has[DT_INIT] && !elf_in_text(img, d->v[DT_INIT])) ||
        (d->has[DT_FINI] && !elf_in_text(img, d->v[DT_FINI])))
        return malformed(img, err, "DT_INIT or DT_FINI is not in an executable segment");
    img->init = d->has[DT_INIT] ? d->v[DT_INIT] : 0;
    img->fini = d->has[DT_FINI] ? d->v[DT_FINI] : 0;
    int rc = init_array(img, err, d, DT_PREINIT_ARRAY, DT_PREINIT_ARRAYSZ, &img->preinit_array,
                        &img->npreinit);
    if (!rc)
        rc = init_array(img, err, d, DT_INIT_ARRAY, DT_INIT_ARRAYSZ, &img->init_array,
                        &img->ninit);
    if (!rc)
        rc = init_array(img, err, d, DT_FINI_ARRAY, DT_FINI_ARRAYSZ, &img->fini_array,
                        &img->nfini);
    return rc;
}

/* ------------------------------------------------------------ relocations */

static const char *const rel_names[R_X86_64_NUM] = {
    [R_X86_64_NONE] = "NONE", [R_X86_64_64] = "64", [R_X86_64_PC32] = "PC32",
    [R_X86_64_GOT32] = "GOT32", [R_X86_64_PLT32] = "PLT32", [R_X86_64_COPY] = "COPY",
    [R_X86_64_GLOB_DAT] = "GLOB_DAT", [R_X86_64_JUMP_SLOT] = "JUMP_SLOT",
    [R_X86_64_RELATIVE] = "RELATIVE", [R_X86_64_GOTPCREL] = "GOTPCREL",
    [R_X86_64_32] = "32", [R_X86_64_32S] = "32S", [R_X86_64_16] = "16",
    [R_X86_64_PC16] = "PC16", [R_X86_64_8] = "8", [R_X86_64_PC8] = "PC8",
    [R_X86_64_DTPMOD64] = "DTPMOD64", [R_X86_64_DTPOFF64] = "DTPOFF64",
    [R_X86_64_TPOFF64] = "TPOFF64", [R_X86_64_TLSGD] = "TLSGD", [R_X86_64_TLSLD] = "TLSLD",
    [R_X86_64_DTPOFF32] = "DTPOFF32", [R_X86_64_GOTTPOFF] = "GOTTPOFF",
    [R_X86_64_TPOFF32] = "TPOFF32", [R_X86_64_PC64] = "PC64", [R_X86_64_GOTOFF64] = "GOTOFF64",
    [R_X86_64_GOTPC32] = "GOTPC32", [R_X86_64_GOT64] = "GOT64",
    [R_X86_64_GOTPCREL64] = "GOTPCREL64", [R_X86_64_GOTPC64] = "GOTPC64",
    [R_X86_64_GOTPLT64] = "GOTPLT64", [R_X86_64_PLTOFF64] = "PLTOFF64",
    [R_X86_64_SIZE32] = "SIZE32", [R_X86_64_SIZE64] = "SIZE64",
    [R_X86_64_GOTPC32_TLSDESC] = "GOTPC32_TLSDESC", [R_X86_64_TLSDESC_CALL] = "TLSDESC_CALL",
    [R_X86_64_TLSDESC] = "TLSDESC", [R_X86_64_IRELATIVE] = "IRELATIVE",
    [R_X86_64_RELATIVE64] = "RELATIVE64", [R_X86_64_GOTPCRELX] = "GOTPCRELX",
    [R_X86_64_REX_GOTPCRELX] = "REX_GOTPCRELX",
};

static bool is_tls_rel(uint32_t type)
{
    return (type >= R_X86_64_DTPMOD64 && type <= R_X86_64_TPOFF32) ||
           (type >= R_X86_64_GOTPC32_TLSDESC && type <= R_X86_64_TLSDESC);
}

static const char *rel_sym_name(const struct loader_image *img, uint32_t sym)
{
    const char *n = sym < img->nsyms ? sym_name(img, &img->symtab[sym]) : NULL;
    return n ? n : "?";
}

/* Where relocation i of a table is, for messages. */
struct rela_at {
    const char *table; /* "DT_RELA" or "DT_JMPREL" */
    size_t i;
};

static int bad_rel(struct loader_image *img, struct loader_error *err, uint32_t type,
                   uint32_t sym, struct rela_at at)
{
    if (type == R_X86_64_COPY)
        return loader_fail(err, -ENOEXEC, "R_X86_64_COPY relocation for symbol '%s' in %s: "
                           "build with upvmcc (-fPIC) so none are needed",
                           rel_sym_name(img, sym), img->path);
    /* TLS ones: say for which variable (none: the program's own) */
    const char *var = sym ? rel_sym_name(img, sym) : "(its own)";
    if (type == R_X86_64_TLSDESC)
        return loader_fail(err, -ENOEXEC, "%s: R_X86_64_TLSDESC relocation for %s: "
                           TLS_DESC_MSG, img->path, var);
    if (is_tls_rel(type))
        return loader_fail(err, -ENOEXEC, "%s: R_X86_64_%s relocation for %s: " TLS_IE_MSG,
                           img->path, rel_names[type], var);
    if (type < R_X86_64_NUM && rel_names[type])
        return loader_fail(err, -ENOEXEC, "%s: unsupported relocation R_X86_64_%s in a "
                           "program's dynamic relocations", img->path, rel_names[type]);
    return malformed(img, err, "relocation %zu of %s has the unknown type %u", at.i, at.table,
                     type);
}

/* A thread-local symbol: the program's own (its value an offset inside
 * PT_TLS's memory) or a library's. */
static int tls_ref(struct loader_image *img, struct loader_error *err, uint32_t i,
                   struct loader_ref *r)
{
    const Elf64_Sym *s = &img->symtab[i];
    if (s->st_shndx == SHN_UNDEF) {
        if (!r->name[0] || ELF64_ST_BIND(s->st_info) == STB_LOCAL)
            return malformed(img, err, "a relocation names an undefined local symbol (%u)", i);
        r->kind = REF_IMPORT_TLS;
        r->weak = ELF64_ST_BIND(s->st_info) == STB_WEAK;
        return 0;
    }
    if (!img->has_tls || s->st_shndx == SHN_ABS || s->st_value > img->tls_memsz)
        return malformed(img, err, "thread-local symbol %u ('%s') at %#llx is outside the "
                         "PT_TLS segment", i, r->name, (unsigned long long)s->st_value);
    r->kind = REF_OWN_TLS;
    return 0;
}

/* Classify symbol i, which a relocation binds to. */
static int make_ref(struct loader_image *img, struct loader_error *err, uint32_t i,
                    struct loader_ref *r)
{
    const Elf64_Sym *s = &img->symtab[i];
    r->name = sym_name(img, s);
    r->value = s->st_value;
    if (!r->name)
        return malformed(img, err, "symbol %u's name is outside the string table", i);
    /* a section index the file does not have (e_shnum 0: not known), or a
     * reserved one other than SHN_ABS (COMMON, XINDEX: never in a program's
     * dynamic symbols) */
    uint16_t shnum = ((const Elf64_Ehdr *)img->file)->e_shnum;
    if (s->st_shndx >= SHN_LORESERVE ? s->st_shndx != SHN_ABS
                                     : s->st_shndx != SHN_UNDEF && shnum && s->st_shndx >= shnum)
        return malformed(img, err, "symbol %u ('%s') is in section %#x, which the file does "
                         "not have (%u sections)", i, r->name, s->st_shndx, shnum);
    if (ELF64_ST_TYPE(s->st_info) == STT_TLS)
        return tls_ref(img, err, i, r);
    if (s->st_shndx == SHN_UNDEF) {
        if (!r->name[0] || ELF64_ST_BIND(s->st_info) == STB_LOCAL)
            return malformed(img, err, "a relocation names an undefined local symbol (%u)", i);
        r->kind = strcmp(r->name, "__tls_get_addr") == 0 ? REF_TLS_GET_ADDR : REF_IMPORT;
        r->weak = ELF64_ST_BIND(s->st_info) == STB_WEAK;
    } else if (s->st_shndx == SHN_ABS) {
        r->kind = REF_ABS;
    } else if (ELF64_ST_TYPE(s->st_info) == STT_GNU_IFUNC) {
        if (!elf_in_text(img, s->st_value))
            return malformed(img, err, "ifunc '%s' is not in an executable segment", r->name);
        r->kind = REF_OWN_IFUNC;
        img->runs_code = true;
    } else {
        /* what a relocation stores must point into the image: a function
         * into its code (a symbol whose section index was corrupted would
         * otherwise send a call to the ELF header) */
        bool func = ELF64_ST_TYPE(s->st_info) == STT_FUNC;
        if (func ? !elf_in_text(img, s->st_value) : !in_segment(img, s->st_value, 0, PROT_READ))
            return malformed(img, err, "symbol %u ('%s') at %#llx is outside the %s", i,
                             r->name, (unsigned long long)s->st_value,
                             func ? "executable segments" : "loaded segments");
        r->kind = REF_OWN;
    }
    return 0;
}

static int add_ref(struct loader_image *img, struct loader_error *err, uint32_t sym)
{
    if (sym >= img->nsyms)
        return malformed(img, err, "a relocation names symbol %u of %u", sym, img->nsyms);
    if (img->ref_of_sym[sym] != UINT32_MAX)
        return 0;
    struct loader_ref *r = &img->refs_tab[img->nrefs];
    *r = (struct loader_ref){0};
    int rc = make_ref(img, err, sym, r);
    if (rc)
        return rc;
    img->ref_of_sym[sym] = img->nrefs++;
    return 0;
}

/* DTPMOD64 / DTPOFF64 (a {module, offset} pair of a GOT): 8 writable
 * bytes; no symbol means the program's own TLS (local-dynamic), which it
 * must have; a symbol must be a thread-local one (own or a library's). */
static int check_dtp_rela(struct loader_image *img, struct loader_error *err,
                          const Elf64_Rela *r, struct rela_at at)
{
    uint32_t type = ELF64_R_TYPE(r->r_info), sym = ELF64_R_SYM(r->r_info);
    if (!elf_writable(img, r->r_offset, 8))
        return malformed(img, err, "relocation %zu of %s (R_X86_64_%s) writes at %#llx, "
                         "outside the writable segments", at.i, at.table, rel_names[type],
                         (unsigned long long)r->r_offset);
    if (sym == 0) {
        if (!img->has_tls)
            return malformed(img, err, "relocation %zu of %s: R_X86_64_%s of the program's "
                             "own TLS, but it has no PT_TLS", at.i, at.table, rel_names[type]);
        return 0;
    }
    if (sym >= img->nsyms)
        return malformed(img, err, "relocation %zu of %s names symbol %u, past the symbol "
                         "table's %u", at.i, at.table, sym, img->nsyms);
    if (ELF64_ST_TYPE(img->symtab[sym].st_info) != STT_TLS)
        return malformed(img, err, "relocation %zu of %s: R_X86_64_%s names '%s', which is "
                         "not thread-local", at.i, at.table, rel_names[type],
                         rel_sym_name(img, sym));
    return add_ref(img, err, sym);
}

static int check_rela(struct loader_image *img, struct loader_error *err, const Elf64_Rela *r,
                      struct rela_at at)
{
    uint32_t type = ELF64_R_TYPE(r->r_info), sym = ELF64_R_SYM(r->r_info);
    switch (type) {
    case R_X86_64_NONE:
        return 0;
    case R_X86_64_RELATIVE:
    case R_X86_64_IRELATIVE:
    case R_X86_64_64:
    case R_X86_64_GLOB_DAT:
    case R_X86_64_JUMP_SLOT:
        break;
    case R_X86_64_DTPMOD64:
    case R_X86_64_DTPOFF64:
        return check_dtp_rela(img, err, r, at);
    default:
        return bad_rel(img, err, type, sym, at);
    }
    if (!elf_writable(img, r->r_offset, 8))
        return malformed(img, err, "relocation %zu of %s (R_X86_64_%s) writes at %#llx, "
                         "outside the writable segments", at.i, at.table, rel_names[type],
                         (unsigned long long)r->r_offset);
    /* the psABI computes these two as S alone: a linker writes addend 0 */
    if ((type == R_X86_64_GLOB_DAT || type == R_X86_64_JUMP_SLOT) && r->r_addend != 0)
        return malformed(img, err, "relocation %zu of %s (R_X86_64_%s) has addend %#llx, "
                         "not 0", at.i, at.table, rel_names[type],
                         (unsigned long long)r->r_addend);
    if (type == R_X86_64_IRELATIVE) {
        if (!elf_in_text(img, (uint64_t)r->r_addend))
            return malformed(img, err, "relocation %zu of %s: its IRELATIVE resolver %#llx is "
                             "not in an executable segment", at.i, at.table,
                             (unsigned long long)r->r_addend);
        img->runs_code = true;
        return 0;
    }
    if (type == R_X86_64_RELATIVE || (type == R_X86_64_64 && sym == 0))
        return 0;
    if (sym == 0)
        return malformed(img, err, "relocation %zu of %s: R_X86_64_%s without a symbol", at.i,
                         at.table, rel_names[type]);
    if (sym >= img->nsyms)
        return malformed(img, err, "relocation %zu of %s names symbol %u, past the symbol "
                         "table's %u", at.i, at.table, sym, img->nsyms);
    return add_ref(img, err, sym);
}

static const Elf64_Rela *rela_table(struct loader_image *img, const struct dyn *d, int tag,
                                    int sztag, size_t *n, int *rc, struct loader_error *err)
{
    *n = 0;
    if (!d->has[tag])
        return NULL;
    const Elf64_Rela *t = d->has[sztag] ? file_at(img, d->v[tag], d->v[sztag], 8) : NULL;
    if (!t || d->v[sztag] % sizeof *t) {
        *rc = malformed(img, err, "a relocation table is out of the file");
        return NULL;
    }
    *n = d->v[sztag] / sizeof *t;
    return t;
}

static int setup_tables(struct loader_image *img, struct loader_error *err, const struct dyn *d)
{
    int rc = 0;
    if (d->has[DT_RELAENT] && d->v[DT_RELAENT] != sizeof(Elf64_Rela))
        return malformed(img, err, "DT_RELAENT is %llu", (unsigned long long)d->v[DT_RELAENT]);
    img->rela = rela_table(img, d, DT_RELA, DT_RELASZ, &img->nrela, &rc, err);
    if (!rc)
        img->jmprel = rela_table(img, d, DT_JMPREL, DT_PLTRELSZ, &img->njmprel, &rc, err);
    if (rc)
        return rc;
    /* Some links make DT_RELASZ cover .rela.plt too: apply it once. */
    if (img->rela && img->jmprel && img->jmprel >= img->rela &&
        img->jmprel + img->njmprel == img->rela + img->nrela)
        img->nrela = (size_t)(img->jmprel - img->rela);
    if (d->has[DT_RELR]) {
        if ((d->has[DT_RELRENT] && d->v[DT_RELRENT] != 8) || !d->has[DT_RELRSZ] ||
            d->v[DT_RELRSZ] % 8 ||
            !(img->relr = file_at(img, d->v[DT_RELR], d->v[DT_RELRSZ], 8)))
            return malformed(img, err, "the RELR table is out of the file");
        img->nrelr = d->v[DT_RELRSZ] / 8;
    }
    return 0;
}

static int check_relocs(struct loader_image *img, struct loader_error *err)
{
    img->ref_of_sym = malloc(((size_t)img->nsyms + 1) * sizeof *img->ref_of_sym);
    img->refs_tab = malloc(((size_t)img->nsyms + 1) * sizeof *img->refs_tab);
    if (!img->ref_of_sym || !img->refs_tab)
        return loader_fail(err, -ENOMEM, "%s: out of memory", img->path);
    memset(img->ref_of_sym, 0xff, ((size_t)img->nsyms + 1) * sizeof *img->ref_of_sym);
    for (size_t i = 0; i < img->nrela; i++) {
        int rc = check_rela(img, err, &img->rela[i], (struct rela_at){"DT_RELA", i});
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < img->njmprel; i++) {
        int rc = check_rela(img, err, &img->jmprel[i], (struct rela_at){"DT_JMPREL", i});
        if (rc)
            return rc;
    }
    if (elf_relr_walk(img, 0))
        return malformed(img, err, "a RELR relocation is outside the writable segments");
    return 0;
}

static bool relr_one(const struct loader_image *img, uintptr_t base, uint64_t where)
{
    if (!base)
        return elf_writable(img, where, 8);
    uint64_t v;
    memcpy(&v, (void *)(base + where), 8); /* may be unaligned in a corrupt file */
    v += base;
    memcpy((void *)(base + where), &v, 8);
    return true;
}

/* RELR: an even entry is an address to relocate (and the start of a run);
 * an odd one is a bitmap of the 63 words after the run's current position. */
int elf_relr_walk(const struct loader_image *img, uintptr_t base)
{
    uint64_t where = 0;
    bool started = false;
    for (size_t i = 0; i < img->nrelr; i++) {
        uint64_t e = img->relr[i];
        if (!(e & 1)) {
            if (!relr_one(img, base, e))
                return -ENOEXEC;
            where = e + 8;
            started = true;
            continue;
        }
        if (!started)
            return -ENOEXEC;
        for (unsigned b = 0; (e >>= 1) != 0; b++)
            if ((e & 1) && !relr_one(img, base, where + (uint64_t)b * 8))
                return -ENOEXEC;
        where += 63 * 8;
    }
    return 0;
}

/* ------------------------------------------------------------ entry point */

int elf_parse(struct loader_image *img, struct loader_error *err)
{
    struct phinfo pi = {0};
    struct dyn d = {0};
    int rc = check_ehdr(img, err);
    if (!rc)
        rc = scan_phdrs(img, err, &pi);
    if (!rc)
        rc = set_relro(img, err, pi.relro);
    if (!rc)
        rc = set_eh_frame_hdr(img, err, pi.eh_frame_hdr);
    if (!rc)
        rc = setup_tls(img, err, pi.tls);
    if (!rc)
        rc = read_dynamic(img, err, pi.dynamic, &d);
    if (!rc)
        rc = check_linkage(img, err, &pi, &d);
    if (!rc)
        rc = check_dynamic_features(img, err, &d);
    if (!rc)
        rc = setup_symbols(img, err, &d);
    if (!rc)
        rc = check_program(img, err, &pi, &d);
    if (!rc)
        rc = read_needed(img, err, pi.dynamic, &d);
    if (!rc)
        rc = setup_init_fini(img, err, &d);
    if (!rc)
        rc = setup_tables(img, err, &d);
    if (!rc)
        rc = check_relocs(img, err);
    return rc;
}

void elf_free(struct loader_image *img)
{
    free(img->needed);
    free(img->refs_tab);
    free(img->ref_of_sym);
    img->needed = NULL;
    img->refs_tab = NULL;
    img->ref_of_sym = NULL;
}

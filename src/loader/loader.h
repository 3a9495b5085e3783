/*
 * loader.h - UPVM's ELF loader for process-mode ULPs (architecture decision 4, docs/architecture.md).
 *
 * A program built with upvmcc is a position-independent executable (PIE,
 * -fPIC -pie, so it has no copy relocations).  The loader opens it once per
 * node (struct loader_image: parsed headers, dynamic section, symbol
 * tables; its DT_NEEDED libraries dlopen'ed into the node once) and then
 * instantiates it as often as needed, each instance at the base of its own
 * slot: read-only and executable segments are mapped from the file
 * (MAP_PRIVATE: the page cache is shared, nothing is copied per ULP),
 * writable segments are private to the instance, .bss is zero-filled.
 *
 * Relocations: R_X86_64_RELATIVE (also packed: DT_RELR), _64, _GLOB_DAT,
 * _JUMP_SLOT (bound at load: no lazy binding), _IRELATIVE, _NONE.  _COPY
 * and anything else is an error naming the relocation.  Symbols are resolved in this order:
 *   1. the program's own definitions (the executable interposes, as in ELF)
 *   2. the caller's resolver (UPVM's interposition table: malloc family,
 *      exit family, sleep, fork/exec/..., per-ULP libc variables)
 *   3. the node's libraries (dlsym(RTLD_DEFAULT, name))
 * An undefined weak symbol that none of them has resolves to 0; an
 * undefined strong one is an error naming it and the libraries searched.
 *
 * Errors never crash: every offset, size and index read from the file is
 * checked against the file (a test feeds the loader fuzzed files).  Each
 * error fills a message for the user: what is wrong, in which file, and
 * what to do (for instance "not a position-independent executable: rebuild
 * it with upvmcc").
 *
 * Threading: the node's scheduler thread (dlopen may run other threads'
 * constructors: only from loader_image_open).
 */
#ifndef UPVM_LOADER_H
#define UPVM_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/compiler.h"

struct loader_image;

/* The caller's part of symbol resolution: the address to bind `name` to, or
 * NULL to go on searching.  inst_ctx is the value given to
 * loader_instantiate (the ULP being loaded). */
typedef void *(*loader_resolver_t)(const char *name, void *inst_ctx);

/* An error report: a negative errno-style code and a sentence. */
struct loader_error {
    int code;        /* -ENOEXEC malformed/unsupported, -ENOENT, -EACCES, ... */
    char msg[512];
};

/*
 * Open and check the program at path (an absolute or relative file name;
 * no search here), load its DT_NEEDED libraries into the node, and return
 * the parsed image (cached: the same device and inode, with the same size
 * and mtime, give the same image, with a reference count).  Every
 * relocation is checked here, so these are open errors too (NULL
 * returned, *err filled): not ELF / not x86-64 / not ET_DYN with an entry
 * (not a PIE), a shared library instead of a program, no exported main,
 * PT_TLS in a PIE (local-exec TLS: it must be linked as upvmcc does),
 * initial-exec or TLS-descriptor relocations, TEXTREL, R_X86_64_COPY and other unsupported relocations,
 * truncated or inconsistent headers or tables, a needed library that does
 * not load (DT_RUNPATH/DT_RPATH with $ORIGIN is honoured).  Only an
 * undefined symbol is left for loader_instantiate (the resolver may have
 * it).
 */
struct loader_image *loader_image_open(const char *path, struct loader_error *err) HIDDEN;
void loader_image_put(struct loader_image *img) HIDDEN;

/* Bytes from the lowest to the highest address of the loaded image, page
 * rounded: where in its slot the image ends (the heap starts after it). */
size_t loader_image_span(const struct loader_image *img) HIDDEN;

/* The path the image was opened with (for reports). */
const char *loader_image_path(const struct loader_image *img) HIDDEN;

/* The same file's absolute path (realpath at open; the path as opened if
 * that failed): what a debugger, in another directory, can open. */
const char *loader_image_abspath(const struct loader_image *img) HIDDEN;

/* Where the image's .eh_frame_hdr is (PT_GNU_EH_FRAME, checked to lie in
 * a read-only segment's file bytes), from vaddr 0, or 0 when it has none:
 * the unwinder's sorted table of FDEs, the same in every instance. */
uint64_t loader_image_eh_frame_hdr(const struct loader_image *img) HIDDEN;

/* True when one of the image's DT_NEEDED names starts with prefix
 * ("libstdc++.so"). */
bool loader_image_needs(const struct loader_image *img, const char *prefix) HIDDEN;

/* The name of the function that covers vaddr (an address of the image,
 * from its vaddr 0) among its dynamic symbols, and in *value where it
 * starts; NULL when none does.  For crash reports: it allocates nothing,
 * takes no lock, and reads only the image's read-only copy of the file. */
const char *loader_image_symbol_at(const struct loader_image *img, uint64_t vaddr,
                                   uint64_t *value) HIDDEN;

/* What the file is, for a migration between hosts (the same program must
 * be there): its GNU build id (the linker's NT_GNU_BUILD_ID note) folded
 * into 64 bits, or, for a file without one, a hash of its bytes.  Computed
 * once per image; never 0. */
uint64_t loader_image_id(struct loader_image *img) HIDDEN;

/* One loaded copy of an image. */
struct loader_instance {
    struct loader_image *img;
    uintptr_t base;             /* load bias: where vaddr 0 is */
    int (*main)(int, char **, char **); /* the program's main */
    void (**preinit_array)(int, char **, char **);
    size_t npreinit;
    void (**init_array)(int, char **, char **);
    size_t ninit;
    void (*init)(void);         /* DT_INIT, or NULL */
    void (**fini_array)(void);
    size_t nfini;
    void (*fini)(void);         /* DT_FINI, or NULL */
};

/*
 * Map img at base (page-aligned, with loader_image_span(img) bytes of
 * reserved, unused address space, which mappings replace with MAP_FIXED)
 * and relocate it, resolving symbols with
 * resolver(name, inst_ctx) as above.  Runs no code of the program except
 * ifunc resolvers (IRELATIVE, own STT_GNU_IFUNC symbols), after every
 * other relocation.  On error the range is PROT_NONE-reserved again.  The
 * only error left for this step besides mmap failures: an undefined
 * strong symbol (-ENOENT, naming it and the libraries searched).
 */
int loader_instantiate(struct loader_image *img, void *base, loader_resolver_t resolver,
                       void *inst_ctx, struct loader_instance *out,
                       struct loader_error *err) HIDDEN NODISCARD;

/* The address of a symbol the instance defines and exports (an ifunc's
 * resolved target), or NULL: for the integrator (per-ULP variables such as
 * the program's own copy of something) and for tests. */
void *loader_instance_sym(const struct loader_instance *in, const char *name) HIDDEN;

/* loader_instantiate with flags:
 *   LOADER_RW_MAPPED  the caller has already mapped the writable segments'
 *                     pages (loader_image_writable) read-write and zero, with
 *                     whatever follows them, in one mapping: the loader only
 *                     copies their file bytes in. */
#define LOADER_RW_MAPPED 0x1u
int loader_instantiate_flags(struct loader_image *img, void *base, loader_resolver_t resolver,
                             void *inst_ctx, unsigned flags, struct loader_instance *out,
                             struct loader_error *err) HIDDEN NODISCARD;

/*
 * Load img again at base, where an instance of it was before (a slot kept
 * for reuse): its read-only mappings are still there and its writable
 * segments are still mapped read-write and zero (the caller dropped their
 * pages with MADV_DONTNEED).  Copies the writable segments' file bytes and
 * relocates: no mapping system call.  Errors as loader_instantiate.
 */
int loader_reinstantiate(struct loader_image *img, void *base, loader_resolver_t resolver,
                         void *inst_ctx, struct loader_instance *out,
                         struct loader_error *err) HIDDEN NODISCARD;

/*
 * Map img's read-only segments at base (from the file, as
 * loader_instantiate does), and nothing else: for an instance that comes
 * from another node (migration), whose writable pages, already relocated,
 * the caller maps and fills.  0, or an error (mmap failed) in *err.
 */
int loader_map_readonly(struct loader_image *img, void *base, struct loader_error *err) HIDDEN
    NODISCARD;

/* Where img's writable segments are: returns their length in bytes (page
 * rounded) and sets *offset to their first byte relative to the base. */
size_t loader_image_writable(const struct loader_image *img, size_t *offset) HIDDEN;

/* Run the instance's initialisers (DT_PREINIT_ARRAY, DT_INIT, then
 * DT_INIT_ARRAY, the arrays with argc, argv, envp as glibc does) /
 * finalisers (DT_FINI_ARRAY in reverse, then DT_FINI), on the calling ULP. */
void loader_run_init(const struct loader_instance *in, int argc, char **argv, char **envp) HIDDEN;
void loader_run_fini(const struct loader_instance *in) HIDDEN;

/* Unmap the instance (its slot range goes back to PROT_NONE). */
void loader_unmap(struct loader_instance *in) HIDDEN;

/*
 * Thread-local variables (tls.c).  A program's TLS accesses are
 * general-dynamic (upvmcc links it -shared: docs/design-notes.md §11): calls of
 * __tls_get_addr with a {module, offset} pair from its GOT.  The loader
 * gives each instance its own TLS block inside the image's span (after the
 * last segment: it moves and is reloaded with the writable data),
 * initialised from .tdata/.tbss at instantiation, and writes as module id
 * of the program's own TLS the block's address with LOADER_TLS_OWN set
 * (no real module id has bit 63).  Every import of __tls_get_addr binds to
 * loader_tls_get_addr (the resolver is not asked): an own module id gives
 * block + offset on whatever thread runs the ULP (scheduler or kernel
 * context), anything else goes to the C library's __tls_get_addr
 * (libraries' TLS, module ids from the node's link map).
 */
#define LOADER_TLS_OWN ((uint64_t)1 << 63)
struct loader_tls_index {
    uint64_t module, offset;
};
void *loader_tls_get_addr(struct loader_tls_index *ti) HIDDEN;

#endif /* UPVM_LOADER_H */

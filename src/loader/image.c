/*
 * image.c - program images: opening, the per-node cache, the libraries a
 * program needs.
 *
 * An image is opened once per node and shared by all of its instances.
 * The cache is a list keyed by (st_dev, st_ino), with st_size and st_mtime
 * to notice a file rewritten in place; an image leaves it when its last
 * reference goes.  The image keeps its file open (instances map segments
 * from it) and mapped read-only (elf.c reads the tables there).
 *
 * DT_NEEDED libraries are dlopen'ed RTLD_NOW | RTLD_GLOBAL, once per image.
 * A library already in the node (libc, libupvm itself: the node links it)
 * is found first by its name or soname (RTLD_NOLOAD), so a program that
 * needs libupvm.so.0 binds to the running runtime, never to a second copy.
 * Otherwise the program's DT_RUNPATH (or DT_RPATH, with $ORIGIN) is
 * searched, then the node's usual library path.
 *
 * Imports are looked up in the node (dlsym(RTLD_DEFAULT)) here, once: an
 * instance only asks its resolver and takes the cached address otherwise.
 *
 * Threading: the node's scheduler thread only (no lock).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/loader_impl.h"

static struct loader_image *cache;

/* Images nobody uses are kept, up to this many (the most recently let go):
 * a task that migrates away and back, or a program spawned again, finds
 * its image parsed and bound (opening one is most of a small move's
 * preparation, tens of µs). */
#define IDLE_KEEP 4
static int nidle;

/* ------------------------------------------------------------ cache */

static bool same_file(const struct loader_image *img, const struct stat *st)
{
    return img->dev == st->st_dev && img->ino == st->st_ino &&
           img->size == (size_t)st->st_size && img->mtime.tv_sec == st->st_mtim.tv_sec &&
           img->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

static struct loader_image *cache_find(const struct stat *st)
{
    for (struct loader_image *img = cache; img; img = img->next)
        if (same_file(img, st))
            return img;
    return NULL;
}

static void cache_remove(struct loader_image *img)
{
    for (struct loader_image **p = &cache; *p; p = &(*p)->next) {
        if (*p == img) {
            *p = img->next;
            return;
        }
    }
}

static void image_free(struct loader_image *img)
{
    for (unsigned i = 0; img->handles && i < img->nneeded; i++)
        if (img->handles[i])
            dlclose(img->handles[i]);
    free(img->handles);
    elf_free(img);
    if (img->file)
        munmap((void *)img->file, img->size);
    if (img->fd >= 0)
        close(img->fd);
    free(img->path);
    free(img->abspath);
    free(img);
}

/* ------------------------------------------------------------ needed libraries */

/* dir/name into buf, with $ORIGIN and ${ORIGIN} replaced by origin. */
static bool runpath_candidate(char *buf, size_t len, const char *dir, size_t dlen,
                              const char *origin, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < dlen && n < len; i++) {
        const char *d = dir + i;
        size_t skip = !strncmp(d, "${ORIGIN}", 9) && i + 9 <= dlen ? 9
                      : !strncmp(d, "$ORIGIN", 7) && i + 7 <= dlen ? 7 : 0;
        if (skip) {
            n += (size_t)snprintf(buf + n, len - n, "%s", origin);
            i += skip - 1;
        } else {
            buf[n++] = *d;
        }
    }
    return n < len && (size_t)snprintf(buf + n, len - n, "/%s", name) < len - n;
}

/* Where the program's DT_RUNPATH finds name, or NULL. */
static void *open_from_runpath(const struct loader_image *img, const char *name)
{
    if (img->runpath == UINT64_MAX)
        return NULL;
    char origin[PATH_MAX], cand[PATH_MAX];
    const char *slash = strrchr(img->path, '/');
    snprintf(origin, sizeof origin, "%.*s", slash ? (int)(slash - img->path) : 1,
             slash ? img->path : ".");
    for (const char *p = img->strtab + img->runpath; *p;) {
        size_t dlen = strcspn(p, ":");
        if (dlen && runpath_candidate(cand, sizeof cand, p, dlen, origin, name) &&
            access(cand, F_OK) == 0)
            return dlopen(cand, RTLD_NOW | RTLD_GLOBAL);
        p += dlen + (p[dlen] == ':');
    }
    return NULL;
}

static void *open_needed(const struct loader_image *img, const char *name)
{
    void *h = dlopen(name, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    if (!h && !strchr(name, '/'))
        h = open_from_runpath(img, name);
    if (!h)
        h = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    return h;
}

static int load_needed(struct loader_image *img, struct loader_error *err)
{
    img->handles = calloc(img->nneeded + 1, sizeof *img->handles);
    if (!img->handles)
        return loader_fail(err, -ENOMEM, "%s: out of memory", img->path);
    for (unsigned i = 0; i < img->nneeded; i++) {
        const char *name = img->strtab + img->needed[i];
        dlerror();
        img->handles[i] = open_needed(img, name);
        if (!img->handles[i]) {
            const char *why = dlerror();
            return loader_fail(err, -ENOENT, "%s needs the library %s, which does not load: %s",
                               img->path, name, why ? why : "not found");
        }
    }
    return 0;
}

static void bind_imports(struct loader_image *img)
{
    for (uint32_t i = 0; i < img->nrefs; i++) {
        struct loader_ref *r = &img->refs_tab[i];
        if (r->kind == REF_IMPORT)
            r->node_addr = dlsym(RTLD_DEFAULT, r->name);
        /* a library's thread-local variable: dlsym gives its address on
         * this thread; its module id and offset are the same on all */
        void *tls = r->kind == REF_IMPORT_TLS ? dlsym(RTLD_DEFAULT, r->name) : NULL;
        if (tls && tls_import(tls, &r->tls_mod, &r->tls_off) == 0)
            r->node_addr = tls;
    }
}

/* ------------------------------------------------------------ open */

static int open_file(const char *path, struct stat *st, struct loader_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return loader_fail(err, -errno, "cannot open program %s: %s", path, strerror(errno));
    if (fstat(fd, st) != 0) {
        int e = errno;
        close(fd);
        return loader_fail(err, -e, "cannot stat program %s: %s", path, strerror(e));
    }
    int rc = 0;
    if (S_ISDIR(st->st_mode))
        rc = loader_fail(err, -EISDIR, "%s is a directory, not a program", path);
    else if (!S_ISREG(st->st_mode))
        rc = loader_fail(err, -EACCES, "%s is not a regular file", path);
    else if (st->st_size == 0)
        rc = loader_fail(err, -ENOEXEC, "%s is empty, not a program", path);
    if (rc) {
        close(fd);
        return rc;
    }
    return fd;
}

static struct loader_image *image_new(const char *path, int fd, const struct stat *st,
                                      struct loader_error *err)
{
    struct loader_image *img = calloc(1, sizeof *img);
    if (!img || !(img->path = strdup(path))) {
        free(img);
        close(fd);
        loader_fail(err, -ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    /* for a debugger, whose current directory is not the node's */
    img->abspath = realpath(path, NULL);
    img->fd = fd;
    img->size = (size_t)st->st_size;
    img->dev = st->st_dev;
    img->ino = st->st_ino;
    img->mtime = st->st_mtim;
    img->refs = 1;
    void *map = mmap(NULL, img->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        loader_fail(err, -errno, "cannot map %s: %s", path, strerror(errno));
        image_free(img);
        return NULL;
    }
    img->file = map;
    return img;
}

struct loader_image *loader_image_open(const char *path, struct loader_error *err)
{
    struct stat st;
    /* The common case, a program already loaded: one stat, no open. */
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        struct loader_image *cached = cache_find(&st);
        if (cached) {
            nidle -= cached->refs == 0;
            cached->refs++;
            return cached;
        }
    }
    int fd = open_file(path, &st, err);
    if (fd < 0)
        return NULL;
    struct loader_image *img = cache_find(&st);
    if (img) {
        close(fd);
        nidle -= img->refs == 0;
        img->refs++;
        return img;
    }
    img = image_new(path, fd, &st, err);
    if (!img)
        return NULL;
    if (elf_parse(img, err) != 0 || load_needed(img, err) != 0) {
        image_free(img);
        return NULL;
    }
    bind_imports(img);
    img->next = cache;
    cache = img;
    return img;
}

/* The idle image let go longest ago (the cache is newest first). */
static struct loader_image *oldest_idle(void)
{
    struct loader_image *found = NULL;
    for (struct loader_image *img = cache; img; img = img->next)
        if (img->refs == 0)
            found = img;
    return found;
}

void loader_image_put(struct loader_image *img)
{
    if (!img || --img->refs > 0)
        return;
    /* newest first among the idle ones: to the head */
    cache_remove(img);
    img->next = cache;
    cache = img;
    if (++nidle <= IDLE_KEEP)
        return;
    struct loader_image *old = oldest_idle();
    cache_remove(old);
    image_free(old);
    nidle--;
}

size_t loader_image_span(const struct loader_image *img) { return (size_t)img->span; }

const char *loader_image_path(const struct loader_image *img) { return img->path; }

const char *loader_image_abspath(const struct loader_image *img)
{
    return img->abspath ? img->abspath : img->path;
}

bool loader_image_needs(const struct loader_image *img, const char *prefix)
{
    for (unsigned i = 0; i < img->nneeded; i++)
        if (strncmp(img->strtab + img->needed[i], prefix, strlen(prefix)) == 0)
            return true;
    return false;
}

uint64_t loader_image_eh_frame_hdr(const struct loader_image *img)
{
    return img->eh_frame_hdr_vaddr;
}

/* FNV-1a, 64 bits. */
static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* The GNU build id note's bytes in the file (bounds checked), or NULL. */
static const uint8_t *build_id(const struct loader_image *img, size_t *len)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img->file;
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        const Elf64_Phdr *ph =
            (const Elf64_Phdr *)(img->file + eh->e_phoff + (size_t)i * eh->e_phentsize);
        if (ph->p_type != PT_NOTE || ph->p_offset > img->size ||
            ph->p_filesz > img->size - ph->p_offset)
            continue;
        const uint8_t *p = img->file + ph->p_offset, *end = p + ph->p_filesz;
        while ((size_t)(end - p) >= sizeof(Elf64_Nhdr)) {
            const Elf64_Nhdr *nh = (const Elf64_Nhdr *)p;
            size_t name = (nh->n_namesz + 3u) & ~3u, desc = (nh->n_descsz + 3u) & ~3u;
            if (name > (size_t)(end - p) - sizeof *nh ||
                desc > (size_t)(end - p) - sizeof *nh - name)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
                memcmp(p + sizeof *nh, "GNU", 4) == 0 && nh->n_descsz > 0) {
                *len = nh->n_descsz;
                return p + sizeof *nh + name;
            }
            p += sizeof *nh + name + desc;
        }
    }
    return NULL;
}

uint64_t loader_image_id(struct loader_image *img)
{
    if (img->id)
        return img->id;
    size_t len = 0;
    const uint8_t *id = build_id(img, &len);
    uint64_t h = 0xcbf29ce484222325ull;
    h = id ? fnv(h, id, len) : fnv(fnv(h, (const uint8_t *)"file", 4), img->file, img->size);
    img->id = h ? h : 1;
    return img->id;
}

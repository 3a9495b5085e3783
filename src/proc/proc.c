/*
 * proc.c - the life of a process-mode ULP: slot, image, heap, stack,
 * arguments and environment, start, exit, and release.
 *
 * Slot layout (addresses grow to the right):
 *
 *   base                                                      base + slot size
 *   | program image | gap | heap ...                  | gap | stack |
 *     (loader)        page  (mem_heap, grows right)     page  (top of slot)
 *
 * The gaps stay PROT_NONE (never committed): the one below the stack is the
 * stack's guard page, the one after the image keeps a heap overrun from
 * scribbling on the program's data.  struct proc, argv and the environment
 * are allocated from the ULP's own heap, so everything the ULP owns is in
 * its slot.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/proc.h"

/* A process's stack, unless attr says otherwise (like a typical ulimit -s). */
#define PROC_STACK_DEFAULT ((size_t)8 << 20)

static size_t page_size(void)
{
    static size_t page;
    if (!page)
        page = (size_t)sysconf(_SC_PAGESIZE);
    return page;
}

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) & ~(to - 1);
}

/* ------------------------------------------------------------ copies */

static char *heap_strdup(mem_heap_t *h, const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = mem_heap_malloc(h, n);
    return c ? memcpy(c, s, n) : NULL;
}

/* A NULL-terminated copy of v in the heap; *count gets its length. */
static char **heap_strv(mem_heap_t *h, char *const v[], int extra, int *count)
{
    int n = 0;
    while (v && v[n])
        n++;
    char **c = mem_heap_malloc(h, (size_t)(n + 1 + extra) * sizeof *c);
    if (!c)
        return NULL;
    for (int i = 0; i < n; i++)
        if (!(c[i] = heap_strdup(h, v[i])))
            return NULL;
    c[n] = NULL;
    *count = n;
    return c;
}

/* ------------------------------------------------------------ start */

static void proc_entry(void *arg)
{
    struct proc *p = arg;
    core_current()->ext[ULP_EXT_PROC] = p;
    loader_run_init(&p->inst, p->argc, p->argv, p->environ);
    int status = p->inst.main(p->argc, p->argv, p->environ);
    proc_exit(p, status, false);
}

/* After the ULP died and nothing runs on its stack: give the slot back. */
static void proc_release(struct ulp *u)
{
    struct proc *p = u->ext[ULP_EXT_PROC];
    if (!p) /* killed before it ever ran: the entry never set it */
        p = u->arg;
    u->ext[ULP_EXT_PROC] = NULL;
    u->name = NULL; /* it pointed into the slot */
    struct loader_instance inst = p->inst;
    int slot = p->slot;
    loader_unmap(&inst);
    loader_image_put(inst.img);
    mem_slot_free(slot);
}

/* Fill p's process state: argv, environment, progname, getopt. */
static int proc_setup(struct proc *p, const char *path, char *const argv[],
                      char *const envp[])
{
    extern char **environ;
    snprintf(p->path, sizeof p->path, "%s", path);
    p->argv = heap_strv(p->heap, argv, 0, &p->argc);
    p->environ = heap_strv(p->heap, envp ? envp : environ, 0, &p->nenv);
    if (!p->argv || !p->environ)
        return -ENOMEM;
    p->capenv = p->nenv + 1;
    const char *name = p->argc > 0 ? p->argv[0] : path;
    const char *slash = strrchr(name, '/');
    p->progname_full = p->argc > 0 ? p->argv[0] : p->path;
    p->progname = (char *)(slash ? slash + 1 : name);
    p->optind = 1;
    p->opterr = 1;
    p->optopt = '?';
    return 0;
}

/* Map the image at the slot's base and make the heap after it. */
static int proc_map(struct loader_image *img, int slot, size_t stack_size, struct proc **out,
                    struct loader_error *err)
{
    const struct mem_window *w = mem_window();
    char *base = mem_slot_base(w, slot);
    size_t page = page_size();
    size_t image = round_up(loader_image_span(img), page);
    char *heap_lo = base + image + page;
    char *stack_lo = base + w->slot_size - stack_size;
    if (heap_lo + 16 * page > stack_lo - page) {
        err->code = -ENOMEM;
        snprintf(err->msg, sizeof err->msg,
                 "%s needs %zu bytes of image and %zu of stack, more than a slot "
                 "(%zu bytes): raise UPVM_SLOT_SIZE", loader_image_path(img), image,
                 stack_size, w->slot_size);
        return err->code;
    }
    mem_heap_t *heap = mem_heap_create(heap_lo, (size_t)(stack_lo - page - heap_lo));
    struct proc *p = heap ? mem_heap_calloc(heap, 1, sizeof *p) : NULL;
    if (!p) {
        err->code = -ENOMEM;
        snprintf(err->msg, sizeof err->msg, "no memory for a heap in slot %d", slot);
        return err->code;
    }
    p->heap = heap;
    p->slot = slot;
    int rc = loader_instantiate(img, base, proc_resolve, p, &p->inst, err);
    if (rc == 0 && (rc = mem_commit(stack_lo, stack_size)) != 0) {
        loader_unmap(&p->inst);
        err->code = rc;
        snprintf(err->msg, sizeof err->msg, "no memory for the stack of slot %d", slot);
    }
    *out = p;
    return rc;
}

int proc_spawn(const char *path, char *const argv[], char *const envp[],
               const upvm_attr_t *attr, struct ulp **out, struct loader_error *err)
{
    size_t stack_size = round_up(attr && attr->stack_size ? attr->stack_size
                                                          : PROC_STACK_DEFAULT, page_size());
    int rc = mem_window_init();
    if (rc != 0) {
        err->code = rc;
        snprintf(err->msg, sizeof err->msg, "the node's address window is not available");
        return rc;
    }
    struct loader_image *img = loader_image_open(path, err);
    if (!img)
        return err->code;
    int slot = mem_slot_alloc();
    if (slot < 0) {
        loader_image_put(img);
        err->code = slot;
        snprintf(err->msg, sizeof err->msg,
                 "every slot of the node's window is in use (%u): raise UPVM_SLOTS or "
                 "lower UPVM_SLOT_SIZE", mem_window()->nslots);
        return slot;
    }
    struct proc *p = NULL;
    rc = proc_map(img, slot, stack_size, &p, err);
    if (rc == 0 && (rc = proc_setup(p, path, argv, envp)) != 0) {
        err->code = rc;
        snprintf(err->msg, sizeof err->msg, "no memory for the arguments of %s", path);
        loader_unmap(&p->inst);
    }
    if (rc == 0) {
        upvm_attr_t a = attr ? *attr : (upvm_attr_t)UPVM_ATTR_INIT;
        a.name = p->progname;
        const struct mem_window *w = mem_window();
        char *stack_lo = (char *)mem_slot_base(w, slot) + w->slot_size - stack_size;
        rc = core_ulp_create_on(proc_entry, p, &a, stack_lo, stack_size, proc_release, out);
        if (rc != 0) {
            err->code = rc;
            snprintf(err->msg, sizeof err->msg, "cannot create a ULP for %s", path);
            loader_unmap(&p->inst);
        }
    }
    if (rc != 0) {
        loader_image_put(img);
        mem_slot_free(slot);
    }
    return rc;
}

/* ------------------------------------------------------------ exit */

void proc_exit(struct proc *p, int status, bool quick)
{
    if (!quick && !p->exiting) {
        p->exiting = true; /* a handler that calls exit() does not loop */
        while (p->natexits > 0) {
            struct proc_atexit a = p->atexits[--p->natexits];
            if (a.with_arg)
                a.fn(a.arg);
            else
                ((void (*)(void))a.fn)();
        }
        loader_run_fini(&p->inst);
    }
    fflush(NULL); /* stdio is the node's: what this ULP wrote goes out now */
    upvm_exit(status & 0xff);
}

/* ------------------------------------------------------------ search */

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool try_dir(const char *dir, size_t dlen, const char *name, char *out, size_t len)
{
    if (dlen == 0)
        return false;
    int n = snprintf(out, len, "%.*s/%s", (int)dlen, dir, name);
    return n > 0 && (size_t)n < len && is_file(out);
}

int proc_find(const char *name, const char *spawner_dir, char *out, size_t len)
{
    if (!name || !*name)
        return -ENOENT;
    if (strchr(name, '/')) {
        int n = snprintf(out, len, "%s", name);
        return n > 0 && (size_t)n < len && is_file(out) ? 0 : -ENOENT;
    }
    if (spawner_dir && try_dir(spawner_dir, strlen(spawner_dir), name, out, len))
        return 0;
    if (try_dir(".", 1, name, out, len))
        return 0;
    for (const char *d = getenv("PVM_PATH"); d && *d;) {
        const char *end = strchr(d, ':');
        size_t dlen = end ? (size_t)(end - d) : strlen(d);
        if (try_dir(d, dlen, name, out, len))
            return 0;
        d = end ? end + 1 : d + dlen;
    }
    const char *root = getenv("PVM_ROOT"), *arch = getenv("PVM_ARCH");
    if (root && *root) {
        char dir[PATH_MAX];
        int n = snprintf(dir, sizeof dir, "%s/bin/%s", root, arch && *arch ? arch : "LINUX64");
        if (n > 0 && (size_t)n < sizeof dir && try_dir(dir, (size_t)n, name, out, len))
            return 0;
    }
    return -ENOENT;
}

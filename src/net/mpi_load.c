/*
 * mpi_load.c - libupvm's MPI transport: mpi.c built as a plugin,
 * libupvm-mpi.so, loaded by the first net_init_mpi / net_start_mpi
 * (hybrid.c, through net_mpi_enter) from the folder libupvm.so itself was
 * loaded from (net.h says why it is not linked in).  The plugin runs the
 * transport in libupvm's net_cur: its one entry, upvm_net_mpi_plugin_v2,
 * receives a pointer to it, so net.c's calls reach the plugin's ops like
 * any transport's, and fills a struct net_mpi_part with what the hybrid
 * needs of MPI (net_impl.h).
 *
 * UPVM_MPI_PLUGIN names another file (a test of a missing plugin, an
 * installation that moved it).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/net_impl.h"
#include "util/env.h"

typedef net_mpi_plugin_fn plugin_fn;

/* <folder of libupvm.so>/libupvm-mpi.so, or UPVM_MPI_PLUGIN. */
static const char *plugin_path(char *buf, size_t len)
{
    const char *env;
    if (env_string("UPVM_MPI_PLUGIN", &env) > 0)
        return env;
    Dl_info info;
    const char *self = dladdr((void *)plugin_path, &info) && info.dli_fname ? info.dli_fname : "";
    const char *slash = strrchr(self, '/');
    int dir = slash ? (int)(slash - self) : 0;
    snprintf(buf, len, "%.*s%slibupvm-mpi.so", dir, self, slash ? "/" : "");
    return buf;
}

static plugin_fn *plugin(void)
{
    static plugin_fn *fn;
    static bool tried;
    if (tried)
        return fn;
    tried = true;
    char buf[PATH_MAX];
    const char *path = plugin_path(buf, sizeof buf);
    /* RTLD_GLOBAL: Open MPI's own components, which it dlopens in turn,
     * need libmpi's symbols in the global scope. */
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (h)
        fn = (plugin_fn *)dlsym(h, NET_MPI_PLUGIN_ENTRY);
    if (!fn)
        fprintf(stderr, "upvm: cannot load UPVM's MPI transport (%s): %s\n", path,
                h ? "no entry " NET_MPI_PLUGIN_ENTRY " in it" : dlerror());
    return fn;
}

/* The objects loaded before the plugin (a snapshot), then those it and
 * MPI_Init loaded: net_mpi_loaded_object. */
static struct {
    char **names;
    int n, cap;
    bool snapshot_done;
} objs;

static int count_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
    bool *before = ctx;
    const char *name = info->dlpi_name;
    if (!name || !*name)
        return 0;
    for (int i = 0; i < objs.n; i++)
        if (!strcmp(objs.names[i] + 1, name))
            return 0;
    if (objs.n == objs.cap) {
        int cap = objs.cap ? 2 * objs.cap : 64;
        char **v = realloc(objs.names, (size_t)cap * sizeof *v);
        if (!v)
            return 1;
        objs.names = v;
        objs.cap = cap;
    }
    char *copy = malloc(strlen(name) + 2); /* a mark, then the name */
    if (!copy)
        return 1;
    copy[0] = *before ? 'b' : 'm';
    strcpy(copy + 1, name);
    objs.names[objs.n++] = copy;
    return 0;
}

/* before: the objects there now are not MPI's; else: the new ones are. */
static void list_objects(bool before)
{
    dl_iterate_phdr(count_object, &before);
}

bool net_mpi_loaded_object(const char *path)
{
    for (int i = 0; i < objs.n; i++)
        if (!strcmp(objs.names[i] + 1, path))
            return objs.names[i][0] == 'm';
    return false;
}

int net_mpi_enter(int start, const net_config_t *cfg, struct net_mpi_part *part)
{
    if (!objs.snapshot_done) {
        list_objects(true);
        objs.snapshot_done = true;
    }
    plugin_fn *fn = plugin();
    if (!fn)
        return -ELIBACC; /* said why */
    if (net_cur.ops)
        return -EBUSY;
    int rc = fn(&net_cur, start, cfg, part);
    list_objects(false); /* the plugin, MPI, and what MPI_Init opened */
    return rc;
}

/*
 * hosts.c - the hosts of `upvm run --hosts / --hostfile`, and the mpirun
 * that starts the job on them (hosts.h).
 */
#define _GNU_SOURCE
#include "hosts.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/env.h"

#ifndef UPVM_MPIRUN_DEFAULT /* a build without the MPI transport */
#define UPVM_MPIRUN_DEFAULT NULL
#endif
#ifndef UPVM_MPI_IS_OPENMPI
#define UPVM_MPI_IS_OPENMPI 1
#endif

#define HOST_NAME_LEN 255

/* A host named twice counts its nodes twice (one without a count: one),
 * as Open MPI's hostfile lists a host once per slot. */
static int add_host(struct upvm_hosts *h, const char *name, size_t len, int slots, bool standby)
{
    if (len == 0 || len > HOST_NAME_LEN)
        return -1;
    for (int i = 0; i < h->n; i++) {
        if (strlen(h->v[i].name) != len || memcmp(h->v[i].name, name, len) != 0)
            continue;
        h->v[i].slots = (h->v[i].slots ? h->v[i].slots : 1) + (slots ? slots : 1);
        h->v[i].standby = h->v[i].standby && standby;
        return 0;
    }
    struct upvm_host *v = realloc(h->v, (size_t)(h->n + 1) * sizeof *v);
    if (!v)
        return -1;
    h->v = v;
    char *copy = strndup(name, len);
    if (!copy)
        return -1;
    v[h->n++] = (struct upvm_host){copy, slots, standby, NULL};
    return 0;
}

/* "4" -> 4; -1 unless a count from 1 to 4096. */
static int count(const char *s, size_t len)
{
    if (len == 0 || len > 4)
        return -1;
    int v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v >= 1 && v <= 4096 ? v : -1;
}

int hosts_parse_list(const char *list, struct upvm_hosts *h, char *err, size_t len)
{
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        const char *colon = memchr(p, ':', n);
        size_t name_len = colon ? (size_t)(colon - p) : n;
        int slots = colon ? count(colon + 1, n - name_len - 1) : 0;
        if (n == 0 || name_len == 0 || slots < 0) {
            snprintf(err, len, "--hosts: '%.*s' is not a host (write NAME or NAME:NODES, "
                               "separated by commas)", (int)n, p);
            return -1;
        }
        bool standby = p[0] == '&';
        if (add_host(h, p + standby, name_len - standby, slots, standby) != 0) {
            snprintf(err, len, "--hosts: '%.*s': bad name or no memory", (int)n, p);
            return -1;
        }
        p += n + (p[n] == ',');
    }
    if (h->n == 0) {
        snprintf(err, len, "--hosts: no host given");
        return -1;
    }
    return 0;
}

/* A PVM hostfile option UPVM does not use: said once per option name. */
static void ignored_option(const char *path, int line, const char *opt, size_t len)
{
    static char said[16][8];
    static int nsaid;
    char key[8];
    size_t k = len < sizeof key - 1 ? len : sizeof key - 1;
    memcpy(key, opt, k);
    key[k] = '\0';
    for (int i = 0; i < nsaid; i++)
        if (!strcmp(said[i], key))
            return;
    if (nsaid < 16)
        strcpy(said[nsaid++], key);
    const char *why = "UPVM starts no pvmd: mpirun reaches each host its own way";
    if (!strcmp(key, "wd="))
        why = "tasks start in the directory mpirun gives them (the current one)";
    else if (!strcmp(key, "sp="))
        why = "every host's speed is the same to UPVM";
    fprintf(stderr, "upvm run: %s:%d: %.*s ignored (%s)\n", path, line, (int)len, opt, why);
}

/* The ep= of the last "*" line (PVM: a default for the hosts after it). */
static char *default_ep;

/* Host name's ep= (the last one given for it wins). */
static int set_ep(struct upvm_hosts *h, const char *name, const char *ep)
{
    for (int i = 0; i < h->n; i++) {
        if (strcmp(h->v[i].name, name) != 0)
            continue;
        char *copy = ep ? strdup(ep) : NULL;
        if (ep && !copy)
            return -1;
        free(h->v[i].ep);
        h->v[i].ep = copy;
    }
    return 0;
}

/* One line of a hostfile; 0, or -1 (err says why). */
static int parse_line(const char *path, int lineno, char *line, struct upvm_hosts *h,
                      char *err, size_t len)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    char *save, *name = strtok_r(line, " \t\r\n", &save);
    if (!name)
        return 0;
    bool defaults = !strcmp(name, "*");
    bool standby = name[0] == '&';
    int slots = 0;
    const char *ep = NULL;
    for (char *opt; (opt = strtok_r(NULL, " \t\r\n", &save));) {
        char *eq = strchr(opt, '=');
        if (!strncmp(opt, "ep=", 3)) {
            if (strchr(opt + 3, ';')) {
                snprintf(err, len, "%s:%d: %s: a path with ';' cannot be passed on", path,
                         lineno, opt);
                return -1;
            }
            ep = opt + 3;
            continue;
        }
        size_t key = eq ? (size_t)(eq - opt) + 1 : strlen(opt);
        if (!strncmp(opt, "slots=", 6) && (slots = count(opt + 6, strlen(opt + 6))) < 0) {
            snprintf(err, len, "%s:%d: %s: slots= wants a count from 1 to 4096", path,
                     lineno, opt);
            return -1;
        }
        if (!strncmp(opt, "slots=", 6) || !strncmp(opt, "max_slots=", 10))
            continue;
        ignored_option(path, lineno, opt, key);
    }
    if (defaults) {
        if (ep) {
            free(default_ep);
            default_ep = strdup(ep);
        }
        return 0;
    }
    if (add_host(h, name + standby, strlen(name + standby), slots, standby) != 0 ||
        ((ep || default_ep) && set_ep(h, name + standby, ep ? ep : default_ep) != 0)) {
        snprintf(err, len, "%s:%d: '%s' is not a host name", path, lineno, name);
        return -1;
    }
    return 0;
}

int hosts_parse_file(const char *path, struct upvm_hosts *h, char *err, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, len, "--hostfile %s: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, rc = 0;
    while (rc == 0 && getline(&line, &cap, f) >= 0)
        rc = parse_line(path, ++lineno, line, h, err, len);
    free(line);
    fclose(f);
    if (rc == 0 && h->n == 0) {
        snprintf(err, len, "--hostfile %s: no host in it", path);
        rc = -1;
    }
    return rc;
}

void hosts_free(struct upvm_hosts *h)
{
    for (int i = 0; i < h->n; i++) {
        free(h->v[i].name);
        free(h->v[i].ep);
    }
    free(h->v);
    h->v = NULL;
    h->n = 0;
}

/* ------------------------------------------------------------ launching */

/* The hostfile mpirun reads: a temporary file, removed by the caller. */
static int write_hostfile(const struct upvm_hosts *h, char *path, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, len, "%s/upvm-hosts.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(path);
        return -1;
    }
    for (int i = 0; i < h->n; i++) {
        if (!UPVM_MPI_IS_OPENMPI) /* MPICH: host[:count] */
            fprintf(f, h->v[i].slots ? "%s:%d\n" : "%s\n", h->v[i].name, h->v[i].slots);
        else if (h->v[i].slots) /* Open MPI: without slots=, one per core */
            fprintf(f, "%s slots=%d\n", h->v[i].name, h->v[i].slots);
        else
            fprintf(f, "%s\n", h->v[i].name);
    }
    if (fclose(f) != 0) {
        unlink(path);
        return -1;
    }
    return 0;
}

struct argv_buf {
    char **v;
    int n, cap;
};

static void push(struct argv_buf *a, const char *s)
{
    if (a->n + 2 > a->cap) {
        a->cap = a->cap ? 2 * a->cap : 64;
        a->v = realloc(a->v, (size_t)a->cap * sizeof *a->v);
        if (!a->v) {
            fprintf(stderr, "upvm run: out of memory\n");
            exit(1);
        }
    }
    a->v[a->n++] = (char *)s; /* never written through */
    a->v[a->n] = NULL;
}

/* $UPVM_STANDBY_HOSTS for the ranks: the "&" hosts, comma-separated. */
static void export_standby(const struct upvm_hosts *h)
{
    size_t len = 1;
    for (int i = 0; i < h->n; i++)
        len += strlen(h->v[i].name) + 1;
    char *list = calloc(1, len);
    if (!list)
        return;
    for (int i = 0; i < h->n; i++) {
        if (!h->v[i].standby)
            continue;
        if (*list)
            strcat(list, ",");
        strcat(list, h->v[i].name);
    }
    if (*list)
        setenv("UPVM_STANDBY_HOSTS", list, 1);
    free(list);
}

/* $UPVM_HOST_EPATHS for the ranks: each host's ep=, "host=path;..." (the
 * node finds its host's: node_host_epath). */
static void export_epaths(const struct upvm_hosts *h)
{
    size_t len = 1;
    for (int i = 0; i < h->n; i++)
        len += h->v[i].ep ? strlen(h->v[i].name) + strlen(h->v[i].ep) + 2 : 0;
    char *list = calloc(1, len);
    if (!list)
        return;
    for (int i = 0; i < h->n; i++) {
        if (!h->v[i].ep)
            continue;
        if (*list)
            strcat(list, ";");
        strcat(list, h->v[i].name);
        strcat(list, "=");
        strcat(list, h->v[i].ep);
    }
    if (*list)
        setenv("UPVM_HOST_EPATHS", list, 1);
    free(list);
}

/* Open MPI hands a remote rank only the variables named with -x: every
 * UPVM_* and PVM_* one (settings, PVM_PATH, PVM_EXPORT) goes. */
static void forward_env(struct argv_buf *a)
{
    extern char **environ;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "UPVM_", 5) != 0 && strncmp(*e, "PVM_", 4) != 0)
            continue;
        char *name = strndup(*e, strcspn(*e, "="));
        if (!name)
            continue;
        push(a, "-x");
        push(a, name); /* lives until exit */
    }
}

/* A host whose network goes away must not hang the job: Open MPI notices
 * a daemon it lost only by TCP keepalive on its control connections,
 * after 300 + 9 x 20 s by default.  Unless the user set them (here or in
 * Open MPI's own parameter files, which the environment overrides), the
 * job gets ~25 s: idle 10 s, then 3 probes 5 s apart. */
static void keepalive(struct argv_buf *a)
{
    static const char *const params[][2] = {
        {"oob_tcp_keepalive_time", "10"},
        {"oob_tcp_keepalive_intvl", "5"},
        {"oob_tcp_keepalive_probes", "3"},
    };
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        char env[64];
        snprintf(env, sizeof env, "OMPI_MCA_%s", params[i][0]);
        bool given = getenv(env) != NULL;
        for (int k = 0; k + 1 < a->n && !given; k++)
            given = !strcmp(a->v[k + 1], params[i][0]);
        if (given)
            continue;
        push(a, "--mca");
        push(a, params[i][0]);
        push(a, params[i][1]);
    }
}

static void say_command(char **v)
{
    fprintf(stderr, "upvm run: starting the job with:");
    for (; *v; v++)
        fprintf(stderr, strpbrk(*v, " \t'\"") ? " '%s'" : " %s", *v);
    fputc('\n', stderr);
}

static pid_t child;

static void forward_signal(int sig)
{
    if (child > 0)
        kill(child, sig);
}

int hosts_launch(const struct upvm_hosts *h, int nranks, char **argv)
{
    char hostfile[PATH_MAX], np[16];
    const char *mpirun;
    (void)env_string("UPVM_MPIRUN", &mpirun);
    if (!UPVM_MPIRUN_DEFAULT) {
        fprintf(stderr, "upvm run: --hosts / --hostfile: this UPVM was built without its MPI "
                        "transport, so a job cannot span hosts (install libopenmpi-dev and "
                        "rebuild; CMake then says \"MPI transport: yes\")\n");
        return 1;
    }
    if (write_hostfile(h, hostfile, sizeof hostfile) != 0) {
        fprintf(stderr, "upvm run: cannot write a hostfile for mpirun: %s\n", strerror(errno));
        return 1;
    }
    export_standby(h);
    export_epaths(h);
    struct argv_buf a = {0};
    char *words = mpirun && *mpirun ? strdup(mpirun) : NULL, *save;
    if (words) /* UPVM_MPIRUN="mpirun --mca ...": the command and options */
        for (char *w = strtok_r(words, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
            push(&a, w);
    if (a.n == 0)
        push(&a, UPVM_MPIRUN_DEFAULT);
    if (UPVM_MPI_IS_OPENMPI) {
        bool told = false;
        for (int i = 0; i < a.n; i++)
            told = told || !strcmp(a.v[i], "--allow-run-as-root");
        if (geteuid() == 0 && !told) /* Open MPI refuses root unless told */
            push(&a, "--allow-run-as-root");
        push(&a, "--hostfile");
        push(&a, hostfile);
        forward_env(&a);
        keepalive(&a);
    } else {
        push(&a, "-f");
        push(&a, hostfile);
    }
    if (nranks > 0) {
        snprintf(np, sizeof np, "%d", nranks);
        push(&a, "-n");
        push(&a, np);
    }
    for (char **p = argv; *p; p++)
        push(&a, *p);
    say_command(a.v);
    fflush(NULL);
    /* mpirun runs as a child, so that the hostfile goes when it ends;
     * SIGINT from the terminal reaches both, SIGTERM to us is passed on. */
    child = fork();
    if (child == 0) {
        execvp(a.v[0], a.v);
        fprintf(stderr, "upvm run: cannot run %s: %s (set UPVM_MPIRUN to your MPI's mpirun)\n",
                a.v[0], strerror(errno));
        _exit(127);
    }
    int status = 1;
    if (child > 0) {
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, forward_signal);
        signal(SIGHUP, forward_signal);
        while (waitpid(child, &status, 0) < 0 && errno == EINTR)
            ;
        status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    } else {
        fprintf(stderr, "upvm run: cannot start mpirun: %s\n", strerror(errno));
    }
    unlink(hostfile);
    free(a.v);
    free(words);
    return status;
}

/*
 * trace.c - each node's raw trace file: made, mapped, handed out chunk by
 * chunk to the threads that record, closed (trace.h, rawfile.h).
 */
#define _GNU_SOURCE
#include "trace/trace.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core.h"
#include "node/hostname.h"
#include "node/job.h"
#include "node/launch.h"
#include "trace/rawfile.h"
#include "trace/trace_impl.h"
#include "util/env.h"
#include "util/trace.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

struct trace_state trace;

static __thread int writer_id = -1; /* this thread's number among the writers */
static __thread uint32_t writer_seq; /* its chunks so far */

/* ------------------------------------------------------------ clocks */

void trace_calibrate(struct trc_calib *c, uint64_t *uncertainty)
{
    struct timespec m, r;
    uint64_t best = UINT64_MAX;
    *c = (struct trc_calib){0, 0, 0};
    for (int i = 0; i < 5; i++) { /* the tightest of five brackets */
        uint64_t t0 = __builtin_ia32_rdtsc();
        clock_gettime(CLOCK_MONOTONIC, &m);
        uint64_t t1 = __builtin_ia32_rdtsc();
        if (t1 - t0 < best) {
            best = t1 - t0;
            c->tsc = trace.tsc ? t0 + (t1 - t0) / 2 : 0;
            c->mono_ns = (uint64_t)m.tv_sec * 1000000000u + (uint64_t)m.tv_nsec;
        }
    }
    clock_gettime(CLOCK_REALTIME, &r);
    c->real_ns = (uint64_t)r.tv_sec * 1000000000u + (uint64_t)r.tv_nsec;
    if (uncertainty)
        *uncertainty = best;
}

/* ------------------------------------------------------------ records */

/* Store *src into this thread's next record, kind last (util/trace.h). */
void trace_put_raw(const struct trc_rec *src)
{
    struct trc_rec *r = trc_cur;
    if (r == trc_end && !(r = trc_refill_fn()))
        return;
    memcpy((char *)r + sizeof r->kind, (const char *)src + sizeof r->kind,
           sizeof *r - sizeof r->kind);
    atomic_signal_fence(memory_order_release);
    r->kind = src->kind;
    trc_cur = r + 1;
}

/* A record at the start of a fresh chunk (nobody else writes it). */
static void chunk_put(struct trc_rec *r, const struct trc_rec *v)
{
    memcpy((char *)r + sizeof r->kind, (const char *)v + sizeof r->kind,
           sizeof *r - sizeof r->kind);
    atomic_signal_fence(memory_order_release);
    r->kind = v->kind;
}

/* The calling thread's next chunk: it starts with TRC_CHUNK and a
 * calibration pair (so a killed node's clock is known up to its last
 * chunk).  NULL when the file is full: the record is counted as lost. */
static struct trc_rec *refill(void)
{
    struct trc_file_header *h = trace.hdr;
    /* seq_cst with trace_node_end's: see there */
    uint64_t k = atomic_fetch_add(&h->next_chunk, 1);
    if (k >= atomic_load(&trace.nchunks)) {
        atomic_fetch_add_explicit(&h->lost, 1, memory_order_relaxed);
        trc_cur = trc_end = NULL;
        return NULL;
    }
    struct trc_rec *c = trc_chunk_at(h, k);
    /* the chunk's pages in one call, not a fault per 128 records */
    (void)madvise(c, TRC_CHUNK_SIZE, MADV_POPULATE_WRITE);
    if (writer_id < 0)
        writer_id = atomic_fetch_add_explicit(&trace.writers, 1, memory_order_relaxed);
    struct trc_calib cal;
    uint64_t unc;
    trace_calibrate(&cal, &unc);
    uint64_t ts = trace.tsc ? cal.tsc : cal.mono_ns;
    chunk_put(&c[0], &(struct trc_rec){.kind = TRC_CHUNK, .id = (uint32_t)writer_id, .ts = ts,
                                        .a = writer_seq++, .b = (uint32_t)gettid()});
    chunk_put(&c[1], &(struct trc_rec){.kind = TRC_CLOCK, .ts = ts, .a = (uint32_t)unc,
                                        .c = cal.mono_ns});
    trc_end = c + TRC_CHUNK_RECS;
    return c + 2;
}

/* ------------------------------------------------------------ strings */

#define STR_SLOTS   4096 /* a power of two */
#define STR_PROBES  64
#define STR_MAX_LEN 1024 /* longer strings are cut */

static _Atomic uint64_t str_keys[STR_SLOTS];

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3u;
    return h;
}

/* TRC_STR, then the text in 24-byte TRC_TEXT pieces. */
static void write_string(uint64_t key, const char *s)
{
    size_t len = strnlen(s, STR_MAX_LEN);
    uint32_t pieces = (uint32_t)((len + 23) / 24);
    trace_put_raw(&(struct trc_rec){.kind = TRC_STR, .ts = trc_now(), .a = (uint32_t)len,
                                    .b = pieces, .c = key});
    for (uint32_t i = 0; i < pieces; i++) {
        struct trc_text t = {.kind = TRC_TEXT, .flags = (uint16_t)i, .id = (uint32_t)key};
        size_t n = len - i * 24 < 24 ? len - i * 24 : 24;
        memcpy(t.text, s + i * 24, n);
        struct trc_rec r;
        memcpy(&r, &t, sizeof r);
        trace_put_raw(&r);
    }
}

/* util/trace.h's trc_str_fn: the key, the text written the first time
 * this process sees it (a lock-free set; when crowded, written again). */
static uint64_t string_key(const char *s, bool copy)
{
    uint64_t key = copy ? fnv1a(s) | (1ull << 63) : (uint64_t)(uintptr_t)s;
    uint64_t slot = (key * 0x9e3779b97f4a7c15u) >> 52; /* 12 bits */
    for (unsigned i = 0; i < STR_PROBES; i++) {
        _Atomic uint64_t *p = &str_keys[(slot + i) & (STR_SLOTS - 1)];
        uint64_t seen = atomic_load_explicit(p, memory_order_relaxed);
        if (seen == key)
            return key;
        if (seen == 0) {
            if (atomic_compare_exchange_strong(p, &seen, key))
                break; /* ours: define it */
            if (seen == key)
                return key;
        }
    }
    write_string(key, s);
    return key;
}

/* ------------------------------------------------------------ settings */

static const char *const clock_words[] = {"tsc", "monotonic", NULL};

/* Both constant_tsc and nonstop_tsc: the TSC runs at one rate on every
 * core, in every power state, so records of different threads compare. */
static bool tsc_usable(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    bool constant = false, nonstop = false;
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        constant = strstr(line, " constant_tsc") != NULL;
        nonstop = strstr(line, " nonstop_tsc") != NULL;
        break;
    }
    if (f)
        fclose(f);
    return constant && nonstop;
}

/* The clock of a traced job: the TSC when usable, unless asked otherwise.
 * set, which: what UPVM_TRACE_CLOCK said (read with the other settings,
 * so that a bad value ends every job; /proc/cpuinfo is read only for a
 * traced one: on a machine of many cores it takes milliseconds). */
static void choose_clock(int set, int which)
{
    bool usable = tsc_usable();
    if (set > 0 && which == 0 && !usable)
        fprintf(stderr, "upvm: UPVM_TRACE_CLOCK=tsc: this CPU's TSC is not constant and "
                        "nonstop; the trace uses CLOCK_MONOTONIC\n");
    trace.tsc = usable && which == 0;
}

/* FILE as an absolute path into trace.file, FILE.raw into trace.rawdir. */
static bool set_paths(const char *file)
{
    char cwd[PATH_MAX];
    int n;
    if (file[0] == '/')
        n = snprintf(trace.file, sizeof trace.file, "%s", file);
    else if (getcwd(cwd, sizeof cwd))
        n = snprintf(trace.file, sizeof trace.file, "%s/%s", cwd, file);
    else
        return false;
    if (n < 0 || (size_t)n >= sizeof trace.file)
        return false;
    n = snprintf(trace.rawdir, sizeof trace.rawdir, "%s.raw", trace.file);
    return n > 0 && (size_t)n < sizeof trace.rawdir - 32;
}

/* An earlier run's node files would be read as this one's. */
static void empty_rawdir(void)
{
    DIR *d = opendir(trace.rawdir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (!strncmp(e->d_name, "node-", 5) && strstr(e->d_name, ".utr"))
            (void)unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
}

static void job_ended_hook(int status)
{
    trace_job_ended(status);
}

bool trace_read_settings(bool launcher)
{
    static bool read;
    const char *file;
    if (read)
        return trace.wanted;
    read = true;
    static const struct env_num buf = {1u << 20, 1ull << 36, 256u << 20, 0, NULL, NULL};
    (void)env_size("UPVM_TRACE_BUF", &buf, &trace.buf_bytes);
    int clock_which, clock_set = env_choice("UPVM_TRACE_CLOCK", clock_words, 0, 0, &clock_which);
    if (env_string("UPVM_TRACE_FILE", &file) <= 0)
        return false;
    choose_clock(clock_set, clock_which);
    if (!set_paths(file)) {
        fprintf(stderr, "upvm: UPVM_TRACE_FILE=%s: path too long; the job is not traced\n",
                file);
        return false;
    }
    if (mkdir(trace.rawdir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "upvm: cannot make the trace's directory %s: %s; the job is not "
                        "traced\n", trace.rawdir, strerror(errno));
        return false;
    }
    trace.wanted = true;
    trace.launcher = launcher;
    if (launcher) {
        empty_rawdir();
        node_launcher_at_end(job_ended_hook);
    }
    return true;
}

/* ------------------------------------------------------------ a node's file */

static int map_file(int node)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/node-%d.utr", trace.rawdir, node);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    uint64_t size = TRC_HEADER_SIZE + trc_chunks_in(trace.buf_bytes) * TRC_CHUNK_SIZE;
    if (size < TRC_HEADER_SIZE + TRC_CHUNK_SIZE)
        size = TRC_HEADER_SIZE + TRC_CHUNK_SIZE;
    void *p = MAP_FAILED;
    int rc = ftruncate(fd, (off_t)size) == 0 ? 0 : -errno;
    if (rc == 0 && (p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
        rc = -errno;
    if (rc != 0) {
        close(fd);
        (void)unlink(path);
        return rc;
    }
    trace.fd = fd; /* kept: the file is cut to what was written at the end */
    trace.hdr = p;
    trace.size = size;
    trace.nchunks = trc_chunks_in(size);
    return 0;
}

static void fill_header(int node, int nodes, const char *program)
{
    struct trc_file_header *h = trace.hdr;
    char names[NODE_ALIASES_MAX];
    memcpy(h->magic, TRC_MAGIC, sizeof h->magic);
    h->version = TRC_VERSION;
    h->header_size = TRC_HEADER_SIZE;
    h->chunk_size = TRC_CHUNK_SIZE;
    h->clock = trace.tsc ? TRC_CLOCK_KIND_TSC : TRC_CLOCK_KIND_MONOTONIC;
    h->node = node;
    h->pid = (int32_t)getpid();
    h->nodes = nodes;
    h->file_size = trace.size;
    trace_calibrate(&h->start, NULL);
    if (node_host_names(names, sizeof names) > 0)
        snprintf(h->host, sizeof h->host, "%.63s", names);
    snprintf(h->program, sizeof h->program, "%.255s", program ? program : "");
    atomic_thread_fence(memory_order_release);
    h->state = TRC_FILE_OPEN;
}

/* A process forked by a node (system(), a shell) shares its mapping: it
 * must not write into the chunks of the node's threads. */
static void forked_child(void)
{
    trc_on = false;
    trc_cur = trc_end = NULL;
}

/* The process exits (exit(), main returned): a destructor, not an atexit
 * handler, so that it runs after every atexit handler, whenever each was
 * registered: the PVM layer's runs the tasks still there to their end
 * (their records come first), and in thread mode it is registered before
 * the trace starts. */
__attribute__((destructor)) static void close_at_exit(void)
{
    if (!trace.hdr)
        return;
    trace_node_end(0, 0);
    if (trace.launcher && trace.nodes == 1)
        trace_job_ended(0);
}

static void node_ending(int code)
{
    trace_node_end(code, 0);
}

static void crashed(int sig)
{
    trace_node_end(128 + sig, sig);
}

void trace_node_start(int node, int nodes, const char *program)
{
    if (!trace.wanted || trace.hdr)
        return;
    int rc = map_file(node);
    if (rc != 0) {
        fprintf(stderr, "upvm: node %d: cannot make its trace file in %s: %s; this node is "
                        "not traced\n", node, trace.rawdir, strerror(-rc));
        return;
    }
    trace.node = node;
    trace.nodes = nodes;
    fill_header(node, nodes, program);
    trc_clock_tsc = trace.tsc;
    trc_refill_fn = refill;
    trc_str_fn = string_key;
    (void)pthread_atfork(NULL, NULL, forked_child);
    node_job_set_ending_hook(node_ending);
    core_set_crash_hook(crashed);
    atomic_signal_fence(memory_order_seq_cst);
    trc_on = true;
    trc_put(TRC_NODE, TRC_NODE_UP, 0, (uint32_t)node, 0, 0);
}

void trace_node_end(int code, int sig)
{
    struct trc_file_header *h = trace.hdr;
    if (!h || trace.ended)
        return;
    trace.ended = true;
    trc_put(TRC_NODE, TRC_NODE_ENDING, 0, (uint32_t)trace.node, (uint32_t)code, 0);
    trc_on = false;
    trace_calibrate(&h->end, NULL);
    h->exit_code = code;
    h->signal = sig;
    atomic_thread_fence(memory_order_release);
    h->state = sig ? TRC_FILE_CRASHED : TRC_FILE_CLOSED;
    if (sig)
        return;
    /* The file keeps the chunks handed out (a sparse file of UPVM_TRACE_BUF
     * otherwise); none is handed out past them from here on. */
    /* A thread whose fetch_add comes after this load sees nchunks 0 (both
     * seq_cst): none writes past `used`. */
    uint64_t had = atomic_exchange(&trace.nchunks, 0);
    uint64_t used = atomic_load(&h->next_chunk);
    if (used < had) {
        h->file_size = TRC_HEADER_SIZE + used * TRC_CHUNK_SIZE;
        (void)ftruncate(trace.fd, (off_t)h->file_size);
    }
}

/* ------------------------------------------------------------ the job's end */

/* The upvm command that converts: UPVM_TRACE_TOOL (upvm run sets it to
 * itself), else the one installed beside this library, else the build
 * tree's.  NULL when none is found. */
static const char *find_tool(char *buf, size_t len)
{
    const char *v;
    if (env_string("UPVM_TRACE_TOOL", &v) > 0)
        return v;
    Dl_info info;
    if (dladdr((void *)trace_job_ended, &info) && info.dli_fname) {
        const char *slash = strrchr(info.dli_fname, '/');
        int n = slash ? snprintf(buf, len, "%.*s/%s", (int)(slash - info.dli_fname),
                                 info.dli_fname, UPVM_TRACE_TOOL_FROM_LIBDIR)
                      : -1;
        if (n > 0 && (size_t)n < len && access(buf, X_OK) == 0)
            return buf;
    }
    return access(UPVM_TRACE_TOOL_BUILD, X_OK) == 0 ? UPVM_TRACE_TOOL_BUILD : NULL;
}

void trace_job_ended(int status)
{
    (void)status;
    char buf[PATH_MAX];
    if (!trace.wanted || !trace.launcher)
        return;
    const char *tool = find_tool(buf, sizeof buf);
    if (!tool) {
        fprintf(stderr, "upvm: the trace is in %s; convert it with: upvm trace convert %s\n",
                trace.rawdir, trace.file);
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        /* its lines go with the runtime's, not into the job's output */
        (void)dup2(2, 1);
        execl(tool, "upvm", "trace", "convert", trace.file, (char *)NULL);
        fprintf(stderr, "upvm: cannot run %s to convert the trace: %s; run: upvm trace "
                        "convert %s\n", tool, strerror(errno), trace.file);
        _exit(127);
    }
    int ws;
    while (pid > 0 && waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
}


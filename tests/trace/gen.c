/*
 * gen.c - write a synthetic traced job, FILE.raw/node-{0,1}.utr, in the
 * exact raw format (src/trace/rawfile.h, src/util/trace.h), for the tests of
 * `upvm trace` before real jobs record (check_trace.py --synthetic knows
 * its numbers).
 *
 * usage: gen FILE [--two-hosts]
 *
 * Two nodes on one host "hostA", TSC clock.  The host's clock: at ns t
 * (relative to its start, CLOCK_MONOTONIC = 10 s + t) the TSC reads
 * 3000000 + 3 t up to t = 150 us, then 2 ticks per ns: node 0 has the
 * header's start and end pairs and a TRC_CLOCK at 150 us (a piecewise fit
 * is needed to get exact times); node 1's file was never closed (state
 * OPEN, no end pair, a partial chunk) and has only its start pair: it
 * borrows node 0's pairs.  Node 0's writer 0 wrote two chunks, stored in
 * the file in reverse sequence order; its writer 1 wrote LOAD records.
 * String keys are per file: node 1 uses node 0's key of "pvm_send" for
 * "pvm_recv".
 *
 * With --two-hosts, node 1 is on host "hostB", whose CLOCK_MONOTONIC is 7 s
 * ahead of node 0's and whose TSC counts 5 ticks per local ns; node 1 has
 * two clock pairs and writes the host's TRC_OFFSET samples (start and
 * end).  The offset drifts absurdly (host B's clock runs twice as fast),
 * chosen so that every local time maps back to the same node-0 time as on
 * one host: the expected numbers do not change.
 *
 * Three tasks: t40001 (node 0) spawns t40002 (node 0) and t40003 (node 1);
 * t40001 sends t40002 tag 7 (1024 B) and t40003 tag 8 (16 B), both reply
 * tag 9 (4 B); t40002 moves to node 1 (REQUEST ... ANSWERED); all three
 * join group "g" and pass a barrier.  The times are in the table below
 * (us); check_trace.py's expected numbers follow from them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace/rawfile.h"

#define T1 0x40001u
#define T2 0x40002u
#define T3 0x40003u
#define IDLE (ULP_TRC_NOTASK | 1u)

#define MONO0 10000000000ull /* CLOCK_MONOTONIC at the host's t = 0 */
#define TSC0 3000000ull
#define REAL0 1700000000000000000ull

/* The host's TSC at t ns. */
static uint64_t tick(uint64_t t)
{
    return t <= 150000 ? TSC0 + 3 * t : TSC0 + 450000 + 2 * (t - 150000);
}

/* Host B (--two-hosts): node 0's time t (ns since its t = 0) is host B's
 * CLOCK_MONOTONIC LB0 + 2 (t - 1000) and its TSC TSCB0 + 5 (that - LB0). */
#define LB0 17000001000ll
#define TSCB0 900000000ull
#define OFFB0 ((int64_t)(MONO0 + 1000) - LB0) /* node 0's = local + offset */

static int64_t local_b(uint64_t t)
{
    return LB0 + 2 * ((int64_t)t - 1000);
}

static uint64_t tick_b(uint64_t t)
{
    return TSCB0 + 5 * (uint64_t)(local_b(t) - LB0);
}

/* A file being written: its image in memory. */
struct gen_file {
    unsigned char *img;
    size_t size;
    struct trc_rec *cur; /* the current chunk's next record */
    bool host_b;
};

/* The file's TSC at node 0's time t ns. */
static uint64_t ftick(const struct gen_file *f, uint64_t t)
{
    return f->host_b ? tick_b(t) : tick(t);
}

static struct trc_rec *chunk(struct gen_file *f, unsigned k)
{
    return trc_chunk_at(f->img, k);
}

static void start_chunk(struct gen_file *f, unsigned k, uint32_t writer, uint32_t seq,
                        uint64_t us)
{
    f->cur = chunk(f, k);
    *f->cur++ = (struct trc_rec){.kind = TRC_CHUNK, .id = writer, .ts = ftick(f, us * 1000),
                                 .a = seq, .b = 1000 + writer};
}

static void put(struct gen_file *f, uint64_t us, uint16_t kind, uint16_t flags, uint32_t id,
                uint32_t a, uint32_t b, uint64_t c)
{
    *f->cur++ = (struct trc_rec){.kind = kind, .flags = flags, .id = id,
                                 .ts = ftick(f, us * 1000),
                                 .a = a, .b = b, .c = c};
}

/* A string definition: TRC_STR then its 24-byte pieces. */
static void str(struct gen_file *f, uint64_t us, uint64_t key, const char *s)
{
    uint32_t len = (uint32_t)strlen(s), pieces = (len + 23) / 24;
    put(f, us, TRC_STR, 0, 0, len, pieces, key);
    for (uint32_t p = 0; p < pieces; p++) {
        struct trc_text x = {.kind = TRC_TEXT, .flags = (uint16_t)p, .id = (uint32_t)key};
        size_t n = len - p * 24 < 24 ? len - p * 24 : 24;
        memcpy(x.text, s + p * 24, n);
        memcpy(f->cur++, &x, sizeof x);
    }
}

static void header(struct gen_file *f, int node, uint32_t state, unsigned chunks_used,
                   uint64_t start_us, uint64_t end_us)
{
    struct trc_file_header *h = (struct trc_file_header *)f->img;
    memcpy(h->magic, TRC_MAGIC, 8);
    h->version = TRC_VERSION;
    h->header_size = TRC_HEADER_SIZE;
    h->chunk_size = TRC_CHUNK_SIZE;
    h->clock = TRC_CLOCK_KIND_TSC;
    h->node = node;
    h->pid = 5000 + node;
    h->nodes = 2;
    h->state = state;
    h->file_size = f->size;
    h->next_chunk = chunks_used;
    h->start = (struct trc_calib){ftick(f, start_us * 1000), MONO0 + start_us * 1000,
                                  REAL0 + start_us * 1000};
    if (f->host_b)
        h->start.mono_ns = (uint64_t)local_b(start_us * 1000);
    if (end_us)
        h->end = (struct trc_calib){tick(end_us * 1000), MONO0 + end_us * 1000,
                                    REAL0 + end_us * 1000};
    snprintf(h->host, sizeof h->host, f->host_b ? "hostB" : "hostA");
    snprintf(h->program, sizeof h->program, "master");
}

static void new_file(struct gen_file *f, unsigned chunks)
{
    f->size = TRC_HEADER_SIZE + (size_t)chunks * TRC_CHUNK_SIZE;
    f->img = calloc(1, f->size);
    if (!f->img)
        exit(1);
}

/* String keys of node 0 (addresses, and a copied string's hash). */
enum { K_MASTER = 0x401000, K_WORKER, K_SPAWN, K_SEND, K_RECV, K_BARRIER, K_WQ_RECV,
       K_WQ_BARRIER, K_POLICY };
#define K_G 0x8000000000000abcull

static void node0(struct gen_file *f)
{
    new_file(f, 4);
    header(f, 0, TRC_FILE_CLOSED, 3, 0, 300);
    /* writer 0, sequence 0: in chunk 1 */
    start_chunk(f, 1, 0, 0, 0);
    put(f, 1, TRC_NODE, TRC_NODE_UP, 0, 0, 0, 0);
    str(f, 1, K_MASTER, "master");
    put(f, 1, TRC_TASK_BEGIN, 0, T1, 0, 0, K_MASTER);
    put(f, 1, TRC_SWITCH, 1, T1, IDLE, 0, 0);
    str(f, 2, K_SPAWN, "pvm_spawn");
    put(f, 2, TRC_API_ENTER, 0, T1, 52, 0, K_SPAWN);
    str(f, 3, K_WORKER, "worker");
    put(f, 3, TRC_SPAWN, 0, T1, T2, 0, K_WORKER);
    put(f, 4, TRC_SPAWN, 0, T1, T3, 1, K_WORKER);
    put(f, 5, TRC_TASK_BEGIN, 0, T2, T1, 0, K_WORKER);
    put(f, 6, TRC_API_LEAVE, 0, T1, 52, 2, 0);
    str(f, 20, K_SEND, "pvm_send");
    put(f, 20, TRC_API_ENTER, 0, T1, 47, 0, K_SEND);
    put(f, 25, TRC_SEND, 0, T1, T2, 7, 1024);
    put(f, 30, TRC_API_LEAVE, 0, T1, 47, 0, 0);
    put(f, 40, TRC_API_ENTER, 0, T1, 47, 0, K_SEND);
    put(f, 45, TRC_SEND, 0, T1, T3, 8, 16);
    put(f, 50, TRC_API_LEAVE, 0, T1, 47, 0, 0);
    str(f, 60, K_RECV, "pvm_recv");
    put(f, 60, TRC_API_ENTER, 0, T1, 45, 0, K_RECV);
    str(f, 65, K_WQ_RECV, "pvm_recv");
    put(f, 65, TRC_BLOCK, 0, T1, 0, 0, K_WQ_RECV);
    put(f, 66, TRC_SWITCH, 2, T2, T1, 0, 0);
    /* writer 0, sequence 1: in chunk 0 */
    start_chunk(f, 0, 0, 1, 70);
    put(f, 75, TRC_API_ENTER, 0, T2, 45, 0, K_RECV);
    put(f, 80, TRC_RECV, 0, T2, T1, 7, 1024);
    put(f, 85, TRC_API_LEAVE, 0, T2, 45, 1024, 0);
    put(f, 90, TRC_API_ENTER, 0, T2, 47, 0, K_SEND);
    put(f, 95, TRC_SEND, 0, T2, T1, 9, 4);
    put(f, 96, TRC_WAKE, 0, T1, T2, 0, 0);
    put(f, 100, TRC_API_LEAVE, 0, T2, 47, 0, 0);
    str(f, 108, K_POLICY, "pairs");
    put(f, 108, TRC_BALANCE, 0, T2, 0, 1, K_POLICY);
    put(f, 110, TRC_MIGRATE, TRC_MIG_REQUEST, T2, 1, 0, 0);
    put(f, 120, TRC_MIGRATE, TRC_MIG_PREPARE_ASKED, T2, 1, 0, 0);
    put(f, 140, TRC_MIGRATE, TRC_MIG_PREPARED, T2, 1, 0, 0);
    put(f, 150, TRC_CLOCK, 0, 0, 10, 0, MONO0 + 150000);
    put(f, 150, TRC_MIGRATE, TRC_MIG_FROZEN, T2, 1, 0, 0);
    put(f, 151, TRC_SWITCH, 1, T1, T2, 0, 0);
    put(f, 155, TRC_RECV, 0, T1, T2, 9, 4);
    put(f, 156, TRC_API_LEAVE, 0, T1, 45, 4, 0);
    put(f, 160, TRC_MIGRATE, TRC_MIG_STATE_SENT, T2, 1, 0, 8192);
    put(f, 162, TRC_API_ENTER, 0, T1, 45, 0, K_RECV);
    put(f, 165, TRC_RECV, 0, T1, T3, 9, 4);
    put(f, 170, TRC_API_LEAVE, 0, T1, 45, 4, 0);
    put(f, 172, TRC_MIGRATE, TRC_MIG_DATA_SENT, T2, 1, 0, 73728);
    str(f, 190, K_G, "g");
    put(f, 190, TRC_GROUP, TRC_GROUP_JOIN | TRC_END, T1, 0, 0, K_G);
    str(f, 200, K_BARRIER, "pvm_barrier");
    put(f, 200, TRC_API_ENTER, 0, T1, 1, 0, K_BARRIER);
    put(f, 201, TRC_MIGRATE, TRC_MIG_ANSWERED, T2, 1, 0, 73728);
    put(f, 205, TRC_GROUP, TRC_GROUP_BARRIER, T1, 3, 0, K_G);
    str(f, 210, K_WQ_BARRIER, "pvm_barrier");
    put(f, 210, TRC_BLOCK, 0, T1, 0, 0, K_WQ_BARRIER);
    put(f, 210, TRC_SWITCH, 2, IDLE, T1, 0, 0);
    put(f, 260, TRC_WAKE, 0, T1, 0, 0, 0);
    put(f, 262, TRC_SWITCH, 1, T1, IDLE, 0, 0);
    put(f, 265, TRC_GROUP, TRC_GROUP_BARRIER | TRC_END, T1, 0, 0, K_G);
    put(f, 270, TRC_API_LEAVE, 0, T1, 1, 0, 0);
    put(f, 280, TRC_TASK_END, 0, T1, 0, 0, 0);
    put(f, 281, TRC_SWITCH, 3, IDLE, T1, 0, 0);
    /* writer 1: the load reports */
    start_chunk(f, 2, 1, 0, 100);
    put(f, 100, TRC_LOAD, 0, 0, 0, 500, 0);
    put(f, 100, TRC_LOAD, 0, 0, 1, 250, 0);
    put(f, 200, TRC_LOAD, 0, 0, 0, 300, 0);
    put(f, 200, TRC_LOAD, 0, 0, 1, 600, 0);
}

/* Node 1's keys: K_SEND's number stands for "pvm_recv" here. */
enum { K1_RECV = K_SEND, K1_SEND = 0x501000, K1_BARRIER, K1_WQ_RECV, K1_WQ_BARRIER };
#define K1_WORKER 0x8000000000000001ull
#define K1_G 0x8000000000000abcull

static void node1(struct gen_file *f)
{
    new_file(f, 2);
    header(f, 1, TRC_FILE_OPEN, 1, 1, 0);
    start_chunk(f, 0, 0, 0, 8);
    if (f->host_b) { /* its second clock pair; its host's offset at start and end */
        put(f, 8, TRC_OFFSET, 0, 0, 40000, 0, (uint64_t)OFFB0);
        put(f, 8, TRC_CLOCK, 0, 0, 10, 0, (uint64_t)local_b(200000));
        f->cur[-1].ts = tick_b(200000);
        put(f, 8, TRC_OFFSET, 0, 0, 40000, 1,
            (uint64_t)(OFFB0 - (local_b(300000) - LB0) / 2));
        f->cur[-1].ts = tick_b(300000);
        f->cur[-3].ts = tick_b(1000);
    }
    str(f, 8, K1_WORKER, "worker");
    put(f, 8, TRC_TASK_BEGIN, 0, T3, T1, 1, K1_WORKER);
    put(f, 9, TRC_SWITCH, 1, T3, IDLE, 0, 0);
    str(f, 10, K1_RECV, "pvm_recv");
    put(f, 10, TRC_API_ENTER, 0, T3, 45, 0, K1_RECV);
    str(f, 12, K1_WQ_RECV, "pvm_recv");
    put(f, 12, TRC_BLOCK, 0, T3, 0, 0, K1_WQ_RECV);
    put(f, 12, TRC_SWITCH, 2, IDLE, T3, 0, 0);
    put(f, 47, TRC_WAKE, 0, T3, 0, 0, 0);
    put(f, 48, TRC_SWITCH, 1, T3, IDLE, 0, 0);
    put(f, 50, TRC_RECV, 0, T3, T1, 8, 16);
    put(f, 52, TRC_API_LEAVE, 0, T3, 45, 16, 0);
    str(f, 60, K1_SEND, "pvm_send");
    put(f, 60, TRC_API_ENTER, 0, T3, 47, 0, K1_SEND);
    put(f, 62, TRC_SEND, 0, T3, T1, 9, 4);
    put(f, 64, TRC_API_LEAVE, 0, T3, 47, 0, 0);
    str(f, 90, K1_G, "g");
    put(f, 90, TRC_GROUP, TRC_GROUP_JOIN | TRC_END, T3, 1, 0, K1_G);
    str(f, 100, K1_BARRIER, "pvm_barrier");
    put(f, 100, TRC_API_ENTER, 0, T3, 1, 0, K1_BARRIER);
    put(f, 105, TRC_GROUP, TRC_GROUP_BARRIER, T3, 3, 0, K1_G);
    str(f, 110, K1_WQ_BARRIER, "pvm_barrier");
    put(f, 110, TRC_BLOCK, 0, T3, 0, 0, K1_WQ_BARRIER);
    put(f, 110, TRC_SWITCH, 2, IDLE, T3, 0, 0);
    put(f, 130, TRC_MIGRATE, TRC_MIG_SLOT_READY, T2, 0, 0, 0);
    put(f, 180, TRC_MIGRATE, TRC_MIG_ARRIVED, T2, 0, 0, 73728);
    put(f, 190, TRC_MIGRATE, TRC_MIG_RESTARTED, T2, 0, 0, 73728);
    put(f, 191, TRC_SWITCH, 1, T2, IDLE, 0, 0);
    put(f, 192, TRC_GROUP, TRC_GROUP_JOIN | TRC_END, T2, 2, 0, K1_G);
    put(f, 195, TRC_API_ENTER, 0, T2, 1, 0, K1_BARRIER);
    put(f, 200, TRC_GROUP, TRC_GROUP_BARRIER, T2, 3, 0, K1_G);
    put(f, 205, TRC_BLOCK, 0, T2, 0, 0, K1_WQ_BARRIER);
    put(f, 205, TRC_SWITCH, 2, IDLE, T2, 0, 0);
    put(f, 258, TRC_WAKE, 0, T3, 0, 0, 0);
    put(f, 258, TRC_WAKE, 0, T2, 0, 0, 0);
    put(f, 259, TRC_SWITCH, 1, T3, IDLE, 0, 0);
    put(f, 263, TRC_GROUP, TRC_GROUP_BARRIER | TRC_END, T3, 0, 0, K1_G);
    put(f, 264, TRC_API_LEAVE, 0, T3, 1, 0, 0);
    put(f, 266, TRC_TASK_END, 0, T3, 0, 0, 0);
    put(f, 267, TRC_SWITCH, 3, T2, T3, 0, 0);
    put(f, 268, TRC_GROUP, TRC_GROUP_BARRIER | TRC_END, T2, 0, 0, K1_G);
    put(f, 270, TRC_API_LEAVE, 0, T2, 1, 0, 0);
    put(f, 272, TRC_TASK_END, 0, T2, 0, 0, 0);
    put(f, 273, TRC_SWITCH, 3, IDLE, T2, 0, 0);
    /* the node was killed here: the rest of the chunk has kind 0 */
}

static int write_file(const char *dir, int node, const struct gen_file *f)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/node-%d.utr", dir, node);
    FILE *out = fopen(path, "wb");
    if (!out || fwrite(f->img, 1, f->size, out) != f->size || fclose(out)) {
        fprintf(stderr, "gen: %s: %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    bool two_hosts = argc == 3 && !strcmp(argv[2], "--two-hosts");
    if (argc != 2 && !two_hosts) {
        fprintf(stderr, "usage: gen FILE [--two-hosts] (writes FILE.raw/node-0.utr, "
                        "node-1.utr)\n");
        return 2;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s.raw", argv[1]);
    if (mkdir(dir, 0777) && errno != EEXIST) {
        fprintf(stderr, "gen: %s: %s\n", dir, strerror(errno));
        return 1;
    }
    struct gen_file f0 = {0}, f1 = {.host_b = two_hosts};
    node0(&f0);
    node1(&f1);
    int rc = write_file(dir, 0, &f0) | write_file(dir, 1, &f1);
    free(f0.img);
    free(f1.img);
    return rc;
}

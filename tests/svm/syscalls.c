/*
 * syscalls.c - system calls and libc on shared pages that another node
 * owns (UPVM_NODES=3, thread mode).  The kernel cannot fault a shared page
 * in itself, so the documented rule (upvm_svm.h, docs/svm.md) is
 * upvm_svm_touch(p, n, access) just before a system call on a shared
 * buffer; libupvm's own read, write, pread, pwrite and send bounce shared
 * buffers (src/svm/syscalls.c), so A-C and I make the calls that need the
 * rule: readv, writev and the bare read and write system calls
 * (syscall(2)).  Checked, with the bytes everywhere:
 *
 *   A. readv(2) from a pipe into a shared buffer (unaligned, over 3 pages)
 *      that node1 wrote last (node1 owns it) and node2 holds read copies
 *      of: after upvm_svm_touch(WRITE) the read must return everything,
 *      main must see the bytes, the bytes around the buffer must be
 *      node1's still, and node1 and node2 must see the new bytes (node2's
 *      old copies invalidated);
 *   B. the same with a regular file;
 *   C. write(2) to a pipe and writev(2) to a file from a shared buffer
 *      node1 owns, after upvm_svm_touch(READ): the bytes read back are
 *      node1's; then
 *      node1 writes the buffer again and main must see the new bytes (its
 *      read copy invalidated);
 *   D. libc without touch (ordinary faults): memcpy from a buffer node1
 *      owns, memset and memcpy into buffers node1 owns (node2 then checks
 *      them), memcpy between a buffer node1 owns and one node2 owns;
 *   E. upvm_svm_touch's errors: -EINVAL for an access that is neither
 *      UPVM_SVM_READ nor UPVM_SVM_WRITE nor both (0, 4, -1); 0 for private
 *      memory (ignored) and for READ|WRITE;
 *   G. the other documented errors: upvm_svm_alloc(0) (EINVAL),
 *      upvm_svm_free of no block's start (-EINVAL), upvm_svm_stats(NULL),
 *      upvm_svm_page_moves and upvm_svm_lock of private memory (-EINVAL),
 *      locking a lock one holds (-EDEADLK), unlocking it from another
 *      node or when free (-EPERM); and a block freed by another node
 *      (node2 frees main's: 0; freeing it again: -EINVAL);
 *   H. (only with the argument free-realloc, a ctest entry of its own)
 *      20 times: a block allocated on node1 (its home) reads zero on
 *      every node, node 0 writes it, nodes 2 and 1 read it (read copies),
 *      node 0 frees it, node1 allocates again (at the same address: first
 *      fit): the new block must read zero on every node (no old copy or
 *      old owner's data survives the free); without the argument:
 *      an 80 MiB block (larger than a 64 MiB region) written at its end
 *      and middle by nodes 2 and 1, read by node 0; upvm_svm_alloc(2 GiB),
 *      more than a chunk: NULL, ENOMEM;
 *   I. under contention: node1 and node2 keep writing bytes at the ends
 *      of 3-page ranges while node 0 touches the bytes between and
 *      read(2)s a pipe into them or write(2)s them to a pipe, 300 times:
 *      the touch must hold every page at once (no EFAULT, no short
 *      transfer), no byte lost on either side;
 *   J. without upvm_svm_touch: libupvm's own read, write, pread, pwrite
 *      and send (thread mode, src/svm/syscalls.c: a private bounce
 *      buffer) into and from pages node1 owns and node2 has copies of.
 * The helpers on node1 and node2 fill and check byte ranges on request
 * (one request, one answer).  Prints OK; a failed check prints where and
 * halts the job.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <upvm.h>
#include <upvm_svm.h>

#include "svmtest.h"

const char *svmtest_name = "syscalls";

#define NPAGES 12
#define TAG_INIT 100
#define TAG_REQ 101
#define TAG_ANS 102

enum { FILL, CHECK, FILLBYTE, CHECKBYTE, UNLOCK, FREE, ALLOC, SPIN, QUIT };
#define ABS 0x100 /* with FILL..CHECKBYTE: off is an address, not an offset in the block */

/* Byte k of pattern seed (k counted from the range's start). */
static uint8_t pat(int seed, size_t k)
{
    return (uint8_t)(seed * 37 + k * 13 + (k >> 8) * 7 + 1);
}

/* SPIN: until *stop is set (30 s at most), write the first 64 bytes of
 * the page at `at` and the last 64 of the page `len` bytes further with
 * the round number, read them back (they must be this node's last write),
 * yield.  -1, or the byte whose read-back failed (seen, want). */
static long spin(volatile uint8_t *at, size_t len, volatile uint8_t *stop, int *seen, int *want)
{
    volatile uint8_t *b = at + len + UPVM_SVM_PAGE - 64;
    uint64_t deadline = upvm_now_ns() + 30ull * 1000000000;
    for (unsigned i = 1; !*stop && upvm_now_ns() < deadline; i++) {
        for (int k = 0; k < 64; k++) {
            at[k] = (uint8_t)i;
            b[k] = (uint8_t)(i + 1);
        }
        for (int k = 0; k < 64; k++)
            if (at[k] != (uint8_t)i || b[k] != (uint8_t)(i + 1)) {
                *seen = at[k] != (uint8_t)i ? at[k] : b[k];
                *want = at[k] != (uint8_t)i ? (uint8_t)i : (uint8_t)(i + 1);
                return at[k] != (uint8_t)i ? k : 4096 + k;
            }
        upvm_yield();
    }
    return *stop ? -1 : -2;
}

static int helper(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int parent = pvm_parent();
    SVM_CHECK(pvm_recv(parent, TAG_INIT) > 0, "helper: the init message");
    volatile uint8_t *base = svm_upk_ptr();
    for (;;) {
        int cmd = -1, seed = 0;
        unsigned long off = 0, len = 0;
        SVM_CHECK(pvm_recv(parent, TAG_REQ) > 0 && pvm_upkint(&cmd, 1, 1) == 0 &&
                      pvm_upkulong(&off, 1, 1) == 0 && pvm_upkulong(&len, 1, 1) == 0 &&
                      pvm_upkint(&seed, 1, 1) == 0,
                  "helper: a request");
        if (cmd == QUIT)
            return 0;
        long bad = -1; /* the first wrong byte's index; UNLOCK, FREE, ALLOC: the result */
        int seen = 0, want = 0;
        volatile uint8_t *at = cmd & ABS ? (volatile uint8_t *)(uintptr_t)off : base + off;
        cmd &= ~ABS;
        if (cmd == UNLOCK)
            bad = upvm_svm_unlock((upvm_svm_lock_t *)(uintptr_t)at);
        else if (cmd == FREE)
            bad = upvm_svm_free((void *)(uintptr_t)off); /* off: an address */
        else if (cmd == ALLOC)
            bad = (long)(uintptr_t)upvm_svm_alloc(len); /* this node is its home */
        else if (cmd == SPIN)
            bad = spin(at, len, base + seed, &seen, &want);
        if (cmd == UNLOCK || cmd == FREE || cmd == ALLOC || cmd == SPIN)
            len = 0;
        for (size_t k = 0; k < len; k++) {
            volatile uint8_t *p = at + k;
            uint8_t b = cmd == FILL || cmd == CHECK ? pat(seed, k) : (uint8_t)seed;
            if (cmd == FILL || cmd == FILLBYTE) {
                *p = b;
            } else if (*p != b && bad < 0) {
                bad = (long)k;
                seen = *p;
                want = b;
            }
        }
        SVM_CHECK(pvm_initsend(SVM_ENC) > 0 && pvm_pklong(&bad, 1, 1) == 0 &&
                      pvm_pkint(&seen, 1, 1) == 0 && pvm_pkint(&want, 1, 1) == 0 &&
                      pvm_send(parent, TAG_ANS) == 0,
                  "helper: the answer");
    }
}
UPVM_TASK("syshelper", helper)

static int helpers[3]; /* tids, by node (1 and 2) */
static uint8_t *base;

/* Send node's helper cmd on [off, off + len) with seed; its answer. */
static void send_req(int node, int cmd, size_t off, size_t len, int seed)
{
    unsigned long o = off, l = len;
    SVM_CHECK(pvm_initsend(SVM_ENC) > 0 && pvm_pkint(&cmd, 1, 1) == 0 &&
                  pvm_pkulong(&o, 1, 1) == 0 && pvm_pkulong(&l, 1, 1) == 0 &&
                  pvm_pkint(&seed, 1, 1) == 0 && pvm_send(helpers[node], TAG_REQ) == 0,
              "send node %d a request", node);
}

static long recv_ans(int node, int *seen, int *want)
{
    long bad = -1;
    SVM_CHECK(pvm_recv(helpers[node], TAG_ANS) > 0 && pvm_upklong(&bad, 1, 1) == 0 &&
                  pvm_upkint(seen, 1, 1) == 0 && pvm_upkint(want, 1, 1) == 0,
              "node %d's answer", node);
    return bad;
}

static long ask_rc(int node, int cmd, size_t off, size_t len, int seed, int *seen, int *want)
{
    send_req(node, cmd, off, len, seed);
    return recv_ans(node, seen, want);
}

/* Ask node's helper cmd on [off, off + len) with seed; a wrong byte fails
 * the test, saying what. */
static void ask(int node, int cmd, size_t off, size_t len, int seed, const char *what)
{
    int seen = 0, want = 0;
    long bad = ask_rc(node, cmd, off, len, seed, &seen, &want);
    uint8_t *at = cmd & ABS ? (uint8_t *)(uintptr_t)off : base + off;
    SVM_CHECK(bad < 0,
              "%s: node %d sees byte %ld of the range at %p (address %p): expected 0x%02x, "
              "seen 0x%02x",
              what, node, bad, (void *)at, (void *)(at + bad), want, seen);
}

/* main's own check of [at, at + len) against pattern seed (or a byte
 * when byte >= 0). */
static void check_at(const uint8_t *at, size_t len, int seed, int byte, const char *what)
{
    for (size_t k = 0; k < len; k++) {
        uint8_t want = byte >= 0 ? (uint8_t)byte : pat(seed, k);
        uint8_t got = ((const volatile uint8_t *)at)[k];
        SVM_CHECK(got == want, "%s: node 0 sees byte %zu at %p: expected 0x%02x, seen 0x%02x",
                  what, k, (const void *)(at + k), want, got);
    }
}

static void check_here(size_t off, size_t len, int seed, int byte, const char *what)
{
    check_at(base + off, len, seed, byte, what);
}

static void fill_private(uint8_t *buf, size_t len, int seed)
{
    for (size_t k = 0; k < len; k++)
        buf[k] = pat(seed, k);
}

static void check_private(const uint8_t *buf, size_t len, int seed, const char *what)
{
    for (size_t k = 0; k < len; k++)
        SVM_CHECK(buf[k] == pat(seed, k), "%s: byte %zu: expected 0x%02x, seen 0x%02x", what, k,
                  pat(seed, k), buf[k]);
}

static void touch(const void *p, size_t len, int access, const char *what)
{
    int rc = upvm_svm_touch(p, len, access);
    SVM_CHECK(rc == 0, "%s: upvm_svm_touch(%p, %zu, %d): %d", what, p, len, access, rc);
}

/* The kernel's read and write themselves: libupvm's read and write
 * (thread mode) bounce shared buffers, the system call does not. */
static ssize_t raw_read(int fd, void *buf, size_t n)
{
    return syscall(SYS_read, fd, buf, n);
}

static ssize_t raw_write(int fd, const void *buf, size_t n)
{
    return syscall(SYS_write, fd, buf, n);
}

/* A scratch file in the working directory (the build tree), removed. */
static int scratch_file(const char *tag)
{
    char name[128];
    snprintf(name, sizeof name, "upvm-svm-syscalls-%d-%s.tmp", (int)getpid(), tag);
    int fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
    SVM_CHECK(fd >= 0, "open %s: %s", name, strerror(errno));
    unlink(name);
    return fd;
}

/* H (the argument free-realloc): 20 times a block of node1's is written
 * by node 0, read by nodes 2 and 1, freed by node 0 and allocated again
 * by node1; the new block must read zero on every node. */
static void free_realloc_cycles(void)
{
    const size_t P = UPVM_SVM_PAGE;
    int seen, want, rc, reused = 0;
    size_t len = 5 * P;
    char what[160];
    long a = ask_rc(1, ALLOC, 0, len, 0, &seen, &want);
    uint8_t *blk = (uint8_t *)(uintptr_t)a;
    SVM_CHECK(blk != NULL, "H: upvm_svm_alloc(%zu) on node1: NULL", len);
    for (int cycle = 0; cycle < 20; cycle++) {
        const char *which = cycle ? "a block node1 allocated after node 0 freed one" :
                                    "node1's new block";
        snprintf(what, sizeof what, "H: cycle %d: %s, on node 0", cycle, which);
        check_at(blk, len, 0, 0, what);
        snprintf(what, sizeof what, "H: cycle %d: %s, on node1", cycle, which);
        ask(1, CHECKBYTE | ABS, (size_t)(uintptr_t)blk, len, 0, what);
        snprintf(what, sizeof what, "H: cycle %d: %s, on node2", cycle, which);
        ask(2, CHECKBYTE | ABS, (size_t)(uintptr_t)blk, len, 0, what);
        int seed = 15 + cycle;
        for (size_t k = 0; k < len; k++) /* node 0 owns every page */
            blk[k] = pat(seed, k);
        snprintf(what, sizeof what, "H: cycle %d: node2 after node 0 wrote the block", cycle);
        ask(2, CHECK | ABS, (size_t)(uintptr_t)blk, len, seed, what); /* read copies */
        snprintf(what, sizeof what, "H: cycle %d: node1 after node 0 wrote the block", cycle);
        ask(1, CHECK | ABS, (size_t)(uintptr_t)blk, len, seed, what);
        rc = upvm_svm_free(blk);
        SVM_CHECK(rc == 0, "H: cycle %d: upvm_svm_free(%p) on node 0 of node1's block: %d",
                  cycle, (void *)blk, rc);
        a = ask_rc(1, ALLOC, 0, len, 0, &seen, &want); /* its home: first fit, same place */
        uint8_t *again = (uint8_t *)(uintptr_t)a;
        SVM_CHECK(again != NULL, "H: cycle %d: upvm_svm_alloc(%zu) on node1 after the free: "
                                 "NULL",
                  cycle, len);
        reused += again == blk;
        blk = again;
    }
    printf("syscalls: (information) %d of 20 blocks allocated after a free were at the freed "
           "one's address\n",
           reused);
    ask(2, FILL | ABS, (size_t)(uintptr_t)blk, len, 16, "H: node2 writes the last block");
    check_at(blk, len, 16, -1, "H: node 0 after node2 wrote the last block");
    rc = upvm_svm_free(blk);
    SVM_CHECK(rc == 0, "H: upvm_svm_free(%p): %d", (void *)blk, rc);
}

int main(int argc, char **argv)
{
    SVM_CHECK(pvm_mytid() > 0, "pvm_mytid (the job's nodes start here)");
    SVM_CHECK(upvm_nodes() == 3, "this test needs UPVM_NODES=3 (the job has %d nodes)",
              upvm_nodes());
    base = upvm_svm_alloc((size_t)NPAGES * UPVM_SVM_PAGE);
    SVM_CHECK(base != NULL, "upvm_svm_alloc: NULL (errno %d)", errno);
    for (int node = 1; node <= 2; node++) {
        helpers[node] = svm_spawn_on("syshelper", node);
        SVM_CHECK(pvm_initsend(SVM_ENC) > 0, "pvm_initsend");
        svm_pk_ptr(base);
        SVM_CHECK(pvm_send(helpers[node], TAG_INIT) == 0, "init node %d's helper", node);
    }
    const size_t P = UPVM_SVM_PAGE;
    static uint8_t priv[4 * UPVM_SVM_PAGE];

    if (argc > 1 && strcmp(argv[1], "free-realloc") == 0) {
        free_realloc_cycles();
        goto done;
    }

    /* A: read(2) from a pipe, pages 0-2, owned by node1, copies on node2 */
    {
        size_t off = 100, len = 2 * P + 500;
        ask(1, FILL, 0, 3 * P, 1, "A: node1 fills pages 0-2");
        ask(2, CHECK, 0, 3 * P, 1, "A: node2 reads pages 0-2 (read copies)");
        int pfd[2];
        SVM_CHECK(pipe(pfd) == 0, "pipe");
        fill_private(priv, len, 2);
        SVM_CHECK(write(pfd[1], priv, len) == (ssize_t)len, "A: fill the pipe");
        touch(base + off, len, UPVM_SVM_WRITE, "A");
        struct iovec iov[2] = {{base + off, 1000}, {base + off + 1000, len - 1000}};
        ssize_t n = readv(pfd[0], iov, 2); /* not bounced by libupvm: the touch is needed */
        SVM_CHECK(n == (ssize_t)len, "A: readv(pipe, shared %p, %zu) after upvm_svm_touch(WRITE): "
                                     "%zd (%s)",
                  (void *)(base + off), len, n, n < 0 ? strerror(errno) : "short");
        check_here(off, len, 2, -1, "A: read(2) from a pipe into pages node1 owned");
        /* node1's bytes around it are untouched */
        for (size_t k = 0; k < 3 * P; k++)
            if (k < off || k >= off + len)
                SVM_CHECK(base[k] == pat(1, k),
                          "A: byte %zu at %p outside the read: expected node1's 0x%02x, "
                          "seen 0x%02x",
                          k, (void *)(base + k), pat(1, k), base[k]);
        ask(2, CHECK, off, len, 2, "A: node2 after main's read(2) (its copies were old)");
        ask(1, CHECK, off, len, 2, "A: node1 after main's read(2)");
        ask(2, CHECK, 0, off, 1, "A: node2, the bytes before the read");
        close(pfd[0]);
        close(pfd[1]);
    }

    /* B: read(2) from a regular file, pages 3-5 */
    {
        size_t off = 3 * P + 7, len = 2 * P + 1000;
        ask(1, FILL, 3 * P, 3 * P, 3, "B: node1 fills pages 3-5");
        ask(2, CHECK, 3 * P, 3 * P, 3, "B: node2 reads pages 3-5");
        int fd = scratch_file("B");
        fill_private(priv, len, 4);
        SVM_CHECK(write(fd, priv, len) == (ssize_t)len && lseek(fd, 0, SEEK_SET) == 0,
                  "B: write the file");
        touch(base + off, len, UPVM_SVM_WRITE, "B");
        ssize_t n = raw_read(fd, base + off, len);
        SVM_CHECK(n == (ssize_t)len, "B: read(file, shared %p, %zu) after upvm_svm_touch(WRITE): "
                                     "%zd (%s)",
                  (void *)(base + off), len, n, n < 0 ? strerror(errno) : "short");
        check_here(off, len, 4, -1, "B: read(2) from a file into pages node1 owned");
        ask(2, CHECK, off, len, 4, "B: node2 after main's read(2)");
        ask(1, CHECK, off, len, 4, "B: node1 after main's read(2)");
        close(fd);
    }

    /* C: write(2) to a pipe and a file from pages 6-7, owned by node1 */
    {
        size_t off = 6 * P + 50, len = P + 3000;
        ask(1, FILL, off, len, 5, "C: node1 fills pages 6-7");
        int pfd[2];
        SVM_CHECK(pipe(pfd) == 0, "pipe");
        touch(base + off, len, UPVM_SVM_READ, "C");
        ssize_t n = raw_write(pfd[1], base + off, len);
        SVM_CHECK(n == (ssize_t)len, "C: write(pipe, shared %p, %zu) after upvm_svm_touch(READ): "
                                     "%zd (%s)",
                  (void *)(base + off), len, n, n < 0 ? strerror(errno) : "short");
        memset(priv, 0, len);
        SVM_CHECK(read(pfd[0], priv, len) == (ssize_t)len, "C: read the pipe back");
        check_private(priv, len, 5, "C: write(2) to a pipe from pages node1 owned");
        int fd = scratch_file("C");
        touch(base + off, len, UPVM_SVM_READ, "C (file)");
        struct iovec iov[2] = {{base + off, 10}, {base + off + 10, len - 10}};
        n = writev(fd, iov, 2);
        SVM_CHECK(n == (ssize_t)len, "C: writev(file, shared %p, %zu): %zd (%s)",
                  (void *)(base + off), len, n, n < 0 ? strerror(errno) : "short");
        memset(priv, 0, len);
        SVM_CHECK(pread(fd, priv, len, 0) == (ssize_t)len, "C: read the file back");
        check_private(priv, len, 5, "C: write(2) to a file from pages node1 owned");
        ask(1, FILL, off, len, 6, "C: node1 writes pages 6-7 again");
        check_here(off, len, 6, -1, "C: main after node1's second write (its copy was old)");
        close(fd);
        close(pfd[0]);
        close(pfd[1]);
    }

    /* D: memcpy/memset via libc, ordinary faults (no touch needed) */
    {
        ask(1, FILL, 8 * P, 2 * P, 7, "D: node1 fills pages 8-9");
        memset(priv, 0, 2 * P);
        memcpy(priv, base + 8 * P, 2 * P);
        check_private(priv, 2 * P, 7, "D: memcpy from pages node1 owned");

        ask(1, FILL, 8 * P, 2 * P, 8, "D: node1 fills pages 8-9 again");
        memset(base + 8 * P + 300, 0xa5, P + 200);
        ask(2, CHECKBYTE, 8 * P + 300, P + 200, 0xa5, "D: node2 after main's memset");
        ask(1, CHECK, 8 * P, 300, 8, "D: node1, the bytes before the memset");

        ask(1, FILL, 8 * P, 2 * P, 9, "D: node1 fills pages 8-9 a third time");
        fill_private(priv, 2 * P - 10, 10);
        memcpy(base + 8 * P + 10, priv, 2 * P - 10);
        ask(1, CHECK, 8 * P + 10, 2 * P - 10, 10, "D: node1 after main's memcpy into its pages");
        ask(2, CHECK, 8 * P + 10, 2 * P - 10, 10, "D: node2 after main's memcpy");

        ask(1, FILL, 8 * P, 2 * P, 11, "D: node1 fills pages 8-9 (source)");
        ask(2, FILL, 10 * P, 2 * P, 12, "D: node2 fills pages 10-11 (destination)");
        memcpy(base + 10 * P, base + 8 * P, 2 * P);
        check_here(10 * P, 2 * P, 11, -1, "D: memcpy between pages node1 and node2 owned");
        ask(2, CHECK, 10 * P, 2 * P, 11, "D: node2 after the memcpy into its pages");
    }

    /* E: upvm_svm_touch's arguments */
    {
        int rc = upvm_svm_touch(base, 10, 4);
        SVM_CHECK(rc == -EINVAL, "E: upvm_svm_touch(shared, 10, 4): %d, not -EINVAL", rc);
        rc = upvm_svm_touch(base, 10, -1);
        SVM_CHECK(rc == -EINVAL, "E: upvm_svm_touch(shared, 10, -1): %d, not -EINVAL", rc);
        rc = upvm_svm_touch(base, 10, 0);
        SVM_CHECK(rc == -EINVAL, "E: upvm_svm_touch(shared, 10, 0): %d, not -EINVAL", rc);
        rc = upvm_svm_touch(priv, sizeof priv, UPVM_SVM_READ | UPVM_SVM_WRITE);
        SVM_CHECK(rc == 0, "E: upvm_svm_touch of private memory: %d, not 0 (ignored)", rc);
        rc = upvm_svm_touch(base, NPAGES * P, UPVM_SVM_READ | UPVM_SVM_WRITE);
        SVM_CHECK(rc == 0, "E: upvm_svm_touch(whole block, READ|WRITE): %d", rc);
    }

    /* G: the other calls' errors (upvm_svm.h), the lock's across nodes, a
     * block freed by another node */
    {
        int seen, want;
        errno = 0;
        void *z = upvm_svm_alloc(0);
        SVM_CHECK(z == NULL && errno == EINVAL, "G: upvm_svm_alloc(0): %p, errno %d (not NULL, "
                                                "EINVAL)",
                  z, errno);
        int rc = upvm_svm_free(base + 1);
        SVM_CHECK(rc == -EINVAL, "G: upvm_svm_free(inside a block): %d, not -EINVAL", rc);
        rc = upvm_svm_free(priv);
        SVM_CHECK(rc == -EINVAL, "G: upvm_svm_free(private memory): %d, not -EINVAL", rc);
        rc = upvm_svm_stats(NULL);
        SVM_CHECK(rc == -EINVAL, "G: upvm_svm_stats(NULL): %d, not -EINVAL", rc);
        long m = upvm_svm_page_moves(priv);
        SVM_CHECK(m == -EINVAL, "G: upvm_svm_page_moves(private memory): %ld, not -EINVAL", m);
        static upvm_svm_lock_t private_lock;
        rc = upvm_svm_lock(&private_lock);
        SVM_CHECK(rc == -EINVAL, "G: upvm_svm_lock(private memory): %d, not -EINVAL", rc);

        size_t loff = 2 * P + 64 * 10; /* a 64-byte-aligned lock in page 2 */
        upvm_svm_lock_t *l = (upvm_svm_lock_t *)(void *)(base + loff);
        rc = upvm_svm_lock_init(l);
        SVM_CHECK(rc == 0, "G: upvm_svm_lock_init(%p): %d", (void *)l, rc);
        rc = upvm_svm_lock(l);
        SVM_CHECK(rc == 0, "G: upvm_svm_lock(%p): %d", (void *)l, rc);
        rc = upvm_svm_lock(l);
        SVM_CHECK(rc == -EDEADLK, "G: upvm_svm_lock of a lock the caller holds: %d, not -EDEADLK",
                  rc);
        long lrc = ask_rc(1, UNLOCK, loff, 0, 0, &seen, &want);
        SVM_CHECK(lrc == -EPERM, "G: upvm_svm_unlock on node1 of a lock main holds: %ld, not "
                                 "-EPERM",
                  lrc);
        rc = upvm_svm_unlock(l);
        SVM_CHECK(rc == 0, "G: upvm_svm_unlock(%p): %d", (void *)l, rc);
        rc = upvm_svm_unlock(l);
        SVM_CHECK(rc == -EPERM, "G: upvm_svm_unlock of a free lock: %d, not -EPERM", rc);

        uint8_t *b2 = upvm_svm_alloc(3 * P);
        SVM_CHECK(b2 != NULL, "G: upvm_svm_alloc of a second block: errno %d", errno);
        memset(b2, 0x5a, 3 * P);
        long frc = ask_rc(2, FREE, (size_t)(uintptr_t)b2, 0, 0, &seen, &want);
        SVM_CHECK(frc == 0, "G: upvm_svm_free(%p) on node2 of main's block: %ld", (void *)b2, frc);
        rc = upvm_svm_free(b2);
        SVM_CHECK(rc == -EINVAL, "G: upvm_svm_free(%p) again on node0 after node2 freed it: %d, "
                                 "not -EINVAL",
                  (void *)b2, rc);
    }

    /* H: big blocks, and more than a chunk */
    {
        int rc;
        /* a block larger than a 64 MiB region: a region of its own */
        size_t big = (size_t)80 << 20;
        uint8_t *b = upvm_svm_alloc(big);
        SVM_CHECK(b != NULL, "H: upvm_svm_alloc(80 MiB): errno %d", errno);
        ask(2, FILL | ABS, (size_t)(uintptr_t)(b + big - P), P, 17,
            "H: node2 writes the last page");
        ask(1, FILL | ABS, (size_t)(uintptr_t)(b + big / 2 - 100), 200, 18,
            "H: node1 writes across the middle page boundary");
        check_at(b + big - P, P, 17, -1, "H: the 80 MiB block's last page, written by node2");
        check_at(b + big / 2 - 100, 200, 18, -1, "H: the 80 MiB block's middle, written by node1");
        check_at(b, P, 0, 0, "H: the 80 MiB block's first page");
        rc = upvm_svm_free(b);
        SVM_CHECK(rc == 0, "H: upvm_svm_free(80 MiB block): %d", rc);
        errno = 0; /* more than a chunk (UPVM_SLOT_SIZE, 1 GiB by default) */
        void *huge = upvm_svm_alloc((size_t)2 << 30);
        SVM_CHECK(huge == NULL && errno == ENOMEM, "H: upvm_svm_alloc(2 GiB): %p, errno %d (not "
                                                   "NULL, ENOMEM)",
                  huge, errno);
    }

    /* I: under contention: node1 keeps writing the first 64 bytes of page
     * 0 and the last 64 of page 2 (and node2 those of pages 3 and 5) while
     * node 0 touches the bytes between and reads a pipe into them, or
     * writes them to a pipe, 300 times: upvm_svm_touch must return with
     * every page here at once (read and write never EFAULT, never short),
     * and nobody loses a byte */
    {
        int seen = 0, want = 0;
        memset(base, 0, NPAGES * P);
        base[11 * P] = 0; /* the stop flag */
        send_req(1, SPIN, 0, 2 * P, 11 * (int)P);
        send_req(2, SPIN, 3 * P, 2 * P, 11 * (int)P);
        int pfd[2];
        SVM_CHECK(pipe(pfd) == 0, "pipe");
        size_t lens[2] = {3 * P - 128, 3 * P - 128}, offs[2] = {64, 3 * P + 64};
        for (int round = 0; round < 300; round++) {
            int which = round % 2, seed = 20 + round % 50;
            uint8_t *at = base + offs[which];
            size_t len = lens[which];
            if (round % 4 < 2) { /* read(2) into shared pages */
                fill_private(priv, len, seed);
                SVM_CHECK(write(pfd[1], priv, len) == (ssize_t)len, "I: fill the pipe");
                touch(at, len, UPVM_SVM_WRITE, "I");
                ssize_t n = raw_read(pfd[0], at, len);
                SVM_CHECK(n == (ssize_t)len, "I: round %d: read(pipe, shared %p, %zu) right "
                                             "after upvm_svm_touch(WRITE), other nodes writing "
                                             "the same pages: %zd (%s)",
                          round, (void *)at, len, n, n < 0 ? strerror(errno) : "short");
                for (size_t k = 0; k < len; k++)
                    SVM_CHECK(at[k] == pat(seed, k), "I: round %d: byte %zu at %p after the "
                                                     "read: expected 0x%02x, seen 0x%02x",
                              round, k, (void *)(at + k), pat(seed, k), at[k]);
            } else { /* write(2) from them: what the last round read there */
                int last = 20 + (round - 2) % 50;
                touch(at, len, UPVM_SVM_READ, "I");
                ssize_t n = raw_write(pfd[1], at, len);
                SVM_CHECK(n == (ssize_t)len, "I: round %d: write(pipe, shared %p, %zu) right "
                                             "after upvm_svm_touch(READ), other nodes writing "
                                             "the same pages: %zd (%s)",
                          round, (void *)at, len, n, n < 0 ? strerror(errno) : "short");
                SVM_CHECK(read(pfd[0], priv, len) == (ssize_t)len, "I: read the pipe back");
                check_private(priv, len, last, "I: write(2) from shared pages under contention");
            }
            upvm_yield(); /* the pages may go */
        }
        base[11 * P] = 1;
        for (int node = 1; node <= 2; node++) {
            long rc = recv_ans(node, &seen, &want);
            SVM_CHECK(rc == -1, "I: node %d's writer: %s (byte %ld: expected 0x%02x, seen 0x%02x)",
                      node, rc == -2 ? "never told to stop (30 s)" : "lost its own write", rc,
                      want, seen);
        }
        close(pfd[0]);
        close(pfd[1]);
    }

    /* J: without upvm_svm_touch: libupvm's read, write, pread, pwrite and
     * send take shared buffers in thread mode (a private bounce buffer,
     * src/svm/syscalls.c); pages 0-2 owned by node1, copies on node2 */
    {
        size_t off = 300, len = 2 * P + 700;
        int pfd[2], sv[2];
        SVM_CHECK(pipe(pfd) == 0 && socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0,
                  "J: pipe, socketpair");
        int fd = scratch_file("J");
        struct {
            const char *what;
            int seed;
        } steps[] = {{"read(pipe)", 30}, {"pread(file)", 31}, {"write(pipe)", 0},
                     {"pwrite(file)", 0}, {"send(socket)", 0}};
        for (int st = 0; st < 5; st++) {
            int filled = 40 + st;
            ask(1, FILL, 0, 3 * P, filled, "J: node1 fills pages 0-2");
            ask(2, CHECK, 0, 3 * P, filled, "J: node2 reads pages 0-2 (read copies)");
            uint8_t *at = base + off;
            ssize_t n = -1;
            char what[96];
            snprintf(what, sizeof what, "J: %s, shared buffer owned by node1, no touch",
                     steps[st].what);
            if (st == 0) {
                fill_private(priv, len, steps[st].seed);
                SVM_CHECK(write(pfd[1], priv, len) == (ssize_t)len, "J: fill the pipe");
                n = read(pfd[0], at, len);
            } else if (st == 1) {
                fill_private(priv, len, steps[st].seed);
                SVM_CHECK(pwrite(fd, priv, len, 0) == (ssize_t)len, "J: fill the file");
                n = pread(fd, at, len, 0);
            } else if (st == 2) {
                n = write(pfd[1], at, len);
            } else if (st == 3) {
                n = pwrite(fd, at, len, 0);
            } else {
                n = send(sv[0], at, len, 0);
            }
            SVM_CHECK(n == (ssize_t)len, "%s: %zd (%s)", what, n,
                      n < 0 ? strerror(errno) : "short");
            if (st < 2) { /* into shared memory: everybody sees it */
                check_here(off, len, steps[st].seed, -1, what);
                ask(2, CHECK, off, len, steps[st].seed, what);
                ask(1, CHECK, off, len, steps[st].seed, what);
                ask(2, CHECK, 0, off, filled, "J: node2, the bytes before the buffer");
            } else { /* from shared memory: node1's bytes went out */
                memset(priv, 0, len);
                ssize_t got = st == 2   ? read(pfd[0], priv, len)
                              : st == 3 ? pread(fd, priv, len, 0)
                                        : recv(sv[1], priv, len, MSG_WAITALL);
                SVM_CHECK(got == (ssize_t)len, "%s: reading it back: %zd", what, got);
                for (size_t k = 0; k < len; k++)
                    SVM_CHECK(priv[k] == pat(filled, off + k),
                              "%s: byte %zu: expected node1's 0x%02x, seen 0x%02x", what, k,
                              pat(filled, off + k), priv[k]);
            }
        }
        close(fd);
        close(pfd[0]);
        close(pfd[1]);
        close(sv[0]);
        close(sv[1]);
    }

done:
    for (int node = 1; node <= 2; node++) {
        int cmd = QUIT, zero = 0;
        unsigned long z = 0;
        SVM_CHECK(pvm_initsend(SVM_ENC) > 0 && pvm_pkint(&cmd, 1, 1) == 0 &&
                      pvm_pkulong(&z, 1, 1) == 0 && pvm_pkulong(&z, 1, 1) == 0 &&
                      pvm_pkint(&zero, 1, 1) == 0 && pvm_send(helpers[node], TAG_REQ) == 0,
                  "stop node %d's helper", node);
    }
    unsigned long st[SVM_NSTATS];
    svm_my_stats(st);
    svm_print_stats("node 0's svm stats", st);
    printf("OK\n");
    return 0;
}

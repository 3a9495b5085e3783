/*
 * probe.c - reading memory that may not be there, from a crash handler.
 *
 * The crash reporter walks a stack that may be corrupt and looks at code
 * at addresses that may be unmapped (a call through a bad pointer): a
 * plain load there would fault again, inside the handler, and the report
 * would end in a bare "Segmentation fault".  So every read goes through
 * the kernel, which answers EFAULT instead of faulting:
 *
 *   - process_vm_readv on our own pid copies the bytes (one system call,
 *     no libc state: safe in a signal handler, unlike anything that takes
 *     a lock).  Guard pages made with MADV_GUARD_INSTALL, PROT_NONE pages
 *     and holes all give EFAULT.
 *   - where a seccomp filter forbids it (EPERM, ENOSYS), write(2) of the
 *     bytes to a pipe of our own tells the same (EFAULT when unreadable);
 *     the bytes are then read back from the pipe.
 *
 * Whether an address holds code comes from /proc/self/maps, read with
 * open/read/close (async-signal-safe) into static buffers: the handler
 * runs once per process and never concurrently with itself (fault.c keeps
 * a second fault out), so static storage is safe and costs no stack.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/crash.h"

/* ------------------------------------------------------------ reads */

static int probe_pipe[2] = {-1, -1};

static bool peek_by_pipe(uintptr_t addr, void *out, size_t len)
{
    if (probe_pipe[0] < 0 && pipe2(probe_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        return false;
    ssize_t w = write(probe_pipe[1], (const void *)addr, len);
    if (w != (ssize_t)len) {
        char drain[64];
        while (w > 0 && read(probe_pipe[0], drain, sizeof drain) > 0) {
        }
        return false;
    }
    return read(probe_pipe[0], out, len) == (ssize_t)len;
}

bool core_peek(uintptr_t addr, void *out, size_t len)
{
    static bool no_vm_readv;
    if (addr < 4096 || addr + len < addr)
        return false;
    if (!no_vm_readv) {
        struct iovec local = {out, len}, remote = {(void *)addr, len};
        /* The raw system call: a sanitizer's interceptor would check the
         * remote range as if it were ours to touch. */
        long n = syscall(SYS_process_vm_readv, (long)getpid(), &local, 1L, &remote, 1L, 0L);
        if (n == (long)len)
            return true;
        if (n >= 0 || errno == EFAULT)
            return false;
        no_vm_readv = true; /* EPERM, ENOSYS: not allowed here */
    }
    return peek_by_pipe(addr, out, len);
}

/* ------------------------------------------------------------ mappings */

#define MAPPING_CACHE 32

static struct crash_mapping cache[MAPPING_CACHE];
static int ncached;

static uintptr_t parse_hex(const char **p)
{
    uintptr_t v = 0;
    for (;; (*p)++) {
        char c = **p;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return v;
        v = v << 4 | (uintptr_t)d;
    }
}

/* One line of /proc/self/maps: "lo-hi perms offset dev inode   path".
 * Returns true when it covers addr; *exec says whether it is code. */
static bool parse_line(const char *line, uintptr_t addr, struct crash_mapping *m, bool *exec)
{
    const char *p = line;
    m->lo = parse_hex(&p);
    if (*p++ != '-')
        return false;
    m->hi = parse_hex(&p);
    if (addr < m->lo || addr >= m->hi || *p++ != ' ' || strlen(p) < 5)
        return false;
    *exec = p[2] == 'x';
    p += 5;
    m->offset = parse_hex(&p);
    for (int field = 0; field < 2 && *p; field++) { /* skip dev and inode */
        while (*p == ' ')
            p++;
        while (*p && *p != ' ')
            p++;
    }
    while (*p == ' ')
        p++;
    size_t n = strnlen(p, sizeof m->path - 1);
    memcpy(m->path, p, n);
    m->path[n] = '\0';
    return true;
}

/* Without /proc/self/maps (no /proc; no file descriptor left, which may
 * be why the program crashed): readable memory counts as code, a weaker
 * test (only the call instruction before a return address remains). */
static bool guess_without_maps(uintptr_t addr, struct crash_mapping *m, bool *exec)
{
    uint8_t byte;
    *exec = core_peek(addr, &byte, 1);
    m->lo = addr;
    m->hi = addr + 1;
    m->offset = 0;
    m->path[0] = '\0';
    return *exec;
}

/* Find the line of /proc/self/maps that covers addr.  Lines longer than
 * the line buffer (very long paths) are cut, which only shortens the name. */
static bool scan_maps(uintptr_t addr, struct crash_mapping *m, bool *exec)
{
    static char chunk[4096], line[320];
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return guess_without_maps(addr, m, exec);
    size_t used = 0;
    bool found = false;
    ssize_t n;
    while (!found && (n = read(fd, chunk, sizeof chunk)) > 0) {
        for (ssize_t i = 0; i < n && !found; i++) {
            if (chunk[i] != '\n') {
                if (used < sizeof line - 1)
                    line[used++] = chunk[i];
                continue;
            }
            line[used] = '\0';
            used = 0;
            found = parse_line(line, addr, m, exec);
        }
    }
    close(fd);
    return found;
}

bool crash_exec_mapping(uintptr_t addr, struct crash_mapping *m)
{
    for (int i = 0; i < ncached; i++)
        if (addr >= cache[i].lo && addr < cache[i].hi) {
            *m = cache[i];
            return true;
        }
    bool exec = false;
    if (!scan_maps(addr, m, &exec) || !exec)
        return false;
    if (ncached < MAPPING_CACHE && m->hi - m->lo > 1) /* not a guess */
        cache[ncached++] = *m;
    return true;
}

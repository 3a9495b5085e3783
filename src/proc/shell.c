/*
 * shell.c - running commands from a process-mode ULP: system(), popen() and
 * pclose(), posix_spawn() and posix_spawnp().
 *
 * A ULP is not an OS process, so fork() stays refused (it would copy the
 * whole node).  A command is started with posix_spawn instead, which glibc
 * makes with clone(CLONE_VM | CLONE_VFORK): the child execs without a copy
 * of the node.  Its parent is the node process.  What may block for long
 * (the child's run: waitpid, and reading or writing a popen pipe) runs with
 * the ULP coupled to a kernel context, so the node's other ULPs run
 * meanwhile.
 *
 * What differs from a process (docs/process-mode.md): system() neither
 * ignores SIGINT and SIGQUIT nor blocks SIGCHLD (that would act on the
 * whole node); the child starts with no signal blocked and SIGINT, SIGQUIT
 * and SIGPIPE at their defaults, whatever the node has; its environment is
 * the ULP's own, its current directory the node's.
 *
 * The waits and the pipe's reads and writes go through the interposed
 * calls of blocking.c (proc_waitpid, proc_read, proc_write): tried first
 * in a form that cannot block, coupled when they would.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "proc/proc.h"

#define SHELL_PATH "/bin/sh"

extern char **environ;

/* The environment a command of the calling ULP gets: its own. */
static char **ulp_environ(void)
{
    struct proc *p = proc_current();
    return p ? p->environ : environ;
}

/* ------------------------------------------------------------ waiting */

/* waitpid for pid through the interposed one (coupled when it would
 * wait); -1 with errno as waitpid's.  EINTR is tried again: a ULP killed
 * meanwhile ends when it couples anew. */
static pid_t wait_child(pid_t pid, int *status)
{
    pid_t r;
    do
        r = proc_waitpid(pid, status, 0);
    while (r < 0 && errno == EINTR);
    return r;
}

/* ------------------------------------------------------------ spawning */

/* The child's signals: none blocked (a KC blocks them all), and those a
 * shell expects at their defaults even where the node ignores them. */
static int child_attr(posix_spawnattr_t *at)
{
    sigset_t none, dfl;
    sigemptyset(&none);
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGINT);
    sigaddset(&dfl, SIGQUIT);
    sigaddset(&dfl, SIGPIPE);
    int rc = posix_spawnattr_init(at);
    if (rc == 0)
        rc = posix_spawnattr_setsigmask(at, &none);
    if (rc == 0)
        rc = posix_spawnattr_setsigdefault(at, &dfl);
    if (rc == 0)
        rc = posix_spawnattr_setflags(at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    return rc;
}

/* Start `/bin/sh -c -- cmd` (glibc's argv); 0 and *pid, or an errno. */
static int spawn_shell(pid_t *pid, const char *cmd, const posix_spawn_file_actions_t *fa)
{
    posix_spawnattr_t at;
    int rc = child_attr(&at);
    if (rc != 0)
        return rc;
    char *argv[] = {(char *)"sh", (char *)"-c", (char *)"--", (char *)cmd, NULL};
    rc = posix_spawn(pid, SHELL_PATH, fa, &at, argv, ulp_environ());
    posix_spawnattr_destroy(&at);
    return rc;
}

/* ------------------------------------------------------------ system */

static NOINLINE int system_run(const char *cmd)
{
    pid_t pid;
    int status, rc = spawn_shell(&pid, cmd, NULL);
    if (rc != 0) {
        errno = rc;
        return W_EXITCODE(127, 0); /* POSIX: as if the shell had _exit(127) */
    }
    return wait_child(pid, &status) == pid ? status : -1;
}

int proc_system(const char *cmd)
{
    if (!cmd) /* is a shell available? */
        return access(SHELL_PATH, X_OK) == 0;
    return system_run(cmd);
}

/* ------------------------------------------------------------ popen */

/* A stream popen made: its child, its end of the pipe, the ULP holding it.
 * The list is the node's (its ULPs are one process): each popen child
 * closes the pipe ends of the others, as POSIX says. */
struct pchild {
    struct proc *owner;
    FILE *f;
    pid_t pid;
    int fd;
    int status;        /* the child's, once its stream is closed */
    bool ending;       /* its ULP ended: do not wait for the child */
    struct pchild *next;
};

static pthread_mutex_t plock = PTHREAD_MUTEX_INITIALIZER;
static struct pchild *pchildren;

/* An fd the ULP holds pins it to its node (proc_open_files): the same
 * list interpose.c keeps for open(). */
static void fd_hold(struct proc *p, int fd)
{
    if (!p)
        return;
    if (p->nfds < (int)(sizeof p->fds / sizeof p->fds[0]))
        p->fds[p->nfds++] = fd;
    else
        p->fds_overflow = true;
}

static void fd_release(struct proc *p, int fd)
{
    for (int i = 0; p && i < p->nfds; i++)
        if (p->fds[i] == fd) {
            p->fds[i] = p->fds[--p->nfds];
            return;
        }
}

static void plist_remove(struct pchild *c)
{
    pthread_mutex_lock(&plock);
    for (struct pchild **q = &pchildren; *q; q = &(*q)->next)
        if (*q == c) {
            *q = c->next;
            break;
        }
    pthread_mutex_unlock(&plock);
}

static ssize_t pipe_read(void *cookie, char *buf, size_t n)
{
    struct pchild *c = cookie;
    ssize_t r;
    do
        r = proc_read(c->fd, buf, n);
    while (r < 0 && errno == EINTR);
    return r;
}

static ssize_t pipe_write(void *cookie, const char *buf, size_t n)
{
    struct pchild *c = cookie;
    ssize_t r;
    do
        r = proc_write(c->fd, buf, n);
    while (r < 0 && errno == EINTR);
    return r < 0 ? 0 : r; /* fopencookie: 0 is the error */
}

/* fclose or pclose: the child sees EOF, and is waited for (glibc's fclose
 * of a popen stream waits too); its status stays for pclose. */
static int pipe_close(void *cookie)
{
    struct pchild *c = cookie;
    plist_remove(c);
    fd_release(c->owner, c->fd);
    close(c->fd);
    if (c->ending) {
        /* its ULP is gone: reaped if done, else the node's until it ends */
        waitpid(c->pid, &c->status, WNOHANG);
        free(c);
        return 0;
    }
    int rc = wait_child(c->pid, &c->status) == c->pid ? 0 : -1;
    if (rc != 0)
        c->status = -1;
    /* pclose reads the status after fclose: it frees c (fclose alone: here) */
    if (c->f)
        free(c);
    return rc;
}

/* The file actions of a popen child: its end on 0 or 1, the other popen
 * streams' ends closed. */
static int popen_actions(posix_spawn_file_actions_t *fa, int child_end, int std_fd)
{
    int rc = posix_spawn_file_actions_init(fa);
    if (rc != 0)
        return rc;
    /* dup2 onto itself clears FD_CLOEXEC (glibc >= 2.29): the pipe's end
     * may already be that number when 0 or 1 was closed */
    rc = posix_spawn_file_actions_adddup2(fa, child_end, std_fd);
    pthread_mutex_lock(&plock);
    for (struct pchild *c = pchildren; c && rc == 0; c = c->next)
        if (c->fd != std_fd)
            rc = posix_spawn_file_actions_addclose(fa, c->fd);
    pthread_mutex_unlock(&plock);
    if (rc != 0)
        posix_spawn_file_actions_destroy(fa);
    return rc;
}

/* "r", "w", "re", "we" (glibc also takes 'e' first). */
static int popen_mode(const char *mode, bool *reading, bool *cloexec)
{
    *reading = false;
    *cloexec = false;
    int rw = 0;
    for (const char *m = mode; m && *m; m++) {
        if (*m == 'r' || *m == 'w') {
            *reading = *m == 'r';
            rw++;
        } else if (*m == 'e') {
            *cloexec = true;
        } else {
            return -1;
        }
    }
    return rw == 1 ? 0 : -1;
}

static NOINLINE pid_t popen_spawn(const char *cmd, int ends[2], bool reading, int *err)
{
    int child_end = reading ? ends[1] : ends[0];
    posix_spawn_file_actions_t fa;
    pid_t pid = -1;
    int rc = popen_actions(&fa, child_end, reading ? 1 : 0);
    if (rc == 0) {
        rc = spawn_shell(&pid, cmd, &fa);
        posix_spawn_file_actions_destroy(&fa);
    }
    *err = rc;
    return rc == 0 ? pid : -1;
}

static FILE *popen_stream(struct pchild *c, bool reading)
{
    cookie_io_functions_t io = {.close = pipe_close};
    if (reading)
        io.read = pipe_read;
    else
        io.write = pipe_write;
    return fopencookie(c, reading ? "r" : "w", io);
}

static NOINLINE FILE *popen_nostream(struct pchild *c)
{
    pipe_close(c); /* c->f is NULL: c stays */
    free(c);
    errno = ENOMEM;
    return NULL;
}

static NOINLINE FILE *popen_open(const char *cmd, bool reading, bool cloexec)
{
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0)
        return NULL;
    struct pchild *c = calloc(1, sizeof *c);
    int err = ENOMEM;
    pid_t pid = c ? popen_spawn(cmd, ends, reading, &err) : -1;
    close(reading ? ends[1] : ends[0]);
    int mine = reading ? ends[0] : ends[1];
    if (pid < 0) {
        close(mine);
        free(c);
        errno = err;
        return NULL;
    }
    if (!cloexec) /* as popen without 'e': a program it starts inherits it */
        fcntl(mine, F_SETFD, 0);
    *c = (struct pchild){.owner = proc_current(), .pid = pid, .fd = mine};
    c->f = popen_stream(c, reading);
    if (!c->f) /* no stream: the child gets EOF, and is waited for */
        return popen_nostream(c);
    fd_hold(c->owner, mine);
    pthread_mutex_lock(&plock);
    c->next = pchildren;
    pchildren = c;
    pthread_mutex_unlock(&plock);
    return c->f;
}

FILE *proc_popen(const char *cmd, const char *mode)
{
    bool reading, cloexec;
    if (!cmd || popen_mode(mode, &reading, &cloexec) != 0) {
        errno = EINVAL;
        return NULL;
    }
    return popen_open(cmd, reading, cloexec);
}

static struct pchild *pchild_of(FILE *f)
{
    pthread_mutex_lock(&plock);
    struct pchild *c = pchildren;
    while (c && (c->f != f || !f))
        c = c->next;
    pthread_mutex_unlock(&plock);
    return c;
}

static NOINLINE int pclose_stream(struct pchild *c)
{
    FILE *f = c->f;
    c->f = NULL; /* pipe_close keeps c: its status is read here */
    fclose(f);
    int status = c->status;
    free(c);
    return status;
}

int proc_pclose(FILE *f)
{
    struct pchild *c = pchild_of(f);
    if (!c) { /* as glibc: not a stream from popen */
        errno = ECHILD;
        return -1;
    }
    return pclose_stream(c);
}

/* p ends: its popen streams are closed without waiting for their children
 * (a process's exit does not wait either). */
void proc_shell_end(struct proc *p)
{
    for (;;) {
        pthread_mutex_lock(&plock);
        struct pchild *c = pchildren;
        while (c && c->owner != p)
            c = c->next;
        pthread_mutex_unlock(&plock);
        if (!c)
            return;
        c->ending = true;
        fclose(c->f);
    }
}

/* ------------------------------------------------------------ posix_spawn */

/* Passed to libc as they are (the environment argument as given): the
 * child's parent is the node; the program waits for it with waitpid. */
int proc_posix_spawn(pid_t *pid, const char *path, const void *fa, const void *at,
                     char *const argv[], char *const envp[])
{
    return posix_spawn(pid, path, fa, at, argv, envp);
}

int proc_posix_spawnp(pid_t *pid, const char *file, const void *fa, const void *at,
                      char *const argv[], char *const envp[])
{
    return posix_spawnp(pid, file, fa, at, argv, envp);
}

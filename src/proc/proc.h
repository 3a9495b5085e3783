/*
 * proc.h - process-mode ULPs: a ULP that runs its own copy of a program.
 *
 * A process-mode ULP owns a slot of the node's window (src/mem): its copy of
 * the program image (src/loader) at the slot's base, its heap after the
 * image, its stack at the top.  The program runs as if it were a process of
 * its own: private globals and heap, its own argv, environment, getopt
 * state and atexit list; exit() ends the ULP, not the node.  Calls that
 * would act on the whole OS process (fork, exec, threads, signal handlers)
 * are refused with a message naming the ULP (interpose.c).
 *
 * Layering: below the PVM layer (pvm_spawn starts programs through
 * proc_spawn; the PVM task of a ULP ends through the core's exit hooks when
 * the ULP ends), above core, mem and loader.
 */
#ifndef UPVM_PROC_H
#define UPVM_PROC_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "core/core.h"
#include "loader/loader.h"
#include "mem/mem.h"

/* An atexit/__cxa_atexit registration. */
struct proc_atexit {
    void (*fn)(void *);
    void *arg;
    bool with_arg; /* __cxa_atexit(fn, arg): fn(arg); atexit(fn): fn() */
};

/* A thread-mode task function a process-mode program registered
 * (UPVM_TASK in a program built with upvmcc): it belongs to that copy. */
struct proc_task {
    char *name;
    int (*fn)(int, char **);
};

/* The process state of a process-mode ULP.  It lives in the ULP's own heap
 * (inside its slot), so it moves with the ULP. */
struct proc {
    int slot;
    size_t stack_size;
    struct loader_instance inst;
    mem_heap_t *heap;

    /* what libc keeps per process: the program's GOT points here */
    int optind, opterr, optopt;
    char *optarg;
    /* its getopt parse (interpose.c): calls so far, and optind as the
     * last call left it (the program setting it starts a new parse) */
    unsigned opt_parse;
    int opt_calls, opt_left;
    char *progname;       /* __progname, program_invocation_short_name */
    char *progname_full;  /* __progname_full, program_invocation_name */
    char **environ;       /* environ, __environ */
    FILE *out, *err;      /* stdout, stderr (output.c) */
    FILE *in;             /* stdin (input.c), made when first needed */
    bool in_used;         /* it was: made again after a move */
    void *tagged[2];      /* this node's tagged streams behind them, or NULL */
    char *held_line[2];   /* across a move: an unfinished tagged line (heap) */
    size_t held_len[2];
    char tag_name[24];    /* the last name its tagged lines had ("t40002") */
    bool caught;          /* its output goes to catch_key (the router's) */
    int catch_key[2];
    int nenv, capenv;

    int argc;
    char **argv;

    struct proc_task *tasks; /* its upvm_task_register calls */
    int ntasks;

    int fds[16];          /* files and sockets it opened (they pin it) */
    int nfds;
    bool fds_overflow;    /* opened more than fds[] holds */

    struct proc_atexit *atexits;
    int natexits, capatexits;
    bool exiting;
    bool heap_end_said;   /* interpose.c: its heap's end was said */

    char path[PATH_MAX];  /* the program, as opened */
};

/* blocking.c: the interposed calls that may block (coupled to a kernel
 * context when they would: src/blt), NULL for another name; what a
 * descriptor number was is forgotten when it is closed or made anew; the
 * coupled forms of accept4 and of fcntl's waiting locks (F_SETLKW,
 * F_OFD_SETLKW), for interpose.c's wrappers of accept and fcntl. */
void *proc_blocking_resolve(const char *name) HIDDEN;

/* fortran.c: the gfortran run-time's STOP, ERROR STOP, EXIT and ABORT
 * entry points a program imports, bound so that they end the ULP, not
 * the node (NULL for any other name); and libgfortran's units flushed
 * (every ULP's end does it, when a program of the node brought
 * libgfortran). */
void *proc_fortran_resolve(const char *name) HIDDEN;
void proc_fortran_flush(void) HIDDEN;
void proc_blocking_fd_reset(int fd) HIDDEN;
int proc_coupled_accept4(int s, struct sockaddr *a, socklen_t *l, int flags) HIDDEN;
int proc_coupled_fcntl_lock(int fd, int cmd, void *arg) HIDDEN;
/* The interposed read, write and waitpid themselves (a first try that
 * cannot block, then coupled), for UPVM's own streams and children
 * (shell.c, input.c). */
ssize_t proc_read(int fd, void *buf, size_t n) HIDDEN;
ssize_t proc_write(int fd, const void *buf, size_t n) HIDDEN;
pid_t proc_waitpid(pid_t pid, int *status, int options) HIDDEN;

/* The process-mode state of the running ULP (on the scheduler thread, or
 * coupled on a kernel context), or NULL (thread mode, another thread). */
static inline struct proc *proc_current(void)
{
    struct ulp *u = core_self();
    return u ? u->ext[ULP_EXT_PROC] : NULL;
}

/*
 * Start a process-mode ULP running the program at path (a file name, no
 * search: see proc_find) with argv (NULL-terminated; argv[0] is the name
 * the program sees) and envp (NULL: the node's environment).  The ULP is
 * ready to run when this returns; *out is it.  Errors: a negative errno
 * and a message in *err (the loader's, or "no free slot ...").
 */
int proc_spawn(const char *path, char *const argv[], char *const envp[],
               const upvm_attr_t *attr, struct ulp **out, struct loader_error *err) HIDDEN;

/* Read proc's settings (UPVM_MAP_LIMIT) if not done yet: at the first
 * spawn, or earlier by the launcher, so that the nodes it forks do not
 * each say a bad value again. */
void proc_read_settings(void) HIDDEN;

/* The refusal at the kernel's mapping limit is the same on every node of
 * a job: it is said once per process, and only when first() (if set) is
 * true: the PVM layer registers one that is true once per job.  A refusal
 * not said has an empty err->msg. */
void proc_set_once_gate(bool (*first)(void)) HIDDEN;

/*
 * Memory a system call must not be given directly: shared virtual memory
 * (src/svm), whose pages may be absent on this node -- the kernel does not
 * fault them in, the call would fail with EFAULT -- or taken away while a
 * coupled call runs.  The svm layer registers the test; the interposed
 * read, write, readv, writev, pread, pwrite, recv, recvfrom, send and
 * sendto then run such a call on a private bounce buffer, copied from or
 * into the caller's memory on the ULP's own context, where touching a
 * shared page is an ordinary fault.  One; NULL: none.
 */
void proc_set_bounce_test(bool (*fn)(const void *p, size_t len)) HIDDEN;

/*
 * Find the program `name` as PVM users expect: a name with a '/' as it is;
 * otherwise in the spawner's directory (spawner_dir, may be NULL), the
 * current directory, then each directory of PVM's search path: epath (the
 * ep= a hostfile gave this host) if not NULL or empty, else $PVM_PATH if
 * set, else PVM's default PROC_DEFAULT_PATH (':'-separated; $VAR and
 * ${VAR} in an entry are replaced by their values, $PVM_ARCH by LINUX64
 * when unset, as PVM's pvmd does).  Only regular files the user may execute
 * count, as for PVM's pvmd (a mode-0644 file is not found).  Writes the
 * path found into out (size len) and returns 0, or -ENOENT.
 */
#define PROC_DEFAULT_PATH "$HOME/pvm3/bin/$PVM_ARCH:$PVM_ROOT/bin/$PVM_ARCH"
int proc_find(const char *name, const char *spawner_dir, const char *epath, char *out,
              size_t len) HIDDEN;

/* End the calling process-mode ULP as exit(status) ends a process: its
 * atexit handlers (last registered first), then its finalisers; stdio is
 * flushed; the ULP ends with status & 0xff.  quick: _exit (no handlers). */
_Noreturn void proc_exit(struct proc *p, int status, bool quick) HIDDEN;

/* Register / find a thread-mode task function of p's program copy.
 * 0 or -ENOMEM; find returns NULL when p has none under that name. */
int proc_task_register(struct proc *p, const char *name, int (*fn)(int, char **)) HIDDEN;
int (*proc_task_find(struct proc *p, const char *name))(int, char **) HIDDEN;

/* cxx.c: C++ programs.  Once the node has a C++ runtime (a program that
 * links libstdc++ was opened, or the node's own program links it), give
 * each ULP its own exception state and end a process-mode ULP that lets an
 * exception escape with a report; nothing before.  Idempotent; on the
 * scheduler thread, or before the node starts (libupvm's constructor
 * calls it: a C++ program linked with libupvm has libstdc++ from the
 * start). */
void proc_cxx_init(void) HIDDEN;

/* Why p's task must stay on its node, or NULL: its program links the C++
 * runtime (libstdc++) and the operator new every call binds to is not
 * libupvm's (cxx_new.c; an ASan build, a preloaded allocator), so its
 * new'd objects are the node's memory; UPVM_CXX_MIGRATE=1 lets such tasks
 * move anyway (docs/cxx.md).  For migrate and the balancer. */
const char *proc_cxx_pins(const struct proc *p) HIDDEN;

/* interpose.c: the NULL a task's allocation (call: "malloc()") gives when
 * its heap has no room for n bytes, saying once per task when the heap
 * ran into the end of its slot, and which UPVM_SLOT_SIZE would do. */
void *proc_heap_null(struct proc *p, const char *call, size_t n) HIDDEN;

/* The interposed allocator, for every caller on a task's behalf (malloc
 * family, C++'s operator new/delete): proc_alloc takes n bytes (aligned to
 * align, 0 for malloc's alignment) from the calling task's heap, or from
 * libc's outside a task; NULL when there is no room (said once, naming
 * call).  proc_free gives ptr back to the heap it came from: the task's,
 * libc's, or none (another task's pointer: said, naming call, and
 * ignored). */
void *proc_alloc(const char *call, size_t n, size_t align) HIDDEN;
void proc_free(const char *call, void *ptr) HIDDEN;

/* cxx_new.c: is libupvm's operator new (a task's objects on its heap) the
 * one every call in the node binds to? */
bool proc_cxx_new_bound(void) HIDDEN;

/* The interposition table: the address the loader binds name to in a
 * program loaded for p, or NULL (loader_resolver_t). */
void *proc_resolve(const char *name, void *p) HIDDEN;

/* output.c: give p its stdout/stderr (tagged with its tid when
 * UPVM_OUTPUT_TIDS is set), close them at its end, and the names the loader
 * binds for them (stdout, stderr; printf & co. when tagging). */
void proc_output_open(struct proc *p, struct ulp *u) HIDDEN;
/* How a tagged line names its ULP ("t40002"): the layer that gives ULPs
 * names registers it (pvm); it writes at most len bytes and returns the
 * name's length, 0 for a ULP it does not know ("ULP 7" is used then). */
typedef int (*proc_output_namer_fn)(const struct ulp *u, char *buf, size_t len);
void proc_output_set_namer(proc_output_namer_fn fn) HIDDEN;
/* The name u's tagged lines have now, kept for what it writes later: the
 * layer that names it calls this before the name goes (pvm_exit). */
void proc_output_keep_name(struct ulp *u) HIDDEN;
/*
 * Where a ULP's output goes instead of the node's descriptors 1 and 2
 * (pvm_catchout: to the task that catches it, perhaps on another node).
 * The layer that knows says which ULPs are caught (proc_output_catch, when
 * it makes one: key is two ints of its own, kept with the ULP, which move
 * with it) and registers where their output goes (pvm):
 *  write:  bytes it wrote, stdout and stderr alike, as its streams let
 *          them out (stdout a line at a time or when flushed, stderr at
 *          once): neither tagged nor cut into lines here.
 *  end:    its output has ended (the ULP ended, also one killed before it
 *          ran; not a move).
 */
struct proc_output_router {
    void (*write)(const int key[2], const char *data, size_t n);
    void (*end)(const int key[2]);
};
void proc_output_set_router(const struct proc_output_router *r) HIDDEN;
void proc_output_catch(struct proc *p, const int key[2]) HIDDEN;
/* The stream `f` of the program of p, if it is its stdout (1) or stderr
 * (2), else 0; and back: that stream now (NULL for 0). */
int proc_output_which(const struct proc *p, const FILE *f) HIDDEN;
FILE *proc_output_stream(const struct proc *p, int which) HIDDEN;
void proc_output_close(struct proc *p) HIDDEN;
/* Before p leaves the node: what it wrote is written out, except an
 * unfinished tagged line, which goes with it (proc_output_open takes it
 * up again on the other node: the line comes out whole). */
void proc_output_suspend(struct proc *p) HIDDEN;
void *proc_output_resolve(const char *name, struct proc *p) HIDDEN;

/* input.c: p's stdin, a stream of its own on descriptor 0 whose reads
 * leave the node's other ULPs running; made when the program binds stdin
 * or first calls scanf/getchar.  Closed at p's end and before it moves
 * (suspend; open makes it again on the other node if it had one). */
void proc_input_close(struct proc *p) HIDDEN;
void proc_input_suspend(struct proc *p) HIDDEN;
void proc_input_open(struct proc *p) HIDDEN;
void *proc_input_resolve(const char *name, struct proc *p) HIDDEN;

/* shell.c: commands run from a ULP (posix_spawn, waited for coupled). */
int proc_system(const char *cmd) HIDDEN;
FILE *proc_popen(const char *cmd, const char *mode) HIDDEN;
int proc_pclose(FILE *f) HIDDEN;
int proc_posix_spawn(pid_t *pid, const char *path, const void *fa, const void *at,
                     char *const argv[], char *const envp[]) HIDDEN;
int proc_posix_spawnp(pid_t *pid, const char *file, const void *fa, const void *at,
                      char *const argv[], char *const envp[]) HIDDEN;
/* p ends: its popen streams are closed (their children not waited for). */
void proc_shell_end(struct proc *p) HIDDEN;

/* Report "upvm: ULP 3 (master, PVM task t40001) called fork(): ..." */
void proc_refuse(const char *call, const char *why) HIDDEN;

/* ------------------------------------------------------------ migration */

/* What the destination needs before the bytes come (move.c). */
struct proc_move {
    int32_t slot;
    uint64_t stack_size;
    uint64_t heap_committed;
    uint64_t image_id;     /* loader_image_id of the program's file */
    char path[PATH_MAX];   /* the program's file */
};

/* The ranges proc_move_ranges gives, always these, in this order (one may
 * be empty: a program without writable data). */
enum proc_move_range {
    PROC_MOVE_IMAGE, /* the image's writable pages */
    PROC_MOVE_STACK, /* the stack from the saved stack pointer up */
    PROC_MOVE_HEAP,  /* the heap to its top */
    PROC_MOVE_RANGES
};

void proc_move_info(const struct proc *p, struct proc_move *out) HIDDEN;
/* The bytes of p's slot that must move for ULP u (suspended: its saved
 * stack pointer bounds the stack): PROC_MOVE_RANGES ranges in v (enum
 * proc_move_range), their count returned. */
int proc_move_ranges(const struct proc *p, const struct ulp *u, struct iovec *v) HIDDEN;
/* The source, before the bytes are read: p lets go of this node's objects
 * (its tagged streams). */
void proc_move_out(struct proc *p) HIDDEN;
/* The source, after the bytes left: the slot's memory here goes (the slot
 * stays the job's), with the image reference. */
void proc_move_gone(int slot, struct loader_image *img) HIDDEN;
/* The destination: open the program, map its text at the slot and commit
 * the writable part, zero.  0 and *img, or an error in *err (also when the
 * file at that path here is another program than the task's: another
 * host, another build). */
int proc_move_prepare(const struct proc_move *m, struct loader_image **img,
                      struct loader_error *err) HIDDEN NODISCARD;
/* The destination, when the move does not happen after all. */
void proc_move_cancel(int slot, struct loader_image *img) HIDDEN;
/* The destination, after the bytes came: p (in them) belongs to u here. */
void proc_move_in(struct proc *p, struct ulp *u, struct loader_image *img) HIDDEN;
/* The files and sockets p opened and still holds ("fd 5 /tmp/x, fd 6
 * socket:[123]"), or NULL when none: they pin it to its node. */
const char *proc_open_files(struct proc *p) HIDDEN;
/* proc.c: count a slot in or out of the node's mapping budget. */
void proc_slots_adjust(int delta) HIDDEN;

#endif /* UPVM_PROC_H */

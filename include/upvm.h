/*
 * upvm.h - UPVM's native API: user-level processes (ULPs) and their scheduler.
 *
 * A node (one OS process) runs many ULPs on one scheduler thread.  ULPs are
 * scheduled cooperatively: a ULP runs until it yields, blocks, sleeps or
 * exits.  Nothing here enters the kernel on the fast path (create from a
 * cached stack, yield, yield-to, wait, wake).
 *
 * Conventions used by every function below:
 *   - Errors are returned as negative errno values (-EINVAL, -ESRCH, ...);
 *     0 or a positive value is success.  No function aborts on bad input.
 *   - Context: unless a function says otherwise it must be called from a ULP
 *     of this node, i.e. on the node's scheduler thread.  The first call to
 *     any function turns the calling thread into the node's scheduler thread
 *     and the calling code into ULP 1, "main" (its stack is the thread's own).
 *     Calls from another thread return -EPERM (or are ignored where a
 *     function returns void).  Nothing here is async-signal-safe.
 *   - "May switch" means the call can run other ULPs before it returns;
 *     the caller's errno is preserved across any switch.
 *
 * Environment (read once, at the first call):
 *   UPVM_STACK_SIZE   default stack size of a new ULP, e.g. 64K, 1M
 *                     (default 256K; at least 16K; rounded up to pages)
 */
#ifndef UPVM_H
#define UPVM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__cplusplus)
#define UPVM_NORETURN [[noreturn]]
#else
#define UPVM_NORETURN _Noreturn
#endif

#if defined(__GNUC__)
#define UPVM_API __attribute__((visibility("default")))
#define UPVM_NODISCARD __attribute__((warn_unused_result))
#else
#define UPVM_API
#define UPVM_NODISCARD
#endif

/* A ULP's identifier within its node: a positive integer, never reused while
 * the node runs.  ULP 1 is the node's main ULP. */
typedef int upvm_id_t;

/* Attributes of a new ULP.  Zero-initialise, then set what you need
 * (upvm_attr_t a = {0}; or UPVM_ATTR_INIT).  The structure is copied: the
 * caller may reuse or free it (and the name string must stay valid for the
 * ULP's lifetime: it is not copied). */
typedef struct upvm_attr {
    size_t stack_size;  /* bytes; 0 = the node default (UPVM_STACK_SIZE) */
    const char *name;   /* for reports; NULL = the entry function's symbol */
    unsigned flags;     /* UPVM_DETACHED */
} upvm_attr_t;
#define UPVM_ATTR_INIT {0, NULL, 0}

/* The ULP cannot be joined; everything it owns is freed when it exits.
 * Without this flag a ULP that exits keeps a small record (its exit status)
 * until someone joins it. */
#define UPVM_DETACHED 0x1u

/* Smallest stack a ULP may have (a smaller request is rounded up). */
#define UPVM_STACK_MIN ((size_t)16 * 1024)

typedef void (*upvm_entry_t)(void *arg);
typedef void (*upvm_ordinal_entry_t)(int ordinal, void *arg);

/* ------------------------------------------------------------- creation */

/*
 * upvm_create - create a ULP that runs fn(arg).
 * Returning from fn is upvm_exit(0).  The new ULP is put at the tail of the
 * run queue; it does not run before the caller yields, blocks or exits.
 * Returns its id (> 0), or
 *   -EINVAL   fn is NULL, or attr->stack_size is above 1 GiB
 *   -ENOMEM   no memory for the ULP or its stack (the reason, e.g. the
 *             vm.max_map_count limit and how to raise it, is printed once)
 *   -EPERM    called from a thread that is not this node's scheduler
 * Does not switch.
 */
UPVM_API UPVM_NODISCARD upvm_id_t upvm_create(upvm_entry_t fn, void *arg,
                                              const upvm_attr_t *attr);

/*
 * upvm_spawn_func - M-PVM's mpvm_spawn(func, arg, count, tids): create
 * count ULPs running fn(ordinal, arg), ordinal = 0 .. count-1 (each can also
 * ask upvm_ordinal()).  Their ids are stored in ids[0 .. count-1] when ids
 * is not NULL.  Returns the number created (count), or a negative error as
 * for upvm_create (-EINVAL also for count < 1); on error none is left
 * behind: the ones already created are never run and are reclaimed.
 * Does not switch.
 */
UPVM_API UPVM_NODISCARD int upvm_spawn_func(upvm_ordinal_entry_t fn, void *arg,
                                            int count, upvm_id_t *ids,
                                            const upvm_attr_t *attr);

/* --------------------------------------------------------- who am I */

/* The calling ULP's id (1 for main).  Never fails on the scheduler thread. */
UPVM_API upvm_id_t upvm_self(void);

/* The calling ULP's ordinal from upvm_spawn_func, -1 for other ULPs. */
UPVM_API int upvm_ordinal(void);

/* Number of ULPs of this node that have not exited (main included). */
UPVM_API int upvm_count(void);

/* -------------------------------------------------------- scheduling */

/*
 * upvm_yield - let every other ready ULP run once (round robin), then
 * return.  Returns at once when no other ULP is ready.  May switch.
 */
UPVM_API void upvm_yield(void);

/*
 * upvm_yield_to - hand-off: run ULP id now, ahead of the run queue; the
 * caller stays ready (at the tail of the run queue).
 * Returns 0 once the caller runs again, or
 *   -ESRCH    no such ULP, or it has exited
 *   -EAGAIN   it exists but is not ready (blocked or sleeping): nothing ran
 *   -EPERM    not on the scheduler thread
 * Yielding to oneself returns 0 without switching.  May switch.
 */
UPVM_API int upvm_yield_to(upvm_id_t id);

/*
 * upvm_sleep_ns - block the caller for at least ns nanoseconds while the
 * other ULPs run.  Sleepers wake in deadline order (ties: in the order they
 * went to sleep).  A node whose ULPs all sleep waits in the kernel, without
 * spinning.  Returns 0 (or -EPERM).  upvm_sleep_ns(0) is upvm_yield().
 * May switch.
 */
UPVM_API int upvm_sleep_ns(uint64_t ns);

/* Monotonic clock in nanoseconds (CLOCK_MONOTONIC). Any thread. */
UPVM_API uint64_t upvm_now_ns(void);

/* ------------------------------------------------------- exit and join */

/*
 * upvm_exit - end the calling ULP with status.  Its joiner (if any) wakes.
 * In main: waits for every other ULP to exit (upvm_join_all), then exits
 * the process with status through exit(3).  Never returns.
 */
UPVM_NORETURN UPVM_API void upvm_exit(int status);

/*
 * upvm_join - wait for ULP id to exit and collect its status (status may be
 * NULL).  Afterwards the id is gone.  Returns 0, or
 *   -ESRCH    no such ULP (never existed, or already joined)
 *   -EINVAL   it is detached, or another ULP is already joining it
 *   -EDEADLK  id is the caller
 * May switch.
 */
UPVM_API int upvm_join(upvm_id_t id, int *status);

/*
 * upvm_join_all - wait until every other ULP of the caller's family has
 * exited (ULPs that are themselves waiting in upvm_join_all do not count).
 * Exited joinable ULPs of the family that nobody joined are reclaimed.
 * Returns 0 (or -EPERM).  May switch.
 *
 * The family: in a program run as a ULP of its own (built with upvmcc,
 * process mode: a PVM task, a copy started by upvm run), the ULPs of that
 * program copy: its main ULP and every ULP it or they created
 * (upvm_create, upvm_spawn_func, tasks of its own registered functions),
 * on this node.  Not the runtime's own ULPs, nor other programs (tasks
 * started with pvm_spawn of a program are programs of their own: wait for
 * them with PVM's calls).  In a program linked with -lupvm (thread mode),
 * every ULP of the node.
 */
UPVM_API int upvm_join_all(void);

/*
 * upvm_run - upvm_create(fn, arg, attr), then upvm_join_all(): run a node
 * until all its ULPs have exited.  Returns 0, or the error of upvm_create.
 */
UPVM_API int upvm_run(upvm_entry_t fn, void *arg, const upvm_attr_t *attr);

/* -------------------------------------------------------- wait queues */

/*
 * A wait queue: ULPs block on it and are woken in FIFO order.  It is the
 * primitive that messaging, groups and barriers are built on.  Initialise
 * with upvm_waitq_init() (or UPVM_WAITQ_INITIALIZER(q, "name") for a static
 * one).  A queue must be empty when its memory is released.
 */
typedef struct upvm_waitq {
    struct upvm_waitq_link {
        struct upvm_waitq_link *next, *prev;
    } head;
    const char *name; /* shown when a deadlock is reported */
} upvm_waitq_t;
#define UPVM_WAITQ_INITIALIZER(q, qname) {{&(q).head, &(q).head}, (qname)}

UPVM_API void upvm_waitq_init(upvm_waitq_t *q, const char *name);

/*
 * upvm_wait - block the caller on q until woken or until timeout_ns have
 * passed (timeout_ns < 0: no time limit).  Returns 0 when woken,
 * -ETIMEDOUT when the time ran out, -EPERM off the scheduler thread.
 * Blocking when no ULP can ever run again (every ULP blocked, nobody
 * sleeping, no I/O that could wake one) is a deadlock: the node reports
 * every ULP and what it waits on, and exits with status 70.  May switch.
 */
UPVM_API int upvm_wait(upvm_waitq_t *q, int64_t timeout_ns);

/* Make the longest waiter of q ready (tail of the run queue).  Returns the
 * number woken (0 or 1).  Does not switch. */
UPVM_API int upvm_wake_one(upvm_waitq_t *q);

/* Make every waiter of q ready, in FIFO order.  Returns the number woken.
 * Does not switch. */
UPVM_API int upvm_wake_all(upvm_waitq_t *q);

/* Hand-off wake: like upvm_wake_one, but the woken ULP runs at once and the
 * caller resumes right after it (at the head of the run queue).  Returns 1
 * if one was woken, 0 if q was empty (then nothing switched).  May switch. */
UPVM_API int upvm_wake_one_handoff(upvm_waitq_t *q);

/* ------------------------------------------- PVM tasks in thread mode */

/*
 * Until programs are loaded as separate ULP processes (upvmcc / upvm run),
 * a PVM program's tasks are functions of one executable that run as ULPs
 * of its node: "thread-mode tasks", as in M-PVM.  Every PVM call (<pvm3.h>)
 * made by a ULP enrolls it as a task with a PVM tid; main is the task
 * started "from the shell" (no parent).
 *
 * upvm_task_main_t - the main function of a task spawned by name: argv[0]
 * is the name it was spawned as, argv[1..argc-1] the argv given to
 * pvm_spawn, argv[argc] is NULL.  Returning from it ends the task like
 * pvm_exit() followed by exit(status) would end a PVM process.
 */
typedef int (*upvm_task_main_t)(int argc, char **argv);

/*
 * upvm_task_register - make `name` spawnable: pvm_spawn(name, ...) (or a
 * path whose last component is name, so "/some/dir/worker" finds
 * "worker") starts ULPs running fn.  The name is copied.  Any thread, any
 * time (also from a constructor, see UPVM_TASK).  Errors: -EINVAL (name
 * NULL, empty or longer than 255 bytes, fn NULL), -EEXIST (name already
 * registered with another function), -ENOMEM.
 */
UPVM_API int upvm_task_register(const char *name, upvm_task_main_t fn);

/* Register fn under name before main runs:  UPVM_TASK("worker", worker_main); */
#define UPVM_TASK(name, fn)                                                \
    __attribute__((constructor)) static void upvm_task_register_##fn(void) \
    {                                                                      \
        (void)upvm_task_register((name), (fn));                            \
    }

/*
 * upvm_task_spawn_func - M-PVM's spawn-by-function: start ntask PVM tasks,
 * task i running fn(i, arg) (upvm_ordinal() is i too).  Their parent is
 * the caller (enrolled if it was not yet a task), their siblings each
 * other, their context the caller's current one.  tids (may be NULL)
 * receives the new tids.  Returns the number started (ntask), or a PVM
 * error code: PvmBadParam (fn NULL, ntask < 1), PvmOutOfRes (no memory;
 * none started).  Does not switch: the tasks start when the caller next
 * blocks or yields.
 */
UPVM_API int upvm_task_spawn_func(upvm_ordinal_entry_t fn, void *arg, int ntask,
                                  int *tids);

/*
 * How a message sent to tasks of the same node is delivered (UPVM's two
 * strategies, as measured in M-PVM):
 *   UPVM_DELIVER_SHARE   the receivers get references to the sender's
 *                        buffer; nothing is copied (copy-on-write protects
 *                        both sides).  The default.
 *   UPVM_DELIVER_COPY    every receiver gets its own copy, made at send.
 * Both give identical PVM semantics.  The environment variable
 * UPVM_DELIVERY=share|copy sets it at start-up.  upvm_set_delivery returns
 * the previous strategy, or -EINVAL for an unknown one.
 */
#define UPVM_DELIVER_SHARE 0
#define UPVM_DELIVER_COPY  1
UPVM_API int upvm_set_delivery(int strategy);

/* ------------------------------------------------ process-mode programs */

/*
 * upvm_run_program - run ninst copies of the program at path (built with
 * upvmcc) as process-mode ULPs of this node, each with argv and envp (NULL:
 * this process's environment), wait until they end and return the first
 * non-zero exit status among them (0 if all succeeded, 1 if one could not
 * be started: the reason is printed).  What `upvm run` does.  With
 * ninst > 1 and envp NULL the copies are started like PVM's console
 * `spawn -N`: siblings of one pvm_spawn whose parent is a console task.
 * Must be called from the thread that is (or becomes) the node's scheduler.
 */
UPVM_API int upvm_run_program(const char *path, int ninst, char **argv, char **envp);

/*
 * upvm_program_start - called by upvmcc's start-up object before anything
 * else in a program: in the process the shell started it makes that process
 * a node and runs the program in it as its first process-mode ULP (and does
 * not return); in the copies UPVM loads into ULPs it returns at once.
 */
UPVM_API void upvm_program_start(int argc, char **argv, char **envp);

/*
 * upvm_vm_start - start this user's persistent VM (docs/console.md), as
 * `upvm start` does: a daemon whose nnodes nodes (< 1: one per core)
 * serve until it is halted, its output appended to the log whose path is
 * written to log.  Returns once the VM answers: 0; 1 when one was up
 * already; a negative errno when it could not start (said on stderr).
 */
UPVM_API int upvm_vm_start(int nnodes, char *log, size_t loglen);

/*
 * upvm_tasks_waits - after the calling task's pvm_tasks, what its i-th
 * task waits for, in a few words ("recv from t40001 tag 5", "any" for a
 * wildcard; the name of what it blocks on, such as "pvm_barrier";
 * "sleeping"), "" when it runs or may run; NULL for an i out of range.
 * Valid until the task's next pvm_tasks.  The console's `ps` shows it.
 */
UPVM_API const char *upvm_tasks_waits(int i);

/*
 * upvm_tev_name, upvm_tev_did_name, upvm_tev_did_desc - PVM tracing's
 * names (pvmtev.h, docs/pvm-tracing.md): an event kind's ("send", as
 * genuine libpvm's pvmtevinfo[kind].name), a data id's short name ("TID")
 * and description ("Task ID"); NULL out of range.  The console's `trace`
 * and `spawn -@` print them.
 */
UPVM_API const char *upvm_tev_name(int kind);
UPVM_API const char *upvm_tev_did_name(int did);
UPVM_API const char *upvm_tev_did_desc(int did);

/* ------------------------------------------------------------- migration */

/*
 * Migration (docs/migration.md): a process-mode task moves to another node
 * of its job while the program runs, and the program cannot tell: its tid,
 * addresses, messages, groups, notifies and PVM state stay what they were.
 *
 * A migration takes effect when the task is not running: at once when it is
 * blocked (in a receive, sleeping) or ready; a task in a long computation
 * moves at its next PVM call, yield or upvm_migrate_point().
 *
 * upvm_migrate - move the task tid (0: the caller) to node `node`
 * (0 .. upvm_nodes() - 1).  Blocks the calling ULP (the others run) until
 * the task runs on that node or the migration is refused; a task that
 * moves itself returns on the new node.  Returns 0 (also when the task is
 * there already), or a negative PVM error code:
 *   PvmBadParam  node is not a running node of this job, or tid is no tid
 *   PvmNoTask    no such task
 *   PvmNotImpl   refused: upvm_migrate_error() says why (a thread-mode
 *                task, a task holding open files or sockets, nodes whose
 *                library layout differs, ...)
 *   PvmSysErr    not on a node's scheduler thread, or out of memory
 * Any task may move any other; a refused migration changes nothing.
 */
UPVM_API int upvm_migrate(int tid, int node);

/*
 * upvm_migrate_lazy - the same, moving only what the task needs to go on
 * (IVY's process migration): its registers and the page its stack pointer
 * is in.  It runs on `node` at once; the rest of its memory follows, each
 * page pulled from the old node when the task first touches it and the
 * rest pushed in the background (docs/migration.md, "Lazy moves").  Until
 * every page has arrived the task depends on the old node (its death then
 * ends the task with a report) and cannot move again (PvmNotImpl).
 * Refused (PvmNotImpl) where the node cannot catch page faults (no
 * userfaultfd).  Returns as upvm_migrate.
 */
UPVM_API int upvm_migrate_lazy(int tid, int node);

/* Why the calling node's last upvm_migrate failed: a sentence naming the
 * task and what to do ("" after a success).  Valid until the next call. */
UPVM_API const char *upvm_migrate_error(void);

/* A safe point for long computations: if a migration of the calling task
 * was asked for, it happens here (the call returns on the new node);
 * otherwise it costs a look at the node's transport for such a request
 * (tens of nanoseconds). */
UPVM_API void upvm_migrate_point(void);

/*
 * upvm_balance_point - a good moment for the global scheduler to move the
 * caller (docs/balancing.md), as AMPI_Migrate is in AMPI: a move the
 * balancer decided takes effect here.  Unmodified programs are balanced
 * too (a task moves when it next blocks, yields or calls PVM); a task
 * that computes for long between such calls gives the balancer its
 * moments with this call.  Costs what upvm_migrate_point costs.
 */
UPVM_API void upvm_balance_point(void);

/* The node that runs task tid (0: the caller's own node), -1 when tid
 * names no task of the job (ended, or never used): for a task on another
 * node it asks that node (a round trip).  And the job's node count. */
UPVM_API int upvm_node_of(int tid);
UPVM_API int upvm_nodes(void);

/* Timings of the calling node's last successful upvm_migrate, in ns:
 * total: from the request to the task running on its new node;
 * obtrusiveness: from the request reaching the source node to the task's
 * last byte leaving it (MPVM's metric); bytes: memory moved. */
struct upvm_migrate_stats {
    uint64_t total_ns;
    uint64_t obtrusive_ns;
    uint64_t bytes;
};
UPVM_API int upvm_migrate_stats(struct upvm_migrate_stats *out);

/* ------------------------------------------------------------- bi-level threads */

/*
 * A ULP that is about to block in the kernel (a read on a pipe, a wait for
 * a child, a slow fsync) couples itself to a kernel context, a thread of
 * its node's pool, so that the node's scheduler runs its other ULPs
 * meanwhile (docs/bi-level-threads.md).  Process-mode programs get this
 * for the blocking system calls without asking.
 *
 * upvm_couple - from now on the calling ULP runs on a kernel context of
 *   its own; calls between it and upvm_decouple are made by the same
 *   kernel thread.  Nests (the outermost decouple counts).  0, or -EPERM
 *   (not a ULP of this node), -EAGAIN (no kernel context can be created).
 *   Between the two, call the system and the C library only: UPVM's and
 *   PVM's calls answer -EPERM / PvmSysErr there.
 * upvm_decouple - back to the node's scheduler (after the ULPs ahead of it
 *   in the run queue).  0, -EINVAL (not coupled), -EPERM (not a ULP).
 * upvm_coupled - 1 on a kernel context, 0 elsewhere.
 * upvm_blocking - fn(arg) on a kernel context (couple, call, decouple);
 *   returns fn's value, with errno as fn left it.
 */
UPVM_API int upvm_couple(void);
UPVM_API int upvm_decouple(void);
UPVM_API int upvm_coupled(void);
UPVM_API long upvm_blocking(long (*fn)(void *arg), void *arg);

/* ------------------------------------------------------------- stacks */

/* The stack size a ULP gets when its attr says 0 (UPVM_STACK_SIZE). */
UPVM_API size_t upvm_default_stack_size(void);

#ifdef __cplusplus
}
#endif
#endif /* UPVM_H */

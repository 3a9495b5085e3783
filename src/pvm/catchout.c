/*
 * catchout.c - pvm_catchout: the output of caught tasks travels to the task
 * that catches it, and that task's node writes it, a line at a time, to the
 * file it gave (docs/compat.md, "Output").
 *
 * As in PVM.  A task spawned by one whose PvmOutputTid is set (pvm_catchout
 * sets it to the task itself; children inherit it, so grandchildren write
 * to the same catcher) has its output caught: its process-mode streams
 * hand what the program writes to the router below (proc/output.c), which
 * sends it, as it comes, to the catcher: K_OUTPUT frames (a: the catcher,
 * b: the writer, c: OUT_*; payload: the bytes), addressed by tid and
 * routed like a message (they follow a catcher that moved).  A catcher on
 * the writer's own node gets them directly.  The catcher's node keeps an
 * unfinished line per writer (stdout and stderr share it, as they share
 * PVM's pipe) and writes each line as "[t40002] text" (PvmShowTids 0:
 * "text", and no BEGIN/EOF), "[t40002] BEGIN" when the writer is made and
 * "[t40002] EOF" when its output ends; a last line without a newline gets
 * one there, as in PVM.
 *
 * Order: BEGIN is sent by the writer's node when it makes the task, before
 * the task runs; its output and its EOF follow from that node, or from the
 * one it moved to, in the order written (frames between two nodes keep
 * their order).  A catcher on another node sees BEGIN when the frame
 * comes; a local one, inside the pvm_spawn that made the writer (PVM
 * prints it there too).
 *
 * The catcher's part: pvm_exit waits while writers it catches have not
 * ended (PVM does: "child task(s) still running.  waiting...").  A writer's
 * node also tells when it leaves PVM (OUT_EXITED, before its PvmTaskExit
 * notifications go), so that the line is said only for tasks still in
 * PVM, as PVM says it.  Output
 * that comes for a catcher that is gone (killed, or its program ended
 * without pvm_exit) goes, tagged, to its node's stdout (PVM's pvmd writes
 * it to its log); for one that called pvm_catchout(0) since, it is dropped
 * (PVM drops it too).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/directory.h"
#include "proc/proc.h"
#include "pvm/frames.h"
#include "pvm/move.h"
#include "pvm/pvm.h"
#include "pvm/remote.h"

enum { OUT_DATA, OUT_BEGIN, OUT_END, OUT_EXITED };

/* The largest piece of output in one frame. */
#define OUT_CHUNK 4096

/* A caught task's output at its catcher's node: its unfinished line. */
struct writer {
    struct writer *next;
    int tid, catcher;
    bool exited;          /* it left PVM (its output may still come) */
    size_t len, cap;
    char *line;
};

static struct writer *writers;
static upvm_waitq_t exitq; /* catchers in pvm_exit, waiting for EOFs */
static bool exitq_ready;

static struct writer **find(int tid)
{
    struct writer **w = &writers;
    while (*w && (*w)->tid != tid)
        w = &(*w)->next;
    return w;
}

/* Where the catcher's lines go now: its file; NULL: nowhere (it stopped
 * catching).  *gone: no such task here (the node's stdout, tagged). */
static FILE *target(int catcher, bool *tags, bool *gone)
{
    struct pvm_task *c = pvm_task_by_tid(catcher);
    *gone = c == NULL;
    if (!c) {
        *tags = true;
        return stdout;
    }
    *tags = c->opt[PvmShowTids] != 0;
    if (c->catch_which) {
        struct proc *p = c->ulp->ext[ULP_EXT_PROC];
        return p ? proc_output_stream(p, c->catch_which)
                 : c->catch_which == 1 ? stdout : stderr;
    }
    return c->catch_file;
}

static void put_line(FILE *f, bool tags, int tid, const char *s, size_t n)
{
    if (tags)
        fprintf(f, "[t%x] %.*s\n", (unsigned)tid, (int)n, s);
    else
        fprintf(f, "%.*s\n", (int)n, s);
}

static void writer_free(struct writer **link)
{
    struct writer *w = *link;
    *link = w->next;
    free(w->line);
    free(w);
    if (exitq_ready)
        (void)upvm_wake_all(&exitq);
}

/* What came for catcher (a task here, or gone) from writer. */
static void take(int catcher, int writer, int op, const char *data, size_t n)
{
    bool tags, gone;
    FILE *f = target(catcher, &tags, &gone);
    struct writer **link = find(writer), *w = *link;
    if (!w && op != OUT_END && op != OUT_EXITED) {
        w = calloc(1, sizeof *w);
        if (!w)
            return; /* no memory: this writer's output is lost */
        w->tid = writer;
        w->catcher = catcher;
        w->next = writers;
        writers = w;
        link = &writers;
        if (op == OUT_BEGIN && f && tags && !gone)
            fprintf(f, "[t%x] BEGIN\n", (unsigned)writer);
    }
    if (op == OUT_EXITED && w) {
        w->exited = true;
    } else if (op == OUT_DATA && w) {
        if (w->len + n > w->cap) {
            size_t cap = w->cap ? w->cap : 256;
            while (cap < w->len + n)
                cap *= 2;
            char *l = realloc(w->line, cap);
            if (!l)
                return;
            w->line = l;
            w->cap = cap;
        }
        memcpy(w->line + w->len, data, n);
        w->len += n;
        size_t start = 0;
        for (size_t i = 0; i < w->len; i++)
            if (w->line[i] == '\n') {
                if (f)
                    put_line(f, tags, writer, w->line + start, i - start);
                start = i + 1;
            }
        memmove(w->line, w->line + start, w->len - start);
        w->len -= start;
    } else if (op == OUT_END && w) {
        if (w->len && f) /* a last line without a newline: PVM ends it */
            put_line(f, tags, writer, w->line, w->len);
        if (f && tags && !gone)
            fprintf(f, "[t%x] EOF\n", (unsigned)writer);
        writer_free(link);
    }
    if (f)
        fflush(f);
}

/* From writer (a task of this node) to catcher, wherever it is. */
static void send_out(int catcher, int writer, int op, const char *data, size_t n)
{
    int node = pvm_multi() ? node_dir_route(&pvm_dir, catcher) : node_job_self();
    if (node < 0 || node == node_job_self() || !node_job_up(node)) {
        take(catcher, writer, op, data, n); /* here, or gone with its node */
        return;
    }
    do {
        size_t piece = n > OUT_CHUNK ? OUT_CHUNK : n;
        struct node_frame f = {K_OUTPUT, catcher, writer, op};
        node_post(node, &f, data, piece, NULL, 0);
        data += piece;
        n -= piece;
    } while (n > 0);
}

static void on_output(int src, const struct node_frame *f, const void *p, size_t len)
{
    if (!pvm_route_here(src, f, p, len, f->a))
        return;
    /* a program that joined a VM got a slot whose earlier program caught
     * output and is gone: not its terminal's; the VM's log has it (node 0
     * takes it as for any catcher gone, node/vm.h) */
    if (node_job_joined() && !pvm_task_by_tid(f->a)) {
        node_post(0, f, p, len, NULL, 0);
        return;
    }
    take(f->a, f->b, f->c, p, len);
}

/* ------------------------------------------------------------ the writer */

void pvm_output_spawned(struct pvm_task *t, int out)
{
    if (!out || !t->ulp->ext[ULP_EXT_PROC])
        return; /* thread-mode tasks write to the process's own streams */
    t->out_to = out;
    t->opt[PvmOutputTid] = out; /* its children write there too */
    t->opt[PvmOutputCode] = (int)0x80030005;
    t->opt[PvmOutputContext] = 0x7ffff;
    /* before it runs: its EOF comes even if it is killed before that */
    proc_output_catch(t->ulp->ext[ULP_EXT_PROC], (int[2]){out, t->tid});
    send_out(out, t->tid, OUT_BEGIN, NULL, 0);
}

void pvm_output_left(struct pvm_task *t)
{
    if (t->out_to)
        send_out(t->out_to, t->tid, OUT_EXITED, NULL, 0);
}

static void route_write(const int key[2], const char *data, size_t n)
{
    if (n)
        send_out(key[0], key[1], OUT_DATA, data, n);
}

static void route_end(const int key[2])
{
    send_out(key[0], key[1], OUT_END, NULL, 0);
}

/* ------------------------------------------------------------ the catcher */

int pvm_catchout(FILE *f)
{
    TASK_OR_FAIL(t, "pvm_catchout");
    struct proc *p = proc_current();
    t->opt[PvmOutputTid] = f ? t->tid : 0;
    t->opt[PvmOutputCode] = f ? (int)0x80030005 : 0;
    t->opt[PvmOutputContext] = f ? 0x7ffff : 0;
    /* its program's stdout or stderr: whatever stream that is when a
     * line comes (it is another after a move, and none after its end) */
    t->catch_which = p ? proc_output_which(p, f) : 0;
    t->catch_file = t->catch_which ? NULL : f;
    return 0;
}

static bool catching(int tid)
{
    for (struct writer *w = writers; w; w = w->next)
        if (w->catcher == tid)
            return true;
    return false;
}

/* Is a task that tid catches still in PVM (not yet exited)? */
static bool catching_live(int tid)
{
    for (struct writer *w = writers; w; w = w->next)
        if (w->catcher == tid && !w->exited)
            return true;
    return false;
}

void pvm_output_wait(struct pvm_task *t)
{
    if (!catching(t->tid) || (!t->catch_file && !t->catch_which))
        return;
    if (!exitq_ready) {
        upvm_waitq_init(&exitq, "pvm_exit");
        exitq_ready = true;
    }
    /* Said, as PVM says it, when tasks it catches still run.  One that
     * has left PVM (pvm_exit) but whose program has not ended yet is
     * waited for quietly: its EOF is on its way (PVM tells a task's exit
     * after its EOF, so a catcher that waited for PvmTaskExit finds no
     * output pending there). */
    if (catching_live(t->tid))
        fprintf(stderr, "libpvm [t%x]: child task(s) still running.  waiting...\n",
                (unsigned)t->tid);
    while (catching(t->tid))
        (void)core_block(&exitq, -1);
}

void pvm_output_node_gone(int n)
{
    for (struct writer **l = &writers; *l;) {
        if (pvm_tid_node((*l)->tid) == n)
            take((*l)->catcher, (*l)->tid, OUT_END, NULL, 0); /* frees *l */
        else
            l = &(*l)->next;
    }
}

void pvm_output_register(void)
{
    static const struct proc_output_router router = {
        .write = route_write, .end = route_end,
    };
    node_on_frame(K_OUTPUT, on_output);
    proc_output_set_router(&router);
}

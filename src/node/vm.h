/*
 * vm.h - the persistent virtual machine: a job that stays up, and programs
 * that join it from any shell of its user (docs/console.md).
 *
 * `upvm start` (or `upvm console` with none up) starts a job whose nodes
 * serve and never finish: the VM.  Its launcher listens on DIR/vm.sock
 * (DIR: the user's control directory, control_path.h: mode 0700, ours, so
 * no other user can reach it).  A program started from a shell while the
 * VM is up (`./master`, `upvm run`, a thread-mode program's first PVM
 * call) joins it, as a PVM task joins the running pvmd: it connects,
 * receives a free node slot and the descriptors of the job's shared
 * segment and slot bitmap (SCM_RIGHTS), maps them, and is one more node of
 * the VM, its tasks PVM tasks among the others.  The connection stays open
 * while it runs: it is how the launcher learns that it ended (EOF: the
 * kernel closes it when the process ends, however it ends), as pvmd learns
 * of a task's end from its socket; a program that ends normally says
 * "bye" first.  The slot is then used again (net.h, "Slots used again").
 *
 * Protocol (lines; the launcher's side is here, in vm.c):
 *   join <pid>      -> "ok <slot> <vm nodes> <launcher pid> <gen>" + 2 fds, or
 *                      "error <why>"; the connection then stays the node's
 *   bye <status>    -> (nothing) the program ends normally
 *   halt <tid>      -> the VM ends (every node and joined program)
 *   ping            -> "upvm-vm <launcher pid> <vm nodes> <joined>"
 *
 * The launcher is single-threaded: node_vm_pollfds gives it the
 * descriptors to poll beside its signals, node_vm_serve handles what they
 * say, calling back into the launcher (struct node_vm_launcher).
 */
#ifndef UPVM_NODE_VM_H
#define UPVM_NODE_VM_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "node/control_path.h"
#include "util/compiler.h"

/* The most programs joined at once. */
#define NODE_VM_JOINED_MAX 48

/* ------------------------------------------------------------ the launcher's side */

struct node_vm_launcher {
    void *ctx;
    /* A program (pid) asks to join: a free slot, now UP, or -errno
     * (-ENOSPC: none free). */
    int (*join)(void *ctx, pid_t pid);
    /* The program in slot ended (status: what it said with bye, else
     * NODE_VM_VANISHED): mark the slot GONE. */
    void (*left)(void *ctx, int slot, int status);
    /* End the VM: halt from task tid (0: from `upvm halt`). */
    void (*halt)(void *ctx, int tid, pid_t by);
};

/* The status of a program that ended without saying bye (it died). */
#define NODE_VM_VANISHED 256

/* Listen on DIR/vm.sock for the VM of launcher pid, with vm_nodes nodes of
 * its own and the descriptors joiners get.  0; -EEXIST: a VM answers
 * there already (said in why); -errno (why says). */
int node_vm_listen(long pid, int vm_nodes, int seg_fd, int map_fd, char *why,
                   size_t len) HIDDEN;

/* The descriptors to poll (listener, connections): how many were written
 * to p (at most max). */
int node_vm_pollfds(struct pollfd *p, int max) HIDDEN;

/* Handle what the descriptors node_vm_pollfds gave (polled, in p) say. */
void node_vm_serve(const struct pollfd *p, int n, const struct node_vm_launcher *l) HIDDEN;

/* The VM ends: every joined program gets sig (they are not our children:
 * the launcher cannot wait for them), no more connection is served.
 * Idempotent.  node_vm_remove, last of all: the socket's file goes (a
 * client waiting for the VM's end, `upvm halt`, sees it gone). */
void node_vm_close(int sig) HIDDEN;
void node_vm_remove(void) HIDDEN;

/* A node the launcher forked: the launcher's descriptors go (the socket
 * stays). */
void node_vm_drop(void) HIDDEN;

/* ------------------------------------------------------------ a program's side */

/* DIR/vm.sock; false when no directory name fits. */
bool node_vm_path(char *path, size_t len) HIDDEN;

/* Is a VM up for this user (its socket answers)?  UPVM_VM=off says no. */
bool node_vm_up(void) HIDDEN;

struct node_vm_joined {
    int slot, vm_nodes;
    long launcher;
    unsigned gen;        /* how many programs the slot held before */
    int seg_fd, map_fd;  /* the job's segment and slot bitmap (close-on-exec) */
    int conn;            /* kept open while this program runs (close-on-exec) */
};

/* Join the VM: 0 with *j filled; -errno with why (a sentence). */
int node_vm_join(struct node_vm_joined *j, char *why, size_t len) HIDDEN;

/* Say a line on the kept connection (bye, halt).  0 or -errno. */
int node_vm_say(int conn, const char *line) HIDDEN;

/* Ask the VM for something without joining it (ping, halt): the reply's
 * first line in reply (may be empty).  0, or -errno (-ENOENT, -ECONNREFUSED:
 * no VM up). */
int node_vm_ask(const char *request, char *reply, size_t len) HIDDEN;

#endif /* UPVM_NODE_VM_H */

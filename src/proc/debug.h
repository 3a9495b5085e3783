/*
 * debug.h - the list of process-mode program images a debugger reads.
 *
 * The loader maps each process-mode task's copy of its program itself, at
 * the base of the task's slot: glibc's link map (r_debug), and so gdb,
 * never hear of it.  As glibc does for libraries, the node keeps a list of
 * those images in a struct a debugger finds by its symbol, and calls an
 * empty function after every change, on which a debugger puts a breakpoint
 * (tools/gdb/upvm.py adds each image's symbols at its base with
 * add-symbol-file -o, and drops them when the image goes).
 *
 * The list holds one entry per task that runs its program here: added
 * when the task is made (spawn) or arrives (migration), removed when it
 * ends or leaves.  A slot kept loaded for the next task of the same program
 * (proc.c's warm slots) is not in it: nothing runs there.
 *
 * The layout is the contract with the debugger: fields are only ever
 * added at the end, and `version` says which are there.  Threading: the
 * node's scheduler thread (one writer); a debugger reads it with the
 * process stopped, and `state` says whether it stopped in mid-change.
 */
#ifndef UPVM_PROC_DEBUG_H
#define UPVM_PROC_DEBUG_H

#include <stdint.h>

#include "core/core.h"
#include "loader/loader.h"

#define UPVM_DEBUG_VERSION 1

enum upvm_debug_state_kind {
    UPVM_DEBUG_CONSISTENT = 0, /* the list is complete */
    UPVM_DEBUG_CHANGING = 1,   /* an entry is being added or removed */
};

enum upvm_debug_event {
    UPVM_DEBUG_NONE = 0,
    UPVM_DEBUG_ADDED = 1,   /* last_base's image came (spawn, arrival) */
    UPVM_DEBUG_REMOVED = 2, /* last_base's image went (end, departure) */
};

/* One program image: the file's absolute path, where its vaddr 0 is,
 * and the ULP that runs it (its PVM task, if any, hangs off the ULP). */
struct upvm_debug_image {
    uint64_t base;
    uint64_t span; /* bytes from base the image covers */
    const char *path;
    int32_t ulp;  /* the ULP's id on this node */
    int32_t slot; /* the slot of the job's window it is in */
};

struct upvm_debug_list {
    int32_t version;     /* UPVM_DEBUG_VERSION */
    int32_t state;       /* enum upvm_debug_state_kind */
    uint64_t generation; /* + 1 per change: a debugger that saw g - 1 needs only last_* */
    struct upvm_debug_image *images; /* count entries, in no order */
    uint32_t count;
    int32_t last_event; /* enum upvm_debug_event, of the last change */
    uint64_t last_base; /* the base of the image it concerned */
};

/* The list and the function called after each change (debug.c): names
 * a debugger looks up, exported from libupvm. */
extern struct upvm_debug_list upvm_debug;
void upvm_debug_state(void);

/* The image of u's program, at base in slot, runs here now / no more.
 * Never fails the caller: without memory for the list the image is not
 * listed (a debugger then does not see it; said once). */
void proc_debug_add(const struct loader_image *img, uintptr_t base, int slot,
                    const struct ulp *u) HIDDEN;
void proc_debug_remove(int slot) HIDDEN;

#endif /* UPVM_PROC_DEBUG_H */

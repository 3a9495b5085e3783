/*
 * debug.c - the list of program images a debugger reads (debug.h).
 *
 * The entries are dense (a debugger reads `count` of them in one go); an
 * entry removed takes the last one's place, and a slot -> entry index
 * finds an entry in constant time (thousands of tasks come and go).
 */
#include <stdio.h>
#include <stdlib.h>

#include "mem/mem.h"
#include "util/compiler.h"
#include "proc/debug.h"

/* What a debugger finds by name: the list, and the function it stops on
 * after each change.  Exported (not hidden) so that they stay in the
 * library's dynamic symbol table, also when it is stripped. */
__attribute__((visibility("default"))) struct upvm_debug_list upvm_debug = {
    .version = UPVM_DEBUG_VERSION,
};

/* Empty, but never inlined nor merged away: the debugger's breakpoint. */
__attribute__((visibility("default"))) NOIPA void upvm_debug_state(void)
{
    __asm__ volatile("" ::: "memory");
}

static uint32_t capacity;
static int32_t *index_of_slot; /* per slot: entry index + 1, 0 for none */
static uint32_t nslots;

/* Room for one more entry and the slot index: false if there is none. */
static bool reserve(void)
{
    if (!index_of_slot) {
        nslots = mem_window()->nslots;
        index_of_slot = calloc(nslots, sizeof *index_of_slot);
        if (!index_of_slot)
            return false;
    }
    if (upvm_debug.count < capacity)
        return true;
    uint32_t cap = capacity ? capacity * 2 : 64;
    struct upvm_debug_image *grown = realloc(upvm_debug.images, cap * sizeof *grown);
    if (!grown)
        return false;
    upvm_debug.images = grown;
    capacity = cap;
    return true;
}

static void changed(int event, uint64_t base)
{
    upvm_debug.last_event = event;
    upvm_debug.last_base = base;
    upvm_debug.generation++;
    upvm_debug.state = UPVM_DEBUG_CONSISTENT;
    upvm_debug_state();
}

void proc_debug_add(const struct loader_image *img, uintptr_t base, int slot, const struct ulp *u)
{
    upvm_debug.state = UPVM_DEBUG_CHANGING;
    if (!reserve() || slot < 0 || (uint32_t)slot >= nslots) {
        static bool said;
        if (!said)
            fprintf(stderr, "upvm: no memory for the debugger's list of program images: "
                            "a debugger will not see some tasks' programs\n");
        said = true;
        upvm_debug.state = UPVM_DEBUG_CONSISTENT;
        return;
    }
    if (index_of_slot[slot]) /* listed still (cannot happen): replaced */
        proc_debug_remove(slot);
    uint32_t i = upvm_debug.count;
    upvm_debug.images[i] = (struct upvm_debug_image){
        .base = base,
        .span = loader_image_span(img),
        .path = loader_image_abspath(img),
        .ulp = u->id,
        .slot = slot,
    };
    upvm_debug.count = i + 1;
    index_of_slot[slot] = (int32_t)i + 1;
    changed(UPVM_DEBUG_ADDED, base);
}

void proc_debug_remove(int slot)
{
    if (!index_of_slot || slot < 0 || (uint32_t)slot >= nslots || !index_of_slot[slot])
        return;
    upvm_debug.state = UPVM_DEBUG_CHANGING;
    uint32_t i = (uint32_t)index_of_slot[slot] - 1, last = upvm_debug.count - 1;
    uint64_t base = upvm_debug.images[i].base;
    index_of_slot[slot] = 0;
    if (i != last) {
        upvm_debug.images[i] = upvm_debug.images[last];
        index_of_slot[upvm_debug.images[i].slot] = (int32_t)i + 1;
    }
    upvm_debug.count = last;
    changed(UPVM_DEBUG_REMOVED, base);
}

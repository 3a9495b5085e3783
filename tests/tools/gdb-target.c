/* gdb-target.c - a node with ULPs in known states, for tests/tools/test-gdb.sh:
 * two blocked in blocked_in_here on the queue "gate", one asleep, main in
 * all_parked (where the test's breakpoint stops). */
#include <upvm.h>

static upvm_waitq_t gate = UPVM_WAITQ_INITIALIZER(gate, "gate");

void blocked_in_here(void *arg);
void napper(void *arg);
void all_parked(void);

void blocked_in_here(void *arg) { (void)upvm_wait(&gate, -1); }
void napper(void *arg) { (void)upvm_sleep_ns(50 * 1000000); }
void __attribute__((noinline)) all_parked(void) { __asm__ volatile(""); }

int main(void)
{
    upvm_attr_t named = UPVM_ATTR_INIT;
    named.name = "sleepy";
    if (upvm_create(blocked_in_here, NULL, NULL) < 0 ||
        upvm_create(blocked_in_here, NULL, NULL) < 0 || upvm_create(napper, NULL, &named) < 0)
        return 1;
    upvm_yield(); /* everyone runs up to where it waits */
    all_parked();
    upvm_wake_all(&gate);
    return upvm_join_all();
}

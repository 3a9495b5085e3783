/*
 * deepstack.c N [move] - recursion that needs about N MiB of stack
 * (default 12): 2 KiB a level, less than a page, so that the level that
 * overflows touches the guard page below the stack (a frame bigger than
 * the guard could step over it).  With "move", the task first migrates to
 * node 1 (its stack must keep its size there).  Prints "deep OK" when it
 * got to the bottom.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <upvm.h>

static int descend(int levels)
{
    volatile char frame[2 * 1024];
    memset((char *)frame, levels & 0xff, sizeof frame);
    if (levels == 0)
        return frame[0];
    return descend(levels - 1) + frame[sizeof frame - 1];
}

int main(int argc, char **argv)
{
    int mib = argc > 1 ? atoi(argv[1]) : 12;
    if (argc > 2 && strcmp(argv[2], "move") == 0 && upvm_migrate(0, 1) != 0) {
        printf("cannot move: %s\n", upvm_migrate_error());
        return 1;
    }
    int sum = descend(mib * 512);
    printf("deep OK on node %d (%d)\n", upvm_node_of(0), sum);
    return 0;
}

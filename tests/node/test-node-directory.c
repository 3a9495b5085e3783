/*
 * test-node-directory.c - the tid -> node directory: homes from host
 * parts, routing to the known place or home, learning and forgetting,
 * forwarding decisions, and a large randomized run against a plain array.
 */
#include <errno.h>
#include <stdlib.h>

#include "harness.h"
#include "node/directory.h"

#define TID(node, local) ((((node) + 1) << 18) | (local))

TEST(homes_and_defaults)
{
    struct node_dir d;
    CHECK_EQ(node_dir_init(&d, 1, 3), 0);
    CHECK_EQ(node_dir_home(&d, TID(0, 1)), 0);
    CHECK_EQ(node_dir_home(&d, TID(2, 77)), 2);
    CHECK_EQ(node_dir_home(&d, TID(3, 1)), -1); /* no node 3 in this job */
    CHECK_EQ(node_dir_home(&d, 0), -1);
    CHECK_EQ(node_dir_home(&d, -5), -1);
    CHECK_EQ(node_dir_route(&d, TID(2, 5)), 2); /* unknown: its home */
    CHECK_EQ(node_dir_init(&d, 3, 3), -EINVAL);
    CHECK_EQ(node_dir_init(&d, 0, 0), -EINVAL);
    node_dir_fini(&d);
}

TEST(learn_and_forget)
{
    struct node_dir d;
    CHECK_EQ(node_dir_init(&d, 0, 3), 0);
    int t = TID(0, 9);
    CHECK_EQ(node_dir_set(&d, t, 2), 0); /* spawned (or moved) to node 2 */
    CHECK_EQ(node_dir_route(&d, t), 2);
    CHECK_EQ(node_dir_set(&d, t, 1), 0); /* moved on */
    CHECK_EQ(node_dir_route(&d, t), 1);
    node_dir_forget(&d, t);
    CHECK_EQ(node_dir_route(&d, t), 0);
    CHECK_EQ(node_dir_set(&d, t, 3), -EINVAL);
    CHECK_EQ(node_dir_set(&d, TID(5, 1), 0), -EINVAL);
    node_dir_fini(&d);
}

TEST(forwarding)
{
    struct node_dir d;
    CHECK_EQ(node_dir_init(&d, 1, 3), 0);
    int t = TID(0, 4); /* home: node 0 */
    /* a message from node 2 for a task we know is on node 0: forward */
    CHECK_EQ(node_dir_set(&d, t, 0), 0);
    CHECK_EQ(node_dir_next_hop(&d, t, 2), 0);
    /* from the home back to the home: a migration's marker does that */
    CHECK_EQ(node_dir_next_hop(&d, t, 0), 0);
    CHECK_EQ(node_dir_route(&d, t), 0);
    /* a task that lives here */
    int local = TID(1, 3);
    CHECK_EQ(node_dir_set(&d, local, 1), 0);
    CHECK_EQ(node_dir_next_hop(&d, local, 0), 1);
    CHECK_EQ(node_dir_next_hop(&d, TID(7, 1), 0), -1); /* not in this job */
    node_dir_fini(&d);
}

TEST(random_against_array)
{
    enum { N = 200000, NODES = 4 };
    struct node_dir d;
    CHECK_EQ(node_dir_init(&d, 0, NODES), 0);
    signed char *where = malloc(N); /* -1: not in the table */
    CHECK(where != NULL);
    for (int i = 0; i < N; i++)
        where[i] = -1;
    unsigned s = 12345;
    for (int op = 0; op < 1000000; op++) {
        s = s * 1103515245u + 12345u;
        int i = (int)((s >> 8) % N);
        int tid = TID(i % NODES, i / NODES + 1);
        if ((s >> 4) % 3 == 0) {
            node_dir_forget(&d, tid);
            where[i] = -1;
        } else {
            int node = (int)((s >> 12) % NODES);
            CHECK_EQ(node_dir_set(&d, tid, node), 0);
            where[i] = (signed char)node;
        }
        if (op % 997 == 0) {
            int k = (int)((s >> 3) % N);
            int ktid = TID(k % NODES, k / NODES + 1);
            CHECK_EQ(node_dir_route(&d, ktid), where[k] >= 0 ? where[k] : k % NODES);
        }
    }
    for (int i = 0; i < N; i++)
        CHECK_EQ(node_dir_route(&d, TID(i % NODES, i / NODES + 1)),
                 where[i] >= 0 ? where[i] : i % NODES);
    free(where);
    node_dir_fini(&d);
}

HARNESS_MAIN()

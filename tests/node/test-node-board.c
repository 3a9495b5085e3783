/*
 * test-node-board.c - a node's task table in the shared segment
 * (src/node/board.h): what the report on a dead node lists.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "net/net.h"
#include "node/board.h"

static _Alignas(64) unsigned char board[NET_BOARD_BYTES];

/* What node_board_print writes, as one string (static buffer). */
static const char *printed(const char *prefix)
{
    static char text[16384];
    text[0] = '\0';
    FILE *f = fmemopen(text, sizeof text, "w");
    CHECK(f != NULL);
    node_board_print(f, board, prefix);
    fclose(f);
    return text;
}

static void fresh(void)
{
    memset(board, 0, sizeof board);
    node_board_open(board);
}

TEST(lists_live_tasks_in_tid_order)
{
    fresh();
    CHECK_EQ(node_board_pid(board), getpid());
    node_board_add(0x80003, "crasher");
    node_board_add(0x80001, "sleeper");
    node_board_add(0x80002, "sleeper");
    node_board_add(0x80004, NULL);
    node_board_remove(0x80002);
    CHECK_EQ(node_board_ntasks(board), 3);
    CHECK(strcmp(printed("P"), "P t80001/sleeper t80003/crasher t80004\n") == 0);
}

TEST(no_task_prints_nothing)
{
    fresh();
    node_board_add(0x40001, "main");
    node_board_remove(0x40001);
    CHECK_EQ(node_board_ntasks(board), 0);
    CHECK(strcmp(printed("P"), "") == 0);
}

/* Tids that hash to the same entry are probed past, and removed right. */
TEST(colliding_tids)
{
    fresh();
    int a = 0x80001, b = a + NODE_BOARD_TASKS, c = a + 2 * NODE_BOARD_TASKS;
    node_board_add(a, "a");
    node_board_add(b, "b");
    node_board_add(c, "c");
    node_board_remove(b);
    char want[128];
    snprintf(want, sizeof want, "P t%x/a t%x/c\n", (unsigned)a, (unsigned)c);
    CHECK(strcmp(printed("P"), want) == 0);
}

/* More tasks than entries: all counted, 60 listed, the rest said. */
TEST(many_tasks)
{
    fresh();
    for (int i = 1; i <= 300; i++)
        node_board_add(0xc0000 + i, "w");
    CHECK_EQ(node_board_ntasks(board), 300);
    const char *text = printed("P");
    CHECK(strncmp(text, "P tc0001/w tc0002/w", 19) == 0);
    CHECK_STR_CONTAINS(text, "tc003c/w\nP ... and 240 more\n");
    for (int i = 1; i <= 300; i++)
        node_board_remove(0xc0000 + i);
    CHECK_EQ(node_board_ntasks(board), 0);
    for (int i = 0; i < NODE_BOARD_TASKS; i++) /* every entry free again */
        CHECK_EQ(((const int32_t *)(board + 32))[i * 8], 0);
}

TEST(long_names_are_cut)
{
    fresh();
    node_board_add(0x80001, "a-program-name-much-longer-than-an-entry");
    CHECK(strcmp(printed("P"), "P t80001/a-program-name-much-longer-\n") == 0);
}

/* Without a board (a job of one node) every call is a no-op. */
TEST(no_board)
{
    memset(board, 0, sizeof board);
    node_board_open(NULL);
    node_board_add(0x40001, "main");
    node_board_remove(0x40001);
    CHECK_EQ(node_board_ntasks(board), 0);
    CHECK_EQ(node_board_ntasks(NULL), 0);
    CHECK_EQ(node_board_pid(NULL), 0);
}

HARNESS_MAIN()

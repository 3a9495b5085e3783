/*
 * test-node-launch.c - node processes of one job: they run and talk over
 * the transport, their statuses make the job's, a node dying of a signal
 * ends the others, SIGINT to the launcher ends them all, and no process is
 * left behind in any case.
 */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "net/net.h"
#include "node/launch.h"

/* Pids of the nodes, written by each node into memory the test shares. */
static volatile pid_t *node_pids;

static void share_node_pids(void)
{
    node_pids = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(node_pids != MAP_FAILED);
}
HARNESS_BEFORE(share_node_pids)

static int got;
static void count_frame(void *ctx, int src, const void *data, size_t len)
{
    got++;
}

/* Every node sends one frame to every other and receives one from each. */
static int exchange(int node, void *arg)
{
    node_pids[node] = getpid();
    int n = net_nnodes();
    for (int k = 0; k < n; k++)
        if (k != node)
            CHECK_EQ(net_send(k, &node, sizeof node), 0);
    while (got < n - 1)
        if (net_poll(count_frame, NULL, 16) == 0)
            (void)net_wait(-1);
    return (int)(intptr_t)arg == node ? 3 : 0; /* the one named fails */
}

#define DEADLINE_US (20 * 1000 * 1000)

/* Until every node of n has said its pid, at most DEADLINE_US. */
static bool all_started(int n)
{
    for (int t = 0; t < DEADLINE_US; t += 1000) {
        int i = 0;
        while (i < n && node_pids[i] > 0)
            i++;
        if (i == n)
            return true;
        usleep(1000);
    }
    return false;
}

/* Wait for frames that never come; node `arg` kills itself once every
 * node of the job (3) has started. */
static int wait_or_die(int node, void *arg)
{
    node_pids[node] = getpid();
    if ((int)(intptr_t)arg == node) {
        (void)all_started(3);
        raise(SIGKILL);
    }
    for (;;)
        (void)net_wait(-1);
    return 0; /* not reached */
}

/* Every node of n is gone (a node killed by PDEATHSIG is reaped by init,
 * a moment later): polled, at most DEADLINE_US. */
static void check_all_gone(int n)
{
    for (int t = 0; t < DEADLINE_US; t += 1000) {
        int i = 0;
        while (i < n && node_pids[i] > 0 && kill(node_pids[i], 0) == -1 && errno == ESRCH)
            i++;
        if (i == n)
            break;
        usleep(1000);
    }
    for (int i = 0; i < n; i++)
        CHECK(node_pids[i] > 0 && kill(node_pids[i], 0) == -1 && errno == ESRCH);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

TEST(nodes_run_and_talk)
{
    struct node_exit ex[3];
    CHECK_EQ(node_launch(3, exchange, (void *)(intptr_t)-1, ex), 0);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(ex[i].status, 0);
        CHECK_EQ(ex[i].pid, node_pids[i]);
    }
    check_all_gone(3);
}

TEST(failing_node_status)
{
    struct node_exit ex[2];
    CHECK_EQ(node_launch(2, exchange, (void *)(intptr_t)1, ex), 3);
    CHECK_EQ(ex[0].status, 0);
    CHECK_EQ(ex[1].status, 3);
}

TEST(dead_node_ends_the_job)
{
    struct node_exit ex[3];
    double t0 = now_s();
    int rc = node_launch(3, wait_or_die, (void *)(intptr_t)1, ex);
    CHECK(now_s() - t0 < 3.0); /* noticed and ended at once */
    CHECK_EQ(ex[1].signal, SIGKILL);
    CHECK_EQ(rc, 128 + SIGTERM); /* node 0 was ended by the launcher */
    CHECK_EQ(ex[0].signal, SIGTERM);
    CHECK_EQ(ex[2].signal, SIGTERM);
    check_all_gone(3);
}

TEST(sigint_to_the_launcher)
{
    pid_t launcher = fork();
    if (launcher == 0)
        _exit(node_launch(2, wait_or_die, (void *)(intptr_t)-1, NULL) & 0xff);
    CHECK(all_started(2));
    CHECK_EQ(kill(launcher, SIGINT), 0);
    int status;
    CHECK_EQ(waitpid(launcher, &status, 0), launcher);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 128 + SIGTERM);
    check_all_gone(2);
}

HARNESS_MAIN()

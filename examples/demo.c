/*
 * demo.c - a first look at UPVM's ULPs: many virtual processors in one OS
 * process, switching without entering the kernel.
 *
 *   1. A ring of N ULPs passes a token around, each hop a wait-queue
 *      hand-off (the way a PVM receive meets a send).
 *   2. N ULPs sleep for different times at once; they wake in order and
 *      the idle node sleeps in the kernel instead of spinning.
 *
 * Usage: demo [ULPs] [laps]      (default 10000 ULPs, 10 laps)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <upvm.h>

struct station {
    upvm_waitq_t arrive; /* where this ULP waits for the token */
    int has_token;
};

static struct station *ring;
static int nulps, laps;
static long hops;
static uint64_t lap1_end; /* when ULP 0 got the token back the first time */

static void ring_member(int me, void *arg)
{
    struct station *next = &ring[(me + 1) % nulps];
    for (int lap = 0; lap < laps; lap++) {
        while (!ring[me].has_token)
            upvm_wait(&ring[me].arrive, -1);
        if (me == 0 && lap == 1)
            lap1_end = upvm_now_ns();
        ring[me].has_token = 0;
        hops++;
        next->has_token = 1;
        upvm_wake_one_handoff(&next->arrive); /* the next one runs at once */
    }
}

static int woke_in_order = 1;
static uint64_t last_wake;
static void sleeper(int ordinal, void *arg)
{
    upvm_sleep_ns((uint64_t)(ordinal + 1) * 100000); /* 0.1 ms apart */
    uint64_t now = upvm_now_ns();
    if (now < last_wake)
        woke_in_order = 0;
    last_wake = now;
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    nulps = argc > 1 ? atoi(argv[1]) : 10000;
    laps = argc > 2 ? atoi(argv[2]) : 10;
    if (nulps < 2 || laps < 1) {
        fprintf(stderr, "usage: %s [ULPs >= 2] [laps >= 1]\n", argv[0]);
        return 2;
    }
    printf("UPVM demo: %d ULPs in one OS process (pid %d), default stack %zu KiB\n\n",
           nulps, (int)getpid(), upvm_default_stack_size() / 1024);

    ring = calloc((size_t)nulps, sizeof *ring);
    if (!ring)
        return 1;
    for (int i = 0; i < nulps; i++)
        upvm_waitq_init(&ring[i].arrive, "ring station");
    ring[0].has_token = 1;

    uint64_t t0 = upvm_now_ns();
    int rc = upvm_spawn_func(ring_member, NULL, nulps, NULL, NULL);
    if (rc < 0) {
        fprintf(stderr, "demo: cannot create %d ULPs: error %d\n", nulps, rc);
        return 1;
    }
    uint64_t t1 = upvm_now_ns();
    upvm_join_all();
    uint64_t t2 = upvm_now_ns();
    printf("ring:    created %d ULPs in %.1f ms (%.0f ns each)\n", nulps, (t1 - t0) / 1e6,
           (double)(t1 - t0) / nulps);
    printf("         token went %d times around: %ld hops in %.1f ms\n", laps, hops,
           (t2 - t1) / 1e6);
    if (laps > 1)
        printf("         first lap %.0f ns per hop (each ULP's first run touches its stack),\n"
               "         later laps %.0f ns per hop\n",
               (double)(lap1_end - t1) / nulps,
               (double)(t2 - lap1_end) / ((double)nulps * (laps - 1)));

    int nsleep = nulps < 1000 ? nulps : 1000;
    double c0 = cpu_ms();
    t0 = upvm_now_ns();
    if (upvm_spawn_func(sleeper, NULL, nsleep, NULL, NULL) < 0)
        return 1;
    upvm_join_all();
    t1 = upvm_now_ns();
    printf("sleep:   %d ULPs slept 0.1 .. %.1f ms at once: done in %.1f ms, woke %s,\n"
           "         CPU used while waiting: %.1f ms (an idle node sleeps in the kernel)\n",
           nsleep, nsleep * 0.1, (t1 - t0) / 1e6, woke_in_order ? "in order" : "OUT OF ORDER",
           cpu_ms() - c0);

    printf("\nall ULPs exited; %d left (main)\n", upvm_count());
    free(ring);
    return woke_in_order && hops == (long)nulps * laps ? 0 : 1;
}

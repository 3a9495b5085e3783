/*
 * test-switch.c - the arch layer alone (src/arch/<arch>/ctx.S compiled into
 * this test): values passed through a switch, callee-saved registers, the
 * floating-point control state kept per context, and the bottom frame that
 * stops unwinders.
 */
#include <execinfo.h>
#include <fenv.h>
#include <stdint.h>
#include <stdlib.h>

#include "arch/arch.h"
#include "harness.h"

static struct arch_ctx main_ctx, other_ctx;
static char *other_stack;
#define STACK_SIZE (256 * 1024)

static void *top_of(char *stack) { return stack + STACK_SIZE; }

static void alloc_stack(void)
{
    other_stack = aligned_alloc(64, STACK_SIZE);
    CHECK(other_stack);
}
HARNESS_BEFORE(alloc_stack)

/* ---- pass values back and forth */
static void echo_entry(void *pass)
{
    uintptr_t v = (uintptr_t)pass;
    for (;;)
        v = (uintptr_t)arch_ctx_switch(&other_ctx, &main_ctx, (void *)(v * 2));
}

TEST(values_pass_through_switches)
{
    void *r = arch_ctx_start(&main_ctx, top_of(other_stack), echo_entry, (void *)21);
    CHECK_EQ((uintptr_t)r, 42);
    for (uintptr_t i = 1; i < 1000; i++)
        CHECK_EQ((uintptr_t)arch_ctx_switch(&main_ctx, &other_ctx, (void *)i), 2 * i);
}

/* ---- callee-saved registers survive: keep many values live across it */
static volatile long seed = 7;
static void bounce_entry(void *pass)
{
    for (;;)
        arch_ctx_switch(&other_ctx, &main_ctx, NULL);
}

TEST(callee_saved_registers_survive)
{
    arch_ctx_start(&main_ctx, top_of(other_stack), bounce_entry, NULL);
    long a = seed, b = a * 3, c = b + 11, d = c * 5, e = d - 2, f = e ^ 0x55;
    for (int i = 0; i < 100; i++) {
        arch_ctx_switch(&main_ctx, &other_ctx, NULL);
        a += 1; b += 2; c += 3; d += 4; e += 5; f += 6;
    }
    CHECK_EQ(a, 7 + 100);
    CHECK_EQ(b, 21 + 200);
    CHECK_EQ(c, 32 + 300);
    CHECK_EQ(d, 160 + 400);
    CHECK_EQ(e, 158 + 500);
    CHECK_EQ(f, (158 ^ 0x55) + 600);
}

/* ---- MXCSR and the x87 control word belong to the context */
static unsigned mxcsr(void)
{
    unsigned v;
    __asm__ volatile("stmxcsr %0" : "=m"(v));
    return v;
}
static unsigned short x87cw(void)
{
    unsigned short v;
    __asm__ volatile("fnstcw %0" : "=m"(v));
    return v;
}

static void rounding_entry(void *pass)
{
    fesetround(FE_UPWARD); /* sets both MXCSR and the x87 control word */
    unsigned mine = mxcsr();
    unsigned short mine87 = x87cw();
    for (;;) {
        arch_ctx_switch(&other_ctx, &main_ctx, NULL);
        CHECK_EQ(mxcsr(), mine);
        CHECK_EQ(x87cw(), mine87);
        CHECK_EQ(fegetround(), FE_UPWARD);
    }
}

TEST(fp_control_state_is_per_context)
{
    fesetround(FE_TONEAREST);
    unsigned mine = mxcsr();
    unsigned short mine87 = x87cw();
    arch_ctx_start(&main_ctx, top_of(other_stack), rounding_entry, NULL);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(mxcsr(), mine);
        CHECK_EQ(x87cw(), mine87);
        CHECK_EQ(fegetround(), FE_TONEAREST);
        arch_ctx_switch(&main_ctx, &other_ctx, NULL);
    }
}

/* ---- unwinding from inside a context ends at its bottom frame */
static int frames_seen;
static void unwind_entry(void *pass)
{
    void *frames[64];
    frames_seen = backtrace(frames, 64);
    arch_ctx_switch(&other_ctx, &main_ctx, NULL);
    abort(); /* never resumed */
}

TEST(unwinder_stops_at_the_bottom_frame)
{
    arch_ctx_start(&main_ctx, top_of(other_stack), unwind_entry, NULL);
    /* unwind_entry and the bottom frame, maybe backtrace's own: never the
     * 64 a runaway walk above the stack top would produce, and no crash. */
    CHECK(frames_seen >= 2 && frames_seen <= 4);
}

HARNESS_MAIN()

/*
 * arch.h - the machine-dependent surface: switching register contexts.
 *
 * One implementation per architecture lives in src/arch/<arch>/ctx.S and the
 * build compiles exactly one.  Everything above this layer sees only these
 * calls, so an aarch64 ctx.S can be added beside x86_64/ without touching
 * the scheduler.
 *
 * A context is just a saved stack pointer: the callee-saved registers, the
 * floating-point control state (x86_64: MXCSR and the x87 control word) and
 * the resume address are pushed on the context's own stack by a switch.
 * Caller-saved registers need no saving: a switch is an ordinary call.
 */
#ifndef UPVM_ARCH_H
#define UPVM_ARCH_H

struct arch_ctx {
    void *sp; /* saved stack pointer; valid only while the context is off-CPU */
};

/*
 * arch_ctx_switch - save the running context into *from and resume *to.
 * `to` must have been saved by arch_ctx_switch or arch_ctx_start.  The value
 * `pass` comes out as the return value of the call that suspended `to`.
 * Returns, later, the value passed by whoever resumes `from`.
 */
void *arch_ctx_switch(struct arch_ctx *from, struct arch_ctx *to, void *pass);

/*
 * arch_ctx_start - save the running context into *from and start a fresh
 * context on the stack whose highest address (16-byte aligned) is
 * stack_top, calling entry(pass) there.  entry must never return (it
 * switches away for good); the frame below it marks the end of the call
 * chain for debuggers and unwinders.  Returns like arch_ctx_switch.
 * Nothing is written to the new stack before entry runs, so creating a
 * context costs no page fault until it first runs.
 */
void *arch_ctx_start(struct arch_ctx *from, void *stack_top,
                     void (*entry)(void *pass), void *pass);

#endif /* UPVM_ARCH_H */

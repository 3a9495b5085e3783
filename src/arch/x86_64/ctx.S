/*
 * ctx.S - x86_64 System V context switch.
 *
 * Saved frame, on the suspended context's own stack (sp points at +0):
 *
 *    +0   MXCSR (4 bytes)         SSE control/status (rounding, exceptions)
 *    +4   x87 control word (2)    +6: 2 bytes padding
 *    +8   r15
 *   +16   r14
 *   +24   r13
 *   +32   r12
 *   +40   rbx
 *   +48   rbp
 *   +56   return address          resumed with ret
 *
 * The resume ends in `ret`, not `pop; jmp`.  A `pop; jmp` leaves the CPU's
 * return stack buffer one entry deep, so the *next* return of the resumed
 * code (out of yield, out of recv) mispredicts: measured here, a 2-ULP
 * yield costs ~25 ns with pop+jmp and ~13 ns with ret (docs/design-notes.md).
 * With ret, the prediction is right whenever both sides suspended at the same
 * call site, which is the common case (every ULP suspends inside the same
 * few scheduler functions).
 */
        .text

/* Push the frame drawn above and store its address in from->sp (rdi).
 * Shared by both entry points: one definition of the frame's layout. */
        .macro SAVE_CONTEXT
        pushq   %rbp
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset rbp, 0
        pushq   %rbx
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset rbx, 0
        pushq   %r12
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset r12, 0
        pushq   %r13
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset r13, 0
        pushq   %r14
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset r14, 0
        pushq   %r15
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset r15, 0
        subq    $8, %rsp
        .cfi_adjust_cfa_offset 8
        stmxcsr (%rsp)
        fnstcw  4(%rsp)
        movq    %rsp, (%rdi)            /* from->sp */
        .endm

/* void *arch_ctx_switch(struct arch_ctx *from, struct arch_ctx *to, void *pass)
 *                       rdi                     rsi                    rdx     */
        .globl  arch_ctx_switch
        .hidden arch_ctx_switch
        .type   arch_ctx_switch, @function
        .p2align 4
arch_ctx_switch:
        .cfi_startproc
        SAVE_CONTEXT                    /* into from (rdi) */

        movl    (%rsp), %r8d            /* our MXCSR ... */
        movzwl  4(%rsp), %r9d           /* ... and x87 control word */

        movq    (%rsi), %rsp            /* to->sp: now on the other stack */
        .globl  arch_ctx_resume_pc      /* where a suspended context resumes: */
        .hidden arch_ctx_resume_pc      /* unwind from here with sp = ctx.sp */
arch_ctx_resume_pc:
        .cfi_remember_state
        /* Loading the control registers costs more than comparing them,
         * and contexts almost always share one setting. */
        cmpl    (%rsp), %r8d
        jne     .Lload_mxcsr
.Lmxcsr_done:
        cmpw    4(%rsp), %r9w
        jne     .Lload_fpucw
.Lfpucw_done:
        addq    $8, %rsp
        .cfi_adjust_cfa_offset -8
        popq    %r15
        .cfi_adjust_cfa_offset -8
        .cfi_restore r15
        popq    %r14
        .cfi_adjust_cfa_offset -8
        .cfi_restore r14
        popq    %r13
        .cfi_adjust_cfa_offset -8
        .cfi_restore r13
        popq    %r12
        .cfi_adjust_cfa_offset -8
        .cfi_restore r12
        popq    %rbx
        .cfi_adjust_cfa_offset -8
        .cfi_restore rbx
        popq    %rbp
        .cfi_adjust_cfa_offset -8
        .cfi_restore rbp
        movq    %rdx, %rax              /* pass -> return value over there */
        ret
        .cfi_restore_state
.Lload_mxcsr:
        ldmxcsr (%rsp)
        jmp     .Lmxcsr_done
.Lload_fpucw:
        fldcw   4(%rsp)
        jmp     .Lfpucw_done
        .cfi_endproc
        .size   arch_ctx_switch, .-arch_ctx_switch

/* void *arch_ctx_start(struct arch_ctx *from, void *stack_top,
 *                      rdi                     rsi
 *                      void (*entry)(void *), void *pass)
 *                      rdx                    rcx                            */
        .globl  arch_ctx_start
        .hidden arch_ctx_start
        .type   arch_ctx_start, @function
        .p2align 4
arch_ctx_start:
        .cfi_startproc
        SAVE_CONTEXT                    /* into from (rdi) */

        movq    %rsi, %rsp              /* fresh stack, 16-byte aligned */
        movq    %rcx, %rdi              /* entry's argument */
        jmp     arch_ctx_bottom
        .cfi_endproc
        .size   arch_ctx_start, .-arch_ctx_start

/* The outermost frame of every ULP.  Its CFI says "no caller", so gdb and
 * the unwinder used for crash reports stop here instead of walking into
 * whatever lies above the stack top. */
        .type   arch_ctx_bottom, @function
        .p2align 4
arch_ctx_bottom:
        .cfi_startproc
        .cfi_undefined rip
        xorl    %ebp, %ebp
        callq   *%rdx                   /* entry(pass): must not return */
        ud2
        .cfi_endproc
        .size   arch_ctx_bottom, .-arch_ctx_bottom

        .section .note.GNU-stack,"",@progbits

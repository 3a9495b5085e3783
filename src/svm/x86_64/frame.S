/*
 * frame.S - the end of a shared-memory fault that had to wait (fault.c).
 *
 * svm_frame_run(new_sp, fn, arg): continue on new_sp, where fault.c copied
 * the kernel's signal frame (the interrupted registers, FP state, signal
 * mask), call fn(arg) -- an ordinary C function that may block the ULP --
 * and then rt_sigreturn on that copy: the kernel restores every register
 * of the interrupted code and the faulting access runs again.  Never
 * returns.  new_sp is where the frame's first word (its return address)
 * lies; rt_sigreturn finds the frame 8 bytes below the stack pointer.
 */
    .text
    .globl svm_frame_run
    .hidden svm_frame_run
    .type svm_frame_run, @function
svm_frame_run:
    .cfi_startproc
    .cfi_undefined rip      /* unwinders stop here: the frame below is a signal's */
    mov %rdi, %rsp
    sub $8, %rsp            /* the frame starts 8 mod 16: align the call */
    mov %rdx, %rdi
    call *%rsi
    add $16, %rsp           /* rsp = new_sp + 8 */
    mov $15, %eax           /* __NR_rt_sigreturn */
    syscall
    ud2
    .cfi_endproc
    .size svm_frame_run, . - svm_frame_run

    .section .note.GNU-stack, "", @progbits

/*
 * upvm_start.c - the start-up object upvmcc links into every program.
 *
 * Its constructor runs before the program's own (priority 101, the first a
 * program may use) and hands the process to UPVM: see upvm_program_start
 * in <upvm.h> and src/proc/start.c.  glibc passes argc, argv and envp to
 * the functions of .init_array.
 *
 * upvmcc links programs -shared (so that thread-local variables stay
 * general-dynamic, which UPVM's loader gives each ULP: docs/design-notes.md
 * §11).  This object's .interp section names the dynamic linker (the one
 * the compiler links programs with: upvm_interp.h, written by CMake), so
 * that such an object is still a program the system runs as ./prog
 * (through the C library's Scrt1.o _start, which upvmcc links too).
 */
#include <upvm.h>

#include "upvm_interp.h"

__attribute__((section(".interp"), used)) static const char upvm_interp[] = UPVM_INTERP;

__attribute__((constructor(101))) static void upvm_start(int argc, char **argv, char **envp)
{
    upvm_program_start(argc, argv, envp);
}

/*
 * upvm_start.c - the start-up object upvmcc links into every program.
 *
 * Its constructor runs before the program's own (priority 101, the first a
 * program may use) and hands the process to UPVM: see upvm_program_start
 * in <upvm.h> and src/proc/start.c.  glibc passes argc, argv and envp to
 * the functions of .init_array.
 */
#include <upvm.h>

__attribute__((constructor(101))) static void upvm_start(int argc, char **argv, char **envp)
{
    upvm_program_start(argc, argv, envp);
}

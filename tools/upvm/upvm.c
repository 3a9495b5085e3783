/*
 * upvm - the UPVM command.
 *
 *   upvm run [-n N] [-t] [--] PROGRAM [ARGS...]
 *   upvm run --help | upvm --help | upvm --version
 *
 * `upvm run` starts a job: N copies (default 1) of PROGRAM, a program built
 * with upvmcc, as process-mode ULPs of one node (this process), each with
 * its own globals, heap, stack and the same ARGS; the copies are PVM tasks
 * started "from the shell" (no parent), as `pvm_spawn` from a console would
 * start an SPMD program.  The job ends when every ULP has ended; the exit
 * status is the first non-zero status of the copies (0 when all
 * succeeded).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <unistd.h>
#include <upvm.h>

static const char run_help[] =
    "usage: upvm run [-n N] [--nodes K] [--placement block|cyclic] [-t] [--] PROGRAM [ARGS...]\n"
    "\n"
    "Start N copies (default 1) of PROGRAM as process-mode ULPs of one node.\n"
    "PROGRAM must be built with upvmcc (upvmcc -o prog prog.c).  Each copy\n"
    "runs main(argc, argv) with argv = PROGRAM ARGS..., its own globals, heap\n"
    "and stack.  One copy is a PVM task started from the shell\n"
    "(pvm_parent() == PvmNoParent).  N > 1 copies are started as PVM's\n"
    "console starts `spawn -N PROGRAM`: by one pvm_spawn from a console task\n"
    "(t40001, their parent), so pvm_siblings() lists all N in order.\n"
    "\n"
    "PROGRAM is looked up like pvm_spawn does: as given when it contains a\n"
    "'/', else in the current directory, each directory of $PVM_PATH and\n"
    "$PVM_ROOT/bin/$PVM_ARCH.\n"
    "\n"
    "Options:\n"
    "  -n N        number of copies (1 .. 1000000)\n"
    "  --nodes K   run the job on K node processes (1 .. 32, or \"cores\";\n"
    "              default: one per online core; UPVM_NODES does the same).\n"
    "              Node 0 runs PROGRAM; pvm_spawn spreads tasks over the nodes\n"
    "  --placement block|cyclic\n"
    "              where pvm_spawn puts tasks that name no host: cyclic (the\n"
    "              default) deals them out one per node in turn, starting\n"
    "              with the next node; block splits the spawner and its new\n"
    "              tasks into K contiguous equal runs (UPVM_PLACEMENT)\n"
    "  -t, --tag-output\n"
    "              prefix every line a task writes to stdout or stderr with\n"
    "              its tid, \"[t40002] ...\" (UPVM_OUTPUT_TIDS=1 does the same)\n"
    "  -h, --help  this text\n"
    "\n"
    "Environment (see docs/env.md): UPVM_SLOT_SIZE, UPVM_SLOTS,\n"
    "UPVM_WINDOW_BASE (the address window), UPVM_STACK_SIZE (thread-mode\n"
    "ULPs), UPVM_DELIVERY (share|copy), UPVM_ASLR=keep (do not re-execute\n"
    "with address randomisation off).\n"
    "\n"
    "Exit status: the first non-zero exit status of the copies, 0 if all\n"
    "succeeded, 1 if a copy could not be started (the reason is printed),\n"
    "2 for a usage error.\n";

static int usage_error(const char *what)
{
    fprintf(stderr, "upvm run: %s\n(upvm run --help explains the options)\n", what);
    return 2;
}

/* PROGRAM as pvm_spawn would find it. */
static int find_program(const char *name, char *out, size_t len)
{
    if (strchr(name, '/')) {
        snprintf(out, len, "%s", name);
        return access(out, F_OK) == 0 ? 0 : -1;
    }
    const char *path = getenv("PVM_PATH");
    char dirs[8192];
    snprintf(dirs, sizeof dirs, ".:%s", path ? path : "");
    const char *root = getenv("PVM_ROOT"), *arch = getenv("PVM_ARCH");
    if (root)
        snprintf(dirs + strlen(dirs), sizeof dirs - strlen(dirs), ":%s/bin/%s", root,
                 arch ? arch : "LINUX64");
    for (char *d = strtok(dirs, ":"); d; d = strtok(NULL, ":")) {
        snprintf(out, len, "%s/%s", d, name);
        if (access(out, F_OK) == 0)
            return 0;
    }
    return -1;
}

static int cmd_run(int argc, char **argv)
{
    long n = 1;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(run_help, stdout);
            return 0;
        }
        if (!strcmp(argv[i], "-t") || !strcmp(argv[i], "--tag-output")) {
            setenv("UPVM_OUTPUT_TIDS", "1", 1);
            continue;
        }
        if (!strcmp(argv[i], "--nodes") && i + 1 < argc) {
            char *end;
            const char *v = argv[++i];
            long k = strtol(v, &end, 10);
            if (strcmp(v, "cores") != 0 && (*end || k < 1 || k > 32))
                return usage_error("--nodes wants a number of nodes from 1 to 32, or cores");
            setenv("UPVM_NODES", v, 1);
            continue;
        }
        if (!strcmp(argv[i], "--placement") && i + 1 < argc) {
            const char *v = argv[++i];
            if (strcmp(v, "block") != 0 && strcmp(v, "cyclic") != 0)
                return usage_error("--placement wants block or cyclic");
            setenv("UPVM_PLACEMENT", v, 1);
            continue;
        }
        if (!strcmp(argv[i], "-n") && i + 1 < argc) {
            char *end;
            n = strtol(argv[++i], &end, 10);
            if (*end || n < 1 || n > 1000000)
                return usage_error("-n wants a number of copies from 1 to 1000000");
            continue;
        }
        return usage_error("unknown option (or -n without a number)");
    }
    if (i >= argc)
        return usage_error("no PROGRAM given");
    char path[PATH_MAX];
    if (find_program(argv[i], path, sizeof path) != 0) {
        fprintf(stderr, "upvm run: %s: no such program (searched ., $PVM_PATH, "
                        "$PVM_ROOT/bin/$PVM_ARCH)\n", argv[i]);
        return 1;
    }
    /* NULL environment: the node's (and the console form for N > 1) */
    return upvm_run_program(path, (int)n, argv + i, NULL);
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        printf("usage: upvm run [-n N] PROGRAM [ARGS...]   (upvm run --help)\n"
               "       upvm --version\n");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("upvm (UPVM) 0.1.0\n");
        return 0;
    }
    if (strcmp(argv[1], "run") != 0) {
        fprintf(stderr, "upvm: unknown command '%s' (upvm --help)\n", argv[1]);
        return 2;
    }
    const char *keep = getenv("UPVM_ASLR");
    int pers = personality(0xffffffff);
    if (!(keep && !strcmp(keep, "keep")) && pers != -1 && !(pers & ADDR_NO_RANDOMIZE) &&
        personality((unsigned long)pers | ADDR_NO_RANDOMIZE) != -1)
        execv("/proc/self/exe", argv); /* same addresses in every node */
    return cmd_run(argc - 1, argv + 1);
}

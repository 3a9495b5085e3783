/*
 * trace.c - upvm trace convert|summary|dump FILE: a traced job's raw files
 * (FILE.raw/) to OTF2 and trace-event JSON, a summary, or a dump of every
 * record (src/trace/convert.h does the work; docs/trace-tool.md).
 */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "trace/convert.h"
#include "trace/model.h"
#include "trace/reader.h"

extern char **environ;

const char trace_help[] =
    "usage: upvm trace convert FILE [--json-only] [--remove-raw | --keep-raw]\n"
    "       upvm trace summary FILE [--json] [--plot PNG]\n"
    "       upvm trace dump FILE\n"
    "\n"
    "Read the raw trace a job wrote to FILE.raw/ (one node-N.utr per node; FILE\n"
    "may be given as FILE, FILE.raw or FILE.raw/), on one time line: node 0's\n"
    "clock, in ns.\n"
    "\n"
    "convert: write FILE.json (Chrome/Perfetto trace events: open it in\n"
    "ui.perfetto.dev) and FILE.otf2/traces.otf2 (OTF2: Vampir, otf2-print), one\n"
    "line per output, then the events, messages, clock violations (a receive\n"
    "earlier than its send) and lost records.\n"
    "  --json-only   only FILE.json (always so when upvm is built without OTF2)\n"
    "  --remove-raw  remove FILE.raw/ once converted without error\n"
    "  --keep-raw    keep FILE.raw/ (the default)\n"
    "summary: where each task's time went (running, waiting for a message,\n"
    "waiting otherwise, ready, in the runtime, coupled, migrating) per task,\n"
    "per node and in total; messages and bytes per sender and receiver; events\n"
    "per second and lost records per node; clock violations.\n"
    "  --json        the same as one JSON object, for scripts\n"
    "  --plot PNG    also draw PNG: utilization over time per task and the\n"
    "                message matrix (needs python3 and python3-matplotlib)\n"
    "dump: every record, one line each: ns since the first, node, writer, kind,\n"
    "the raw fields, then the decoded ones and the string a key stands for.\n"
    "\n"
    "A raw file that is not a trace or is truncated is said and skipped: the\n"
    "others are still read, and the status is 1.  A node that did not close its\n"
    "trace (killed) is read up to its last record.  docs/trace-tool.md has the\n"
    "formats.\n"
    "\n"
    "Exit status: 0 done; 1 a raw file or an output failed (said); 2 usage.\n";

struct trace_args {
    const char *what, *file, *plot;
    bool json_only, remove_raw, json;
};

static int parse(int argc, char **argv, struct trace_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--json-only"))
            a->json_only = true;
        else if (!strcmp(s, "--remove-raw"))
            a->remove_raw = true;
        else if (!strcmp(s, "--keep-raw"))
            a->remove_raw = false;
        else if (!strcmp(s, "--json"))
            a->json = true;
        else if (!strcmp(s, "--plot")) {
            if (++i == argc)
                return cmd_option_wants("trace", "--plot", "the PNG file to write");
            a->plot = argv[i];
        } else if (s[0] == '-' && s[1])
            return cmd_unknown_option("trace", s);
        else if (!a->what)
            a->what = s;
        else if (!a->file)
            a->file = s;
        else
            return cmd_unexpected("trace", s);
    }
    if (!a->what)
        return cmd_error("trace", 2, "convert, summary or dump?");
    if (strcmp(a->what, "convert") && strcmp(a->what, "summary") && strcmp(a->what, "dump"))
        return cmd_unexpected("trace", a->what);
    if (!a->file)
        return cmd_error("trace", 2, "which FILE?");
    bool conv = !strcmp(a->what, "convert"), sum = !strcmp(a->what, "summary");
    if ((a->json_only || a->remove_raw) && !conv)
        return cmd_error("trace", 2, "--json-only and --remove-raw are for convert");
    if ((a->json || a->plot) && !sum)
        return cmd_error("trace", 2, "--json and --plot are for summary");
    return 0;
}

/* ------------------------------------------------------------ --plot */

/* trace_plot.py: next to the installed upvm (../share/upvm), else the
 * source tree's. */
static const char *plot_script(char *buf, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            if (snprintf(buf, len, "%s/../share/upvm/trace_plot.py", exe) < (int)len &&
                !access(buf, R_OK))
                return buf;
        }
    }
    if (!access(UPVM_TRACE_PLOT_INSTALLED, R_OK))
        return UPVM_TRACE_PLOT_INSTALLED;
    return UPVM_TRACE_PLOT_SRC;
}

static int run_wait(char *const argv[], bool quiet_stderr)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (quiet_stderr)
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", 1, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc)
        return -1;
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* The python3 that has matplotlib: the one on PATH, else the system's
 * (Debian's python3-matplotlib is for /usr/bin/python3, which a pyenv or
 * venv python3 first on PATH does not see).  NULL when none: said. */
static const char *plot_python(void)
{
    static const char *const pythons[] = {"python3", "/usr/bin/python3"};
    bool any = false;
    for (size_t i = 0; i < sizeof pythons / sizeof pythons[0]; i++) {
        char *probe[] = {(char *)pythons[i], "-c", "import matplotlib", NULL};
        int rc = run_wait(probe, true);
        if (rc == 0)
            return pythons[i];
        any |= rc > 0 && rc != 127;
    }
    if (!any)
        fprintf(stderr, "upvm trace: --plot needs python3: install it (Debian: apt install "
                        "python3 python3-matplotlib)\n");
    else
        fprintf(stderr, "upvm trace: --plot needs matplotlib: install python3-matplotlib "
                        "(Debian: apt install python3-matplotlib)\n");
    return NULL;
}

static int plot(const struct trace_model *m, const char *png)
{
    const char *python = plot_python();
    if (!python)
        return 1;
    int rc;
    char tmp[] = "/tmp/upvm-trace-summary-XXXXXX";
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        fprintf(stderr, "upvm trace: --plot: a temporary file: %s\n", strerror(errno));
        return 1;
    }
    rc = trace_write_summary(m, f, true);
    if (fclose(f) || rc) {
        unlink(tmp);
        fprintf(stderr, "upvm trace: --plot: could not write %s\n", tmp);
        return 1;
    }
    char buf[PATH_MAX + 32];
    char *argv[] = {(char *)python, (char *)plot_script(buf, sizeof buf), tmp, (char *)png,
                    NULL};
    rc = run_wait(argv, false);
    unlink(tmp);
    if (rc) {
        fprintf(stderr, "upvm trace: --plot: %s failed (status %d)\n", argv[1], rc);
        return 1;
    }
    printf("upvm trace: wrote %s\n", png);
    return 0;
}

/* ------------------------------------------------------------ the command */

static int summary_or_dump(const struct trace_args *a)
{
    struct trace t;
    bool dump = !strcmp(a->what, "dump");
    if (trace_read(a->file, &t, false)) {
        trace_free(&t);
        return 1;
    }
    int rc = t.refused ? 1 : 0;
    if (dump) {
        trace_write_dump(&t, stdout);
    } else {
        struct trace_model m;
        trace_model_build(&t, &m);
        if (trace_write_summary(&m, stdout, a->json))
            rc = 1;
        if (a->plot && plot(&m, a->plot))
            rc = 1;
        trace_model_free(&m);
    }
    trace_free(&t);
    if (fflush(stdout))
        rc = 1;
    return rc;
}

int cmd_trace(int argc, char **argv)
{
    if (argc > 1 && cmd_is_help(argv[1])) {
        fputs(trace_help, stdout);
        return 0;
    }
    struct trace_args a = {0};
    int rc = parse(argc, argv, &a);
    if (rc)
        return rc;
    if (strcmp(a.what, "convert"))
        return summary_or_dump(&a);
    struct trace_convert_opts o = {.no_otf2 = a.json_only, .remove_raw = a.remove_raw};
    return trace_convert(a.file, &o);
}

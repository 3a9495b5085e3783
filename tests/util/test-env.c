/*
 * test-env.c - the UPVM_* settings parser (src/util/env.h): each reader's
 * valid values, its default for an unset or empty variable, and for a bad
 * value the exact line on stderr and the default; a line is said once per
 * process per variable, and a forked child does not say it again.  The
 * tests go on after a bad value (env_test_keep_going) except `refuses`,
 * which checks what every program does: the line, then exit status 2.
 *
 * Every bad case uses its own variable name: a name said once stays said
 * for the rest of the process (that is the behaviour under test).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "util/env.h"

/* ------------------------------------------------------------ stderr */

static int saved_stderr = -1, pipe_rd = -1;
static char said[1024];

/* From here to captured(), what goes to stderr goes into a pipe. */
static void capture(void)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    fflush(stderr);
    saved_stderr = dup(2);
    CHECK(saved_stderr >= 0 && dup2(fds[1], 2) == 2);
    close(fds[1]);
    pipe_rd = fds[0];
}

/* What was written to stderr since capture() ("" when nothing). */
static const char *captured(void)
{
    fflush(stderr);
    CHECK(dup2(saved_stderr, 2) == 2); /* the pipe's last writer goes */
    close(saved_stderr);
    size_t n = 0;
    ssize_t r;
    while ((r = read(pipe_rd, said + n, sizeof said - 1 - n)) > 0)
        n += (size_t)r;
    said[n] = '\0';
    close(pipe_rd);
    return said;
}

static void set(const char *name, const char *value)
{
    if (value)
        CHECK(setenv(name, value, 1) == 0);
    else
        CHECK(unsetenv(name) == 0);
}

#define CHECK_SAID(want)                                                      \
    do {                                                                      \
        const char *got_ = captured(), *want_ = (want);                       \
        if (strcmp(got_, want_) != 0) {                                       \
            fprintf(stderr, "%s:%d: said \"%s\", expected \"%s\"\n",          \
                    __FILE__, __LINE__, got_, want_);                         \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

/* ------------------------------------------------------------ sizes */

static const struct env_num ring = {.min = 4096, .max = 1 << 30, .dflt = 1 << 20};

/* name=value read as a ring size: the result, *v, nothing said. */
static int quiet_size(const char *name, const char *value, const struct env_num *spec,
                      uint64_t *v)
{
    set(name, value);
    capture();
    int rc = env_size(name, spec, v);
    CHECK_SAID("");
    return rc;
}

TEST(size)
{
    env_test_keep_going();
    uint64_t v = 0;
    CHECK_EQ(quiet_size("UPVM_TEST_SIZE", NULL, &ring, &v), 0);
    CHECK_EQ(v, 1 << 20);
    CHECK_EQ(quiet_size("UPVM_TEST_SIZE", "", &ring, &v), 0);
    CHECK_EQ(v, 1 << 20);
    CHECK_EQ(quiet_size("UPVM_TEST_SIZE", "65536", &ring, &v), 1);
    CHECK_EQ(v, 65536);
    CHECK_EQ(quiet_size("UPVM_TEST_SIZE", "256K", &ring, &v), 1);
    CHECK_EQ(v, 256 << 10);
    CHECK_EQ(quiet_size("UPVM_TEST_SIZE", "4MiB", &ring, &v), 1);
    CHECK_EQ(v, 4 << 20);
    CHECK_EQ(quiet_size("UPVM_TEST_SIZE", "1G", &ring, &v), 1); /* the maximum */
    CHECK_EQ(v, 1 << 30);
    CHECK_EQ(quiet_size("UPVM_TEST_SIZE", "4k", &ring, &v), 1); /* the minimum */
    CHECK_EQ(v, 4096);
}

TEST(bad_size)
{
    env_test_keep_going();
    static const struct {
        const char *name, *value;
    } bad[] = {
        {"UPVM_TEST_SIZE_X", "12x"},  {"UPVM_TEST_SIZE_BIG", "2G"},
        {"UPVM_TEST_SIZE_LOW", "1K"}, {"UPVM_TEST_SIZE_NEG", "-1M"},
        {"UPVM_TEST_SIZE_SP", "1 M"},
    };
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        char want[256];
        snprintf(want, sizeof want,
                 "upvm: %s=%s: not a size (a byte count such as 65536, 256K, 4M; "
                 "from 4K to 1G); refusing to start (unset it for the default, 1M)\n", bad[i].name, bad[i].value);
        set(bad[i].name, bad[i].value);
        uint64_t v = 0;
        capture();
        CHECK_EQ(env_size(bad[i].name, &ring, &v), -EINVAL);
        CHECK_SAID(want);
        CHECK_EQ(v, 1 << 20);
    }
}

TEST(size_kinds)
{
    env_test_keep_going();
    /* at most (no minimum), the default with its suffix */
    static const struct env_num stack = {.max = 1 << 30, .dflt = 256 << 10};
    uint64_t v;
    set("UPVM_TEST_STACK", "lots");
    capture();
    CHECK_EQ(env_size("UPVM_TEST_STACK", &stack, &v), -EINVAL);
    CHECK_SAID("upvm: UPVM_TEST_STACK=lots: not a size (a byte count such as 65536, "
               "256K, 4M; at most 1G); refusing to start (unset it for the default, 256K)\n");
    CHECK_EQ(v, 256 << 10);
    CHECK_EQ(quiet_size("UPVM_TEST_STACK2", "0", &stack, &v), 1);
    CHECK_EQ(v, 0);

    /* a power of two, refused */
    static const struct env_num slot = {.min = 64 << 20, .max = 1ull << 40, .dflt = 1 << 30,
                                        .flags = ENV_POW2};
    CHECK_EQ(quiet_size("UPVM_TEST_SLOT", "256MiB", &slot, &v), 1);
    CHECK_EQ(v, 256 << 20);
    set("UPVM_TEST_SLOT_ODD", "100M");
    capture();
    CHECK_EQ(env_size("UPVM_TEST_SLOT_ODD", &slot, &v), -EINVAL);
    CHECK_SAID("upvm: UPVM_TEST_SLOT_ODD=100M: not a size (a power-of-two byte count such "
               "as 256M, 1G; from 64M to 1T); refusing to start (unset it for the default, 1G)\n");
    CHECK_EQ(v, 1 << 30);

    /* another unit: plain numbers */
    static const struct env_num ns = {.max = 10000000000ull, .dflt = 5000,
                                      .unit = "nanoseconds"};
    CHECK_EQ(quiet_size("UPVM_TEST_NS", "20K", &ns, &v), 1);
    CHECK_EQ(v, 20480);
    set("UPVM_TEST_NS_BAD", "fast");
    capture();
    CHECK_EQ(env_size("UPVM_TEST_NS_BAD", &ns, &v), -EINVAL);
    CHECK_SAID("upvm: UPVM_TEST_NS_BAD=fast: not a size (a number of nanoseconds such as "
               "5000 or 20K; at most 10000000000); refusing to start (unset it for the default, 5000)\n");
    CHECK_EQ(v, 5000);
}

/* ------------------------------------------------------------ numbers */

TEST(uint)
{
    env_test_keep_going();
    static const struct env_word cores[] = {{"cores", 12}, {NULL, 0}};
    static const struct env_num nodes = {.min = 1, .max = 32, .dflt = 4, .words = cores};
    static const char *const good[] = {"1", "32", "7", "cores"};
    static const uint64_t value[] = {1, 32, 7, 12};
    uint64_t v;
    set("UPVM_TEST_NODES", NULL);
    CHECK_EQ(env_uint("UPVM_TEST_NODES", &nodes, &v), 0);
    CHECK_EQ(v, 4);
    for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
        set("UPVM_TEST_NODES", good[i]);
        capture();
        CHECK_EQ(env_uint("UPVM_TEST_NODES", &nodes, &v), 1);
        CHECK_SAID("");
        CHECK_EQ(v, value[i]);
    }
    static const char *const bad[] = {"0", "33", "-1", "abc", "3x", "Cores", "99999999999999999999"};
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        char name[32], want[160];
        snprintf(name, sizeof name, "UPVM_TEST_NODES_%zu", i);
        snprintf(want, sizeof want, "upvm: %s=%s: not a number from 1 to 32 or cores; "
                 "refusing to start (unset it for the default, 4)\n", name, bad[i]);
        set(name, bad[i]);
        capture();
        CHECK_EQ(env_uint(name, &nodes, &v), -EINVAL);
        CHECK_SAID(want);
        CHECK_EQ(v, 4);
    }
    /* two words; refused */
    static const struct env_word two[] = {{"any", 0}, {"all", 99}, {NULL, 0}};
    static const struct env_num slots = {.min = 1, .max = 9, .dflt = 3,
                                         .words = two};
    set("UPVM_TEST_SLOTS", "all");
    CHECK_EQ(env_uint("UPVM_TEST_SLOTS", &slots, &v), 1);
    CHECK_EQ(v, 99);
    set("UPVM_TEST_SLOTS", "none");
    capture();
    CHECK_EQ(env_uint("UPVM_TEST_SLOTS", &slots, &v), -EINVAL);
    CHECK_SAID("upvm: UPVM_TEST_SLOTS=none: not a number from 1 to 9, any or all; "
               "refusing to start (unset it for the default, 3)\n");
    CHECK_EQ(v, 3);
}

/* ------------------------------------------------------------ words */

TEST(choice)
{
    env_test_keep_going();
    static const char *const idle[] = {"adaptive", "spin", "block", NULL};
    int i = -9;
    set("UPVM_TEST_IDLE", "");
    CHECK_EQ(env_choice("UPVM_TEST_IDLE", idle, 0, 0, &i), 0);
    CHECK_EQ(i, 0);
    set("UPVM_TEST_IDLE", "block");
    CHECK_EQ(env_choice("UPVM_TEST_IDLE", idle, 0, 0, &i), 1);
    CHECK_EQ(i, 2);
    set("UPVM_TEST_IDLE", "Block"); /* the exact word */
    capture();
    CHECK_EQ(env_choice("UPVM_TEST_IDLE", idle, 0, 0, &i), -EINVAL);
    CHECK_SAID("upvm: UPVM_TEST_IDLE=Block: not adaptive, spin or block; refusing to start (unset it for the "
               "default, adaptive)\n");
    CHECK_EQ(i, 0);

    static const char *const placement[] = {"cyclic", "block", NULL};
    set("UPVM_TEST_PLACE", "diagonal");
    capture();
    CHECK_EQ(env_choice("UPVM_TEST_PLACE", placement, 0, 0, &i), -EINVAL);
    CHECK_SAID("upvm: UPVM_TEST_PLACE=diagonal: not cyclic or block; refusing to start (unset it for "
               "the default, cyclic)\n");

    /* no default among the words: a bad value is ignored */
    static const char *const trace[] = {"migrate", NULL};
    set("UPVM_TEST_TRACE", NULL);
    CHECK_EQ(env_choice("UPVM_TEST_TRACE", trace, -1, 0, &i), 0);
    CHECK_EQ(i, -1);
    set("UPVM_TEST_TRACE", "migrate");
    CHECK_EQ(env_choice("UPVM_TEST_TRACE", trace, -1, 0, &i), 1);
    CHECK_EQ(i, 0);
    set("UPVM_TEST_TRACE", "yes");
    capture();
    CHECK_EQ(env_choice("UPVM_TEST_TRACE", trace, -1, 0, &i), -EINVAL);
    CHECK_SAID("upvm: UPVM_TEST_TRACE=yes: not migrate; refusing to start (unset it for the "
               "default, off)\n");
    CHECK_EQ(i, -1);
}

TEST(flag)
{
    env_test_keep_going();
    static const struct {
        const char *value;
        bool on;
    } cases[] = {{NULL, false}, {"", false}, {"0", false}, {"1", true}, {"yes", true}};
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        set("UPVM_TEST_FLAG", cases[i].value);
        capture();
        CHECK_EQ(env_flag("UPVM_TEST_FLAG"), cases[i].on);
        CHECK_SAID("");
    }
}

/* ------------------------------------------------------------ addresses */

TEST(addr)
{
    env_test_keep_going();
    const uint64_t dflt = 0x200000000000ull;
    uint64_t v;
    set("UPVM_TEST_BASE", NULL);
    CHECK_EQ(env_addr("UPVM_TEST_BASE", 4096, dflt, 0, &v), 0);
    CHECK_EQ(v, dflt);
    set("UPVM_TEST_BASE", "0x400000000000");
    CHECK_EQ(env_addr("UPVM_TEST_BASE", 4096, dflt, 0, &v), 1);
    CHECK_EQ(v, 0x400000000000ull);
    set("UPVM_TEST_BASE", "8192"); /* decimal too, as C writes it */
    CHECK_EQ(env_addr("UPVM_TEST_BASE", 4096, dflt, 0, &v), 1);
    CHECK_EQ(v, 8192);
    static const char *const bad[] = {"0x1234", "0", "banana", "-4096", "0x1000z"};
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        char name[32], want[200];
        snprintf(name, sizeof name, "UPVM_TEST_BASE_%zu", i);
        snprintf(want, sizeof want, "upvm: %s=%s: not an address (non-zero, a multiple of "
                 "0x1000, such as 0x200000000000); refusing to start (unset it for the "
                 "default, 0x200000000000)\n", name, bad[i]);
        set(name, bad[i]);
        capture();
        CHECK_EQ(env_addr(name, 4096, dflt, 0, &v), -EINVAL);
        CHECK_SAID(want);
        CHECK_EQ(v, dflt);
    }
}

TEST(reject)
{
    env_test_keep_going();
    set("UPVM_TEST_REJECT", "0x7fffe0000000");
    capture();
    CHECK_EQ(env_reject("UPVM_TEST_REJECT", "no slot fits between it and 128 TiB"), -EINVAL);
    CHECK_SAID("upvm: UPVM_TEST_REJECT=0x7fffe0000000: no slot fits between it and "
               "128 TiB; refusing to start\n");
}

/* ------------------------------------------------------------ once */

TEST(said_once)
{
    env_test_keep_going();
    set("UPVM_TEST_ONCE", "12x");
    uint64_t v;
    capture();
    CHECK_EQ(env_size("UPVM_TEST_ONCE", &ring, &v), -EINVAL);
    CHECK_EQ(env_size("UPVM_TEST_ONCE", &ring, &v), -EINVAL); /* read again: silent */
    CHECK_EQ(env_reject("UPVM_TEST_ONCE", "whatever"), -EINVAL);
    CHECK_SAID("upvm: UPVM_TEST_ONCE=12x: not a size (a byte count such as 65536, 256K, "
               "4M; from 4K to 1G); refusing to start (unset it for the default, 1M)\n");
    CHECK_EQ(v, 1 << 20);

    /* a node forked after the launcher's read: not said again */
    capture();
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        _exit(env_size("UPVM_TEST_ONCE", &ring, &v) == -EINVAL && v == 1 << 20 ? 0 : 1);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_SAID("");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* ------------------------------------------------------------ refusal */

/* Without env_test_keep_going a bad value ends the process at once, with
 * exit status 2, after its line; each reader and env_reject alike. */
static void read_bad(int which)
{
    uint64_t v;
    int i;
    static const char *const words[] = {"on", "off", NULL};
    static const struct env_num num = {.min = 1, .max = 9, .dflt = 3};
    const char *s;
    switch (which) {
    case 0: (void)env_size("UPVM_TEST_R", &ring, &v); break;
    case 1: (void)env_uint("UPVM_TEST_R", &num, &v); break;
    case 2: (void)env_choice("UPVM_TEST_R", words, 0, 0, &i); break;
    case 3: (void)env_addr("UPVM_TEST_R", 4096, 0x10000, 0, &v); break;
    case 4: (void)env_string("UPVM_TEST_R", &s); (void)env_reject("UPVM_TEST_R", "no"); break;
    }
}

TEST(refuses)
{
    static const char *const want[] = {
        "upvm: UPVM_TEST_R=zz: not a size (a byte count such as 65536, 256K, 4M; from 4K "
        "to 1G); refusing to start (unset it for the default, 1M)\n",
        "upvm: UPVM_TEST_R=zz: not a number from 1 to 9; refusing to start (unset it for "
        "the default, 3)\n",
        "upvm: UPVM_TEST_R=zz: not on or off; refusing to start (unset it for the default, "
        "on)\n",
        "upvm: UPVM_TEST_R=zz: not an address (non-zero, a multiple of 0x1000, such as "
        "0x10000); refusing to start (unset it for the default, 0x10000)\n",
        "upvm: UPVM_TEST_R=zz: no; refusing to start\n",
    };
    set("UPVM_TEST_R", "zz");
    for (int k = 0; k < (int)ARRAY_SIZE(want); k++) {
        capture();
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            read_bad(k);
            _exit(0); /* went on: wrong */
        }
        int status;
        CHECK(waitpid(pid, &status, 0) == pid);
        CHECK_SAID(want[k]);
        CHECK(WIFEXITED(status));
        CHECK_EQ(WEXITSTATUS(status), 2);
    }
}

TEST(string)
{
    const char *s = "x";
    set("UPVM_TEST_STR", NULL);
    CHECK_EQ(env_string("UPVM_TEST_STR", &s), 0);
    CHECK(s == NULL);
    set("UPVM_TEST_STR", "");
    CHECK_EQ(env_string("UPVM_TEST_STR", &s), 0);
    CHECK(s == NULL);
    set("UPVM_TEST_STR", "a=b;c=d");
    CHECK_EQ(env_string("UPVM_TEST_STR", &s), 1);
    CHECK(s && strcmp(s, "a=b;c=d") == 0);
}

HARNESS_MAIN()

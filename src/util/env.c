/*
 * env.c - the readers of env.h: parse, check the range, say a bad value
 * and end the process (exit status 2).
 *
 * The line is formatted whole and written with one call, so that lines of
 * nodes starting at the same time do not mix.  The names already said are
 * kept in a small table (a process has a few dozen settings at most; past
 * the table's end a bad value is said every time it is read, which is
 * still correct, only louder).
 */
#include "util/env.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/parse_size.h"

#define SAID_MAX 64
#define NAME_MAX_LEN 48

static struct {
    char names[SAID_MAX][NAME_MAX_LEN]; /* copies: a caller's name may not last */
    int n;
    char lock;
} said;

static bool keep_going; /* env_test_keep_going() */

void env_test_keep_going(void)
{
    keep_going = true;
}

/* The value of name, or NULL when it is unset or empty (the default). */
static const char *value_of(const char *name)
{
    const char *s = getenv(name);
    return s && *s ? s : NULL;
}

/* First time this process complains about name?  Records it. */
static bool first_complaint(const char *name)
{
    while (__atomic_test_and_set(&said.lock, __ATOMIC_ACQUIRE))
        ;
    bool first = true;
    for (int i = 0; i < said.n && first; i++)
        first = strncmp(said.names[i], name, NAME_MAX_LEN - 1) != 0;
    if (first && said.n < SAID_MAX)
        snprintf(said.names[said.n++], NAME_MAX_LEN, "%s", name);
    __atomic_clear(&said.lock, __ATOMIC_RELEASE);
    return first;
}

/* "upvm: NAME=VALUE: <what>; <tail>" once, as env.h says, then the end of
 * the process (exit status 2); -EINVAL after env_test_keep_going(). */
static COLD int complain(const char *name, const char *what, const char *tail)
{
    if (!first_complaint(name))
        return -EINVAL;
    char line[512];
    const char *v = getenv(name);
    snprintf(line, sizeof line, "upvm: %s=%.100s: %s; %s\n", name, v ? v : "", what, tail);
    size_t n = strlen(line);
    if (line[n - 1] != '\n') /* truncated: still one line */
        line[n - 1] = '\n';
    fputs(line, stderr);
    if (!keep_going)
        _exit(2); /* at start-up: nothing of the program's to flush */
    return -EINVAL;
}

/* The complaint about a value whose default reads dflt (NULL: off). */
static COLD int complain_dflt(const char *name, const char *what, const char *dflt)
{
    char tail[128];
    if (dflt)
        snprintf(tail, sizeof tail, "refusing to start (unset it for the default, %s)", dflt);
    else
        snprintf(tail, sizeof tail, "refusing to start (unset it for the default, off)");
    return complain(name, what, tail);
}

/* A byte count as UPVM_* settings write it: the largest exact suffix
 * (1G, 256K, 4097); other units in plain decimal. */
static void format_size(char *buf, size_t len, uint64_t v, const char *unit)
{
    static const char suffix[] = "KMGT";
    int s = -1;
    while (!unit && v && s < 3 && (v & ((1ull << (10 * (s + 2))) - 1)) == 0)
        s++;
    if (s < 0)
        snprintf(buf, len, "%" PRIu64, v);
    else
        snprintf(buf, len, "%" PRIu64 "%c", v >> (10 * (s + 1)), suffix[s]);
}

/* "from MIN to MAX" or "at most MAX", formatted by fmt. */
static void format_range(char *buf, size_t len, const struct env_num *spec,
                         void (*fmt)(char *, size_t, uint64_t, const char *))
{
    char lo[32], hi[32];
    fmt(lo, sizeof lo, spec->min, spec->unit);
    fmt(hi, sizeof hi, spec->max, spec->unit);
    if (spec->min == 0)
        snprintf(buf, len, "at most %s", hi);
    else
        snprintf(buf, len, "from %s to %s", lo, hi);
}

static void format_dec(char *buf, size_t len, uint64_t v, const char *unit)
{
    snprintf(buf, len, "%" PRIu64, v);
}

/* ------------------------------------------------------------ readers */

int env_size(const char *name, const struct env_num *spec, uint64_t *out)
{
    *out = spec->dflt;
    const char *s = value_of(name);
    if (!s)
        return 0;
    uint64_t v;
    bool pow2 = spec->flags & ENV_POW2;
    if (util_parse_size(s, spec->max, &v) && v >= spec->min && (!pow2 || !(v & (v - 1)))) {
        *out = v;
        return 1;
    }
    char range[80], what[200], dflt[32];
    format_range(range, sizeof range, spec, format_size);
    if (spec->unit)
        snprintf(what, sizeof what, "not a size (a number of %s such as 5000 or 20K; %s)",
                 spec->unit, range);
    else
        snprintf(what, sizeof what, "not a size (a %sbyte count such as %s; %s)",
                 pow2 ? "power-of-two " : "", pow2 ? "256M, 1G" : "65536, 256K, 4M", range);
    format_size(dflt, sizeof dflt, spec->dflt, spec->unit);
    return complain_dflt(name, what, dflt);
}

/* A whole decimal number in [min, max]. */
static bool parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || *s == '-' || v < min || v > max)
        return false;
    *out = v;
    return true;
}

int env_uint(const char *name, const struct env_num *spec, uint64_t *out)
{
    *out = spec->dflt;
    const char *s = value_of(name);
    if (!s)
        return 0;
    for (const struct env_word *w = spec->words; w && w->word; w++)
        if (strcmp(s, w->word) == 0) {
            *out = w->value;
            return 1;
        }
    if (parse_uint(s, spec->min, spec->max, out))
        return 1;
    char what[160], dflt[32];
    int n = snprintf(what, sizeof what, "not a number from %" PRIu64 " to %" PRIu64,
                     spec->min, spec->max);
    for (const struct env_word *w = spec->words; w && w->word && n > 0 &&
         (size_t)n < sizeof what; w++)
        n += snprintf(what + n, sizeof what - (size_t)n, "%s%s",
                      w[1].word ? ", " : " or ", w->word);
    format_dec(dflt, sizeof dflt, spec->dflt, NULL);
    return complain_dflt(name, what, dflt);
}

int env_choice(const char *name, const char *const *words, int dflt, unsigned flags, int *out)
{
    *out = dflt;
    const char *s = value_of(name);
    if (!s)
        return 0;
    int n = 0;
    for (; words[n]; n++)
        if (strcmp(s, words[n]) == 0) {
            *out = n;
            return 1;
        }
    /* "not a", "not a or b", "not a, b or c" */
    char what[160] = "not";
    size_t len = strlen(what);
    for (int i = 0; i < n && len < sizeof what; i++)
        len += (size_t)snprintf(what + len, sizeof what - len, "%s%s",
                                i == 0 ? " " : i == n - 1 ? " or " : ", ", words[i]);
    (void)flags;
    return complain_dflt(name, what, dflt < 0 ? NULL : words[dflt]);
}

bool env_flag(const char *name)
{
    const char *s = value_of(name);
    return s && strcmp(s, "0") != 0;
}

int env_addr(const char *name, uint64_t align, uint64_t dflt, unsigned flags, uint64_t *out)
{
    *out = dflt;
    const char *s = value_of(name);
    if (!s)
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (!errno && end != s && !*end && *s != '-' && v != 0 && (v & (align - 1)) == 0) {
        *out = v;
        return 1;
    }
    char what[160], d[32];
    snprintf(what, sizeof what,
             "not an address (non-zero, a multiple of %#" PRIx64 ", such as %#" PRIx64 ")",
             align, dflt);
    snprintf(d, sizeof d, "%#" PRIx64, dflt);
    (void)flags;
    return complain_dflt(name, what, d);
}

int env_string(const char *name, const char **out)
{
    *out = value_of(name);
    return *out != NULL;
}

int env_reject(const char *name, const char *why)
{
    return complain(name, why, "refusing to start");
}

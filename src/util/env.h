/*
 * env.h - the one parser of UPVM_* settings (docs/env.md lists them all).
 *
 * Every layer reads its environment variables through these readers, so
 * that every setting is written the same way and a bad one is said and
 * handled the same way: one line on stderr naming the variable, the value,
 * what it accepts and the default, e.g.
 *
 *   upvm: UPVM_NET_IDLE=sometimes: not adaptive, spin or block; refusing to
 *        start (unset it for the default, adaptive)
 *
 * and then the process ends with exit status 2 (_exit: nothing of the
 * program has run yet where settings are read, at start-up).  A setting
 * decides how the job runs; a typo that silently fell back to the default
 * would run something the user did not ask for.
 *
 * Each reader returns
 *   1        the variable is set and valid: *out is its value;
 *   0        unset or empty: *out is the default, silently;
 *   -EINVAL  set but not valid (only after env_test_keep_going(): else
 *            the process has ended): *out is the default.
 * So "set and valid" is a result > 0.
 *
 * A line is printed once per process per variable (after
 * env_test_keep_going(), reading a variable again is silent).
 *
 * Not thread-safe against setenv/putenv elsewhere (getenv never is); the
 * readers themselves may be called from any thread.
 */
#ifndef UPVM_UTIL_ENV_H
#define UPVM_UTIL_ENV_H

#include <stdbool.h>
#include <stdint.h>

#include "util/compiler.h"

#define ENV_POW2 2u /* env_size: only a power of two */

/* A word standing for a number (UPVM_NODES=cores); lists end with {NULL}. */
struct env_word {
    const char *word;
    uint64_t value;
};

/* What a numeric setting accepts. */
struct env_num {
    uint64_t min, max;            /* inclusive */
    uint64_t dflt;                /* unset, empty or bad */
    unsigned flags;               /* ENV_POW2 */
    const struct env_word *words; /* env_uint: NULL, or words also accepted */
    const char *unit;             /* env_size: what is counted (NULL: bytes) */
};

/*
 * env_size - a count with an optional binary suffix, as util_parse_size
 * reads it ("65536", "256K", "4M", "1GiB"), from spec->min to spec->max
 * (and a power of two with ENV_POW2).  Results as above.
 */
HIDDEN int env_size(const char *name, const struct env_num *spec, uint64_t *out);

/*
 * env_uint - a decimal number from spec->min to spec->max, or one of
 * spec->words (its value is then stored, whatever the range).
 */
HIDDEN int env_uint(const char *name, const struct env_num *spec, uint64_t *out);

/*
 * env_choice - one of words (a NULL-terminated list; the exact word, case
 * included): *out is its index.  dflt is an index into words, or -1 for a
 * setting whose default is none of them ("off").  flags: 0 (none is
 * defined for words; kept for the callers).
 */
HIDDEN int env_choice(const char *name, const char *const *words, int dflt, unsigned flags,
                      int *out);

/*
 * env_flag - a presence flag: true when name is set to anything but ""
 * and "0" (UPVM_OUTPUT_TIDS=1).  Nothing is ever invalid, nothing printed.
 */
HIDDEN bool env_flag(const char *name);

/*
 * env_addr - a non-zero address, a multiple of align (a power of two),
 * written as C writes a constant: 0x200000000000 (hex), or decimal.
 * flags: 0, as for env_choice.
 */
HIDDEN int env_addr(const char *name, uint64_t align, uint64_t dflt, unsigned flags,
                    uint64_t *out);

/*
 * env_string - a free-form value (a path, a list the caller parses): 1
 * with *out set when name is set and not empty, else 0 with *out NULL.
 * A caller that finds the value wrong says so with env_reject.
 */
HIDDEN int env_string(const char *name, const char **out);

/*
 * env_reject - a value the reader accepted but the caller cannot use (a
 * window base with no room above it, a list that does not parse):
 * "upvm: NAME=VALUE: <why>; refusing to start", then exit status 2 as for
 * the readers' bad values.  Returns -EINVAL after env_test_keep_going().
 */
HIDDEN int env_reject(const char *name, const char *why);

/*
 * env_test_keep_going - tests only: from now on a bad value is said and
 * returned as -EINVAL, and the process goes on.
 */
HIDDEN void env_test_keep_going(void);

#endif /* UPVM_UTIL_ENV_H */

/*
 * test-loader-fuzz.c - the loader against corrupt files: seeded, reproducible
 * mutations of a valid PIE (byte flips and "interesting" values in the ELF
 * header, program headers, dynamic section, relocation tables, symbol,
 * string and hash tables; truncations), each opened and, when it opens,
 * instantiated.  Every attempt must end with success or an error message:
 * no crash, no hang.
 *
 * The two starting points are the same program linked with RELA only and
 * with DT_RELR (-z pack-relative-relocs).
 *
 * Attempts run in forked children, BATCH per child, so a crash is caught
 * and reported with its seed (the child writes the current one to a shared
 * page first); an alarm catches hangs.  Images that would run their own
 * code while instantiating (IRELATIVE, ifunc symbols: a mutated resolver
 * address could point anywhere in the text) are opened but not
 * instantiated.
 *
 * One case.  LOADER_FUZZ_N (default 4000) attempts from LOADER_FUZZ_SEED
 * (default 1); LOADER_FUZZ_ONLY=<seed> runs one attempt in the case's own
 * process (with --inproc, in this one: for a debugger).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/wait.h>

#include "harness.h"
#include "elftest.h"
#include "loader/loader_impl.h"

#define BATCH 250

struct region {
    size_t off, len;
};

struct shared {
    uint64_t current;
    unsigned long opened, instantiated, refused;
};

/* Two valid programs to start from: RELA-only and with DT_RELR. */
struct base {
    struct blob file;
    struct region regions[16];
    int nregions;
};
static struct base bases[2];

/* ---------------------------------------------------------------- mutations */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void add_region(struct base *b, size_t off, size_t len)
{
    if (len && off + len <= b->file.n && b->nregions < (int)ARRAY_SIZE(b->regions))
        b->regions[b->nregions++] = (struct region){off, len};
}

static void load_base(struct base *b, const char *path)
{
    b->file = blob_read(path);
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)b->file.p;
    add_region(b, 0, sizeof *eh);
    add_region(b, eh->e_phoff, (size_t)eh->e_phnum * eh->e_phentsize);
    const char *names[] = {".dynamic", ".rela.dyn", ".rela.plt", ".relr.dyn",
                           ".dynsym",  ".dynstr",   ".gnu.hash", ".hash"};
    for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
        const Elf64_Shdr *s = blob_section(b->file, names[i]);
        if (s)
            add_region(b, s->sh_offset, s->sh_size);
    }
    CHECK(b->nregions >= 7);
}

static uint64_t interesting(uint64_t r)
{
    static const uint64_t v[] = {0, 1, 7, 8, 0xff, 0x1000, 0x7fffffff, 0x80000000,
                                 0xffffffff, 0x100000000ULL, 1ULL << 40, INT64_MAX,
                                 (uint64_t)-1, (uint64_t)-8, (uint64_t)-4096};
    return v[r % ARRAY_SIZE(v)];
}

/* Mutate a copy of base for seed: returns its length. */
static size_t mutate(unsigned char *buf, uint64_t seed)
{
    uint64_t s = seed * 0x2545f4914f6cdd1dULL;
    const struct base *b = &bases[seed % 2];
    memcpy(buf, b->file.p, b->file.n);
    size_t n = b->file.n;
    unsigned ops = 1 + (unsigned)(splitmix(&s) % 4);
    for (unsigned k = 0; k < ops; k++) {
        const struct region *rg = &b->regions[splitmix(&s) % (uint64_t)b->nregions];
        size_t at = rg->off + (size_t)(splitmix(&s) % rg->len);
        switch (splitmix(&s) % 8) {
        case 0: case 1: case 2: /* flip bits of one byte */
            buf[at] ^= (unsigned char)(1 + splitmix(&s) % 255);
            break;
        case 3: /* a random byte */
            buf[at] = (unsigned char)splitmix(&s);
            break;
        case 4: case 5: { /* an interesting 8-, 4- or 2-byte value, aligned */
            uint64_t v = interesting(splitmix(&s));
            size_t w = (size_t)1 << (1 + splitmix(&s) % 3);
            at &= ~(w - 1);
            if (at + w <= n)
                memcpy(buf + at, &v, w);
            break;
        }
        case 6: /* a small delta on a 4-byte word */
            at &= ~(size_t)3;
            if (at + 4 <= n) {
                uint32_t v;
                memcpy(&v, buf + at, 4);
                v += (uint32_t)(splitmix(&s) % 64) - 32;
                memcpy(buf + at, &v, 4);
            }
            break;
        default: /* truncate (rarely: most cuts just lose a segment) */
            if (splitmix(&s) % 4 == 0)
                n = (size_t)(splitmix(&s) % n);
            break;
        }
    }
    return n;
}

/* ---------------------------------------------------------------- one attempt */

static void attempt(uint64_t seed, unsigned char *buf, char *slot, struct shared *sh)
{
    char path[512];
    snprintf(path, sizeof path, "%s/fuzz", test_tmpdir());
    blob_write(path, buf, mutate(buf, seed));
    struct loader_error err = {0};
    struct loader_image *img = loader_image_open(path, &err);
    if (!img) {
        CHECK(err.code < 0 && err.msg[0]);
        sh->refused++;
        return;
    }
    sh->opened++;
    if (!img->runs_code && loader_image_span(img) <= SLOT_SIZE) {
        struct loader_instance in;
        err = (struct loader_error){0};
        if (loader_instantiate(img, slot, NULL, NULL, &in, &err) == 0) {
            sh->instantiated++;
            loader_unmap(&in);
        } else {
            CHECK(err.code < 0 && err.msg[0]);
        }
        check_reserved(slot);
    }
    loader_image_put(img);
}

static void run_batch(uint64_t first, uint64_t count, struct shared *sh)
{
    alarm(60); /* a hang ends the child with SIGALRM */
    unsigned char *buf = malloc(bases[0].file.n > bases[1].file.n ? bases[0].file.n
                                                                  : bases[1].file.n);
    char *slot = slot_reserve(SLOT_SIZE);
    CHECK(buf);
    for (uint64_t i = 0; i < count; i++) {
        sh->current = first + i;
        attempt(first + i, buf, slot, sh);
    }
    free(buf);
}

static int fork_batch(uint64_t first, uint64_t count, struct shared *sh)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        run_batch(first, count, sh);
        _exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    fprintf(stderr, "fuzz: seed %llu %s %d: rerun it with LOADER_FUZZ_ONLY=%llu\n",
            (unsigned long long)sh->current, WIFSIGNALED(status) ? "killed by signal" : "exit",
            WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
            (unsigned long long)sh->current);
    return 1;
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 0) : dflt;
}

TEST(mutations_end_in_success_or_error)
{
    load_base(&bases[0], PROG_COUNTER);
    load_base(&bases[1], PROG_RELR);
    (void)test_tmpdir(); /* created here, shared by the children */
    struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(sh != MAP_FAILED);
    if (getenv("LOADER_FUZZ_ONLY")) {
        run_batch(env_u64("LOADER_FUZZ_ONLY", 0), 1, sh);
        fprintf(stderr, "opened %lu, instantiated %lu\n", sh->opened, sh->instantiated);
        return;
    }
    uint64_t n = env_u64("LOADER_FUZZ_N", 4000), seed = env_u64("LOADER_FUZZ_SEED", 1);
    int failures = 0;
    for (uint64_t i = 0; i < n; i += BATCH)
        failures += fork_batch(seed + i, n - i < BATCH ? n - i : BATCH, sh);
    fprintf(stderr, "fuzz: %llu mutations from seed %llu: %lu refused at open, %lu opened, "
            "%lu instantiated, %d crashed batches\n", (unsigned long long)n,
            (unsigned long long)seed, sh->refused, sh->opened, sh->instantiated, failures);
    char path[512];
    snprintf(path, sizeof path, "%s/fuzz", test_tmpdir());
    unlink(path);
    rmdir(test_tmpdir());
    free(bases[0].file.p);
    free(bases[1].file.p);
    CHECK_EQ(failures, 0);
    CHECK(sh->instantiated > 0 && sh->refused > 0); /* both paths were exercised */
}

HARNESS_MAIN()

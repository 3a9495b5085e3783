/*
 * test-loader-mutants.c - a program built by upvmcc (progs/mutant.c), with
 * one field of its segments, relocations or symbols corrupted, run by
 * `upvm run`: each corrupt file is refused before anything of it runs, with
 * a message naming the file, what is wrong and where (which segment, which
 * relocation).  Then seeded random corruptions of the same fields: the
 * program may be refused, run, or crash as a program, but `upvm` itself is
 * never killed by a signal and never hangs.
 *
 * MUTANTS_N (default 200) random mutations from MUTANTS_SEED (default 1).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/wait.h>

#include "harness.h"
#include "elftest.h"
#include "util/compiler.h"

/* ---------------------------------------------------------------- running */

struct outcome {
    int status;      /* waitpid's */
    char text[8192]; /* stdout and stderr together */
};

/* `upvm run path`, with its output, within 30 s (SIGALRM survives exec). */
static void run_upvm(const char *path, struct outcome *o)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        alarm(30);
        execl(UPVM_CMD, "upvm", "run", path, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t k;
    while ((k = read(fds[0], o->text + n, sizeof o->text - 1 - n)) > 0)
        n += (size_t)k;
    o->text[n] = '\0';
    close(fds[0]);
    CHECK(waitpid(pid, &o->status, 0) == pid);
}

static const char *mutant_path(void)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/mutant", test_tmpdir());
    return path;
}

/* ---------------------------------------------------------------- the file */

static Elf64_Phdr *phdr(struct blob b, unsigned i)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)b.p;
    CHECK(i < eh->e_phnum);
    return (Elf64_Phdr *)(b.p + eh->e_phoff) + i;
}

/* The index of the first PT_LOAD with all of flags (and none of not). */
static unsigned load_with(struct blob b, uint32_t flags, uint32_t not)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)b.p;
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        const Elf64_Phdr *ph = phdr(b, i);
        if (ph->p_type == PT_LOAD && (ph->p_flags & flags) == flags && !(ph->p_flags & not))
            return i;
    }
    CHECK(!"no such PT_LOAD");
    return 0;
}

static Elf64_Rela *rela(struct blob b, const char *section, size_t *n)
{
    const Elf64_Shdr *s = blob_section(b, section);
    CHECK(s && s->sh_size >= sizeof(Elf64_Rela));
    *n = s->sh_size / sizeof(Elf64_Rela);
    return (Elf64_Rela *)(b.p + s->sh_offset);
}

/* The first relocation of a table with this type (its index in *i). */
static Elf64_Rela *rela_of_type(struct blob b, const char *section, uint32_t type, size_t *i)
{
    size_t n;
    Elf64_Rela *r = rela(b, section, &n);
    for (*i = 0; *i < n; (*i)++)
        if (ELF64_R_TYPE(r[*i].r_info) == type)
            return &r[*i];
    CHECK(!"no such relocation");
    return NULL;
}

/* ---------------------------------------------------------------- one case */

/* Write b, run it: refused (status 1), saying each needle, nothing ran. */
static void refused(struct blob b, const char *n1, const char *n2)
{
    struct outcome o;
    blob_write(mutant_path(), b.p, b.n);
    run_upvm(mutant_path(), &o);
    fprintf(stderr, "   %s", o.text);
    CHECK(WIFEXITED(o.status));
    CHECK_EQ(WEXITSTATUS(o.status), 1);
    CHECK_STR_CONTAINS(o.text, "upvm: cannot start ");
    CHECK_STR_CONTAINS(o.text, mutant_path());
    CHECK_STR_CONTAINS(o.text, n1);
    if (n2)
        CHECK_STR_CONTAINS(o.text, n2);
    CHECK(!strstr(o.text, "RAN") && !strstr(o.text, "CTOR"));
    unlink(mutant_path());
    free(b.p);
}

TEST(the_unmutated_program_runs)
{
    struct outcome o;
    struct blob b = blob_read(PROG_MUTANT);
    blob_write(mutant_path(), b.p, b.n);
    run_upvm(mutant_path(), &o);
    CHECK(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0);
    CHECK_STR_CONTAINS(o.text, "CTOR\nRAN 5\nTLS 7\n");
    unlink(mutant_path());
    free(b.p);
}

TEST(relocation_outside_every_segment)
{
    struct blob b = blob_read(PROG_MUTANT);
    size_t i;
    Elf64_Rela *r = rela_of_type(b, ".rela.dyn", R_X86_64_RELATIVE, &i);
    r->r_offset = 0x7fff0000;
    char where[128];
    snprintf(where, sizeof where, "relocation %zu of DT_RELA (R_X86_64_RELATIVE) writes at "
             "0x7fff0000, outside the writable segments", i);
    refused(b, "malformed ELF file", where);
}

TEST(relocation_into_code)
{
    struct blob b = blob_read(PROG_MUTANT);
    size_t i;
    Elf64_Rela *r = rela_of_type(b, ".rela.plt", R_X86_64_JUMP_SLOT, &i);
    r->r_offset = phdr(b, load_with(b, PF_X, 0))->p_vaddr;
    char where[64];
    snprintf(where, sizeof where, "relocation %zu of DT_JMPREL (R_X86_64_JUMP_SLOT)", i);
    refused(b, where, "outside the writable segments");
}

TEST(absurd_symbol_index)
{
    struct blob b = blob_read(PROG_MUTANT);
    size_t i;
    Elf64_Rela *r = rela_of_type(b, ".rela.plt", R_X86_64_JUMP_SLOT, &i);
    r->r_info = ELF64_R_INFO(0xffffff, R_X86_64_JUMP_SLOT);
    char where[96];
    snprintf(where, sizeof where, "relocation %zu of DT_JMPREL names symbol 16777215, past the "
             "symbol table's", i);
    refused(b, where, NULL);
}

TEST(jump_slot_with_an_addend)
{
    struct blob b = blob_read(PROG_MUTANT);
    size_t i;
    rela_of_type(b, ".rela.plt", R_X86_64_JUMP_SLOT, &i)->r_addend = 0x40;
    char where[96];
    snprintf(where, sizeof where, "relocation %zu of DT_JMPREL (R_X86_64_JUMP_SLOT) has addend "
             "0x40, not 0", i);
    refused(b, where, NULL);
}

TEST(filesz_larger_than_memsz)
{
    struct blob b = blob_read(PROG_MUTANT);
    unsigned i = load_with(b, PF_W, 0);
    Elf64_Phdr *ph = phdr(b, i);
    ph->p_memsz = ph->p_filesz - 8;
    char where[64];
    snprintf(where, sizeof where, "segment %u (PT_LOAD): p_filesz", i);
    refused(b, where, "is larger than p_memsz");
}

TEST(offset_beyond_the_end_of_the_file)
{
    struct blob b = blob_read(PROG_MUTANT);
    unsigned i = load_with(b, PF_R, PF_X | PF_W);
    phdr(b, i)->p_offset += (b.n + 0xfff) & ~(size_t)0xfff; /* still page-congruent */
    char where[64];
    snprintf(where, sizeof where, "segment %u (PT_LOAD): file bytes", i);
    refused(b, where, "extend past the end of the file");
}

TEST(code_cut_short)
{
    struct blob b = blob_read(PROG_MUTANT);
    unsigned i = load_with(b, PF_X, 0);
    phdr(b, i)->p_filesz -= 16;
    char where[64];
    snprintf(where, sizeof where, "segment %u (PT_LOAD): executable", i);
    refused(b, where, "(code cut off)");
}

TEST(segments_overlap)
{
    struct blob b = blob_read(PROG_MUTANT);
    unsigned i = load_with(b, PF_W, 0);
    Elf64_Phdr *ph = phdr(b, i);
    ph->p_vaddr -= 0x1000; /* into the one before (page-congruent still) */
    ph->p_paddr = ph->p_vaddr;
    char where[64];
    snprintf(where, sizeof where, "segment %u (PT_LOAD) at", i);
    refused(b, where, "overlaps the one before it");
}

TEST(segments_share_file_bytes)
{
    struct blob b = blob_read(PROG_MUTANT);
    unsigned r = load_with(b, PF_R, PF_X | PF_W), x = load_with(b, PF_X, 0);
    CHECK(r < x); /* the headers' segment, then the code */
    Elf64_Phdr *ph = phdr(b, x);
    ph->p_offset = phdr(b, r)->p_offset; /* the headers' bytes, as code */
    char where[64];
    snprintf(where, sizeof where, "segment %u (PT_LOAD): its file bytes", x);
    refused(b, where, "overlap those of the PT_LOAD at");
}

TEST(alignment_not_a_power_of_two)
{
    struct blob b = blob_read(PROG_MUTANT);
    unsigned i = load_with(b, PF_X, 0);
    phdr(b, i)->p_align = 0x3000;
    char where[64];
    snprintf(where, sizeof where, "segment %u (PT_LOAD): alignment 0x3000", i);
    refused(b, where, NULL);
}

TEST(segment_flags)
{
    struct blob b = blob_read(PROG_MUTANT);
    unsigned i = load_with(b, PF_R, PF_X | PF_W);
    phdr(b, i)->p_flags = 0;
    char where[64];
    snprintf(where, sizeof where, "segment %u (PT_LOAD): flags 0 (not readable", i);
    refused(b, where, NULL);
    b = blob_read(PROG_MUTANT);
    i = load_with(b, PF_X, 0);
    phdr(b, i)->p_flags |= PF_W;
    snprintf(where, sizeof where, "segment %u is both writable and executable", i);
    refused(b, where, NULL);
}

TEST(segment_past_the_slot)
{
    struct blob b = blob_read(PROG_MUTANT);
    unsigned i = load_with(b, PF_W, 0);
    phdr(b, i)->p_memsz = (uint64_t)1 << 36; /* 64 GiB: far past a slot */
    refused(b, "more than a slot", "raise UPVM_SLOT_SIZE");
}

TEST(symbol_in_a_section_the_file_lacks)
{
    struct blob b = blob_read(PROG_MUTANT);
    Elf64_Sym *s = blob_dynsym(b, "malloc");
    CHECK(s && s->st_shndx == SHN_UNDEF);
    s->st_shndx = 0x1000;
    refused(b, "('malloc') is in section 0x1000, which the file does not have", NULL);
}

TEST(import_made_a_definition_at_0)
{
    struct blob b = blob_read(PROG_MUTANT);
    Elf64_Sym *s = blob_dynsym(b, "malloc");
    s->st_shndx = (uint16_t)(((const Elf64_Ehdr *)b.p)->e_shnum - 1);
    refused(b, "('malloc') at 0 is outside the executable segments", NULL);
}

TEST(constructor_pointing_into_data)
{
    struct blob b = blob_read(PROG_MUTANT);
    Elf64_Dyn *d = blob_dyn(b, DT_INIT_ARRAY);
    CHECK(d);
    size_t n;
    Elf64_Rela *r = rela(b, ".rela.dyn", &n);
    size_t i = 0;
    while (i < n && r[i].r_offset != d->d_un.d_ptr)
        i++;
    CHECK(i < n);
    r[i].r_addend = (int64_t)d->d_un.d_ptr; /* the array itself: data, not code */
    refused(b, "entry 0 of DT_INIT_ARRAY", "is not in an executable segment");
}

static Elf64_Phdr *tls_phdr(struct blob b)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)b.p;
    for (unsigned i = 0; i < eh->e_phnum; i++)
        if (phdr(b, i)->p_type == PT_TLS)
            return phdr(b, i);
    CHECK(!"the mutant program has a PT_TLS");
    return NULL;
}

TEST(tls_filesz_larger_than_memsz)
{
    struct blob b = blob_read(PROG_MUTANT);
    Elf64_Phdr *ph = tls_phdr(b);
    ph->p_filesz = ph->p_memsz + 8;
    refused(b, "PT_TLS: p_filesz", "is larger than p_memsz");
}

TEST(tls_alignment_not_a_power_of_two)
{
    struct blob b = blob_read(PROG_MUTANT);
    tls_phdr(b)->p_align = 0x30;
    refused(b, "PT_TLS: alignment 0x30 is not a power of two", NULL);
}

TEST(tls_image_outside_the_file)
{
    struct blob b = blob_read(PROG_MUTANT);
    tls_phdr(b)->p_vaddr = 0x7fff0000;
    refused(b, "PT_TLS: its initial image 0x7fff0000", "is not inside a segment's file bytes");
}

/* The unwinder reads .eh_frame_hdr in every instance (C++ exceptions):
 * it must lie in a read-only segment's file bytes. */
TEST(eh_frame_hdr_outside_the_file)
{
    struct blob b = blob_read(PROG_MUTANT);
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)b.p;
    Elf64_Phdr *ph = NULL;
    for (unsigned i = 0; i < eh->e_phnum; i++)
        if (phdr(b, i)->p_type == PT_GNU_EH_FRAME)
            ph = phdr(b, i);
    CHECK(ph != NULL);
    ph->p_vaddr = 0x7fff0000;
    refused(b, "PT_GNU_EH_FRAME at 0x7fff0000", "is not inside the file bytes of a read-only segment");
}

TEST(tls_relocation_outside_every_segment)
{
    struct blob b = blob_read(PROG_MUTANT);
    size_t i;
    Elf64_Rela *r = rela_of_type(b, ".rela.dyn", R_X86_64_DTPMOD64, &i);
    r->r_offset = 0x7fff0000;
    char where[128];
    snprintf(where, sizeof where, "relocation %zu of DT_RELA (R_X86_64_DTPMOD64) writes at "
             "0x7fff0000, outside the writable segments", i);
    refused(b, "malformed ELF file", where);
}

TEST(tls_relocation_of_a_plain_symbol)
{
    struct blob b = blob_read(PROG_MUTANT);
    size_t i;
    Elf64_Rela *r = rela_of_type(b, ".rela.dyn", R_X86_64_DTPOFF64, &i);
    Elf64_Sym *s = blob_dynsym(b, "counter");
    CHECK(s);
    Elf64_Sym *tw = blob_dynsym(b, "tls_word");
    CHECK(tw);
    /* the index of counter: tls_word's (which it names) moved by the distance */
    r->r_info = ELF64_R_INFO((uint32_t)((int64_t)ELF64_R_SYM(r->r_info) + (s - tw)),
                             R_X86_64_DTPOFF64);
    refused(b, "names 'counter', which is not thread-local", NULL);
}

/* ---------------------------------------------------------------- at random */

struct field {
    size_t off;
    unsigned width;
};

/* The fields of one file that mutations pick from: program headers,
 * relocations, dynamic entries, dynamic symbols' values and sections. */
static size_t fields_of(struct blob b, struct field *f, size_t max)
{
    size_t n = 0;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)b.p;
    for (unsigned i = 0; i < eh->e_phnum && n + 6 <= max; i++) {
        size_t o = eh->e_phoff + (size_t)i * sizeof(Elf64_Phdr);
        f[n++] = (struct field){o + offsetof(Elf64_Phdr, p_flags), 4};
        f[n++] = (struct field){o + offsetof(Elf64_Phdr, p_offset), 8};
        f[n++] = (struct field){o + offsetof(Elf64_Phdr, p_vaddr), 8};
        f[n++] = (struct field){o + offsetof(Elf64_Phdr, p_filesz), 8};
        f[n++] = (struct field){o + offsetof(Elf64_Phdr, p_memsz), 8};
        f[n++] = (struct field){o + offsetof(Elf64_Phdr, p_align), 8};
    }
    static const char *const tables[] = {".rela.dyn", ".rela.plt", ".dynamic", ".dynsym"};
    for (size_t t = 0; t < ARRAY_SIZE(tables); t++) {
        const Elf64_Shdr *s = blob_section(b, tables[t]);
        for (size_t o = 0; s && o + 8 <= s->sh_size && n < max; o += 4)
            f[n++] = (struct field){s->sh_offset + o, o % 8 ? 4 : 8};
    }
    return n;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A new value for a field: a bit flipped, a small step, or a value
 * loaders trip on. */
static uint64_t mutated(uint64_t old, unsigned width, uint64_t *s)
{
    static const uint64_t odd[] = {0, 1, 8, 0x1000, 0x4000, 0xffffffff, (uint64_t)-1,
                                   (uint64_t)1 << 63, (uint64_t)1 << 40};
    switch (splitmix(s) % 4) {
    case 0: return old ^ ((uint64_t)1 << (splitmix(s) % (width * 8)));
    case 1: return old + ((splitmix(s) % 129) - 64) * 8;
    case 2: return odd[splitmix(s) % ARRAY_SIZE(odd)];
    default: return splitmix(s);
    }
}

static unsigned long count_refused, count_ran, count_crashed;

/* One random mutant: whatever becomes of the program, upvm ends normally. */
static void one_random(struct blob base, const struct field *f, size_t nf, uint64_t seed)
{
    uint64_t s = seed * 0x2545f4914f6cdd1dULL;
    struct blob b = {malloc(base.n), base.n};
    CHECK(b.p);
    memcpy(b.p, base.p, base.n);
    const struct field *pick = &f[splitmix(&s) % nf];
    uint64_t v = 0;
    memcpy(&v, b.p + pick->off, pick->width);
    v = mutated(v, pick->width, &s);
    memcpy(b.p + pick->off, &v, pick->width); /* little endian: the low bytes */
    blob_write(mutant_path(), b.p, b.n);
    free(b.p);
    struct outcome o;
    run_upvm(mutant_path(), &o);
    if (!WIFEXITED(o.status))
        fprintf(stderr, "mutant seed %llu (field at %#zx = %#llx): upvm killed by signal %d "
                "(%s)\n%s\n", (unsigned long long)seed, pick->off, (unsigned long long)v,
                WTERMSIG(o.status), WTERMSIG(o.status) == SIGALRM ? "a hang" : "a crash",
                o.text);
    CHECK(WIFEXITED(o.status));
    if (strstr(o.text, "upvm: cannot start ")) {
        CHECK(!strstr(o.text, "RAN") && !strstr(o.text, "CTOR")); /* refused: nothing ran */
        count_refused++;
    } else if (strstr(o.text, ") crashed: ")) {
        /* the program's own crash, reported by the runtime, which lived */
        CHECK_STR_CONTAINS(o.text, "(mutant, PVM task");
        count_crashed++;
    } else {
        count_ran++;
    }
}

TEST_LIMIT(random_mutants_never_crash_upvm, 240)
{
    struct blob base = blob_read(PROG_MUTANT);
    struct field f[4096];
    size_t nf = fields_of(base, f, ARRAY_SIZE(f));
    const char *e = getenv("MUTANTS_N"), *sd = getenv("MUTANTS_SEED");
    uint64_t n = e && *e ? strtoull(e, NULL, 0) : 200, seed = sd && *sd ? strtoull(sd, NULL, 0) : 1;
    for (uint64_t i = 0; i < n; i++)
        one_random(base, f, nf, seed + i);
    fprintf(stderr, "mutants: %llu from seed %llu: %lu refused, %lu ran, %lu crashed as "
            "programs\n", (unsigned long long)n, (unsigned long long)seed, count_refused,
            count_ran, count_crashed);
    unlink(mutant_path());
    free(base.p);
    CHECK(count_refused > 0 && count_ran > 0);
}

HARNESS_AFTER(test_tmpdir_remove)

HARNESS_MAIN()

/*
 * test-loader-errors.c - every refusal of the loader, with the message a
 * user gets: files that are not programs, programs built the wrong way,
 * unsupported features, missing libraries and symbols, corrupt headers.
 * After a failed instantiation the slot must be reserved (PROT_NONE) again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>

#include "harness.h"
#include "elftest.h"

static char *args[] = {"prog", NULL};

/* Open must fail with code and a message holding each of the needles. */
static void open_fails(const char *path, int code, const char *n1, const char *n2)
{
    struct loader_error err = {0};
    struct loader_image *img = loader_image_open(path, &err);
    if (img)
        fprintf(stderr, "%s opened, expected: %s\n", path, n1);
    CHECK(!img);
    CHECK_STR_CONTAINS(err.msg, n1);
    if (n2)
        CHECK_STR_CONTAINS(err.msg, n2);
    if (code)
        CHECK_EQ(err.code, code);
    fprintf(stderr, "   %s\n", err.msg);
}

static const char *tmp_path(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", test_tmpdir(), name);
    return path;
}

/* ---------------------------------------------------------------- not programs */

TEST(missing_file)
{
    open_fails("/nonexistent/upvm-prog", -ENOENT, "cannot open program /nonexistent/upvm-prog",
               "No such file");
}

TEST(directory)
{
    open_fails(test_tmpdir(), -EISDIR, "is a directory, not a program", NULL);
}

TEST(text_file)
{
    const char *p = tmp_path("notes.txt");
    blob_write(p, "hello, world\n", 13);
    open_fails(p, -ENOEXEC, "is not an ELF file", NULL);
    blob_write(p, "#!/bin/sh\necho hi\n", 18);
    open_fails(p, -ENOEXEC, "is a script, not a compiled program", NULL);
    blob_write(p, "", 0);
    open_fails(p, -ENOEXEC, "is empty, not a program", NULL);
    unlink(p);
}

TEST(shared_library)
{
    open_fails(LOADER_NOTPROG, -ENOEXEC, "is a shared library, not a program",
               "build the program with upvmcc");
}

/* ---------------------------------------------------------------- built wrong */

TEST(not_pie)
{
    open_fails(PROG_NOPIE, -ENOEXEC, "not a position-independent executable: rebuild it with "
               "upvmcc", PROG_NOPIE);
}

TEST(no_exported_main)
{
    open_fails(PROG_NOMAIN, -ENOEXEC, "no exported main: build it with upvmcc (it links with "
               "-rdynamic)", NULL);
}

TEST(tls)
{
    /* linked -pie: its TLS is local-exec, at offsets all ULPs share */
    open_fails(PROG_TLS, -ENOEXEC, "thread-local variables in a PIE are reached at fixed "
               "offsets from the thread pointer", "rebuild it with upvmcc");
}

TEST(copy_relocation)
{
    open_fails(PROG_COPYRELOC, -ENOEXEC, "R_X86_64_COPY relocation for symbol 'optind' in ",
               "build with upvmcc (-fPIC) so none are needed");
}

TEST(text_relocations)
{
    struct blob b = blob_read(PROG_COUNTER);
    Elf64_Dyn *d = blob_dyn(b, DT_DEBUG); /* a tag the loader ignores */
    CHECK(d);
    d->d_tag = DT_TEXTREL;
    const char *p = tmp_path("textrel");
    blob_write(p, b.p, b.n);
    open_fails(p, -ENOEXEC, "has text relocations (DT_TEXTREL)", "-fPIC");
    unlink(p);
    free(b.p);
}

/* Patch one ELF header byte and expect the message. */
static void patched_ident(size_t off, unsigned char v, const char *n1)
{
    struct blob b = blob_read(PROG_COUNTER);
    b.p[off] = v;
    const char *p = tmp_path("ident");
    blob_write(p, b.p, b.n);
    open_fails(p, -ENOEXEC, n1, NULL);
    unlink(p);
    free(b.p);
}

TEST(wrong_class_or_machine)
{
    patched_ident(EI_CLASS, ELFCLASS32, "is a 32-bit program");
    patched_ident(EI_DATA, ELFDATA2MSB, "malformed ELF file");
    patched_ident(offsetof(Elf64_Ehdr, e_machine), EM_AARCH64, "built for another machine");
    patched_ident(offsetof(Elf64_Ehdr, e_type), ET_REL, "an object file (.o), not a program");
}

TEST(truncated)
{
    struct blob b = blob_read(PROG_COUNTER);
    const char *p = tmp_path("truncated");
    blob_write(p, b.p, b.n / 2);
    open_fails(p, -ENOEXEC, "malformed ELF file", "truncated");
    blob_write(p, b.p, 40);
    open_fails(p, -ENOEXEC, "malformed ELF file", "truncated ELF header");
    unlink(p);
    free(b.p);
}

/* ---------------------------------------------------------------- libraries, symbols */

TEST(missing_library)
{
    open_fails(PROG_NEEDS_GONE, -ENOENT, "needs the library libloader-gone.so, which does not "
               "load", "cannot open shared object file");
}

static int provide_nowhere(int x) { return x * 10; }

static void *nowhere_resolver(const char *name, void *ctx)
{
    (void)ctx;
    return strcmp(name, "loader_test_nowhere") == 0 ? (void *)provide_nowhere : NULL;
}

TEST(undefined_symbol)
{
    struct loader_error err = {0};
    struct loader_image *img = loader_image_open(PROG_UNDEF, &err);
    CHECK(img); /* the resolver may still provide it */
    char *slot = slot_reserve(SLOT_SIZE);
    struct loader_instance in;
    CHECK_EQ(loader_instantiate(img, slot, NULL, NULL, &in, &err), -ENOENT);
    CHECK_STR_CONTAINS(err.msg, "undefined symbol 'loader_test_nowhere'");
    CHECK_STR_CONTAINS(err.msg, "libc.so.6");
    fprintf(stderr, "   %s\n", err.msg);
    check_reserved(slot); /* nothing left mapped */
    check_reserved(slot + loader_image_span(img) - 1);

    CHECK_EQ(loader_instantiate(img, slot, nowhere_resolver, NULL, &in, &err), 0);
    CHECK_EQ(in.main(1, args, NULL), 30);
    loader_unmap(&in);
    loader_image_put(img);
    munmap(slot, SLOT_SIZE);
}

TEST(unaligned_base)
{
    struct loader_error err = {0};
    struct loader_image *img = loader_image_open(PROG_COUNTER, &err);
    CHECK(img);
    char *slot = slot_reserve(SLOT_SIZE);
    struct loader_instance in;
    CHECK_EQ(loader_instantiate(img, slot + 16, NULL, NULL, &in, &err), -EINVAL);
    CHECK_STR_CONTAINS(err.msg, "not page-aligned");
    loader_image_put(img);
    munmap(slot, SLOT_SIZE);
}

/* A relocation the linker never makes for a PIE: patched in. */
TEST(unsupported_relocation)
{
    struct blob b = blob_read(PROG_COUNTER);
    const Elf64_Shdr *rd = blob_section(b, ".rela.dyn");
    CHECK(rd);
    Elf64_Rela *r = (Elf64_Rela *)(b.p + rd->sh_offset);
    r[0].r_info = ELF64_R_INFO(0, R_X86_64_PC32);
    const char *p = tmp_path("pc32");
    blob_write(p, b.p, b.n);
    open_fails(p, -ENOEXEC, "unsupported relocation R_X86_64_PC32", NULL);
    r[0].r_info = ELF64_R_INFO(0, R_X86_64_TPOFF64);
    blob_write(p, b.p, b.n);
    open_fails(p, -ENOEXEC, "R_X86_64_TPOFF64", "initial-exec thread-local access");
    r[0].r_info = ELF64_R_INFO(0, R_X86_64_RELATIVE);
    r[0].r_offset = 0x10; /* in the read-only first segment */
    blob_write(p, b.p, b.n);
    open_fails(p, -ENOEXEC, "malformed ELF file", "outside the writable segments");
    unlink(p);
    free(b.p);
}

HARNESS_AFTER(test_tmpdir_remove)

HARNESS_MAIN()

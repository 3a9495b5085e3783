/*
 * elftest.h - helpers for the loader tests: whole files in memory, their
 * sections and dynamic symbols (found through the section headers, which
 * the loader never reads: the tests find things independently of it),
 * patched copies in a temporary directory, slots, /proc/self/maps.
 */
#ifndef UPVM_TESTS_ELFTEST_H
#define UPVM_TESTS_ELFTEST_H

#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "loader/loader.h"

#define SLOT_SIZE ((size_t)64 << 20)

struct blob {
    unsigned char *p;
    size_t n;
};

static inline struct blob blob_read(const char *path)
{
    struct blob b = {0};
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    b.n = (size_t)st.st_size;
    b.p = malloc(b.n);
    CHECK(b.p);
    CHECK(pread(fd, b.p, b.n, 0) == (ssize_t)b.n);
    close(fd);
    return b;
}

static inline void blob_write(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    CHECK(fd >= 0);
    CHECK(n == 0 || write(fd, p, n) == (ssize_t)n);
    close(fd);
}

static inline const Elf64_Shdr *blob_section(struct blob b, const char *name)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)b.p;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(b.p + eh->e_shoff);
    const char *names = (const char *)b.p + sh[eh->e_shstrndx].sh_offset;
    for (unsigned i = 0; i < eh->e_shnum; i++)
        if (strcmp(names + sh[i].sh_name, name) == 0)
            return &sh[i];
    return NULL;
}

static inline Elf64_Sym *blob_dynsym(struct blob b, const char *name)
{
    const Elf64_Shdr *sym = blob_section(b, ".dynsym"), *str = blob_section(b, ".dynstr");
    CHECK(sym && str);
    Elf64_Sym *s = (Elf64_Sym *)(b.p + sym->sh_offset);
    for (size_t i = 0; i < sym->sh_size / sizeof *s; i++)
        if (strcmp((const char *)b.p + str->sh_offset + s[i].st_name, name) == 0)
            return &s[i];
    return NULL;
}

static inline Elf64_Dyn *blob_dyn(struct blob b, int64_t tag)
{
    const Elf64_Shdr *dyn = blob_section(b, ".dynamic");
    CHECK(dyn);
    Elf64_Dyn *d = (Elf64_Dyn *)(b.p + dyn->sh_offset);
    for (size_t i = 0; i < dyn->sh_size / sizeof *d && d[i].d_tag != DT_NULL; i++)
        if (d[i].d_tag == tag)
            return &d[i];
    return NULL;
}

/* A fresh directory for patched copies, made when first asked for. */
static char test_tmpdir_path[256];

static inline const char *test_tmpdir(void)
{
    if (!test_tmpdir_path[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(test_tmpdir_path, sizeof test_tmpdir_path, "%s/upvm-loader-XXXXXX",
                 t && *t ? t : "/tmp");
        CHECK(mkdtemp(test_tmpdir_path));
    }
    return test_tmpdir_path;
}

/* The end of a case: its directory, if it made one, must be empty. */
static inline void test_tmpdir_remove(void)
{
    if (test_tmpdir_path[0])
        CHECK_EQ(rmdir(test_tmpdir_path), 0);
}

static inline void *slot_reserve(size_t n)
{
    void *p = mmap(NULL, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(p != MAP_FAILED);
    return p;
}

/* The /proc/self/maps line of the mapping holding addr, or 0. */
struct map_line {
    uintptr_t start, end;
    char perms[5];
    unsigned long long offset, inode;
};

static inline int map_of(const void *addr, struct map_line *m)
{
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f);
    char line[512];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned dmaj, dmin;
        if (sscanf(line, "%lx-%lx %4s %llx %x:%x %llu", &m->start, &m->end, m->perms,
                   &m->offset, &dmaj, &dmin, &m->inode) == 7 &&
            (uintptr_t)addr >= m->start && (uintptr_t)addr < m->end)
            found = 1;
    }
    fclose(f);
    return found;
}

static inline void check_reserved(const void *addr)
{
    struct map_line m;
    CHECK(map_of(addr, &m));
    CHECK_STR_CONTAINS(m.perms, "---p");
}

#endif

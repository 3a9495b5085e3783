/*
 * fuzz_elf.c - libFuzzer target: a program file for UPVM's own loader.
 * The input is written to a memfd and opened as an image
 * (loader_image_open: the ELF header, program and section headers,
 * dynamic section, symbols, relocations are all read and checked); then
 * its layout is asked for as the runtime asks before it maps one.  Any
 * input may be refused; none may crash the loader (ASan + UBSan).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "loader/loader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    if (write(fd, data, size) == (ssize_t)size) {
        struct loader_error err = {0, ""};
        struct loader_image *img = loader_image_open(path, &err);
        if (img) {
            size_t off;
            (void)loader_image_span(img);
            (void)loader_image_writable(img, &off);
            loader_image_put(img);
        }
    }
    close(fd);
    return 0;
}

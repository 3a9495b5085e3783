/*
 * cxx_new.c - C++'s global operator new and delete on the task's own heap,
 * so that a process-mode C++ task's strings, containers and `new T` are in
 * its slot and move with it (docs/cxx.md, "Migration").
 *
 * The C++ standard makes the global allocation functions replaceable: a
 * program (or a library before libstdc++ in the symbol search order) may
 * define them, and every call binds to that definition, libstdc++'s own
 * calls included (they go through its PLT).  libupvm defines them here,
 * in C, under their mangled names (the Itanium C++ ABI's; the full list is
 * what libstdc++ exports: nm -D libstdc++.so.6 | grep -E ' _Zn[wa]| _Zd[la]').
 * libupvm comes before libstdc++ in every node's global scope: the node's
 * executable needs libupvm before libstdc++ (upvmc++ and g++ put the C++
 * runtime last), or the loader dlopens libstdc++ later (upvm run).  A
 * process-mode program's imports of _Znwm and the like are looked up with
 * dlsym(RTLD_DEFAULT), so they bind here as well.
 *
 *   new     in a process-mode task (proc_current()), its heap; anywhere
 *           else (thread mode, the node's own threads) libc's malloc.
 *   delete  by address: a pointer in the calling task's heap goes back to
 *           it, one outside the slot window to libc's free.
 *
 * Where another operator new is bound (an ASan build: the sanitizer's
 * runtime defines them and comes first; a preloaded allocator), these are
 * never called and C++ tasks stay on their node (proc_cxx_new_bound()).
 *
 * libstdc++'s own objects, shared by the tasks of a node, are made when it
 * loads, outside any task (libc's heap), with one kind of exception: what a
 * task makes itself and hands to the node's runtime, e.g. a locale it
 * makes global (std::locale::global) or gives std::cout (imbue).  Those are
 * in its heap and go when it ends or moves (docs/cxx.md).  The caches the
 * classic locale keeps for formatting numbers are libstdc++'s static
 * storage, not made by new.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "mem/mem.h"
#include "proc/proc.h"

typedef void (*handler_fn)(void);

/* libstdc++'s std::get_new_handler and std::__throw_bad_alloc: operator new
 * calls the handler the program set and tries again, or throws
 * std::bad_alloc, which C cannot do itself. */
static handler_fn new_handler(void)
{
    static handler_fn (*get)(void);
    if (!get) {
        void *s = dlsym(RTLD_DEFAULT, "_ZSt15get_new_handlerv");
        memcpy(&get, &s, sizeof get);
    }
    return get ? get() : NULL;
}

static _Noreturn void throw_bad_alloc(void)
{
    void *s = dlsym(RTLD_DEFAULT, "_ZSt17__throw_bad_allocv");
    void (*f)(void);
    memcpy(&f, &s, sizeof f);
    if (f)
        f();
    abort(); /* no C++ runtime: nothing can catch it anyway */
}

/* n bytes aligned to align (0: malloc's alignment), from the task's heap
 * or libc's (proc_alloc); NULL when there is no room. */
static void *allocate(size_t n, size_t align)
{
    if (n == 0)
        n = 1; /* new of 0 bytes gives a distinct pointer */
    if (align && align < sizeof(void *))
        align = sizeof(void *);
    return proc_alloc("operator new", n, align);
}

/* The new-handler loop of [new.delete.single]: allocate, else call the
 * program's new-handler and try again; with no handler, throw
 * std::bad_alloc (the throwing forms) or return NULL (the nothrow forms).
 * (A new-handler that itself throws std::bad_alloc ends a nothrow call
 * with that exception: C cannot catch it, where libstdc++'s nothrow new
 * would and return NULL.  Only a program that sets such a handler and
 * then runs out of memory sees the difference.) */
static void *allocate_or_fail(size_t n, size_t align, bool nothrow)
{
    for (;;) {
        void *q = allocate(n, align);
        if (q)
            return q;
        handler_fn h = new_handler();
        if (!h && nothrow)
            return NULL;
        if (!h)
            throw_bad_alloc();
        h();
    }
}
static void *allocate_or_throw(size_t n, size_t align) { return allocate_or_fail(n, align, false); }
static void *allocate_or_null(size_t n, size_t align) { return allocate_or_fail(n, align, true); }

static void release(void *ptr)
{
    proc_free("operator delete", ptr);
}

/* The replaceable functions, by their mangled names.  The throwing
 * allocation functions: */
#define API __attribute__((visibility("default")))
/* no header declares them: C++ code gets them from <new> */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
/* clang-format off */
API void *_Znwm(size_t n) { return allocate_or_throw(n, 0); }
API void *_Znam(size_t n) { return allocate_or_throw(n, 0); }
API void *_ZnwmSt11align_val_t(size_t n, size_t a) { return allocate_or_throw(n, a); }
API void *_ZnamSt11align_val_t(size_t n, size_t a) { return allocate_or_throw(n, a); }
/* std::nothrow_t const& (its address, unused): */
API void *_ZnwmRKSt9nothrow_t(size_t n, const void *nt) { (void)nt; return allocate_or_null(n, 0); }
API void *_ZnamRKSt9nothrow_t(size_t n, const void *nt) { (void)nt; return allocate_or_null(n, 0); }
API void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t a, const void *nt)
{ (void)nt; return allocate_or_null(n, a); }
API void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t a, const void *nt)
{ (void)nt; return allocate_or_null(n, a); }
/* delete and delete[], plain, sized (m), aligned, nothrow: all one */
API void _ZdlPv(void *p) { release(p); }
API void _ZdaPv(void *p) { release(p); }
API void _ZdlPvm(void *p, size_t n) { (void)n; release(p); }
API void _ZdaPvm(void *p, size_t n) { (void)n; release(p); }
API void _ZdlPvSt11align_val_t(void *p, size_t a) { (void)a; release(p); }
API void _ZdaPvSt11align_val_t(void *p, size_t a) { (void)a; release(p); }
API void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t a) { (void)n; (void)a; release(p); }
API void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t a) { (void)n; (void)a; release(p); }
API void _ZdlPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; release(p); }
API void _ZdaPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; release(p); }
API void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const void *nt)
{ (void)a; (void)nt; release(p); }
API void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const void *nt)
{ (void)a; (void)nt; release(p); }
/* clang-format on */
#pragma GCC diagnostic pop

/* Hidden names for two of them: a reference by these binds to this file's
 * definitions, where one by the exported name, from inside libupvm too,
 * would go through the GOT to whichever definition comes first. */
extern __typeof__(_Znwm) upvm_operator_new __attribute__((alias("_Znwm"), visibility("hidden")));
extern __typeof__(_ZdlPv) upvm_operator_delete
    __attribute__((alias("_ZdlPv"), visibility("hidden")));

/* Are the functions above the ones every call binds to?  The global
 * lookup answers as the dynamic linker does for libstdc++'s calls. */
bool proc_cxx_new_bound(void)
{
    void *(*mine_new)(size_t) = upvm_operator_new;
    void (*mine_delete)(void *) = upvm_operator_delete;
    void *nw = dlsym(RTLD_DEFAULT, "_Znwm"), *dl = dlsym(RTLD_DEFAULT, "_ZdlPv");
    void *want_new, *want_delete;
    memcpy(&want_new, &mine_new, sizeof want_new);
    memcpy(&want_delete, &mine_delete, sizeof want_delete);
    return nw == want_new && dl == want_delete;
}

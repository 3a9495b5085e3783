/*
 * cxx.c - C++ programs as ULPs: exceptions in process-mode programs, each
 * ULP its own exception state, an uncaught exception ending its task only
 * (docs/cxx.md).
 *
 * Nothing here is linked against libstdc++ or named in a C program's
 * switch: the C++ runtime's entry points are looked up (dlsym) once a
 * program that has them is in the node, and only then is anything
 * registered.  What they are is the Itanium C++ ABI (the one g++ and
 * clang++ use on x86-64), which libstdc++ keeps stable.
 *
 * 1. Finding a program's unwind tables.  The unwinder (libgcc_s, gcc 12)
 *    asks first the frame tables registered with __register_frame_info,
 *    then glibc's _dl_find_object (glibc >= 2.35), which knows only the
 *    objects ld.so loaded: not a program UPVM's loader put in a slot, so a
 *    throw found no handler and ended the node.  libupvm defines
 *    _dl_find_object: an address inside the calling ULP's program copy
 *    gives that copy's PT_GNU_EH_FRAME (.eh_frame_hdr, the linker's sorted
 *    table of FDEs, mapped from the file in every copy); any other address
 *    goes to glibc's.  libupvm comes before ld.so in the node's global
 *    symbol scope (every node's executable links it), so libgcc_s binds to
 *    it.  Why not __register_frame_info per instance: that costs every
 *    instantiation a registration (and the unwinder a sort of the copy's
 *    FDEs on its first throw), every unmap, reuse and migration a
 *    deregistration by a linear search, and every throw a walk of the list
 *    of registered objects (gcc 12), which with thousands of copies is
 *    thousands of steps per frame; here an instance costs nothing, a
 *    migrated one is found wherever it arrives (its own slot, its own
 *    copy), and a lookup is a range check and a binary search of the table.
 *
 * 2. Exception state per ULP.  libstdc++ keeps the caught-exception stack
 *    and the uncaught count per kernel thread (__cxa_get_globals), but a
 *    ULP may switch inside a catch block or while it unwinds (a destructor
 *    that sends, a catch block that receives).  The block is registered
 *    with the core (core_set_thread_state), which gives each ULP its own
 *    copy across switches and kernel contexts.  A C program never gets
 *    here, so its switches cost what they did.
 *
 * 3. An uncaught exception (std::terminate) in a process-mode ULP ends
 *    that ULP with status 134, as abort() does, and a report naming it,
 *    the exception's type and what(); other ULPs go on.  Elsewhere
 *    (thread mode) the handler that was there runs (libstdc++'s: the
 *    message, then abort()).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/proc.h"
#include "util/env.h"

/* ------------------------------------------------------------ unwind tables */

#ifdef DLFO_STRUCT_HAS_EH_DBASE /* glibc >= 2.35: the unwinder asks _dl_find_object */
typedef int (*find_object_fn)(void *pc, struct dl_find_object *out);

static find_object_fn glibc_find_object(void)
{
    static find_object_fn real;
    find_object_fn f = __atomic_load_n(&real, __ATOMIC_RELAXED);
    if (!f) {
        void *sym = dlvsym(RTLD_NEXT, "_dl_find_object", "GLIBC_2.35");
        memcpy(&f, &sym, sizeof f);
        __atomic_store_n(&real, f, __ATOMIC_RELAXED);
    }
    return f;
}

/* The program copy the calling ULP runs (its own, or for a thread-mode task
 * of a process-mode program, the copy it belongs to), or NULL. */
static const struct proc *copy_of_caller(void)
{
    const struct ulp *u = core_self();
    if (!u)
        return NULL;
    return u->family ? u->family : u->ext[ULP_EXT_PROC];
}

/* glibc's _dl_find_object (dlfcn.h), for the unwinder: see 1. above.
 * Any thread may call it (a coupled ULP throws on its kernel context). */
__attribute__((visibility("default"))) int _dl_find_object(void *pc, struct dl_find_object *out)
{
    const struct proc *p = copy_of_caller();
    if (p && p->inst.img) {
        uintptr_t base = p->inst.base, addr = (uintptr_t)pc;
        uint64_t hdr = loader_image_eh_frame_hdr(p->inst.img);
        size_t span = loader_image_span(p->inst.img);
        if (hdr && addr >= base && addr - base < span) {
            memset(out, 0, sizeof *out);
            out->dlfo_map_start = (void *)base;
            out->dlfo_map_end = (void *)(base + span);
            out->dlfo_eh_frame = (void *)(base + hdr);
            return 0;
        }
    }
    find_object_fn real = glibc_find_object();
    return real ? real(pc, out) : -1;
}
#else
/* An older glibc: its unwinder walks dl_iterate_phdr instead, which does
 * not list the programs in slots either; exceptions in process-mode
 * programs need glibc 2.35 (docs/cxx.md). */
#endif

/* ------------------------------------------------------------ the C++ runtime */

/* What of libstdc++ is used, by the names the Itanium ABI gives them. */
static struct {
    void *(*get_globals)(void);                 /* __cxa_get_globals */
    const void *(*current_type)(void);          /* __cxa_current_exception_type */
    char *(*demangle)(const char *, char *, size_t *, int *); /* __cxa_demangle */
    void (*(*set_terminate)(void (*)(void)))(void);           /* std::set_terminate */
    void (*current_exception)(void **out);      /* std::current_exception (returned
                                                 * through a hidden pointer) */
    void (*exception_ptr_dtor)(void **eptr);    /* std::exception_ptr::~exception_ptr */
    /* __cxxabiv1::__class_type_info::__do_catch: does a handler of this
     * class catch an object of the thrown type; adjusts the object */
    bool (*class_do_catch)(const void *catch_ti, const void *thrown_ti, void **obj,
                           unsigned outer);
    const void *std_exception_ti;               /* typeid(std::exception) */
    void (*previous_terminate)(void);
} cxx;

static void *sym(const char *name)
{
    return dlsym(RTLD_DEFAULT, name);
}

#define LOOK_UP(field, name) memcpy(&cxx.field, &(void *){sym(name)}, sizeof cxx.field)

/* libstdc++'s std::type_info: its vtable, then its (mangled) name. */
struct type_info_abi {
    const void *vtable;
    const char *name;
};

/* "std::runtime_error" for the current exception's type, into buf. */
static void type_name(const void *ti, char *buf, size_t len)
{
    const char *mangled = ((const struct type_info_abi *)ti)->name;
    if (*mangled == '*') /* a type local to its translation unit */
        mangled++;
    int status = -1;
    char *plain = cxx.demangle ? cxx.demangle(mangled, NULL, NULL, &status) : NULL;
    snprintf(buf, len, "%s", plain && status == 0 ? plain : mangled);
    free(plain);
}

/* what() of the current exception when it is a std::exception (into buf,
 * true), else false. */
static bool exception_what(const void *ti, char *buf, size_t len)
{
    if (!cxx.current_exception || !cxx.exception_ptr_dtor || !cxx.class_do_catch ||
        !cxx.std_exception_ti)
        return false;
    void *eptr = NULL;
    cxx.current_exception(&eptr);
    void *obj = eptr;
    bool is_exception = obj && cxx.class_do_catch(cxx.std_exception_ti, ti, &obj, 1);
    if (is_exception) {
        /* std::exception's virtual functions, in the ABI's order: the two
         * destructors, then what() */
        const char *(*const *vtable)(const void *) = *(const char *(*const **)(const void *))obj;
        const char *what = vtable[2](obj);
        snprintf(buf, len, "%s", what ? what : "(null)");
    }
    cxx.exception_ptr_dtor(&eptr);
    return is_exception;
}

/* std::terminate's handler: see 3. above. */
static void on_terminate(void)
{
    struct proc *p = proc_current();
    if (!p) {
        if (cxx.previous_terminate)
            cxx.previous_terminate();
        abort();
    }
    char type[256] = "", what[512] = "", buf[160];
    const void *ti = cxx.current_type ? cxx.current_type() : NULL;
    struct ulp *u = core_self();
    const char *name = core_ulp_name(u, buf, sizeof buf);
    if (!ti) {
        fprintf(stderr, "upvm: ULP %d (%s) called std::terminate() without an exception "
                "being thrown: the task ends with status 134, as after abort(); the node goes "
                "on\n", u->id, name);
    } else {
        type_name(ti, type, sizeof type);
        bool has_what = exception_what(ti, what, sizeof what);
        fprintf(stderr, "upvm: ULP %d (%s) ended by an uncaught C++ exception of type %s%s%s%s: "
                "the task ends with status 134, as after abort(); the node goes on\n", u->id,
                name, type, has_what ? ", what(): \"" : "", what, has_what ? "\"" : "");
    }
    fflush(stderr);
    proc_exit(p, 128 + SIGABRT, true);
}

/* The calling thread's exception globals (core_set_thread_state's
 * locate): a call, so it looks afresh on every thread. */
static void *eh_globals(void)
{
    return cxx.get_globals();
}

/* libstdc++'s __cxa_eh_globals on x86-64: the caught-exception stack and
 * the uncaught count, two words with the padding: the core's block. */

/* A program that links libupvm and libstdc++ (thread mode) has both from
 * its start: register before its first ULP exists, so that its ULPs have
 * their own exception state whether or not it ever calls PVM. */
__attribute__((constructor)) static void cxx_at_load(void)
{
    proc_cxx_init();
}

void proc_cxx_init(void)
{
    static bool done;
    if (done)
        return;
    LOOK_UP(get_globals, "__cxa_get_globals");
    if (!cxx.get_globals)
        return; /* no C++ runtime in the node (yet): a later program may bring it */
    done = true;
    LOOK_UP(current_type, "__cxa_current_exception_type");
    LOOK_UP(demangle, "__cxa_demangle");
    LOOK_UP(set_terminate, "_ZSt13set_terminatePFvvE");
    LOOK_UP(current_exception, "_ZSt17current_exceptionv");
    LOOK_UP(exception_ptr_dtor, "_ZNSt15__exception_ptr13exception_ptrD1Ev");
    LOOK_UP(class_do_catch, "_ZNK10__cxxabiv117__class_type_info10__do_catchEPKSt9type_infoPPvj");
    cxx.std_exception_ti = sym("_ZTISt9exception");
    core_set_thread_state(eh_globals);
    if (cxx.set_terminate)
        cxx.previous_terminate = cxx.set_terminate(on_terminate);
}

/* ------------------------------------------------------------ migration */

const char *proc_cxx_pins(const struct proc *p)
{
    static int movable = -1; /* read once: what is bound does not change */
    if (!p || !p->inst.img || !loader_image_needs(p->inst.img, "libstdc++.so"))
        return NULL;
    if (movable < 0)
        movable = proc_cxx_new_bound() || env_flag("UPVM_CXX_MIGRATE");
    if (movable)
        return NULL;
    return "its program links the C++ runtime (libstdc++), and the operator new bound in this "
           "node is not UPVM's (a sanitizer's runtime or a preloaded allocator comes first), so "
           "what it made with new (strings, containers) is in its node's memory, not in the "
           "task's slot, and would not move with it; start the job with UPVM_CXX_MIGRATE=1 to "
           "move such tasks anyway, for programs whose tasks hold no such object across a move";
}

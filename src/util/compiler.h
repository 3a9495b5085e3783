/* compiler.h - small portability and hinting macros used by every layer. */
#ifndef UPVM_UTIL_COMPILER_H
#define UPVM_UTIL_COMPILER_H

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define NODISCARD   __attribute__((warn_unused_result))
#define NOINLINE    __attribute__((noinline))
#define COLD        __attribute__((cold, noinline))
#define HIDDEN      __attribute__((visibility("hidden")))
/* Neither inlined nor analysed across calls (its calls are never merged, nor
 * taken to read nothing): GCC's noipa.  Clang has no noipa; its optnone
 * (with noinline) keeps the function out of its optimisation passes. */
#if defined(__clang__)
#define NOIPA       __attribute__((noinline, optnone))
#else
#define NOIPA       __attribute__((noipa))
#endif
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#if defined(UPVM_SANITIZE) || defined(__SANITIZE_ADDRESS__)
#define UPVM_ASAN 1
#else
#define UPVM_ASAN 0
#endif

/* ThreadSanitizer (UPVM_TSAN=ON): every ULP is a fiber of its own for it
 * (core/sched.c), so that a switch of stacks is not taken for a race. */
#if defined(__SANITIZE_THREAD__)
#define UPVM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UPVM_TSAN 1
#endif
#endif
#ifndef UPVM_TSAN
#define UPVM_TSAN 0
#endif

#endif /* UPVM_UTIL_COMPILER_H */

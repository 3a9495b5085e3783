/*
 * newdelete.cc - what operator new and delete of small objects cost in a
 * process-mode C++ task (docs/cxx.md): libupvm's, on the task's heap,
 * against libstdc++'s, on the node's malloc (the same binary run with an
 * older libupvm that does not define them).
 *
 *   UPVM_CXX=g++ build/tools/upvmcc/upvmc++ -O2 -o newdelete bench/cxx/newdelete.cc
 *   taskset -c 0 ./newdelete
 *   LD_LIBRARY_PATH=/path/to/old/build/src taskset -c 0 ./newdelete    # before
 *
 * Three loops, each timed 9 times; printed: the median (min) in ns per
 * object:
 *   single  new and delete of one 24-byte object, 1,000,000 times
 *   batch   1,000 objects of 16 to 64 bytes made, then deleted in the
 *           order made, 1,000 times
 *   string  a std::string of 40 characters (over its inline buffer) made
 *           and destroyed, 1,000,000 times
 *   malloc  batch with malloc and free instead (the task's heap in both
 *           builds): what the heap itself costs
 */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct Small {
    long a, b, c;
};

template <int N> struct Sized {
    char bytes[N];
};

double now_ns()
{
    return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

/* Keeps the compiler from dropping an allocation it can see unused. */
void *volatile sink;

double single()
{
    const int n = 1000000;
    double t0 = now_ns();
    for (int i = 0; i < n; i++) {
        Small *s = new Small{i, i, i};
        sink = s;
        delete s;
    }
    return (now_ns() - t0) / n;
}

double batch()
{
    const int n = 1000, rounds = 1000;
    static void *held[n];
    double t0 = now_ns();
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < n; i++) {
            switch (i % 4) { /* 16, 32, 48, 64 bytes */
            case 0: held[i] = new Sized<16>; break;
            case 1: held[i] = new Sized<32>; break;
            case 2: held[i] = new Sized<48>; break;
            default: held[i] = new Sized<64>; break;
            }
            sink = held[i];
        }
        for (int i = 0; i < n; i++) {
            switch (i % 4) {
            case 0: delete static_cast<Sized<16> *>(held[i]); break;
            case 1: delete static_cast<Sized<32> *>(held[i]); break;
            case 2: delete static_cast<Sized<48> *>(held[i]); break;
            default: delete static_cast<Sized<64> *>(held[i]); break;
            }
        }
    }
    return (now_ns() - t0) / (static_cast<double>(n) * rounds);
}

/* batch with malloc and free, for comparison: in a process-mode task
 * they are the task's heap already (src/proc/interpose.c) */
double batch_malloc()
{
    const int n = 1000, rounds = 1000;
    static void *held[n];
    double t0 = now_ns();
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < n; i++) {
            held[i] = std::malloc(static_cast<size_t>(16 * (i % 4 + 1)));
            sink = held[i];
        }
        for (int i = 0; i < n; i++)
            std::free(held[i]);
    }
    return (now_ns() - t0) / (static_cast<double>(n) * rounds);
}

double string()
{
    const int n = 1000000;
    double t0 = now_ns();
    for (int i = 0; i < n; i++) {
        std::string s(40, static_cast<char>('a' + i % 26));
        sink = &s[0];
    }
    return (now_ns() - t0) / n;
}

void report(const char *name, double (*loop)())
{
    const int runs = 9;
    double t[runs];
    for (double &x : t)
        x = loop();
    std::sort(t, t + runs);
    std::printf("%-7s %6.1f ns (min %.1f)\n", name, t[runs / 2], t[0]);
}

} // namespace

int main()
{
    report("single", single);
    report("batch", batch);
    report("string", string);
    report("malloc", batch_malloc);
    return 0;
}

/*
 * tasks.cc - C++ PVM tasks that throw and catch across PVM calls, all at
 * once, each with its own exception state (docs/cxx.md).
 *
 *   tasks [N [uncaught | uncaught-master | migrate | migrate-light | balance | move-in-catch]]
 *
 * The master spawns N copies of this program (process mode: built with
 * upvmcc; or, built with -DTHREAD_MODE and linked with libupvm, N
 * thread-mode tasks, UPVM_TASK) and leads them through four rounds, each
 * arranged so that every worker is inside the same C++ construct at the
 * same time while the others run:
 *   1. a function that pvm_recv's, then throws; an object whose destructor
 *      pvm_send's during the unwinding (the master counts the messages);
 *   2. a destructor that pvm_recv's while its exception unwinds: the
 *      master answers only when all N are there (std::uncaught_exceptions()
 *      is 1 in each, 0 in the master);
 *   3. a catch block that pvm_recv's (the master lets them go when all N
 *      are inside theirs), throws and catches another exception inside it,
 *      then rethrows with `throw;`, caught outside: the exception each
 *      catches is its own;
 *   4. lines written with std::cout, with switches between them.
 * Process mode also checks that each copy constructs its global object
 * once, and that the global's and a function-local static's destructors
 * run when the task ends (return from main, exit(), or pvm_exit and
 * return, by worker number), sending the master a message.
 *
 * "uncaught": worker 0 throws an exception nobody catches after round 3:
 * it ends alone (the report names it), the others finish; the master
 * exits 0 when the rest is right.  "uncaught-master": the master throws
 * one itself at the end (the job's exit status is then 134).  "migrate"
 * (process mode, a job of several nodes): each worker fills a string, a
 * vector, a map and a new'd vector of strings (Held), moves itself to the
 * next node before round 1, checks and grows them there, and moves again
 * after round 3, so that it throws on a node it arrived on and leaves one
 * where it threw; it then sends the master their contents, which the
 * master prints ("master: worker K holds ...") and checks.
 * "balance" (several nodes, a balancer): each worker fills the same
 * containers and works on them, unevenly (busy), before round 1.
 * "new" (process mode): the master alone checks the forms of operator
 * new (new_forms).
 * "migrate-light": the same moves without the containers (a build whose
 * operator new is not UPVM's, with UPVM_CXX_MIGRATE=1).  "move-in-catch"
 * (several nodes): at the end the master asks to move itself from inside
 * a catch block (refused: it says so and why), then after it (done, or
 * refused where the operator new is not UPVM's: it says which).
 * "ulps" (thread mode): no PVM at all; see ulps() below.
 * The master prints "master: N workers OK" and exits 0 when all is right,
 * else names what went wrong and exits 1.
 */
#include <pvm3.h>
#include <upvm.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <new>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

enum tag {
    TAG_THROW_GO = 1, /* master -> worker: round 1 may throw */
    TAG_RAII,         /* worker -> master: sent by a destructor while unwinding */
    TAG_UNWIND_Q,     /* worker -> master: in a destructor, unwinding (round 2) */
    TAG_UNWIND_A,     /* master -> worker: go on unwinding */
    TAG_READY,        /* worker -> master: inside its catch block (round 3) */
    TAG_GO,           /* master -> worker: leave it */
    TAG_RESULT,       /* worker -> master: "ok" or what went wrong */
    TAG_STATIC_DTOR,  /* worker -> master: a static object's destructor ran */
    TAG_HELD,         /* worker -> master: its containers' contents (migrate) */
    TAG_EXIT,         /* PvmTaskExit */
};

/* A worker's error, a std::runtime_error subclass with what() naming it. */
struct WorkerError : std::runtime_error {
    int k;
    WorkerError(int k_, const std::string &what)
        : std::runtime_error("worker " + std::to_string(k_) + ": " + what), k(k_) {}
};

static void send_int(int to, int tag, int value)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&value, 1, 1);
    pvm_send(to, tag);
}

static int recv_int(int from, int tag)
{
    int value = -1;
    pvm_recv(from, tag);
    pvm_upkint(&value, 1, 1);
    return value;
}

/* ------------------------------------------------------------ per copy */

#ifndef THREAD_MODE
static int worker_number = -1; /* which worker this copy is */

/* Constructed once per copy of the program (its own globals). */
static int global_constructed;
struct Global {
    Global() { global_constructed++; }
    ~Global()
    {
        std::printf("worker %d: global destroyed (constructed %d time)\n", worker_number,
                    global_constructed);
        std::fflush(stdout);
        if (worker_number >= 0 && worker_number % 3 != 2) /* pvm_exit'ed: no message */
            send_int(pvm_parent(), TAG_STATIC_DTOR, worker_number);
    }
} global;

struct Local {
    ~Local() { std::printf("worker %d: local static destroyed\n", worker_number); }
};

static Local &local_static()
{
    static Local l;
    return l;
}
#endif

/* ------------------------------------------------------------ the worker */

struct Check {
    std::string &out;
    int k;
    void operator()(bool ok, const std::string &what)
    {
        if (!ok)
            out += "worker " + std::to_string(k) + ": " + what + "; ";
    }
};

/* Sends its message from its destructor, also while an exception unwinds. */
struct SendOnDestroy {
    int to, tag, value;
    ~SendOnDestroy() { send_int(to, tag, value); }
};

/* Round 2: waits for the master inside its destructor, while unwinding. */
struct WaitOnDestroy {
    int parent, k;
    Check &check;
    ~WaitOnDestroy()
    {
        check(std::uncaught_exceptions() == 1, "round 2: not unwinding in the destructor");
        send_int(parent, TAG_UNWIND_Q, k);
        recv_int(parent, TAG_UNWIND_A);
        check(std::uncaught_exceptions() == 1,
              "round 2: uncaught_exceptions() " + std::to_string(std::uncaught_exceptions()) +
                  " after a receive, not 1");
    }
};

static void recv_then_throw(int parent, int k)
{
    recv_int(parent, TAG_THROW_GO);
    throw WorkerError(k, "received, then thrown");
}

static void round1(int parent, int k, Check &check)
{
    try {
        SendOnDestroy s{parent, TAG_RAII, k};
        recv_then_throw(parent, k);
        check(false, "round 1: no exception");
    } catch (const std::runtime_error &e) {
        const WorkerError *w = dynamic_cast<const WorkerError *>(&e);
        check(w && w->k == k, "round 1: caught another worker's exception");
        check(std::string(e.what()) == "worker " + std::to_string(k) + ": received, then thrown",
              std::string("round 1: what() is ") + e.what());
    }
}

static void round2(int parent, int k, Check &check)
{
    try {
        WaitOnDestroy w{parent, k, check};
        throw WorkerError(k, "unwound through a receive");
    } catch (const WorkerError &e) {
        check(e.k == k, "round 2: caught worker " + std::to_string(e.k) + "'s exception");
        check(std::uncaught_exceptions() == 0, "round 2: still unwinding in the handler");
    }
}

static void round3(int parent, int k, Check &check)
{
    try {
        try {
            throw WorkerError(k, "rethrown");
        } catch (const WorkerError &e) {
            send_int(parent, TAG_READY, k);
            recv_int(parent, TAG_GO); /* the others throw and catch meanwhile */
            try {
                throw std::out_of_range("inner " + std::to_string(k));
            } catch (const std::out_of_range &inner) {
                check(std::string(inner.what()) == "inner " + std::to_string(k),
                      "round 3: inner what()");
            }
            check(e.k == k, "round 3: the caught exception changed");
            throw;
        }
    } catch (const WorkerError &e) {
        check(e.k == k, "round 3: rethrew worker " + std::to_string(e.k) + "'s exception");
        check(std::string(e.what()) == "worker " + std::to_string(k) + ": rethrown",
              std::string("round 3: what() is ") + e.what());
    }
}

static void round4(int k)
{
    for (int i = 0; i < 5; i++) {
        std::cout << "worker " << k << " writes line " << i << " with iostream" << std::endl;
        upvm_yield();
    }
}

/* What a worker holds across its moves (mode "migrate"): objects that
 * operator new made (a string too long for the string's own bytes, a
 * vector, a map of strings, a new'd object), filled on the node it
 * starts on, checked and changed on each node it arrives on.  On the
 * node that made them they are in the task's heap, inside its slot, so
 * they move with it. */
struct Held {
    std::string text;
    std::vector<int> numbers;
    std::map<std::string, int> table;
    std::unique_ptr<std::vector<std::string>> words;
    int moves = 0;

    explicit Held(int k)
        : text(300, static_cast<char>('a' + k % 26)), numbers(2000),
          words(new std::vector<std::string>)
    {
        std::iota(numbers.begin(), numbers.end(), k);
        for (int i = 0; i < 100; i++)
            table["key " + std::to_string(i) + " of a name longer than the string's buffer"] =
                i * k;
        std::ostringstream os; /* numbers formatted through the locale */
        os << "worker " << k << " started on node " << upvm_node_of(0) << " with " << 2.5;
        words->push_back(os.str());
    }

    /* Is it what the worker left it as before its moves-th move? */
    bool intact(int k) const
    {
        long sum = std::accumulate(numbers.begin(), numbers.end(), 0L);
        long want = 2000L * k + 1999L * 2000 / 2 + moves * 7L;
        return text.size() == 300u + 6 * moves && text[0] == 'a' + k % 26 &&
               numbers.size() == 2000u + moves && sum == want &&
               table.size() == 100u + moves && table.at("key 99 of a name longer than the "
                                                        "string's buffer") == 99 * k &&
               words->size() == 1u + moves && words->front().rfind("worker " +
                                                                   std::to_string(k), 0) == 0;
    }

    /* Grow every one of them on the node it is on. */
    void change()
    {
        moves++;
        text += "moved!";
        numbers.push_back(7);
        table["after move " + std::to_string(moves) + ", a key that does not fit inline"] = moves;
        std::ostringstream os;
        os << "arrived on node " << upvm_node_of(0) << " (move " << moves << ")";
        words->push_back(os.str());
    }
};

/* Mode "balance": work for the balancer to spread, uneven (worker k of
 * an even number 4 parts, of an odd one 1: pvm_spawn deals them out in
 * turn, so on 2 nodes the heavy ones are together), yielding often, on
 * the numbers it holds; the sum comes out the same wherever it ran. */
static void busy(Held &held, int k, Check &check)
{
    long want = std::accumulate(held.numbers.begin(), held.numbers.end(), 0L);
    int parts = k % 2 == 0 ? 4 : 1;
    for (int i = 0; i < parts * 2000; i++) {
        long sum = 0;
        for (int r = 0; r < 20; r++)
            sum += std::accumulate(held.numbers.begin(), held.numbers.end(), 0L);
        check(sum == 20 * want, "balance: its numbers changed at step " + std::to_string(i));
        upvm_yield();
    }
    check(held.intact(k), "balance: its containers changed");
}

/* Move the calling task to the next node of the job (mode "migrate"). */
static void move_on(Check &check)
{
    int from = upvm_node_of(0), to = (from + 1) % upvm_nodes();
    int rc = upvm_migrate(0, to);
    check(rc == 0 && upvm_node_of(0) == to, "upvm_migrate from node " + std::to_string(from) +
                                                " to " + std::to_string(to) + ": " +
                                                std::to_string(rc) + " " + upvm_migrate_error());
}

static int worker(int k, const char *mode)
{
    int parent = pvm_parent();
    std::string out;
    Check check{out, k};
    bool migrate = std::strncmp(mode, "migrate", 7) == 0;
    /* "migrate-light": no containers held across the moves (a build whose
     * operator new is not UPVM's: they would not move) */
    bool balance = std::strcmp(mode, "balance") == 0;
    std::unique_ptr<Held> held(std::strcmp(mode, "migrate") == 0 || balance ? new Held(k)
                                                                            : nullptr);
#ifndef THREAD_MODE
    worker_number = k;
    local_static();
    check(global_constructed == 1,
          "its global was constructed " + std::to_string(global_constructed) + " times");
#endif
    if (migrate)
        move_on(check);
    if (balance)
        busy(*held, k, check);
    else if (held) {
        check(held->intact(k), "its containers changed with its first move");
        held->change();
    }
    round1(parent, k, check);
    round2(parent, k, check);
    round3(parent, k, check);
    if (migrate)
        move_on(check);
    if (held && !balance) {
        check(held->intact(k), "its containers changed with its second move");
        held->change();
        /* the contents, for the master to check: the text, the sum of the
         * numbers, the table's entries and the words, one string */
        std::ostringstream os;
        os << k << ' ' << held->text << ' '
           << std::accumulate(held->numbers.begin(), held->numbers.end(), 0L) << ' '
           << held->table.size() << ' ' << held->table.rbegin()->first;
        for (const std::string &w : *held->words)
            os << " | " << w;
        pvm_initsend(PvmDataDefault);
        pvm_pkstr(const_cast<char *>(os.str().c_str()));
        pvm_send(parent, TAG_HELD);
    }
    if (std::strcmp(mode, "uncaught") == 0)
        throw WorkerError(k, "nobody catches this");
    round4(k);
    pvm_initsend(PvmDataDefault);
    pvm_pkstr(const_cast<char *>(out.empty() ? "ok" : out.c_str()));
    pvm_send(parent, TAG_RESULT);
    /* exit() below does not destroy locals: with UPVM's operator new the
     * slot takes the containers with it, with ASan's they would leak */
    held.reset();
#ifndef THREAD_MODE
    switch (k % 3) { /* the three ways a task ends */
    case 1: std::exit(0);
    case 2: pvm_exit(); return 0;
    default: return 0;
    }
#else
    pvm_exit();
    return 0;
#endif
}

/* ------------------------------------------------------------ the master */

/* Receive n messages of a tag, each an int that is a worker number. */
static bool gather(int n, int tag, const char *what)
{
    int seen = 0;
    for (int i = 0; i < n; i++) {
        int k = recv_int(-1, tag);
        if (k < 0 || k >= 64 || (seen & (1 << k))) {
            std::printf("master: %s: bad or repeated worker %d\n", what, k);
            return false;
        }
        seen |= 1 << k;
    }
    return true;
}

static void answer_all(const int *tids, int n, int tag)
{
    for (int i = 0; i < n; i++)
        send_int(tids[i], tag, 0);
}

/* "migrate": each worker's containers after its two moves, as it sent
 * them (Held): printed for the script, which checks the nodes named. */
static bool held_ok(int n)
{
    bool ok = true;
    for (int i = 0; i < n; i++) {
        char buf[4096] = "";
        pvm_recv(-1, TAG_HELD);
        pvm_upkstr(buf);
        int k = std::atoi(buf);
        long sum = 2000L * k + 1999L * 2000 / 2 + 2 * 7L; /* two moves, 7 added after each */
        std::string want = std::to_string(k) + ' ' +
                           std::string(300, static_cast<char>('a' + k % 26)) + "moved!moved! " +
                           std::to_string(sum) +
                           " 102 key 99 of a name longer than the string's buffer | worker " +
                           std::to_string(k) + " started on node ";
        if (std::string(buf).compare(0, want.size(), want) != 0) {
            std::printf("master: worker %d's containers after its moves: %s\n", k, buf);
            ok = false;
        }
        std::printf("master: worker %d holds %s\n", k, std::strchr(buf, '|') + 2);
    }
    return ok;
}

/* "move-in-catch": the master asks to move itself inside a catch block
 * (refused, with the reason), then after it (done). */
static bool move_in_catch()
{
    int to = (upvm_node_of(0) + 1) % upvm_nodes();
    try {
        throw std::runtime_error("held");
    } catch (const std::exception &) {
        int rc = upvm_migrate(0, to);
        std::printf("master: %s in a catch block: %s\n", rc == PvmNotImpl ? "refused" : "NOT refused",
                    upvm_migrate_error());
        if (rc != PvmNotImpl)
            return false;
    }
    int rc = upvm_migrate(0, to); /* refused in an ASan build: the script checks */
    if (rc == 0 && upvm_node_of(0) == to)
        std::printf("master: moved after the catch block\n");
    else
        std::printf("master: not moved after the catch block: %d %s\n", rc, upvm_migrate_error());
    return true;
}

static int master(const char *self, int n, const char *mode)
{
    bool uncaught = std::strcmp(mode, "uncaught") == 0;
    int tids[64];
    char num[16], worker_mode[32];
    for (int k = 0; k < n; k++) {
        std::snprintf(num, sizeof num, "%d", k);
        std::snprintf(worker_mode, sizeof worker_mode, "%s",
                      uncaught && k > 0 ? "-" : mode); /* one uncaught: worker 0's */
        char worker_arg[] = "worker";
        char *args[] = {worker_arg, num, worker_mode, nullptr};
        if (pvm_spawn(const_cast<char *>(self), args, PvmTaskDefault, const_cast<char *>(""), 1,
                      &tids[k]) != 1) {
            std::printf("master: pvm_spawn %s failed: %d\n", self, tids[k]);
            return 1;
        }
    }
    pvm_notify(PvmTaskExit, TAG_EXIT, n, tids);
    bool ok = true;
    answer_all(tids, n, TAG_THROW_GO);
    ok &= gather(n, TAG_RAII, "round 1's destructor messages");
    ok &= gather(n, TAG_UNWIND_Q, "round 2");
    if (std::uncaught_exceptions() != 0) {
        std::printf("master: uncaught_exceptions() is %d: the workers' count leaked\n",
                    std::uncaught_exceptions());
        ok = false;
    }
    answer_all(tids, n, TAG_UNWIND_A);
    ok &= gather(n, TAG_READY, "round 3");
    answer_all(tids, n, TAG_GO);
    if (std::strcmp(mode, "migrate") == 0)
        ok &= held_ok(n);
    int results = uncaught ? n - 1 : n;
    for (int i = 0; i < results; i++) {
        char buf[2048] = "";
        pvm_recv(-1, TAG_RESULT);
        pvm_upkstr(buf);
        if (std::strcmp(buf, "ok") != 0) {
            std::printf("master: %s\n", buf);
            ok = false;
        }
    }
#ifndef THREAD_MODE
    int dtors = 0; /* workers that end by return or exit() send one */
    for (int k = 0; k < n; k++)
        dtors += k % 3 != 2 && !(uncaught && k == 0);
    for (int i = 0; i < dtors; i++)
        recv_int(-1, TAG_STATIC_DTOR);
#endif
    for (int i = 0; i < n; i++)
        pvm_recv(-1, TAG_EXIT);
    if (ok)
        std::printf("master: %d workers OK\n", results);
    if (std::strcmp(mode, "move-in-catch") == 0)
        ok &= move_in_catch();
    std::fflush(stdout);
    pvm_exit();
    if (std::strcmp(mode, "uncaught-master") == 0)
        throw std::length_error("the master gives up");
    return ok ? 0 : 1;
}

#ifndef THREAD_MODE
/* "new" (process mode, UPVM_SLOT_SIZE=1G): the forms of operator new in a
 * task.  A container's memory is in the task's slot, with its malloc'd
 * memory; out of memory throws std::bad_alloc (through libupvm's C code),
 * the nothrow form gives NULL, the new-handler is called until it gives
 * up; over-aligned types get their alignment.  Prints "new: OK". */
static int handler_calls;

static int new_forms()
{
    std::string out;
    Check check{out, -1};
    const std::uintptr_t slot = std::uintptr_t(1) << 30;
    std::vector<int> v(1000, 1);
    void *m = std::malloc(16);
    check(reinterpret_cast<std::uintptr_t>(v.data()) / slot ==
              reinterpret_cast<std::uintptr_t>(m) / slot,
          "a vector's memory is not in the task's slot");
    std::free(m);
    const std::size_t huge = std::size_t(1) << 41; /* more than any slot holds */
    try {
        char *p = new char[huge];
        check(false, "new of 2 TiB gave " + std::to_string(reinterpret_cast<std::uintptr_t>(p)));
    } catch (const std::bad_alloc &) {
    }
    check(new (std::nothrow) char[huge] == nullptr, "nothrow new of 2 TiB is not NULL");
    std::set_new_handler([] {
        if (++handler_calls == 3)
            std::set_new_handler(nullptr);
    });
    try {
        (void)new char[huge];
        check(false, "new of 2 TiB with a handler did not throw");
    } catch (const std::bad_alloc &) {
        check(handler_calls == 3, "the new-handler ran " + std::to_string(handler_calls) +
                                      " times, not 3");
    }
    struct alignas(256) Aligned {
        char c[3];
    };
    Aligned *a = new Aligned[7];
    check(reinterpret_cast<std::uintptr_t>(a) % 256 == 0, "new of an alignas(256) type");
    delete[] a;
    std::printf("%s\n", out.empty() ? "new: OK" : out.c_str());
    return out.empty() ? 0 : 1;
}
#endif

#ifdef THREAD_MODE
/* "ulps" (thread mode, no PVM call at all): n plain ULPs (upvm_spawn_func)
 * each throw, and inside the catch block yield, couple to a kernel context
 * (upvm_couple), rethrow and catch there, throw another whose catch block
 * decouples and rethrows it on the scheduler, yield, and rethrow the
 * first.  The exception state must follow each ULP onto its kernel
 * context and back. */
static int ulps_failed;

static void ulp_thrower(int k, void *)
{
    std::string out;
    Check check{out, k};
    try {
        try {
            throw WorkerError(k, "ulp");
        } catch (const WorkerError &e) {
            upvm_yield();
            if (upvm_couple() == 0) {
                try { /* the exception being handled is there on the kernel context */
                    throw;
                } catch (const WorkerError &again) {
                    check(again.k == k, "the kernel context rethrew another exception");
                }
                try { /* a catch block begun there, left on the scheduler */
                    throw std::out_of_range("kc " + std::to_string(k));
                } catch (const std::out_of_range &) {
                    upvm_decouple();
                    upvm_yield();
                    try {
                        throw;
                    } catch (const std::out_of_range &r) {
                        check(std::string(r.what()) == "kc " + std::to_string(k),
                              "back from the kernel context: rethrew another exception");
                    } catch (...) {
                        check(false, "back from the kernel context: rethrew the outer one");
                    }
                }
                check(e.k == k, "the caught exception changed on the kernel context");
            } else {
                check(false, "upvm_couple failed");
            }
            upvm_yield();
            throw;
        }
    } catch (const WorkerError &e) {
        check(e.k == k, "rethrew ULP " + std::to_string(e.k) + "'s exception");
    }
    if (!out.empty()) {
        std::printf("%s\n", out.c_str());
        ulps_failed++;
    }
}

static int ulps(int n)
{
    if (upvm_spawn_func(ulp_thrower, nullptr, n, nullptr, nullptr) != n)
        return 1;
    upvm_join_all();
    if (ulps_failed == 0)
        std::printf("ulps: %d OK\n", n);
    return ulps_failed ? 1 : 0;
}

static int task_main(int, char **argv)
{
    return worker(std::atoi(argv[2]), argv[3]);
}
UPVM_TASK("cxx-worker", task_main);
#endif

int main(int argc, char **argv)
{
    if (argc == 4 && std::strcmp(argv[1], "worker") == 0)
        return worker(std::atoi(argv[2]), argv[3]);
    int n = argc > 1 ? std::atoi(argv[1]) : 6;
    if (n < 1 || n > 64) {
        std::fprintf(stderr, "usage: %s [N (1-64) [uncaught | uncaught-master | migrate | "
                             "migrate-light | balance | move-in-catch]]\n", argv[0]);
        return 2;
    }
#ifdef THREAD_MODE
    if (argc > 2 && std::strcmp(argv[2], "ulps") == 0)
        return ulps(n);
#else
    if (argc > 2 && std::strcmp(argv[2], "new") == 0)
        return new_forms();
#endif
#ifdef THREAD_MODE
    const char *self = "cxx-worker";
#else
    const char *self = argv[0];
#endif
    return master(self, n, argc > 2 ? argv[2] : "-");
}

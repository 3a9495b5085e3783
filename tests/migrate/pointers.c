/*
 * pointers.c - a task that moves itself between nodes finds every address
 * it holds still valid (test-migrate.sh pointers, libc-alloc): no pointer
 * is fixed up, the slot is the same everywhere.
 *
 *   pointers [heap]      the master spawns "pointers run heap" on node1,
 *                        which does what follows and reports
 *   pointers libc        the same with "run libc": strings that libc
 *                        allocated (strdup, strndup, asprintf) before the
 *                        moves, read and freed after them; a move inside
 *                        qsort's comparator while qsort holds a buffer of
 *                        libc's malloc (1200 bytes of ints)
 *
 * What is checked after every move (upvm_migrate(0, node), through every
 * node and back, plus one to the node it is on):
 *   - a linked list and a binary tree in the heap (malloc), with heap
 *     strings, pointers between them, globals pointing into them;
 *   - a static const array of function pointers, a writable one filled at
 *     run time, a pointer to a libc function (strlen), a pointer to a
 *     string literal;
 *   - a pointer to a local of main, passed down ten frames, each frame
 *     with its own local array, checked when the frame resumes; the move
 *     itself happens at the bottom, inside qsort's comparator (libc frames
 *     on the stack, sorting 800 bytes, which glibc does on the stack), and
 *     before a longjmp back to a setjmp made earlier;
 *   - a 32 MB heap block, every word checked;
 *   - blocks allocated before the move are freed and realloc'ed after it,
 *     new ones allocated;
 *   - upvm_node_of(0) names the target, pvm_mytid() is unchanged,
 *     upvm_migrate_stats() reports the move.
 */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <pvm3.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <upvm.h>

#include "mtest.h"

#define NLIST 2000
#define NTREE 1000
#define DEPTH 10
#define BIG_MB_DEFAULT 32

struct item {
    struct item *next;
    int value;
    char *name;          /* heap string */
    struct tnode *tree;  /* back into the tree, or NULL */
    int *global;         /* a global of the program */
};

struct tnode {
    struct tnode *l, *r;
    int key;
    struct item *item;
};

static int f_add(int x) { return x + 1000; }
static int f_mul(int x) { return x * 3; }
static int f_xor(int x) { return x ^ 0x5a5a; }
static int f_neg(int x) { return -x; }

static int (*const g_fns[4])(int) = {f_add, f_mul, f_xor, f_neg};
static int (*g_fns_rw[4])(int);
static size_t (*g_strlen)(const char *) = strlen;
static const char *g_literal = "a string literal, in the program's read-only data";
static const char g_literal_copy[] = "a string literal, in the program's read-only data";
static struct item *g_head, *g_mid;
static struct tnode *g_root;
static int g_counter = 7;
static int *g_stack_ptr;
static uint64_t *g_big;
static size_t g_big_words;
static int g_nodes, g_mytid;
static jmp_buf g_jb;
static int g_hops;
static void *g_before[64]; /* blocks allocated before a move */

/* ------------------------------------------------------------ building */

static void name_of(char *buf, size_t n, int i) { snprintf(buf, n, "item-%d-%08x", i, (unsigned)mt_mix((uint64_t)i)); }

static struct tnode *tree_insert(struct tnode *t, int key, struct item *it)
{
    if (!t) {
        t = malloc(sizeof *t);
        *t = (struct tnode){NULL, NULL, key, it};
        it->tree = t;
        return t;
    }
    if (key < t->key)
        t->l = tree_insert(t->l, key, it);
    else
        t->r = tree_insert(t->r, key, it);
    return t;
}

static void build(int big_mb)
{
    struct item **tail = &g_head;
    for (int i = 0; i < NLIST; i++) {
        struct item *it = malloc(sizeof *it);
        char nm[64];
        name_of(nm, sizeof nm, i);
        it->name = malloc(strlen(nm) + 1);
        strcpy(it->name, nm);
        it->value = i * 7 + 1;
        it->tree = NULL;
        it->global = &g_counter;
        it->next = NULL;
        *tail = it;
        tail = &it->next;
        if (i == NLIST / 2)
            g_mid = it;
    }
    struct item *it = g_head;
    for (int i = 0; i < NTREE; i++, it = it->next)
        g_root = tree_insert(g_root, (int)(mt_mix((uint64_t)i + 77) % 1000000), it);
    for (int i = 0; i < 4; i++)
        g_fns_rw[i] = g_fns[3 - i];
    g_big_words = (size_t)big_mb * 1024 * 1024 / sizeof(uint64_t);
    g_big = malloc(g_big_words * sizeof(uint64_t));
    if (!g_big) {
        MT_FAIL("malloc(%d MB) failed", big_mb);
        g_big_words = 0;
    }
    for (size_t i = 0; i < g_big_words; i++)
        g_big[i] = mt_mix(i ^ 0xb16b00b5ull);
    for (int i = 0; i < 64; i++) {
        g_before[i] = malloc((size_t)(16 + i * 97));
        memset(g_before[i], i, (size_t)(16 + i * 97));
    }
}

/* ------------------------------------------------------------ checking */

static int tree_walk(const struct tnode *t, int *prev, int *count)
{
    if (!t)
        return 0;
    int bad = tree_walk(t->l, prev, count);
    if (t->key < *prev)
        bad++;
    *prev = t->key;
    (*count)++;
    if (!t->item || t->item->tree != t)
        bad++;
    return bad + tree_walk(t->r, prev, count);
}

static void check_all(const char *when)
{
    int n = 0;
    const struct item *mid = NULL;
    for (const struct item *it = g_head; it; it = it->next, n++) {
        char nm[64];
        name_of(nm, sizeof nm, n);
        if (it->value != n * 7 + 1 || strcmp(it->name, nm) != 0 || it->global != &g_counter) {
            MT_FAIL("%s: list item %d: value %d name \"%.20s\"", when, n, it->value, it->name);
            return;
        }
        if (n == NLIST / 2)
            mid = it;
        if (n > NLIST)
            break;
    }
    MT_CHECK_EQ(n, NLIST);
    if (mid != g_mid || g_mid->value != (NLIST / 2) * 7 + 1)
        MT_FAIL("%s: the global pointing into the list", when);
    int prev = -1, count = 0;
    int bad = tree_walk(g_root, &prev, &count);
    if (bad || count != NTREE)
        MT_FAIL("%s: the tree: %d bad nodes, %d nodes of %d", when, bad, count, NTREE);
    MT_CHECK_EQ(*g_head->global, g_counter);
    MT_CHECK_EQ(g_fns[0](1) + g_fns[1](2) + g_fns[2](3) + g_fns[3](4), 1001 + 6 + (3 ^ 0x5a5a) - 4);
    MT_CHECK_EQ(g_fns_rw[0](5), -5);
    MT_CHECK_EQ(g_fns_rw[3](5), 1005);
    MT_CHECK_EQ(g_strlen(g_literal), sizeof g_literal_copy - 1);
    MT_CHECK_STR(g_literal, g_literal_copy);
    for (size_t i = 0; i < g_big_words; i++)
        if (g_big[i] != mt_mix(i ^ 0xb16b00b5ull)) {
            MT_FAIL("%s: the %zu MB block differs at byte offset %zu", when,
                    g_big_words * 8 / 1024 / 1024, i * 8);
            break;
        }
    for (int i = 0; i < 64; i++) {
        const unsigned char *b = g_before[i];
        for (int j = 0; j < 16 + i * 97; j++)
            if (b[j] != (unsigned char)i) {
                MT_FAIL("%s: heap block %d byte %d", when, i, j);
                break;
            }
    }
    MT_CHECK_EQ(pvm_mytid(), g_mytid);
}

/* ------------------------------------------------------------ moving */

static void hop(const char *where)
{
    int from = upvm_node_of(0);
    int to = (from + 1 + g_hops % (g_nodes - 1)) % g_nodes;
    g_hops++;
    int rc = upvm_migrate(0, to);
    if (rc != 0) {
        MT_FAIL("%s: upvm_migrate(0, %d) from node %d: %d: %s", where, to, from, rc,
                upvm_migrate_error());
        return;
    }
    if (upvm_node_of(0) != to)
        MT_FAIL("%s: moved from node %d to %d, upvm_node_of(0) says %d", where, from, to,
                upvm_node_of(0));
    if (upvm_node_of(pvm_mytid()) != to)
        MT_FAIL("%s: upvm_node_of(pvm_mytid()) says %d, not %d", where, upvm_node_of(pvm_mytid()), to);
    struct upvm_migrate_stats st = {0, 0, 0};
    rc = upvm_migrate_stats(&st);
    if (rc != 0 || st.total_ns == 0 || st.bytes == 0)
        MT_FAIL("%s: upvm_migrate_stats: %d, total %llu ns, %llu bytes", where, rc,
                (unsigned long long)st.total_ns, (unsigned long long)st.bytes);
    printf("%s: node %d -> %d: %llu bytes moved\n", where, from, to, (unsigned long long)st.bytes);
    fflush(stdout);
}

static int cmp_calls;
static int cmp_int(const void *a, const void *b)
{
    if (++cmp_calls == 50)
        hop("inside qsort's comparator"); /* libc's qsort frames are on the stack */
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Sorts n ints with qsort, moving inside the comparator (its 50th call). */
static void sort_and_move(int n, const char *when)
{
    int *arr = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        arr[i] = (int)(mt_mix((uint64_t)i) % 100000);
    cmp_calls = 0;
    qsort(arr, (size_t)n, sizeof arr[0], cmp_int);
    for (int i = 1; i < n; i++)
        if (arr[i - 1] > arr[i]) {
            MT_FAIL("%s: qsort's result is not sorted at %d after a move in its comparator", when,
                    i);
            break;
        }
    if (cmp_calls < 50)
        MT_FAIL("the comparator ran %d times only", cmp_calls);
    free(arr);
    if (g_head)
        check_all(when);
}

static void bottom(int *main_local)
{
    /* the moves, with everything checked after each */
    check_all("before moving");
    for (int k = 0; k < 2 * g_nodes; k++) {
        hop("a plain move");
        check_all("after a plain move");
        if (*main_local != 12345 + k)
            MT_FAIL("main's local through a pointer: %d, expected %d", *main_local, 12345 + k);
        (*main_local)++;
    }
    /* to the node it is on: 0, nothing changes */
    int here = upvm_node_of(0);
    int rc = upvm_migrate(0, here);
    if (rc != 0 || upvm_node_of(0) != here)
        MT_FAIL("upvm_migrate(0, %d) to its own node: %d, now on %d", here, rc, upvm_node_of(0));
    rc = upvm_migrate(pvm_mytid(), here);
    if (rc != 0 || upvm_node_of(0) != here)
        MT_FAIL("upvm_migrate(mytid, %d) to its own node: %d", here, rc);

    /* inside a libc callback (800 bytes: glibc's qsort sorts them in a
     * buffer on the stack, so the libc frames and their data all move) */
    sort_and_move(200, "after the move in qsort");

    /* setjmp before, longjmp after */
    volatile int stage = 0;
    int v = setjmp(g_jb);
    if (v == 0) {
        stage = 1;
        hop("between setjmp and longjmp");
        longjmp(g_jb, 42);
    }
    if (v != 42 || stage != 1)
        MT_FAIL("longjmp after a move: setjmp returned %d, stage %d", v, stage);
    check_all("after longjmp");

    /* the heap after moves: free, realloc and allocate */
    for (int i = 0; i < 64; i += 2) {
        free(g_before[i]);
        g_before[i] = NULL;
    }
    for (int i = 1; i < 64; i += 2) {
        unsigned char *b = realloc(g_before[i], (size_t)(16 + i * 97) * 4);
        if (!b) {
            MT_FAIL("realloc after moving");
            continue;
        }
        for (int j = 0; j < 16 + i * 97; j++)
            if (b[j] != (unsigned char)i) {
                MT_FAIL("realloc after moving: block %d byte %d", i, j);
                break;
            }
        g_before[i] = b;
    }
    for (int i = 0; i < 64; i += 2) {
        g_before[i] = malloc((size_t)(16 + i * 97));
        memset(g_before[i], i, (size_t)(16 + i * 97));
    }
    hop("after reallocating");
    check_all("after reallocating");
}

/* Ten frames, each with a local array; the moves happen at the bottom. */
static int descend(int depth, int *main_local)
{
    volatile int local[32];
    for (int i = 0; i < 32; i++)
        local[i] = depth * 1000 + i;
    int r;
    if (depth == DEPTH)
        bottom(main_local), r = 0;
    else
        r = descend(depth + 1, main_local);
    for (int i = 0; i < 32; i++)
        if (local[i] != depth * 1000 + i) {
            MT_FAIL("frame %d's local array [%d] = %d after the moves", depth, i, local[i]);
            return r + 1;
        }
    return r + 1;
}

static int run(void)
{
    g_nodes = upvm_nodes();
    g_mytid = pvm_mytid();
    if (g_nodes < 2) {
        MT_FAIL("upvm_nodes() = %d: run with UPVM_NODES=3", g_nodes);
        return 1;
    }
    build(mt_env_int("MTEST_BIG_MB", BIG_MB_DEFAULT));
    int main_local = 12345;
    g_stack_ptr = &main_local;
    char vla_n = (char)(20 + g_nodes);
    char vla[vla_n];
    memset(vla, 'v', sizeof vla);
    int depth = descend(1, &main_local);
    MT_CHECK_EQ(depth, DEPTH);
    MT_CHECK_EQ(main_local, 12345 + 2 * g_nodes);
    MT_CHECK_EQ(*g_stack_ptr, 12345 + 2 * g_nodes);
    for (int i = 0; i < vla_n; i++)
        if (vla[i] != 'v')
            MT_FAIL("main's VLA [%d]", i);
    printf("%d moves, now on node %d\n", g_hops, upvm_node_of(0));
    return mt_failures ? 1 : 0;
}

/* Strings libc allocated (not the ULP's malloc) before a move. */
static int run_libc(void)
{
    g_nodes = upvm_nodes();
    char *a = strdup("strdup'd before the move");
    char *b = strndup("strndup'd before the move, and more", 25);
    char *c = NULL;
    if (asprintf(&c, "asprintf'd %d before the move", 42) < 0)
        c = NULL;
    if (!a || !b || !c) {
        MT_FAIL("libc allocation");
        return 1;
    }
    for (int k = 0; k < g_nodes; k++) {
        hop("with libc-allocated strings");
        MT_CHECK_STR(a, "strdup'd before the move");
        MT_CHECK_STR(b, "strndup'd before the move");
        MT_CHECK_STR(c, "asprintf'd 42 before the move");
    }
    if (mt_failures == 0) { /* (freeing them in the wrong process would abort) */
        free(a);
        free(b);
        free(c);
    }
    /* 1200 bytes: glibc's qsort sorts them in a buffer of libc's malloc,
     * which it frees after the move */
    sort_and_move(300, "qsort with a buffer of libc's");
    char *d = strdup("after");
    MT_CHECK_STR(d, "after");
    free(d);
    return mt_failures ? 1 : 0;
}

/* The master (started from the shell: the job's first task, which does not
 * move) spawns the task that moves on node1 and waits for its report. */
int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "run") == 0) {
        mt_role = argv[2];
        int rc = strcmp(argv[2], "libc") == 0 ? run_libc() : run();
        int v = rc;
        mt_send_ints(pvm_parent(), 1, &v, 1);
        pvm_exit();
        return rc;
    }
    const char *mode = argc > 1 ? argv[1] : "heap";
    if (strcmp(mode, "heap") != 0 && strcmp(mode, "libc") != 0) {
        printf("usage: pointers [heap|libc]\n");
        return 2;
    }
    mt_role = "master";
    char *args[] = {"run", (char *)mode, NULL};
    int tid;
    if (pvm_spawn(argv[0], args, PvmTaskHost, "node1", 1, &tid) != 1) {
        printf("FAIL: spawn on node1\n");
        return 1;
    }
    pvm_notify(PvmTaskExit, 2, 1, &tid);
    int v = -1;
    mt_recv_ints(tid, 1, &v, 1);
    int exited = pvm_recv(-1, 2);
    printf("%s t%x: %d; %s\n", mode, tid, v, exited > 0 ? "exited" : "?");
    printf("%s\n", v ? "FAILED" : "OK");
    pvm_exit();
    return v ? 1 : 0;
}

/* undef.c - calls a function nobody defines (linked with
 * --unresolved-symbols=ignore-all): only a resolver can provide it. */
extern int loader_test_nowhere(int);

int main(void) { return loader_test_nowhere(3); }

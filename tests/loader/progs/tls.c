/* tls.c - a thread-local variable in a PIE (local-exec): refused. */
__thread int tls_counter;

int main(void) { return ++tls_counter; }

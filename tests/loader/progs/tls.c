/* tls.c - a thread-local variable: PT_TLS, refused. */
__thread int tls_counter;

int main(void) { return ++tls_counter; }

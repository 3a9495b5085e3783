/* simple.c - the smallest program: built as non-PIE and without exported
 * main for the error tests. */
int value = 3;

int main(void) { return value; }

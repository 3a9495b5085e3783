/* needs.c - a program that needs a library of its own (libloader-dep or
 * libloader-gone) and, built as needs-upvm, libupvm itself. */
extern int dep_value(void);

int main(void) { return dep_value(); }

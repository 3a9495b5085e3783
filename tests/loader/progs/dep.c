/* dep.c - a library a test program needs (found through its DT_RUNPATH). */
int dep_value(void) { return 77; }

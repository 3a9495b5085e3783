/* ifunc.c - an ifunc in the program itself: IRELATIVE relocations. */
int resolver_calls;

static int impl_fast(void) { return 42; }

__attribute__((used)) static int (*resolve_pick(void))(void)
{
    resolver_calls++; /* data: relocated before any resolver runs */
    return impl_fast;
}

int pick(void) __attribute__((ifunc("resolve_pick")));

int (*pick_ptr)(void) = pick;

int main(void) { return pick() + (pick_ptr == pick ? 0 : 1000); }

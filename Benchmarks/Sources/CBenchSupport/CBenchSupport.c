#include "CBenchSupport.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int bench_release_free_memory(void) {
#if defined(__GLIBC__)
    return malloc_trim(0);
#else
    return 0;
#endif
}

// <stdlib.h> defines __GLIBC__ (through <features.h>) before the test below.
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

long long bench_heap_bytes_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    return (long long)(info.uordblks + info.hblkhd);
#else
    return 0;
#endif
}

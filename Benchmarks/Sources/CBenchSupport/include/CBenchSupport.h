#ifndef C_BENCH_SUPPORT_H
#define C_BENCH_SUPPORT_H

/// Hands freed heap memory back to the system where the C library can (glibc's
/// malloc_trim), so that resident memory reflects live allocations. Returns 1 if memory
/// was released, 0 otherwise.
int bench_release_free_memory(void);

/// The bytes of heap the C library's malloc has handed out and not taken back
/// (glibc's mallinfo2); 0 where unknown.
long long bench_heap_bytes_in_use(void);

#endif

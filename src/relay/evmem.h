/*
 * evmem.h: libevent's allocations, recycled.  evhttp makes and frees some
 * forty small objects per request (the request, each header's key, value
 * and entry, buffer chains): glibc's malloc and free were a quarter of
 * the relay's instructions per event, and every buffer chain of 1 KiB or
 * more made glibc sort its free lists first.  evmem_install (first thing
 * in main, before libevent allocates anything) gives libevent functions
 * that keep a bounded number of freed blocks per size class for the loop
 * thread to take again; anything past the bound goes back to glibc, so a
 * burst of connections still returns its memory (malloc_trim, door.c).
 * Any thread may allocate and free; only the loop thread recycles.
 */
#ifndef EVMEM_H
#define EVMEM_H

#include <stddef.h>

/* Install; the calling thread is the loop thread. */
void	evmem_install(void);
/* Hand back every recycled block to glibc (before a trim). */
void	evmem_release(void);
/* Bytes held for recycling now (for tests and the benchmark). */
size_t	evmem_held(void);

#endif

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
 * Any thread may allocate and free; only the loop thread recycles.  What
 * a libevent function returns for its caller to free (evhttp_uridecode,
 * evbuffer_readln, ...) is freed with evmem_free_returned, never free().
 */
#ifndef EVMEM_H
#define EVMEM_H

#include <stddef.h>

/* Install; the calling thread is the loop thread. */
void	evmem_install(void);
/*
 * Free what a libevent function returned for the caller to free (for
 * example evhttp_uridecode's string): it was made by these functions, so
 * free() would be handed a pointer malloc never returned.
 */
void	evmem_free_returned(void *p);
/* Hand back every recycled block to glibc (before a trim). */
void	evmem_release(void);
/* Bytes held for recycling now (for tests and the benchmark). */
size_t	evmem_held(void);

#endif

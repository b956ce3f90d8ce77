/*
 * evmem.c: libevent's allocations, recycled (evmem.h).
 *
 * Each block carries a 16-byte header (its class, so free knows where it
 * goes without a size; 16 keeps malloc's alignment) and has its class's
 * whole size, so any freed block of a class can serve any request of it.
 * Classes are 16 to 64 bytes in steps of 16, then four per power of two
 * up to 16 KiB (a block is at most a quarter larger than asked: powers of
 * two alone left a burst's memory too scattered for malloc_trim to give
 * back); larger requests go to glibc each time.  At most EVMEM_KEEP_BYTES
 * of freed blocks are kept in all, and per class EVMEM_KEEP_CLASS, or as
 * many as fill EVMEM_KEEP_SMALL for the smallest classes, so what is held
 * is bounded and small next to the relay's RSS.  The smallest are evhttp's
 * header names and values, twenty a request: a turn of the loop that ends
 * 64 requests frees over a thousand of them before the next turn asks for
 * as many again, and 256 kept sent half of them back to glibc.
 *
 * Another thread (nats.c's, the worker's) may make libevent allocate or
 * free: it goes to glibc directly, and only the loop thread, known from
 * evmem_install, touches the lists, so they need no lock.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "evmem.h"

#define EVMEM_HDR	16
#define EVMEM_SMALL	64		/* steps of 16 up to here */
#define EVMEM_MAX_SHIFT	14		/* classes up to 16 KiB */
#define EVMEM_CLASSES	(EVMEM_SMALL / 16 + 4 * (EVMEM_MAX_SHIFT - 6))
#define EVMEM_LARGE	EVMEM_CLASSES	/* the class of larger blocks */
#define EVMEM_KEEP_BYTES (1024 * 1024)	/* freed bytes kept in all */
#define EVMEM_KEEP_CLASS 256		/* freed blocks kept per class */
#define EVMEM_KEEP_SMALL (64 * 1024)	/* or their bytes, when more */

struct evmem_free {
	struct evmem_free	*next;
};

struct evmem_class {
	struct evmem_free	*head;
	size_t			 n, keep;
};

static struct evmem_class	 classes[EVMEM_CLASSES];
static size_t			 class_bytes[EVMEM_CLASSES];	/* class_size */
static size_t			 held;		/* bytes in the lists */
static int			 installed;
static _Thread_local int	 on_loop_thread;	/* set on the loop's */

/* The class of a request of size bytes, or EVMEM_LARGE. */
static unsigned
class_compute(size_t size)
{
	unsigned	 p;
	size_t		 step;

	if (size <= EVMEM_SMALL)
		return size == 0 ? 0 : (unsigned)((size - 1) / 16);
	if (size > ((size_t)1 << EVMEM_MAX_SHIFT))
		return EVMEM_LARGE;
	/* 2^p < size <= 2^(p+1), in four steps of 2^(p-2). */
	p = (unsigned)(63 - __builtin_clzll((unsigned long long)size - 1));
	step = (size_t)1 << (p - 2);
	return EVMEM_SMALL / 16 + 4 * (p - 6) +
	    (unsigned)((size - ((size_t)1 << p) - 1) / step);
}

/* The same, from a table up to 1 KiB (most requests). */
static unsigned char	 class_table[1024 / 16 + 1];

static unsigned
class_of(size_t size)
{
#ifdef __SANITIZE_ADDRESS__
	/*
	 * AddressSanitizer sees a block of exactly the size asked for, so a
	 * write past it is caught, not lost in its class's slack.
	 */
	(void)size;
	return EVMEM_LARGE;
#else
	return size <= 1024 ? class_table[(size + 15) / 16] :
	    class_compute(size);
#endif
}

/* The bytes a block of class c holds. */
static size_t
class_size(unsigned c)
{
	unsigned	 p;

	if (c < EVMEM_SMALL / 16)
		return 16 * ((size_t)c + 1);
	c -= EVMEM_SMALL / 16;
	p = 6 + c / 4;
	return ((size_t)1 << p) + ((size_t)(c % 4) + 1) * ((size_t)1 << (p - 2));
}

static int
on_loop(void)
{
	return on_loop_thread;
}

static void *
evmem_malloc(size_t size)
{
	unsigned		 c = class_of(size);
	struct evmem_class	*k = c < EVMEM_CLASSES ? &classes[c] : NULL;
	unsigned char		*p;

	if (k != NULL && on_loop() && k->head != NULL) {
		p = (unsigned char *)k->head;
		k->head = k->head->next;
		k->n--;
		held -= class_bytes[c];
		return p;
	}
	if (size > SIZE_MAX - EVMEM_HDR - 1)
		return NULL;
	if ((p = malloc(EVMEM_HDR + (c < EVMEM_CLASSES ? class_bytes[c] :
	    size))) == NULL)
		return NULL;
	p[0] = (unsigned char)c;
	return p + EVMEM_HDR;
}

static void
evmem_free(void *ptr)
{
	unsigned char		*p = ptr;
	unsigned		 c;
	struct evmem_class	*k;
	struct evmem_free	*f;

	if (p == NULL)
		return;
	c = p[-EVMEM_HDR];
	k = c < EVMEM_CLASSES ? &classes[c] : NULL;
	if (k != NULL && on_loop() && k->n < k->keep &&
	    held + class_bytes[c] <= EVMEM_KEEP_BYTES) {
		f = ptr;
		f->next = k->head;
		k->head = f;
		k->n++;
		held += class_bytes[c];
		return;
	}
	free(p - EVMEM_HDR);
}

static void *
evmem_realloc(void *ptr, size_t size)
{
	unsigned char	*p = ptr, *q;
	unsigned	 c;

	if (p == NULL)
		return evmem_malloc(size);
	c = p[-EVMEM_HDR];
	if (c < EVMEM_CLASSES) {
		if (size <= class_bytes[c])
			return p;
		if ((q = evmem_malloc(size)) == NULL)
			return NULL;
		memcpy(q, p, class_bytes[c]);
		evmem_free(p);
		return q;
	}
	/* A large block: glibc moves it, header and all. */
	if (class_of(size) < EVMEM_CLASSES) {
		/* Shrunk into a class: a new block, the class's size copied. */
		if ((q = evmem_malloc(size)) == NULL)
			return NULL;
		memcpy(q, p, size);
		evmem_free(p);
		return q;
	}
	if (size > SIZE_MAX - EVMEM_HDR ||
	    (q = realloc(p - EVMEM_HDR, EVMEM_HDR + size)) == NULL)
		return NULL;
	return q + EVMEM_HDR;
}

void
evmem_install(void)
{
	unsigned	 c;

	on_loop_thread = 1;
	installed = 1;
	for (c = 0; c < sizeof(class_table); c++)
		class_table[c] = (unsigned char)class_compute(c * 16);
	for (c = 0; c < EVMEM_CLASSES; c++) {
		class_bytes[c] = class_size(c);
		classes[c].keep = EVMEM_KEEP_CLASS;
		if (class_bytes[c] * EVMEM_KEEP_CLASS < EVMEM_KEEP_SMALL)
			classes[c].keep = EVMEM_KEEP_SMALL / class_bytes[c];
#ifdef __SANITIZE_ADDRESS__
		/*
		 * AddressSanitizer must see every free, or a use after free
		 * of a libevent object would read a recycled block unseen:
		 * the blocks and their headers, no recycling.
		 */
		classes[c].keep = 0;
#endif
	}
	event_set_mem_functions(evmem_malloc, evmem_realloc, evmem_free);
}

void
evmem_free_returned(void *p)
{
	if (installed)
		evmem_free(p);
	else
		free(p);
}

void
evmem_release(void)
{
	struct evmem_free	*f;
	unsigned		 c;

	for (c = 0; c < EVMEM_CLASSES; c++) {
		while ((f = classes[c].head) != NULL) {
			classes[c].head = f->next;
			free((unsigned char *)f - EVMEM_HDR);
		}
		classes[c].n = 0;
	}
	held = 0;
}

size_t
evmem_held(void)
{
	return held;
}

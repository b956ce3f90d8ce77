/*
 * strset.c: a set of byte strings (chained hash table, seeded FNV-1a),
 * for the ids the inbox file and the dedup cache remember.  The seed is
 * random per process, so ids chosen by someone else cannot be made to
 * fall into one chain on purpose without seeing the table.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "cli.h"
#include "util.h"

struct strset_ent {
	struct strset_ent	*next;
	uint64_t		 hash;
	size_t			 len;
	char			 key[];
};

struct strset {
	struct strset_ent	**b;
	size_t			 nb;		/* a power of two */
	size_t			 n;
	uint64_t		 seed;
};

/* FNV-1a over the seed and the key. */
static uint64_t
strset_hash(const struct strset *s, const char *k, size_t len)
{
	uint64_t	 h = 0xcbf29ce484222325ULL ^ s->seed;
	size_t		 i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)k[i];
		h *= 0x100000001b3ULL;
	}
	return h ^ (h >> 29);
}

/* An empty set. */
struct strset *
strset_new(void)
{
	struct strset	*s = xcalloc(1, sizeof(*s));

	s->nb = 64;
	s->b = xcalloc(s->nb, sizeof(*s->b));
	if (RAND_bytes((unsigned char *)&s->seed, sizeof(s->seed)) != 1)
		s->seed = (uint64_t)now_ms();
	return s;
}

/* Free the set and its keys. */
void
strset_free(struct strset *s)
{
	struct strset_ent	*e, *next;
	size_t			 i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nb; i++)
		for (e = s->b[i]; e != NULL; e = next) {
			next = e->next;
			free(e);
		}
	free(s->b);
	free(s);
}

/* The link that points at key's entry (or at the NULL ending its chain). */
static struct strset_ent **
strset_find(struct strset *s, const char *k, size_t len, uint64_t h)
{
	struct strset_ent	**p = &s->b[h & (s->nb - 1)];

	for (; *p != NULL; p = &(*p)->next)
		if ((*p)->hash == h && (*p)->len == len &&
		    memcmp((*p)->key, k, len) == 0)
			break;
	return p;
}

/* 1 when key is in the set. */
int
strset_has(struct strset *s, const char *k, size_t len)
{
	return *strset_find(s, k, len, strset_hash(s, k, len)) != NULL;
}

/* Double the table when it holds as many keys as chains. */
static void
strset_grow(struct strset *s)
{
	struct strset_ent	**nb, *e, *next;
	size_t			 i, n = s->nb * 2;

	nb = xcalloc(n, sizeof(*nb));
	for (i = 0; i < s->nb; i++)
		for (e = s->b[i]; e != NULL; e = next) {
			next = e->next;
			e->next = nb[e->hash & (n - 1)];
			nb[e->hash & (n - 1)] = e;
		}
	free(s->b);
	s->b = nb;
	s->nb = n;
}

/* Add key: 1 when added, 0 when it was there. */
int
strset_add(struct strset *s, const char *k, size_t len)
{
	uint64_t		 h = strset_hash(s, k, len);
	struct strset_ent	**p = strset_find(s, k, len, h), *e;

	if (*p != NULL)
		return 0;
	e = xmalloc(sizeof(*e) + len + 1);
	e->next = NULL;
	e->hash = h;
	e->len = len;
	memcpy(e->key, k, len);
	e->key[len] = '\0';
	*p = e;
	if (++s->n > s->nb)
		strset_grow(s);
	return 1;
}

/* Remove key; 1 when it was there. */
int
strset_del(struct strset *s, const char *k, size_t len)
{
	struct strset_ent	**p = strset_find(s, k, len,
	    strset_hash(s, k, len)), *e;

	if ((e = *p) == NULL)
		return 0;
	*p = e->next;
	free(e);
	s->n--;
	return 1;
}

/* How many keys. */
size_t
strset_count(const struct strset *s)
{
	return s->n;
}

/*
 * The key of an id in a scope (an inbox name, an event source) into buf:
 * "<length of scope>:<scope>:<id>", so no two pairs give the same key.
 * Its length, or 0 when it does not fit.
 */
size_t
strset_key2(char *buf, size_t bufsz, const char *scope, const char *id)
{
	size_t	 a = strlen(scope), b = strlen(id);
	int	 n;

	n = snprintf(buf, bufsz, "%zu:%s:%s", a, scope, id);
	return n < 0 || (size_t)n >= bufsz || a + b + 2 > bufsz ? 0 : (size_t)n;
}

/* The same key, allocated to fit. */
char *
strset_key2_new(const char *scope, const char *id)
{
	size_t	 sz = strlen(scope) + strlen(id) + 24;	/* "%zu:" ":" NUL */
	char	*k = xmalloc(sz);

	(void)strset_key2(k, sz, scope, id);
	return k;
}

/*
 * util.c: allocation that aborts on out-of-memory, random hex ids, and the
 * clock.  Any thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "util.h"

/* Out of memory is not recoverable for a relay holding events in flight. */
static void
oom(void)
{
	fputs("level=error msg=\"out of memory\"\n", stderr);
	abort();
}

/* malloc or abort. */
void *
xmalloc(size_t n)
{
	void	*p = malloc(n ? n : 1);

	if (p == NULL)
		oom();
	return p;
}

/* calloc or abort. */
void *
xcalloc(size_t n, size_t m)
{
	void	*p = calloc(n ? n : 1, m ? m : 1);

	if (p == NULL)
		oom();
	return p;
}

/* realloc or abort. */
void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		oom();
	return p;
}

/* strdup or abort. */
char *
xstrdup(const char *s)
{
	char	*p = strdup(s);

	if (p == NULL)
		oom();
	return p;
}

/* strndup or abort. */
char *
xstrndup(const char *s, size_t n)
{
	char	*p = strndup(s, n);

	if (p == NULL)
		oom();
	return p;
}

/* a + sep + b in one allocation. */
char *
xjoin(const char *a, const char *sep, const char *b)
{
	size_t	 la = strlen(a), ls = strlen(sep), lb = strlen(b);
	char	*p = xmalloc(la + ls + lb + 1);

	memcpy(p, a, la);
	memcpy(p + la, sep, ls);
	memcpy(p + la + ls, b, lb + 1);
	return p;
}

/* Random hex digits; see util.h. */
int
random_hex(char *out, size_t n)
{
	static const char	 digits[] = "0123456789abcdef";
	unsigned char		 b[32];
	size_t			 i;

	if (n > 2 * sizeof(b) || RAND_bytes(b, (int)((n + 1) / 2)) != 1)
		return -1;
	for (i = 0; i < n; i++)
		out[i] = digits[i % 2 ? b[i / 2] & 0x0f : b[i / 2] >> 4];
	out[n] = '\0';
	return 0;
}

/* Exactly n lowercase hex digits; see util.h. */
int
hex_exact(const char *s, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if ((s[i] < '0' || s[i] > '9') && (s[i] < 'a' || s[i] > 'f'))
			return 0;
	return s[n] == '\0';
}

/* Milliseconds on the monotonic clock. */
long long
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * MS_PER_S + ts.tv_nsec / NS_PER_MS;
}

/* The wall clock in nanoseconds since the epoch. */
int64_t
wall_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/* A text's next line, trimmed; see util.h. */
int
text_line(const char **p, const char *end, const char **v, const char **ve)
{
	const char	*nl;

	if (*p >= end)
		return 0;
	if ((nl = memchr(*p, '\n', (size_t)(end - *p))) == NULL)
		nl = end;
	for (*v = *p; *v < nl && (**v == ' ' || **v == '\t'); (*v)++)
		;
	for (*ve = nl; *ve > *v && ((*ve)[-1] == ' ' || (*ve)[-1] == '\t' ||
	    (*ve)[-1] == '\r'); (*ve)--)
		;
	*p = nl < end ? nl + 1 : end;
	return 1;
}

/* A secret's string wiped and freed; see util.h. */
void
secret_free(char *s)
{
	if (s == NULL)
		return;
	OPENSSL_cleanse(s, strlen(s));
	free(s);
}

/* Two optional strings equal; see util.h. */
int
str_eq(const char *a, const char *b)
{
	return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

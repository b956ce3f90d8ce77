/*
 * util.h: allocation helpers that abort on out-of-memory (daemon and CLI
 * only; libtreaty never aborts), small string helpers and the clock.  Any
 * thread.
 */
#ifndef UTIL_H
#define UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Units of time, long long (Unix and JetStream times are nanoseconds). */
#define NS_PER_S	1000000000LL
#define NS_PER_MS	1000000LL
#define NS_PER_US	1000LL
#define US_PER_S	1000000LL
#define MS_PER_S	1000LL

void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xrealloc(void *, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);
/* a, sep and b joined into a new string (hot paths: no printf). */
char	*xjoin(const char *a, const char *sep, const char *b);
/*
 * n random lowercase hex digits from OpenSSL's generator and a NUL into
 * out (n + 1 bytes, n at most 64); -1 when it has no random bytes.
 */
int	 random_hex(char *out, size_t n);
/* Two optional strings are equal: both NULL, or the same text. */
int	 str_eq(const char *a, const char *b);
/* Wipe a string that held a secret (OPENSSL_cleanse), then free it. */
void	 secret_free(char *s);
/*
 * The next line of a text at *p (which ends at end) without its leading
 * blanks and its trailing blanks and CR, [*v, *ve), and *p moved past
 * its newline: a configuration file's and a key file's lines.  0 when no
 * line is left.
 */
int	 text_line(const char **p, const char *end, const char **v,
	    const char **ve);
/* 1 when s is exactly n lowercase hex digits (ids the relay chose). */
int	 hex_exact(const char *s, size_t n);
/* Monotonic clock in milliseconds. */
long long	 now_ms(void);
/* The wall clock (CLOCK_REALTIME), nanoseconds since 1970. */
int64_t		 wall_ns(void);

#endif

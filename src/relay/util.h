/*
 * util.h: allocation helpers that abort on out-of-memory (daemon and CLI
 * only; libtreaty never aborts), and small string helpers.
 */
#ifndef UTIL_H
#define UTIL_H

#include <stddef.h>

void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xrealloc(void *, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);
/* Monotonic clock in milliseconds. */
long long	 now_ms(void);

#endif

/*
 * fault.c: fault injection for live tests, as an LD_PRELOAD library, so
 * the binaries under test carry no test hooks.  Only files whose path
 * ends with $FAULT_SUFFIX are affected:
 *   FAULT_WRITE_ENOSPC=1      write(2) to such a file fails with ENOSPC
 *   FAULT_KILL_AFTER_FSYNC=N  the process is killed (SIGKILL) right after
 *                             the N-th successful fsync(2) of such a file:
 *                             the state of a crash between a durable write
 *                             and whatever the program does next
 *
 * and, for any process:
 *   FAULT_MAC_NO_RESTART=1    EVP_MAC_init(ctx, NULL, 0, NULL) succeeds and
 *                             does nothing, as OpenSSL 3.0.0-3.0.2's HMAC
 *                             did (a prepared key cannot start a new message)
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ssize_t	write(int, const void *, size_t);
int	fsync(int);

/* Whether fd is a file the test aims at. */
static int
targeted(int fd)
{
	const char	*suffix = getenv("FAULT_SUFFIX");
	char		 link[64], path[4096];
	ssize_t		 n;
	size_t		 k;

	if (suffix == NULL || *suffix == '\0')
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((n = readlink(link, path, sizeof(path) - 1)) <= 0)
		return 0;
	path[n] = '\0';
	k = strlen(suffix);
	return (size_t)n >= k && strcmp(path + n - k, suffix) == 0;
}

/* write(2), failing for the target when asked. */
ssize_t
write(int fd, const void *buf, size_t len)
{
	static ssize_t	(*real)(int, const void *, size_t);

	if (real == NULL)
		real = (ssize_t (*)(int, const void *, size_t))
		    dlsym(RTLD_NEXT, "write");
	if (getenv("FAULT_WRITE_ENOSPC") != NULL && targeted(fd)) {
		errno = ENOSPC;
		return -1;
	}
	return real(fd, buf, len);
}

/* fsync(2), then a crash for the target when asked. */
int
fsync(int fd)
{
	static int	(*real)(int);
	static int	 n;
	const char	*kill_at = getenv("FAULT_KILL_AFTER_FSYNC");
	int		 rc;

	if (real == NULL)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	rc = real(fd);
	if (rc == 0 && kill_at != NULL && targeted(fd) && ++n == atoi(kill_at))
		raise(SIGKILL);
	return rc;
}

/* OpenSSL's types, opaque here: the library is not linked against it. */
typedef struct evp_mac_ctx_st	EVP_MAC_CTX;
typedef struct ossl_param_st	OSSL_PARAM;

int	EVP_MAC_init(EVP_MAC_CTX *, const unsigned char *, size_t,
	    const OSSL_PARAM *);

/* EVP_MAC_init, a successful no-op without a key when asked. */
int
EVP_MAC_init(EVP_MAC_CTX *ctx, const unsigned char *key, size_t keylen,
    const OSSL_PARAM *params)
{
	static int	(*real)(EVP_MAC_CTX *, const unsigned char *, size_t,
			    const OSSL_PARAM *);

	if (real == NULL)
		real = (int (*)(EVP_MAC_CTX *, const unsigned char *, size_t,
		    const OSSL_PARAM *))dlsym(RTLD_NEXT, "EVP_MAC_init");
	if (key == NULL && params == NULL &&
	    getenv("FAULT_MAC_NO_RESTART") != NULL)
		return 1;
	return real(ctx, key, keylen, params);
}

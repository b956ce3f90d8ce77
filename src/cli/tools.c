/*
 * tools.c: the subcommands that need no network: sign, verify,
 * hash-token, gen-token.  Secrets and tokens are read from files or
 * standard input, never from the command line (it is visible to every
 * user in ps), and never printed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "treaty.h"
#include "cli.h"

#define MAX_SECRETS	8
#define STDIN_MAX	(16 * 1024 * 1024)	/* body or token on stdin */
#define TOKEN_BYTES	32

/* Read all of f (at most STDIN_MAX bytes) into a malloc'd buffer. */
static char *
read_all(FILE *f, size_t *len)
{
	size_t	 cap = 65536, n = 0, r;
	char	*buf = malloc(cap + 1), *nb;

	if (buf == NULL)
		return NULL;
	while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			if (cap >= STDIN_MAX ||
			    (nb = realloc(buf, cap * 2 + 1)) == NULL) {
				free(buf);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
	}
	if (ferror(f)) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/*
 * The secrets of a secret file: one per non-empty line, newest first
 * (rotation).  Returns how many, or -1 (with a message).
 */
static int
read_secrets(const char *path, char **text, struct treaty_secret *s)
{
	FILE	*f;
	size_t	 len;
	char	*line, *next;
	int	 n = 0;

	if ((f = fopen(path, "r")) == NULL) {
		cli_err("%s: %s", path, strerror(errno));
		return -1;
	}
	*text = read_all(f, &len);
	fclose(f);
	if (*text == NULL) {
		cli_err("%s: cannot read", path);
		return -1;
	}
	for (line = *text; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		len = strlen(line);
		if (len > 0 && line[len - 1] == '\r')
			line[--len] = '\0';
		if (len == 0)
			continue;
		if (n == MAX_SECRETS) {
			cli_err("%s: more than %d secrets", path, MAX_SECRETS);
			return -1;
		}
		s[n].key = line;
		s[n++].len = len;
	}
	if (n == 0)
		cli_err("%s: no secret in it", path);
	return n > 0 ? n : -1;
}

static const struct option sign_opts[] = {
	{ "secret-file", required_argument, NULL, 's' },
	{ "id", required_argument, NULL, 'i' },
	{ "time", required_argument, NULL, 't' },
	{ "signature", required_argument, NULL, 'g' },
	{ "tolerance", required_argument, NULL, 'T' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* A non-negative decimal integer option, or -1. */
static long long
num_arg(const char *s)
{
	char		*end;
	long long	 v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	return *end != '\0' || errno != 0 ? -1 : v;
}

/*
 * sign and verify share their options: --secret-file, --id, and --time
 * (sign) or --signature and --tolerance (verify).  The body is stdin.
 */
static int
sign_or_verify(int argc, char **argv, int verify)
{
	struct treaty_secret	 s[MAX_SECRETS];
	const char		*secret_file = NULL, *id = NULL, *sig = NULL;
	char			*text = NULL, *body = NULL, out[16 + 68 * 8];
	long long		 t = -1, tol = 0;
	size_t			 len;
	int			 c, n, rc = EXIT_FAILED;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", sign_opts, NULL)) != -1) {
		switch (c) {
		case 's': secret_file = optarg; break;
		case 'i': id = optarg; break;
		case 't': t = num_arg(optarg); if (t < 0) goto usage; break;
		case 'g': sig = optarg; break;
		case 'T': tol = num_arg(optarg); if (tol < 0) goto usage; break;
		case 'h':
			printf("usage: treaty %s --secret-file FILE --id ID %s< BODY\n",
			    argv[0], verify ? "--signature VALUE [--tolerance S] " :
			    "[--time UNIX] ");
			return EXIT_OK;
		default:
			goto usage;
		}
	}
	if (optind != argc || secret_file == NULL || id == NULL ||
	    (verify && sig == NULL) || (!verify && tol != 0) ||
	    (verify && t >= 0))
		goto usage;
	if ((n = read_secrets(secret_file, &text, s)) < 0)
		goto out;
	if ((body = read_all(stdin, &len)) == NULL) {
		cli_err("cannot read the body from standard input");
		goto out;
	}
	if (verify) {
		c = treaty_sig_verify(s, (size_t)n, sig, id, body, len,
		    (int64_t)time(NULL), tol);
		if (c == TREATY_OK) {
			puts("ok");
			rc = EXIT_OK;
		} else
			cli_err("not verified: %s", treaty_strerror(c));
	} else {
		c = treaty_sig_sign(s, (size_t)n, t >= 0 ? t :
		    (int64_t)time(NULL), id, body, len, out, sizeof(out));
		if (c > 0) {
			puts(out);
			rc = EXIT_OK;
		} else
			cli_err("cannot sign: %s", treaty_strerror(c));
	}
out:
	free(text);
	free(body);
	return rc;
usage:
	cli_err("usage: treaty %s --secret-file FILE --id ID %s< BODY",
	    argv[0], verify ? "--signature VALUE [--tolerance S] " :
	    "[--time UNIX] ");
	return EXIT_USAGE;
}

/* treaty sign: print the x-treaty-signature value for the body on stdin. */
int
cmd_sign(int argc, char **argv)
{
	return sign_or_verify(argc, argv, 0);
}

/* treaty verify: exit 0 when the signature is good for the body on stdin. */
int
cmd_verify(int argc, char **argv)
{
	return sign_or_verify(argc, argv, 1);
}

/* treaty hash-token: SHA-256 hex of the token on stdin (one line). */
int
cmd_hash_token(int argc, char **argv)
{
	char	*tok, hex[65];
	size_t	 len;

	if (argc != 1) {
		if (argc == 2 && strcmp(argv[1], "--help") == 0) {
			puts("usage: treaty hash-token < TOKEN");
			return EXIT_OK;
		}
		cli_err("usage: treaty hash-token < TOKEN (never on the "
		    "command line)");
		return EXIT_USAGE;
	}
	if ((tok = read_all(stdin, &len)) == NULL) {
		cli_err("cannot read the token from standard input");
		return EXIT_FAILED;
	}
	/* One trailing newline (echo, a file) is not part of the token. */
	if (len > 0 && tok[len - 1] == '\n')
		tok[--len] = '\0';
	if (len > 0 && tok[len - 1] == '\r')
		tok[--len] = '\0';
	if (len == 0 || memchr(tok, '\n', len) != NULL) {
		cli_err("the token must be one non-empty line");
		free(tok);
		return EXIT_FAILED;
	}
	if (treaty_sha256_hex(tok, len, hex) != TREATY_OK) {
		free(tok);
		return EXIT_FAILED;
	}
	free(tok);
	puts(hex);
	return EXIT_OK;
}

/* treaty gen-token: 32 random bytes from OpenSSL's generator, as hex. */
int
cmd_gen_token(int argc, char **argv)
{
	unsigned char	 b[TOKEN_BYTES];
	int		 i;

	if (argc != 1) {
		if (argc == 2 && strcmp(argv[1], "--help") == 0) {
			puts("usage: treaty gen-token");
			return EXIT_OK;
		}
		cli_err("usage: treaty gen-token");
		return EXIT_USAGE;
	}
	if (RAND_bytes(b, sizeof(b)) != 1) {
		cli_err("no random bytes");
		return EXIT_FAILED;
	}
	for (i = 0; i < TOKEN_BYTES; i++)
		printf("%02x", b[i]);
	putchar('\n');
	return EXIT_OK;
}

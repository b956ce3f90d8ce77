/*
 * input.c: what the commands read besides their flags: bodies and tokens
 * from standard input or files, secret files; numbers and times.  Secrets and
 * tokens never come from the command line (ps shows it to every user).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "treaty.h"
#include "cli.h"
#include "util.h"

#define STDIN_MAX	(16 * 1024 * 1024)	/* body or token on stdin */


/* Read all of f (at most STDIN_MAX bytes) into a malloc'd buffer. */
char *
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
int
read_secrets(const char *path, char **text, struct treaty_secret *s)
{
	FILE	*f;
	size_t	 len;
	char	*line, *next;
	int	 n = 0;

	/*
	 * The file's name is not printed: it may be the secret itself,
	 * given where its file was meant.
	 */
	if ((f = fopen(path, "r")) == NULL) {
		cli_err("--secret-file: %s", strerror(errno));
		return -1;
	}
	*text = read_all(f, &len);
	fclose(f);
	if (*text == NULL) {
		cli_err("--secret-file: cannot read it");
		return -1;
	}
	/*
	 * Secrets are taken with their lengths, the text left whole, so that
	 * secret_free wipes all of it (NULs written between lines would end
	 * its strlen at the first).
	 */
	for (line = *text; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			len = (size_t)(next++ - line);
		else
			len = strlen(line);
		if (len > 0 && line[len - 1] == '\r')
			len--;
		if (len == 0)
			continue;
		if (n == TREATY_MAX_SECRETS) {
			cli_err("--secret-file: more than %d secrets",
			    TREATY_MAX_SECRETS);
			return -1;
		}
		s[n].key = line;
		s[n++].len = len;
	}
	if (n == 0)
		cli_err("--secret-file: no secret in it");
	return n > 0 ? n : -1;
}

/* A non-negative decimal integer option, or -1. */
long long
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

/* A --since value as RFC 3339; see cli.h. */
int
since_arg(const char *arg, char *buf, size_t len)
{
	static const struct { char unit; long long s; } units[] = {
		{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
	};
	struct timespec	 now;
	long long	 n, secs = -1;
	size_t		 i, digits = strspn(arg, "0123456789");

	if (treaty_rfc3339_valid(arg)) {
		if (strlen(arg) >= len)
			return -1;
		memcpy(buf, arg, strlen(arg) + 1);
		return 0;
	}
	/*
	 * Digits, one unit, nothing else.  Twelve digits of days fit a long
	 * long in seconds; the time must not be before 1970.
	 */
	if (digits == 0 || digits > 12 || arg[digits] == '\0' ||
	    arg[digits + 1] != '\0')
		return -1;
	n = strtoll(arg, NULL, 10);
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (arg[digits] == units[i].unit)
			secs = n * units[i].s;
	clock_gettime(CLOCK_REALTIME, &now);
	if (secs < 0 || secs > (long long)now.tv_sec)
		return -1;
	return treaty_rfc3339_format((int64_t)now.tv_sec - secs, now.tv_nsec,
	    9, buf, len) < 0 ? -1 : 0;
}

/* Strip one trailing newline (echo, an editor) from a token. */
static void
chomp(char *s, size_t *len)
{
	if (*len > 0 && s[*len - 1] == '\n')
		s[--*len] = '\0';
	if (*len > 0 && s[*len - 1] == '\r')
		s[--*len] = '\0';
}

/*
 * The bearer token: the first line of path, or TREATY_TOKEN when path is
 * NULL.  NULL (with a message) when neither gives one non-empty line.
 */
char *
read_token(const char *path)
{
	FILE	*f;
	char	*tok, *nl;
	size_t	 len;

	if (path == NULL) {
		if ((tok = getenv("TREATY_TOKEN")) == NULL || *tok == '\0') {
			cli_err("no token: use --token-file FILE or TREATY_TOKEN");
			return NULL;
		}
		tok = strdup(tok);
		len = tok != NULL ? strlen(tok) : 0;
	} else {
		/* Its name unprinted, as for the secret file. */
		if ((f = fopen(path, "r")) == NULL) {
			cli_err("--token-file: %s", strerror(errno));
			return NULL;
		}
		tok = read_all(f, &len);
		fclose(f);
		/* The first line is the token; the rest is not read as one. */
		if (tok != NULL && (nl = memchr(tok, '\n', len)) != NULL) {
			len = (size_t)(nl - tok) + 1;
			tok[len] = '\0';
		}
	}
	if (tok == NULL) {
		cli_err("cannot read the token");
		return NULL;
	}
	chomp(tok, &len);
	if (len == 0 || strpbrk(tok, "\r\n") != NULL) {
		cli_err("the token must be one non-empty line");
		free(tok);
		return NULL;
	}
	return tok;
}

/* Read a token from standard input (hash-token). */
char *
read_token_stdin(void)
{
	char	*tok;
	size_t	 len;

	if ((tok = read_all(stdin, &len)) == NULL) {
		cli_err("cannot read the token from standard input");
		return NULL;
	}
	chomp(tok, &len);
	if (len == 0 || memchr(tok, '\n', len) != NULL) {
		cli_err("the token must be one non-empty line");
		free(tok);
		return NULL;
	}
	return tok;
}

/* Read the secrets of path into v; -1 with a message. */
int
verifier_load(struct verifier *v, const char *path)
{
	v->secrets = xcalloc(TREATY_MAX_SECRETS, sizeof(*v->secrets));
	if ((v->n = read_secrets(path, &v->text, v->secrets)) < 0) {
		verifier_free(v);
		return -1;
	}
	return 0;
}

/* Check a signature header against any of the secrets, now. */
int
verifier_check(const struct verifier *v, const char *sig, const char *id,
    const void *body, size_t len)
{
	return treaty_sig_verify(v->secrets, (size_t)v->n, sig, id, body, len,
	    (int64_t)time(NULL), v->tolerance);
}

/* Wipe the secrets and free them. */
void
verifier_free(struct verifier *v)
{
	secret_free(v->text);
	free(v->secrets);
	v->text = NULL;
	v->secrets = NULL;
	v->n = 0;
}

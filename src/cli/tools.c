/*
 * tools.c: the subcommands that need no network: sign, verify,
 * hash-token, gen-token.  Secrets and tokens are read from files or
 * standard input, never from the command line (it is visible to every
 * user in ps), and never printed.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "treaty.h"
#include "cli.h"
#include "util.h"

#define TOKEN_BYTES	32

static const struct option sign_opts[] = {
	{ "secret-file", required_argument, NULL, 's' },
	{ "id", required_argument, NULL, 'i' },
	{ "time", required_argument, NULL, 't' },
	{ "signature", required_argument, NULL, 'g' },
	{ "tolerance", required_argument, NULL, 'T' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/*
 * sign and verify share their options: --secret-file, --id, and --time
 * (sign) or --signature and --tolerance (verify).  The body is stdin.
 */
static int
sign_or_verify(int argc, char **argv, int verify)
{
	struct treaty_secret	 s[TREATY_MAX_SECRETS];
	const char		*secret_file = NULL, *id = NULL, *sig = NULL;
	char			*text = NULL, *body = NULL;
	char			 out[TREATY_SIG_HEADER_SIZE(TREATY_MAX_SECRETS)];
	long long		 t = -1, tol = -1;
	size_t			 len;
	int			 c, n, rc = EXIT_FAILED;

	optind = 1;
	while ((c = cli_getopt(argc, argv, "h", sign_opts)) != -1) {
		switch (c) {
		case 's': secret_file = optarg; break;
		case 'i': id = optarg; break;
		case 't': t = num_arg(optarg); if (t < 0) goto usage; break;
		case 'g': sig = optarg; break;
		case 'T':
			tol = num_arg(optarg);
			if (tol < 1 || tol > VERIFY_TOLERANCE_MAX_S)
				goto usage;
			break;
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
	    (verify && sig == NULL) || (!verify && (tol >= 0 || sig != NULL)) ||
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
		    (int64_t)time(NULL), tol < 0 ? 0 : tol);
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
	secret_free(text);
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
		if (argc == 2 && (strcmp(argv[1], "--help") == 0 ||
		    strcmp(argv[1], "-h") == 0)) {
			puts("usage: treaty hash-token < TOKEN");
			return EXIT_OK;
		}
		cli_err("usage: treaty hash-token < TOKEN (never on the "
		    "command line)");
		return EXIT_USAGE;
	}
	if ((tok = read_token_stdin()) == NULL)
		return EXIT_FAILED;
	len = strlen(tok);
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
	char	 hex[2 * TOKEN_BYTES + 1];

	if (argc != 1) {
		if (argc == 2 && (strcmp(argv[1], "--help") == 0 ||
		    strcmp(argv[1], "-h") == 0)) {
			puts("usage: treaty gen-token");
			return EXIT_OK;
		}
		cli_err("usage: treaty gen-token");
		return EXIT_USAGE;
	}
	if (random_hex(hex, sizeof(hex) - 1) == -1) {
		cli_err("no random bytes");
		return EXIT_FAILED;
	}
	puts(hex);
	return EXIT_OK;
}

/*
 * treaty: the command-line client of treaty-relay (see man/treaty.1).
 * This file only picks the subcommand; each lives in its own module.
 */
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "treaty.h"
#include "cli.h"
#include "json.h"
#include "opt.h"

static const struct {
	const char	*name;
	int		(*fn)(int, char **);
	const char	*what;
} cmds[] = {
	{ "publish", cmd_publish, "publish one event (with retries, outbox)" },
	{ "flush", cmd_flush, "send what is left in an outbox, oldest first" },
	{ "work", cmd_work, "take events from an inbox: verify, record, "
	  "acknowledge" },
	{ "listen", cmd_listen, "receive pushes: verify, record once, 204" },
	{ "admin", cmd_admin, "operate the relay: status, drops, replay, "
	  "consumers, subscriber" },
	{ "sign", cmd_sign, "sign a body: print an x-treaty-signature value" },
	{ "verify", cmd_verify, "verify a body against an x-treaty-signature" },
	{ "hash-token", cmd_hash_token, "print the SHA-256 of a token read "
	  "from standard input" },
	{ "gen-token", cmd_gen_token, "print a new random token" },
};

/* One line on standard error, prefixed with the program's name. */
void
cli_err(const char *fmt, ...)
{
	va_list	 ap;

	fputs("treaty: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* opt_next (getopt_long with exact names), its message on stderr. */
int
cli_getopt(int argc, char **argv, const char *shorts,
    const struct option *lo)
{
	char	 why[160];
	int	 c;

	if ((c = opt_next(argc, argv, shorts, lo, why, sizeof(why))) == '?')
		cli_err("%s", why);
	return c;
}

static void
usage(FILE *f)
{
	size_t	 i;

	fprintf(f, "usage: treaty COMMAND [OPTIONS]   (treaty COMMAND --help)\n"
	    "commands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-11s %s\n", cmds[i].name, cmds[i].what);
}

/*
 * What a command printed must have reached its standard output: answer
 * lines lost to a full disk or a closed pipe are a failure, not exit 0.
 */
static int
stdout_written(int rc)
{
	int	 flushed = fflush(stdout) == 0;

	if (flushed && !ferror(stdout))
		return rc;
	cli_err("cannot write standard output%s%s", flushed ? "" : ": ",
	    flushed ? "" : strerror(errno));
	return rc == EXIT_OK ? EXIT_FAILED : rc;
}

int
main(int argc, char **argv)
{
	size_t	 i;
	int	 rc;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("treaty %s\n", TREATY_VERSION);
		return EXIT_OK;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(argv[1], cmds[i].name) == 0) {
			json_init();
			rc = cmds[i].fn(argc - 1, argv + 1);
			json_free();
			return stdout_written(rc);
		}
	cli_err("unknown command %s", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}

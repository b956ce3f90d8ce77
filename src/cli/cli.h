/*
 * cli.h: the treaty command-line client.  Each subcommand is a function
 * taking its own argc/argv (argv[0] is the subcommand's name) and
 * returning the process's exit status.
 */
#ifndef CLI_H
#define CLI_H

#define EXIT_OK		0
#define EXIT_FAILED	1	/* the request or check failed for good */
#define EXIT_USAGE	2
#define EXIT_TEMPFAIL	75	/* EX_TEMPFAIL: still failing after retries */

/* tools.c: no network. */
int	cmd_sign(int argc, char **argv);
int	cmd_verify(int argc, char **argv);
int	cmd_hash_token(int argc, char **argv);
int	cmd_gen_token(int argc, char **argv);

/* main.c */
void	cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

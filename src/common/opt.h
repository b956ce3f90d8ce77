/*
 * opt.h: getopt_long, strictly, for the relay and the client alike.
 * glibc takes a unique prefix of a long option (--token for --token-file,
 * --gra for --grace-seconds), so a value meant for one option becomes
 * another's, a secret then appears in an error, and a typo in a unit file
 * passes as some other setting; and glibc's own messages quote the whole
 * argument, "=value" included.  Here only exact names are options, and the
 * message names the option, never its value.
 */
#ifndef OPT_H
#define OPT_H

#include <getopt.h>
#include <stddef.h>

/*
 * What getopt_long returns (opterr is cleared), or '?' with why (a
 * sentence, why_sz bytes at most) for an unknown option, one without its
 * value, or an abbreviated one.
 */
int	opt_next(int argc, char **argv, const char *shorts,
	    const struct option *lo, char *why, size_t why_sz);

#endif

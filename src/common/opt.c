/*
 * opt.c: getopt_long with exact long names only; see opt.h.  Any one
 * thread (getopt's state is global).
 */
#include <stdio.h>
#include <string.h>

#include "opt.h"

int
opt_next(int argc, char **argv, const char *shorts, const struct option *lo,
    char *why, size_t why_sz)
{
	const char	*tok;
	size_t		 n;
	int		 c, idx = -1;

	opterr = 0;
	c = getopt_long(argc, argv, shorts, lo, &idx);
	if (c == -1)
		return -1;
	/* The option's own argument: the last one, or the one before it. */
	tok = optarg != NULL && optind >= 2 && optarg == argv[optind - 1] ?
	    argv[optind - 2] : argv[optind - 1];
	n = strcspn(tok, "=");
	if (c == '?' || c == ':') {
		if (optopt != 0 && strncmp(tok, "--", 2) != 0)
			snprintf(why, why_sz, "unknown option -%c", optopt);
		else
			snprintf(why, why_sz, "unknown option, or one without "
			    "its value: %.*s", (int)n, tok);
		return '?';
	}
	if (idx >= 0 && (strncmp(tok, "--", 2) != 0 ||
	    strlen(lo[idx].name) != n - 2 ||
	    strncmp(tok + 2, lo[idx].name, n - 2) != 0)) {
		snprintf(why, why_sz, "unknown option %.*s (options are not "
		    "abbreviated)", (int)n, tok);
		return '?';
	}
	return c;
}

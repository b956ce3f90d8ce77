/*
 * t-util.c: unit tests of util.c's random hex ids (length, alphabet, odd
 * lengths, the bound, no two alike) and hex_exact, the one check of an
 * id the relay chose (replay ids in admin routes and receipts).
 */
#include <string.h>

#include "util.h"
#include "harness.h"

/* n digits, all lowercase hex, NUL after them. */
static void
random_hex_form(void)
{
	char	 buf[66];
	size_t	 n;

	for (n = 0; n <= 64; n++) {
		memset(buf, 'x', sizeof(buf));
		T_EQ_INT(random_hex(buf, n), 0);
		T_EQ_INT(strlen(buf), n);
		T_ASSERT(hex_exact(buf, n));
	}
	T_EQ_INT(random_hex(buf, 65), -1);
}

/* Every digit shows up, and two ids differ (24 digits: a replay's). */
static void
random_hex_varies(void)
{
	char	 a[25], b[25];
	int	 seen[16] = { 0 }, i, k;

	for (i = 0; i < 200; i++) {
		T_EQ_INT(random_hex(a, 24), 0);
		T_EQ_INT(random_hex(b, 24), 0);
		T_ASSERT(strcmp(a, b) != 0);
		for (k = 0; k < 24; k++)
			seen[a[k] <= '9' ? a[k] - '0' : a[k] - 'a' + 10]++;
	}
	for (k = 0; k < 16; k++)
		T_ASSERT(seen[k] > 0);
}

/* Only exactly n lowercase hex digits pass. */
static void
hex_exact_rows(void)
{
	T_ASSERT(hex_exact("0123456789abcdef01234567", 24));
	T_ASSERT(hex_exact("", 0));
	T_ASSERT(!hex_exact("0123456789abcdef0123456", 24));	/* short */
	T_ASSERT(!hex_exact("0123456789abcdef012345678", 24));	/* long */
	T_ASSERT(!hex_exact("0123456789ABCDEF01234567", 24));	/* upper */
	T_ASSERT(!hex_exact("0123456789abcdeg01234567", 24));
	T_ASSERT(!hex_exact("0123456789abcdef0123456/", 24));
	T_ASSERT(!hex_exact("0123456789abcdef0123456:", 24));
	T_ASSERT(!hex_exact("0123456789abcdef0123456`", 24));
	T_ASSERT(!hex_exact("a", 0));
}

static const struct t_case cases[] = {
	{ "random_hex: length and alphabet", random_hex_form },
	{ "random_hex: digits vary", random_hex_varies },
	{ "hex_exact", hex_exact_rows },
};

/* Run the suite; exit 1 when a case failed. */
int
main(void)
{
	return (t_run("util", cases, T_NCASES(cases)) ? 1 : 0);
}

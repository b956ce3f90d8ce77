/*
 * t-outbound: the pure part of outbound.c, the Retry-After parser that
 * deliveries and the client share (delta seconds or an HTTP date).  The
 * requests themselves are tested against real servers by
 * test/tools/outbound-check (test/live/t-outbound.sh).
 */
#include "harness.h"
#include "../../src/common/outbound.h"

#define NOW	1700000000LL	/* Tue, 14 Nov 2023 22:13:20 GMT */

static void
seconds(void)
{
	T_EQ_INT(outbound_retry_after_ms("7", NOW), 7000);
	T_EQ_INT(outbound_retry_after_ms("0", NOW), 0);
	T_EQ_INT(outbound_retry_after_ms("  120", NOW), 120000);
	T_EQ_INT(outbound_retry_after_ms("5 ", NOW), 5000);
	/* Capped at a day, whatever the digits. */
	T_EQ_INT(outbound_retry_after_ms("99999999999999999999", NOW),
	    86400000);
	T_EQ_INT(outbound_retry_after_ms("5s", NOW), -1);
	T_EQ_INT(outbound_retry_after_ms("-5", NOW), -1);
	T_EQ_INT(outbound_retry_after_ms("", NOW), -1);
	T_EQ_INT(outbound_retry_after_ms(NULL, NOW), -1);
}

static void
dates(void)
{
	T_EQ_INT(outbound_retry_after_ms("Tue, 14 Nov 2023 22:13:50 GMT", NOW),
	    30000);
	/* In the past: at once. */
	T_EQ_INT(outbound_retry_after_ms("Tue, 14 Nov 2023 22:00:00 GMT", NOW),
	    0);
	T_EQ_INT(outbound_retry_after_ms("Sat, 14 Nov 2037 22:13:20 GMT", NOW),
	    86400000);
	T_EQ_INT(outbound_retry_after_ms("Tuesday", NOW), -1);
	T_EQ_INT(outbound_retry_after_ms("14 Nov 2023", NOW), -1);
}

static const struct t_case cases[] = {
	{ "Retry-After in seconds", seconds },
	{ "Retry-After as an HTTP date", dates },
};

int
main(void)
{
	return t_run("outbound", cases, T_NCASES(cases)) ? 1 : 0;
}

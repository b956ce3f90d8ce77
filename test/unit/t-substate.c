/*
 * t-substate: a subscriber's state as stored, and SPEC 17's table of
 * what each request makes of it (src/relay/substate-rule.c): every cell,
 * the probe's delays (5 s doubling to 5 min, equal jitter, drawn by the
 * writer), and the stored value read back as written; a value that is
 * not a state is refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "../../src/relay/substate-rule.h"

static const struct substate_ask_arg A = {
	"0123456789abcdef", "2026-12-07T15:21:38.594Z", 20,
	"https://example.test/hook", 0x80000000u
};

/* The state a request makes of cur: -1 when nothing is written. */
static int
after(enum substate cur, enum substate_ask ask, struct substate_value *next)
{
	struct substate_value	 v;

	substate_value_active(&v);
	v.state = cur;
	if (cur == SUBSTATE_TRIPPED) {
		v.probe_n = 1;
		v.delay_ms = 4000;
	}
	if (!substate_decide(&v, ask, &A, next))
		return -1;
	return (int)next->state;
}

/* Every cell of the table in substate-rule.c. */
static void
table(void)
{
	static const int want[SUBSTATE_N][SUBSTATE_NASKS] = {
		/* pause, resume, gone, trip, lease, probe ok, probe failed */
		[SUBSTATE_ACTIVE] = { SUBSTATE_PAUSED, -1, SUBSTATE_PAUSED,
		    SUBSTATE_TRIPPED, -1, -1, -1 },
		[SUBSTATE_PAUSED] = { -1, SUBSTATE_ACTIVE, -1, -1, -1, -1, -1 },
		[SUBSTATE_TRIPPED] = { SUBSTATE_PAUSED, SUBSTATE_ACTIVE,
		    SUBSTATE_PAUSED, -1, SUBSTATE_TRIPPED, SUBSTATE_ACTIVE,
		    SUBSTATE_TRIPPED }
	};
	struct substate_value	 next;
	int			 s, a;

	for (s = 0; s < SUBSTATE_N; s++)
		for (a = 0; a < SUBSTATE_NASKS; a++)
			if (after((enum substate)s, (enum substate_ask)a,
			    &next) != want[s][a])
				t_fail(__FILE__, __LINE__, "%s + %s: got %d, "
				    "want %d", substate_text((enum substate)s),
				    substate_ask_text[a], after((enum substate)s,
				    (enum substate_ask)a, &next), want[s][a]);
}

/* Reasons, since, by, and what each kind of change keeps. */
static void
reasons(void)
{
	struct substate_value	 n;

	after(SUBSTATE_ACTIVE, SUBSTATE_PAUSE, &n);
	T_EQ_STR(n.reason, "operator");
	T_EQ_STR(n.since, A.now);
	T_EQ_STR(n.by, A.instance);
	after(SUBSTATE_ACTIVE, SUBSTATE_GONE, &n);
	T_EQ_STR(n.reason, "gone");
	T_EQ_STR(n.url, A.url);
	after(SUBSTATE_ACTIVE, SUBSTATE_TRIP, &n);
	T_EQ_STR(n.reason, "breaker");
	T_EQ_INT(n.failures, 20);
	T_EQ_INT(n.probe_n, 1);
	T_EQ_STR(n.holder, "");
	after(SUBSTATE_TRIPPED, SUBSTATE_PROBE_OK, &n);
	T_EQ_STR(n.reason, "probe");
	after(SUBSTATE_TRIPPED, SUBSTATE_RESUME, &n);
	T_EQ_STR(n.reason, "operator");
	T_EQ_STR(n.holder, "");
}

/* A lease is taken only when free; a failed probe frees it, n+1. */
static void
lease(void)
{
	struct substate_value	 v, n, m;

	substate_value_active(&v);
	substate_decide(&v, SUBSTATE_TRIP, &A, &n);
	snprintf(n.since, sizeof(n.since), "then");
	T_ASSERT(substate_decide(&n, SUBSTATE_LEASE, &A, &m));
	T_EQ_STR(m.holder, A.instance);
	T_EQ_STR(m.since, "then");		/* the same state */
	T_ASSERT(!substate_decide(&m, SUBSTATE_LEASE, &A, &v));
	T_ASSERT(substate_decide(&m, SUBSTATE_PROBE_FAILED, &A, &v));
	T_EQ_STR(v.holder, "");
	T_EQ_INT(v.probe_n, 2);
	T_EQ_STR(v.since, "then");
}

/* 5 s doubling to 5 min, in [d/2, d], the same for a given draw. */
static void
delays(void)
{
	struct substate_value	 v, n;
	struct substate_ask_arg	 lo = A, hi = A;
	long long		 d;
	int			 k;

	lo.rnd = 0;
	hi.rnd = 0xffffffffu;
	substate_value_active(&v);
	substate_decide(&v, SUBSTATE_TRIP, &lo, &n);
	T_EQ_INT(n.delay_ms, 2500);
	substate_decide(&v, SUBSTATE_TRIP, &hi, &n);
	T_ASSERT(n.delay_ms >= 4999 && n.delay_ms <= 5000);
	for (k = 1; k < 12; k++) {
		v = n;
		substate_decide(&v, SUBSTATE_PROBE_FAILED, &hi, &n);
		d = 5000LL << k;
		if (d > 300000)
			d = 300000;
		if (n.delay_ms < d - 1 || n.delay_ms > d)
			t_fail(__FILE__, __LINE__, "probe %d: %lld, want %lld",
			    n.probe_n, n.delay_ms, d);
	}
}

/* Written and read back the same; a value that is no state refused. */
static void
stored(void)
{
	struct substate_value	 v, n, r;
	char			*s;
	size_t			 len;

	substate_value_active(&v);
	substate_decide(&v, SUBSTATE_TRIP, &A, &n);
	substate_decide(&n, SUBSTATE_LEASE, &A, &v);
	s = substate_value_format(&v, &len);
	T_ASSERT(strstr(s, "\"state\":\"tripped\"") != NULL);
	T_ASSERT(substate_value_parse(s, len, &r) == 0);
	T_ASSERT(memcmp(&r, &v, sizeof(r)) == 0);
	free(s);
	substate_decide(&v, SUBSTATE_GONE, &A, &n);
	s = substate_value_format(&n, &len);
	T_ASSERT(strstr(s, "\"probe\"") == NULL);
	T_ASSERT(strstr(s, "\"url\":\"https://example.test/hook\"") != NULL);
	T_ASSERT(substate_value_parse(s, len, &r) == 0);
	T_ASSERT(r.url == NULL);		/* written, not read back */
	T_EQ_INT(r.state, SUBSTATE_PAUSED);
	free(s);
	T_ASSERT(substate_value_parse("{\"state\":\"asleep\"}", 18, &r) == -1);
	T_ASSERT(substate_value_parse("[]", 2, &r) == -1);
	T_ASSERT(substate_value_parse("{\"state\":", 9, &r) == -1);
	/* Out of range: kept in range, not trusted. */
	T_ASSERT(substate_value_parse("{\"state\":\"tripped\",\"probe\":"
	    "{\"n\":-4,\"delayMs\":99999999999}}", 58, &r) == 0);
	T_EQ_INT(r.probe_n, 1);
	T_EQ_INT(r.delay_ms, SUBSTATE_PROBE_MAX_MS);
}

int
main(void)
{
	static const struct t_case cases[] = {
		{ "every cell of the table", table },
		{ "reasons, since, by", reasons },
		{ "the probe's lease", lease },
		{ "probe delays", delays },
		{ "stored and read back", stored }
	};

	return t_run("substate", cases, T_NCASES(cases));
}

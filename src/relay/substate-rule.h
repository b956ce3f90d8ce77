/*
 * substate-rule.h: a subscriber's state as stored in the
 * TREATY_SUBSCRIBER_STATE bucket (its value, read and written), and the
 * table of what each request makes of it (SPEC 17).  Pure: no state, no
 * I/O; substate.c decides with it, the unit tests check it.
 *
 * The value is a small JSON object:
 *
 *   {"state":"tripped","since":"2026-12-07T15:21:38.594Z","reason":"breaker",
 *    "by":"<instance>","failures":20,"probe":{"n":2,"delayMs":13211,
 *    "holder":null}}
 *
 * since changes only with state; "url" is there for reason gone,
 * "failures" for breaker, "probe" while tripped.
 */
#ifndef SUBSTATE_RULE_H
#define SUBSTATE_RULE_H

#include <stddef.h>
#include <stdint.h>

#include "treaty.h"
#include "substate.h"

#define SUBSTATE_REASON_MAX	16
#define SUBSTATE_INSTANCE_MAX	16	/* hex digits of an instance's name */
/* The first probe after 5 s, doubling to 5 min, equal jitter (SPEC 17). */
#define SUBSTATE_PROBE_BASE_MS	5000
#define SUBSTATE_PROBE_MAX_MS	300000

struct substate_value {
	enum substate	 state;
	char		 since[TREATY_RFC3339_MAX];
	char		 reason[SUBSTATE_REASON_MAX];
	char		 by[SUBSTATE_INSTANCE_MAX + 1];
	int		 failures;		/* breaker: how many */
	/*
	 * gone: which URL, written with the state and not read back (a log
	 * line's and an AUDIT record's; the view has no use for it): not
	 * owned, NULL in a value read.
	 */
	const char	*url;
	int		 probe_n;		/* tripped: the next probe */
	long long	 delay_ms;		/* ... after this long */
	char		 holder[SUBSTATE_INSTANCE_MAX + 1];	/* "": free */
};

/* What is asked of a state. */
enum substate_ask {
	SUBSTATE_PAUSE,		/* the operations API */
	SUBSTATE_RESUME,
	SUBSTATE_GONE,		/* a 410 */
	SUBSTATE_TRIP,		/* the breaker */
	SUBSTATE_LEASE,		/* take the probe */
	SUBSTATE_PROBE_OK,	/* the probe got a 2xx */
	SUBSTATE_PROBE_FAILED,	/* any other answer, or its lease ran out */
	SUBSTATE_NASKS
};
extern const char *const substate_ask_text[SUBSTATE_NASKS];

/* What the one who asks adds. */
struct substate_ask_arg {
	const char	*instance;	/* who writes */
	const char	*now;		/* RFC 3339, for since */
	int		 failures;	/* TRIP */
	const char	*url;		/* GONE */
	uint32_t	 rnd;		/* the probe delay's jitter */
};

/*
 * The state a missing key stands for: active, since nothing.
 */
void	substate_value_active(struct substate_value *v);
/*
 * What ask makes of cur: 1 with *next when it changes it, 0 when
 * nothing is to be written (already so, or not allowed from there).
 */
int	substate_decide(const struct substate_value *cur,
	    enum substate_ask ask, const struct substate_ask_arg *a,
	    struct substate_value *next);
/* Read a stored value: 0, or -1 when it is not one. */
int	substate_value_parse(const char *s, size_t len,
	    struct substate_value *v);
/* Its stored form (malloc'd, *len bytes, NUL-terminated). */
char	*substate_value_format(const struct substate_value *v, size_t *len);

#endif

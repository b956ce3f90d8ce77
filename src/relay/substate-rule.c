/*
 * substate-rule.c: a subscriber's stored state and what each request
 * makes of it (substate-rule.h).  Pure.
 *
 * The table (a cell is the state written; "-" nothing):
 *
 *   current    pause    resume   410      trip     lease    probe 2xx  probe failed
 *   active     paused   -        paused   tripped  -        -          -
 *   paused     -        active   -        -        -        -          -
 *   tripped    paused   active   paused   -        holder   active     holder free, n+1
 *
 * So an operator's pause beats a probe's 2xx (the probe's write finds
 * paused and does nothing), a 410 beats the breaker, and a resume clears
 * a trip and its lease.  A lease is taken only when free; a failed probe
 * (or a lapsed lease) frees it and sets the next delay, drawn once here
 * by the writer so that every instance waits the same time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "treaty.h"
#include "json.h"
#include "substate-rule.h"
#include "util.h"

const char *const substate_ask_text[SUBSTATE_NASKS] = {
	"pause", "resume", "gone", "trip", "lease", "probe ok", "probe failed"
};

static const char *const state_text[SUBSTATE_N] = {
	"active", "paused", "tripped"
};

const char *
substate_text(enum substate s)
{
	return state_text[s];
}

void
substate_value_active(struct substate_value *v)
{
	memset(v, 0, sizeof(*v));
	v->state = SUBSTATE_ACTIVE;
}

/* Copy s into a buffer of len bytes, cut to fit. */
static void
copy(char *dst, size_t len, const char *s)
{
	snprintf(dst, len, "%s", s != NULL ? s : "");
}

/* A new state: since now, by the writer, nothing of the last kept. */
static void
become(struct substate_value *next, enum substate st, const char *reason,
    const struct substate_ask_arg *a)
{
	substate_value_active(next);
	next->state = st;
	copy(next->since, sizeof(next->since), a->now);
	copy(next->reason, sizeof(next->reason), reason);
	copy(next->by, sizeof(next->by), a->instance);
}

/* The delay before probe n. */
static long long
probe_delay(int n, uint32_t rnd)
{
	return (long long)treaty_backoff_ms((unsigned)n,
	    SUBSTATE_PROBE_BASE_MS, SUBSTATE_PROBE_MAX_MS, rnd);
}

/* See substate-rule.h. */
int
substate_decide(const struct substate_value *cur, enum substate_ask ask,
    const struct substate_ask_arg *a, struct substate_value *next)
{
	switch (ask) {
	case SUBSTATE_PAUSE:
		if (cur->state == SUBSTATE_PAUSED)
			return 0;
		become(next, SUBSTATE_PAUSED, "operator", a);
		return 1;
	case SUBSTATE_RESUME:
		if (cur->state == SUBSTATE_ACTIVE)
			return 0;
		become(next, SUBSTATE_ACTIVE, "operator", a);
		return 1;
	case SUBSTATE_GONE:
		if (cur->state == SUBSTATE_PAUSED)
			return 0;
		become(next, SUBSTATE_PAUSED, "gone", a);
		next->url = a->url;
		return 1;
	case SUBSTATE_TRIP:
		if (cur->state != SUBSTATE_ACTIVE)
			return 0;
		become(next, SUBSTATE_TRIPPED, "breaker", a);
		next->failures = a->failures;
		next->probe_n = 1;
		next->delay_ms = probe_delay(1, a->rnd);
		return 1;
	case SUBSTATE_LEASE:
		if (cur->state != SUBSTATE_TRIPPED || cur->holder[0] != '\0')
			return 0;
		*next = *cur;
		copy(next->holder, sizeof(next->holder), a->instance);
		return 1;
	case SUBSTATE_PROBE_OK:
		if (cur->state != SUBSTATE_TRIPPED)
			return 0;
		become(next, SUBSTATE_ACTIVE, "probe", a);
		return 1;
	case SUBSTATE_PROBE_FAILED:
		if (cur->state != SUBSTATE_TRIPPED)
			return 0;
		*next = *cur;
		next->holder[0] = '\0';
		if (next->probe_n < 1000)
			next->probe_n++;
		next->delay_ms = probe_delay(next->probe_n, a->rnd);
		return 1;
	case SUBSTATE_NASKS:
		break;
	}
	return 0;
}

/* The string at path in root, or NULL. */
static const char *
get_str(yajl_val root, const char *key)
{
	const char	*path[] = { key, NULL };
	yajl_val	 v = yajl_tree_get(root, path, yajl_t_string);

	return v != NULL ? YAJL_GET_STRING(v) : NULL;
}

/* The integer at path in root, or dflt. */
static long long
get_int(yajl_val root, const char **path, long long dflt)
{
	yajl_val	 v = yajl_tree_get(root, path, yajl_t_number);

	return v != NULL && YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : dflt;
}

/* See substate-rule.h. */
int
substate_value_parse(const char *s, size_t len, struct substate_value *v)
{
	char		*text = xstrndup(s, len);
	yajl_val	 root = yajl_tree_parse(text, NULL, 0);
	const char	*st, *p_n[] = { "probe", "n", NULL };
	const char	*p_d[] = { "probe", "delayMs", NULL };
	const char	*p_h[] = { "probe", "holder", NULL };
	const char	*p_f[] = { "failures", NULL };
	yajl_val	 h;
	int		 i, rc = -1;

	free(text);
	substate_value_active(v);
	if (root == NULL || !YAJL_IS_OBJECT(root) ||
	    (st = get_str(root, "state")) == NULL)
		goto out;
	for (i = 0; i < SUBSTATE_N; i++)
		if (strcmp(st, state_text[i]) == 0)
			break;
	if (i == SUBSTATE_N)
		goto out;
	v->state = (enum substate)i;
	copy(v->since, sizeof(v->since), get_str(root, "since"));
	copy(v->reason, sizeof(v->reason), get_str(root, "reason"));
	copy(v->by, sizeof(v->by), get_str(root, "by"));
	v->failures = (int)get_int(root, p_f, 0);
	v->probe_n = (int)get_int(root, p_n, 1);
	v->delay_ms = get_int(root, p_d, SUBSTATE_PROBE_BASE_MS);
	if (v->probe_n < 1 || v->probe_n > 1000)
		v->probe_n = 1;
	if (v->delay_ms < 0 || v->delay_ms > SUBSTATE_PROBE_MAX_MS)
		v->delay_ms = SUBSTATE_PROBE_MAX_MS;
	if ((h = yajl_tree_get(root, p_h, yajl_t_string)) != NULL)
		copy(v->holder, sizeof(v->holder), YAJL_GET_STRING(h));
	rc = 0;
out:
	yajl_tree_free(root);
	return rc;
}

/* See substate-rule.h. */
char *
substate_value_format(const struct substate_value *v, size_t *len)
{
	yajl_gen	 g = yajl_gen_alloc(NULL);
	char		*out;

	yajl_gen_map_open(g);
	json_gen_str(g, "state");
	json_gen_str(g, state_text[v->state]);
	json_gen_str(g, "since");
	json_gen_str(g, v->since);
	json_gen_str(g, "reason");
	json_gen_str(g, v->reason);
	json_gen_str(g, "by");
	json_gen_str(g, v->by);
	if (v->url != NULL && v->url[0] != '\0') {
		json_gen_str(g, "url");
		json_gen_str(g, v->url);
	}
	if (v->failures > 0) {
		json_gen_str(g, "failures");
		yajl_gen_integer(g, v->failures);
	}
	if (v->state == SUBSTATE_TRIPPED) {
		json_gen_str(g, "probe");
		yajl_gen_map_open(g);
		json_gen_str(g, "n");
		yajl_gen_integer(g, v->probe_n);
		json_gen_str(g, "delayMs");
		yajl_gen_integer(g, v->delay_ms);
		json_gen_str(g, "holder");
		json_gen_str_or_null(g, v->holder[0] != '\0' ? v->holder :
		    NULL);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
	out = json_gen_take(g);
	*len = strlen(out);
	return out;
}

/*
 * t-trace: W3C traceparent (src/common/trace.c): the recommendation's
 * example read; every way of being invalid refused (length, case, ff,
 * zero ids, separators); a later version's longer form read; a child
 * keeps the trace id and flags with the new span.
 */
#include <string.h>

#include "harness.h"
#include "trace.h"

#define EX	"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

static void
reads(void)
{
	struct trace	 t;

	T_EQ_INT(trace_parse(EX, &t), 0);
	T_EQ_STR(t.id, "4bf92f3577b34da6a3ce929d0e0e4736");
	T_EQ_STR(t.parent, "00f067aa0ba902b7");
	T_EQ_STR(t.flags, "01");
	/* A later version may add fields after a '-'. */
	T_EQ_INT(trace_parse("01-4bf92f3577b34da6a3ce929d0e0e4736-"
	    "00f067aa0ba902b7-00-what-comes-next", &t), 0);
	T_EQ_STR(t.flags, "00");
}

static void
refuses(void)
{
	static const char *const bad[] = {
		"",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
		EX "-",				/* 00 is exactly 55 */
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
		"0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-011",
	};
	struct trace	 t;
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (trace_parse(bad[i], &t) != -1)
			t_fail(__FILE__, __LINE__, "took [%s]", bad[i]);
	T_EQ_INT(trace_parse(NULL, &t), -1);
}

static void
child(void)
{
	struct trace	 t;
	const uint8_t	 span[8] = { 0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3 };
	char		 out[TRACEPARENT_LEN + 1];
	struct trace	 c;

	trace_parse(EX, &t);
	trace_child(&t, span, out);
	T_EQ_STR(out, "00-4bf92f3577b34da6a3ce929d0e0e4736-deadbeef00010203-01");
	T_EQ_INT(trace_parse(out, &c), 0);
}

int
main(void)
{
	static const struct t_case cases[] = {
		{ "the recommendation's example, a later version", reads },
		{ "invalid forms refused", refuses },
		{ "a child: same trace, new span, same flags", child }
	};

	return t_run("trace", cases, T_NCASES(cases));
}

/*
 * fz-ingest: fuzz target for everything the relay parses from a request
 * before anything is stored: the structured-mode JSON, the binary-mode
 * ce-* headers and their percent-encoding, the subject, pattern and type
 * grammar, and a signature header.  libFuzzer entry point; test/fuzz/
 * replay.c drives it without clang (make check), and `make fuzz` builds it
 * with -fsanitize=fuzzer where clang is installed.
 *
 * Input: the first byte picks what to feed, the rest is the data.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "treaty.h"
#include "../../src/common/cevent.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* "name: value" lines into headers, as evhttp would have parsed them. */
static void
fz_headers(struct evkeyvalq *h, const char *s, size_t n)
{
	char	*copy = strndup(s, n), *line, *save = NULL, *colon;

	if (copy == NULL)
		return;
	for (line = strtok_r(copy, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if ((colon = strchr(line, ':')) == NULL)
			continue;
		*colon++ = '\0';
		while (*colon == ' ')
			colon++;
		evhttp_add_header(h, line, colon);
	}
	free(copy);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char		*s = (const char *)data + 1;
	size_t			 n = size > 0 ? size - 1 : 0;
	struct cevent		 ev;
	struct evkeyvalq	 h;
	char			 buf[512], *z;
	size_t			 outlen;
	struct treaty_secret	 sec = { "0123456789abcdef", 16 };

	if (size == 0)
		return 0;
	switch (data[0] % 4) {
	case 0:
		if (cevent_from_structured(&ev, s, n) == 0 &&
		    treaty_type_valid(ev.type))
			(void)treaty_type_matches_subject(ev.type,
			    "evt.a.b.c.d");
		cevent_free(&ev);
		break;
	case 1:
		TAILQ_INIT(&h);
		fz_headers(&h, s, n);
		(void)cevent_from_binary(&ev, &h, "", 0);
		cevent_free(&ev);
		evhttp_clear_headers(&h);
		break;
	case 2:
		if ((z = strndup(s, n)) == NULL)
			break;
		(void)treaty_subject_valid(z);
		(void)treaty_type_valid(z);
		if (treaty_pattern_valid(z)) {
			(void)treaty_pattern_match(z, "evt.a.shop.order.x");
			(void)treaty_pattern_within(z, "evt.>");
		}
		(void)treaty_rfc3339_valid(z);
		(void)treaty_sig_verify(&sec, 1, z, "id", "b", 1, 1700000000, 0);
		free(z);
		break;
	case 3:
		if (treaty_pct_decode(s, n, buf, sizeof(buf), &outlen) ==
		    TREATY_OK)
			(void)treaty_pct_encode(buf, outlen, buf, 0);
		break;
	}
	return 0;
}

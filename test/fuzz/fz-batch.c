/*
 * fz-batch: fuzz target for a batch's body (SPEC 14): json_array_split
 * (src/common/json.c) over bytes with no NUL after them, as the relay hands
 * it the request's body, then every element it finds through the
 * structured-mode parser, as ingest-batch.c does.  libFuzzer entry point;
 * replay.c runs it over test/fuzz/corpus/batch in make check.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/common/api.h"
#include "../../src/common/cevent.h"
#include "../../src/common/json.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct json_span	 el[API_BATCH_MAX];
	struct cevent		 ev;
	char			*copy;
	int			 n, i;

	/* An exact copy: ASan sees any read past its end. */
	if ((copy = malloc(size > 0 ? size : 1)) == NULL)
		return 0;
	memcpy(copy, data, size);
	n = json_array_split(copy, size, el, API_BATCH_MAX);
	if (n > API_BATCH_MAX)
		abort();
	for (i = 0; i < n; i++) {
		if (el[i].off > size || el[i].len > size - el[i].off)
			abort();
		if (cevent_from_structured(&ev, copy + el[i].off,
		    el[i].len) == 0 && ev.id == NULL)
			abort();
		cevent_free(&ev);
	}
	free(copy);
	return 0;
}

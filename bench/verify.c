/*
 * verify: what checking one envelope's signature costs a worker
 * (treaty_sig_verify: HMAC-SHA256 over "<t>.<id>.<body>" and a
 * constant-time compare), for a few body sizes and one or two secrets.
 *
 *   verify [-n iterations]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "treaty.h"

/* Monotonic nanoseconds. */
static long long
ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int
main(int argc, char **argv)
{
	static const size_t	 sizes[] = { 256, 4096, 65536, 1048576 };
	struct treaty_secret	 s[2] = {
		{ "bench-secret-new-0123456789", 27 },
		{ "bench-secret-0123456789abcdef", 29 },
	};
	char			 sig[256], *body;
	long long		 n = 200000, i, t0, t;
	size_t			 k;
	int			 ch, nsec, iters;

	while ((ch = getopt(argc, argv, "n:")) != -1) {
		if (ch != 'n' || (n = atoll(optarg)) < 1) {
			fprintf(stderr, "usage: verify [-n iterations]\n");
			return 2;
		}
	}
	body = malloc(sizes[3]);
	memset(body, 'x', sizes[3]);
	for (nsec = 1; nsec <= 2; nsec++)
		for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			/* Signed with the older secret: the worst case. */
			if (treaty_sig_sign(&s[1], 1, (int64_t)time(NULL),
			    "bench-event-id-0001", body, sizes[k], sig,
			    sizeof(sig)) < 0)
				return 1;
			iters = (int)(sizes[k] > 65536 ? n / 100 : n /
			    (1 + (long long)sizes[k] / 4096));
			if (iters < 100)
				iters = 100;
			t0 = ns();
			for (i = 0; i < iters; i++)
				if (treaty_sig_verify(&s[2 - nsec], (size_t)nsec,
				    sig, "bench-event-id-0001", body, sizes[k],
				    (int64_t)time(NULL), 0) != TREATY_OK)
					return 1;
			t = ns() - t0;
			printf("verify: %7zu-byte body, %d secret%s: %8.2f us "
			    "per envelope (%d runs)\n", sizes[k], nsec,
			    nsec > 1 ? "s" : " ", t / 1000.0 / iters, iters);
		}
	free(body);
	return 0;
}

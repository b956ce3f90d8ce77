/*
 * replay: runs a libFuzzer target without clang.  Feeds every file of the
 * corpus folder, then a fixed number of deterministic mutations of each
 * (byte flips, truncations, splices), so `make check` exercises the target
 * under ASan/UBSan with SANITIZE=1.  Prints one `ok - fuzz: ...` line, or
 * crashes (the runner counts a crash as a failure).
 *
 *   t-fuzz-<target> [CORPUS_DIR [MUTATIONS]]
 *
 * The corpus is test/fuzz/corpus/<target> unless named.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t	 rng = 0x2545F4914F6CDD1DULL;

/* xorshift64: deterministic, so a failure replays. */
static uint32_t
next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

/* Read a whole file. */
static uint8_t *
slurp(const char *path, size_t *len)
{
	FILE	*f = fopen(path, "rb");
	uint8_t	*buf = NULL;
	long	 n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) != NULL)
		*len = fread(buf, 1, (size_t)n, f);
	fclose(f);
	return buf;
}

/* One mutation of seed into out (capacity cap); returns its length. */
static size_t
mutate(const uint8_t *seed, size_t len, uint8_t *out, size_t cap)
{
	size_t	 n = len < cap ? len : cap, i, k;

	memcpy(out, seed, n);
	for (k = next_rand() % 8 + 1; k > 0 && n > 0; k--) {
		i = next_rand() % n;
		switch (next_rand() % 5) {
		case 0:
			out[i] ^= (uint8_t)(1u << (next_rand() % 8));
			break;
		case 1:
			out[i] = (uint8_t)next_rand();
			break;
		case 2:
			n = i + 1;	/* truncate */
			break;
		case 3:	/* duplicate a slice */
			if (n * 2 <= cap) {
				memcpy(out + n, out + i, n - i);
				n += n - i;
			}
			break;
		case 4:
			out[i] = "{}[]\":,\\%\n0"[next_rand() % 12];
			break;
		}
	}
	return n;
}

int
main(int argc, char **argv)
{
	long		 rounds = argc > 2 ? atol(argv[2]) : 20000;
	const char	*name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 :
			    argv[0];
	const char	*target = strncmp(name, "t-fuzz-", 7) == 0 ? name + 7 :
			    name;
	char		 defdir[256];
	const char	*dir = defdir;
	DIR		*d;
	struct dirent	*de;
	size_t		 files = 0, runs = 0, len, n;
	uint8_t		*seed, *buf = malloc(1 << 16);
	char		 path[4096];
	long		 r;

	snprintf(defdir, sizeof(defdir), "test/fuzz/corpus/%s", target);
	if (argc > 1)
		dir = argv[1];
	d = opendir(dir);

	if (d == NULL || buf == NULL) {
		printf("FAIL - fuzz: %s: cannot open %s\n", name, dir);
		return 1;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		len = 0;
		if ((seed = slurp(path, &len)) == NULL)
			continue;
		files++;
		LLVMFuzzerTestOneInput(seed, len);
		runs++;
		for (r = 0; r < rounds; r++) {
			n = mutate(seed, len, buf, 1 << 16);
			LLVMFuzzerTestOneInput(buf, n);
			runs++;
		}
		free(seed);
	}
	closedir(d);
	free(buf);
	if (files == 0) {
		printf("FAIL - fuzz: %s: empty corpus %s\n", name, dir);
		return 1;
	}
	printf("ok - fuzz: %s: %zu seeds, %zu inputs without a crash\n", name,
	    files, runs);
	return 0;
}

/*
 * t-inbox-lease: inbox receipts (made, read back, refused for another
 * inbox, event, key or a changed number, malformed) and the memory of
 * leases (held, acknowledged, released, handed out again, forgotten).
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "../../src/relay/inbox-lease.h"

#define KEY	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define KEY2	"f123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const struct store_lease	 L = { 2, 1234, 56, 1700000000000000789LL };

/* A receipt reads back as its lease, for its inbox and event only. */
static void
receipt_round_trip(void)
{
	struct store_lease	 l;
	char			 r[INBOX_RECEIPT_MAX];

	T_EQ_INT(inbox_receipt_make("jobs", KEY, "ev-1", &L, r, sizeof(r)), 0);
	T_ASSERT(strncmp(r, "2.1234.56.1700000000000000789.", 30) == 0);
	T_EQ_INT((int)strlen(r), 30 + INBOX_RECEIPT_MAC_HEX);
	memset(&l, 0, sizeof(l));
	T_EQ_INT(inbox_receipt_parse("jobs", KEY, "ev-1", r, &l), 0);
	T_ASSERT(memcmp(&l, &L, sizeof(l)) == 0);
	T_EQ_INT(inbox_receipt_parse("work", KEY, "ev-1", r, &l), -2);
	T_EQ_INT(inbox_receipt_parse("jobs", KEY, "ev-2", r, &l), -2);
	T_EQ_INT(inbox_receipt_parse("jobs", KEY2, "ev-1", r, &l), -2);
	T_EQ_INT(inbox_receipt_make("jobs", KEY, "ev-1", &L, r, 20), -1);
}

/* Every number is covered by the MAC. */
static void
receipt_tampered(void)
{
	struct store_lease	 l, t;
	char			 r[INBOX_RECEIPT_MAX], mac[64], f[INBOX_RECEIPT_MAX];
	int			 i;

	T_EQ_INT(inbox_receipt_make("jobs", KEY, "ev-1", &L, r, sizeof(r)), 0);
	snprintf(mac, sizeof(mac), "%s", strrchr(r, '.') + 1);
	for (i = 0; i < 4; i++) {
		t = L;
		if (i == 0)
			t.delivered++;
		else if (i == 1)
			t.seq++;
		else if (i == 2)
			t.dseq++;
		else
			t.ts++;
		snprintf(f, sizeof(f), "%llu.%llu.%llu.%lld.%s",
		    (unsigned long long)t.delivered, (unsigned long long)t.seq,
		    (unsigned long long)t.dseq, (long long)t.ts, mac);
		T_EQ_INT(inbox_receipt_parse("jobs", KEY, "ev-1", f, &l), -2);
	}
}

/* What is not a receipt at all. */
static void
receipt_malformed(void)
{
	static const char *const bad[] = {
		"", "x", "1.2.3.4", "1.2.3.4.", "1.2.3.4.abc",
		"a.2.3.4.0123456789abcdef0123456789abcdef",
		"1.2.3.0123456789abcdef0123456789abcdef",
		"1.2.3.4.0123456789abcdef0123456789abcdef0",
		"-1.2.3.4.0123456789abcdef0123456789abcdef",
		"1..3.4.0123456789abcdef0123456789abcdef",
	};
	struct store_lease	 l;
	size_t			 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (inbox_receipt_parse("jobs", KEY, "ev-1", bad[i], &l) != -1)
			t_fail(__FILE__, __LINE__, "accepted [%s]", bad[i]);
}

/* The states a lease goes through, and what is then known gone. */
static void
leases_states(void)
{
	struct inbox_leases	*m = inbox_leases_new(1000);
	struct store_lease	 again = L;

	T_EQ_INT(inbox_leases_gone(m, 0, &L), 0);
	inbox_leases_note(m, 0, &L, INBOX_LEASE_HELD, 0);
	T_EQ_INT(inbox_leases_gone(m, 0, &L), 0);
	/* The same event in another inbox is another lease. */
	inbox_leases_note(m, 1, &L, INBOX_LEASE_ACKED, 0);
	T_EQ_INT(inbox_leases_gone(m, 0, &L), 0);
	T_EQ_INT(inbox_leases_gone(m, 1, &L), 1);
	inbox_leases_note(m, 0, &L, INBOX_LEASE_RELEASED, 1);
	T_EQ_INT(inbox_leases_gone(m, 0, &L), 1);
	/* Handed out again: the old lease is gone, the new one held. */
	again.delivered++;
	again.dseq++;
	inbox_leases_note(m, 0, &again, INBOX_LEASE_HELD, 2);
	T_EQ_INT(inbox_leases_gone(m, 0, &L), 1);
	T_EQ_INT(inbox_leases_gone(m, 0, &again), 0);
	/* News of the older lease does not overwrite the newer one. */
	inbox_leases_note(m, 0, &L, INBOX_LEASE_ACKED, 3);
	T_EQ_INT(inbox_leases_gone(m, 0, &again), 0);
	T_EQ_INT(inbox_leases_count(m), 2);
	inbox_leases_free(m);
}

/* Forgotten keep_ms after the last note, and never more than the cap. */
static void
leases_forgotten(void)
{
	struct inbox_leases	*m = inbox_leases_new(1000);
	struct store_lease	 l = L;
	int			 i;

	inbox_leases_note(m, 0, &L, INBOX_LEASE_ACKED, 0);
	l.seq = L.seq + 1;
	inbox_leases_note(m, 0, &l, INBOX_LEASE_HELD, 1000);
	T_EQ_INT(inbox_leases_gone(m, 0, &L), 1);
	inbox_leases_note(m, 0, &l, INBOX_LEASE_HELD, 1001);
	T_EQ_INT(inbox_leases_gone(m, 0, &L), 0);
	T_EQ_INT(inbox_leases_count(m), 1);
	for (i = 0; i < INBOX_LEASE_MAX + 10; i++) {
		l.seq = 10000 + (uint64_t)i;
		inbox_leases_note(m, 0, &l, INBOX_LEASE_HELD, 1002);
	}
	T_ASSERT(inbox_leases_count(m) <= INBOX_LEASE_MAX + 1);
	inbox_leases_free(m);
}

static const struct t_case cases[] = {
	{ "receipt made and read back", receipt_round_trip },
	{ "receipt with a changed number refused", receipt_tampered },
	{ "malformed receipts", receipt_malformed },
	{ "lease states", leases_states },
	{ "leases forgotten in time and over the cap", leases_forgotten },
};

int
main(void)
{
	return t_run("inbox-lease", cases, T_NCASES(cases)) ? 1 : 0;
}

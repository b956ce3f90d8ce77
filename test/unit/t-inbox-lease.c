/*
 * t-inbox-lease: inbox receipts (made, read back, refused for another
 * inbox, event, key, replay or a changed number, malformed; a replay's
 * lease names its replay) and the memory of leases (held, acknowledged,
 * released, handed out again, forgotten; kept apart per consumer).
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "../../src/relay/inbox-lease.h"

#define KEY	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define KEY2	"f123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define RID	"0123456789abcdef01234567"
#define RID2	"0123456789abcdef01234568"
/* L's receipt for "jobs", KEY and "ev-1", as relays made it before replays. */
#define RECEIPT_V1 "2.1234.56.1700000000000000789.66513d31857dd7570b46ed551295dc65"

static const struct store_lease	 L = { 2, 1234, 56, 1700000000000000789LL, 0 };

/* A receipt reads back as its lease, for its inbox and event only. */
static void
receipt_round_trip(void)
{
	struct store_lease	 l;
	char			 r[INBOX_RECEIPT_MAX], rid[STORE_REPLAY_ID_LEN + 1];

	T_EQ_INT(inbox_receipt_make("jobs", KEY, "ev-1", NULL, &L, r,
	    sizeof(r)), 0);
	T_ASSERT(strncmp(r, "2.1234.56.1700000000000000789.", 30) == 0);
	T_EQ_INT((int)strlen(r), 30 + INBOX_RECEIPT_MAC_HEX);
	memset(&l, 0, sizeof(l));
	memset(rid, 'x', sizeof(rid));
	T_EQ_INT(inbox_receipt_parse("jobs", KEY, "ev-1", r, &l, rid), 0);
	T_ASSERT(memcmp(&l, &L, sizeof(l)) == 0);
	T_EQ_STR(rid, "");
	T_EQ_INT(inbox_receipt_parse("work", KEY, "ev-1", r, &l, rid), -2);
	T_EQ_INT(inbox_receipt_parse("jobs", KEY, "ev-2", r, &l, rid), -2);
	T_EQ_INT(inbox_receipt_parse("jobs", KEY2, "ev-1", r, &l, rid), -2);
	T_EQ_INT(inbox_receipt_make("jobs", KEY, "ev-1", NULL, &L, r, 20), -1);
	/* "" is the inbox's own consumer too. */
	T_EQ_INT(inbox_receipt_make("jobs", KEY, "ev-1", "", &L, r, sizeof(r)),
	    0);
	T_EQ_INT((int)strlen(r), 30 + INBOX_RECEIPT_MAC_HEX);
}

/* A receipt made before replays existed still reads (the same MAC). */
static void
receipt_old(void)
{
	struct store_lease	 l;
	char			 rid[STORE_REPLAY_ID_LEN + 1];
	char			 r[INBOX_RECEIPT_MAX];

	/* Made by the relay before this change, with these very inputs. */
	T_EQ_INT(inbox_receipt_make("jobs", KEY, "ev-1", NULL, &L, r,
	    sizeof(r)), 0);
	T_EQ_STR(r, RECEIPT_V1);
	T_EQ_INT(inbox_receipt_parse("jobs", KEY, "ev-1", RECEIPT_V1, &l, rid),
	    0);
	T_ASSERT(memcmp(&l, &L, sizeof(l)) == 0);
	T_EQ_STR(rid, "");
}

/* A replay's lease: the receipt names the replay, and reads back so. */
static void
receipt_replay(void)
{
	struct store_lease	 l;
	char			 r[INBOX_RECEIPT_MAX], own[INBOX_RECEIPT_MAX];
	char			 rid[STORE_REPLAY_ID_LEN + 1], f[INBOX_RECEIPT_MAX];
	const char		*mac;

	T_EQ_INT(inbox_receipt_make("jobs", KEY, "ev-1", RID, &L, r,
	    sizeof(r)), 0);
	T_EQ_INT(strncmp(r, "2.1234.56.1700000000000000789.r" RID ".", 56), 0);
	T_EQ_INT((int)strlen(r), 56 + INBOX_RECEIPT_MAC_HEX);
	memset(&l, 0, sizeof(l));
	T_EQ_INT(inbox_receipt_parse("jobs", KEY, "ev-1", r, &l, rid), 0);
	T_ASSERT(memcmp(&l, &L, sizeof(l)) == 0);
	T_EQ_STR(rid, RID);
	T_EQ_INT(inbox_receipt_parse("work", KEY, "ev-1", r, &l, rid), -2);
	T_EQ_INT(inbox_receipt_parse("jobs", KEY, "ev-2", r, &l, rid), -2);
	T_EQ_INT(inbox_receipt_parse("jobs", KEY2, "ev-1", r, &l, rid), -2);
	/* The MAC covers the replay: another replay's, or none, refused. */
	mac = strrchr(r, '.') + 1;
	snprintf(f, sizeof(f), "2.1234.56.1700000000000000789.r%s.%s", RID2,
	    mac);
	T_EQ_INT(inbox_receipt_parse("jobs", KEY, "ev-1", f, &l, rid), -2);
	snprintf(f, sizeof(f), "2.1234.56.1700000000000000789.%s", mac);
	T_EQ_INT(inbox_receipt_parse("jobs", KEY, "ev-1", f, &l, rid), -2);
	/* Nor does the own consumer's receipt name a replay. */
	T_EQ_INT(inbox_receipt_make("jobs", KEY, "ev-1", NULL, &L, own,
	    sizeof(own)), 0);
	snprintf(f, sizeof(f), "2.1234.56.1700000000000000789.r%s.%s", RID,
	    strrchr(own, '.') + 1);
	T_EQ_INT(inbox_receipt_parse("jobs", KEY, "ev-1", f, &l, rid), -2);
	/* Only a replay id can be named. */
	T_EQ_INT(inbox_receipt_make("jobs", KEY, "ev-1", "short", &L, r,
	    sizeof(r)), -1);
	T_EQ_INT(inbox_receipt_make("jobs", KEY, "ev-1",
	    "0123456789ABCDEF01234567", &L, r, sizeof(r)), -1);
	T_EQ_INT(inbox_receipt_make("jobs", KEY, "ev-1", RID, &L, r, 60), -1);
}

/* Every number is covered by the MAC. */
static void
receipt_tampered(void)
{
	struct store_lease	 l, t;
	char			 r[INBOX_RECEIPT_MAX], mac[64], f[INBOX_RECEIPT_MAX];
	char			 rid[STORE_REPLAY_ID_LEN + 1];
	int			 i;

	T_EQ_INT(inbox_receipt_make("jobs", KEY, "ev-1", NULL, &L, r,
	    sizeof(r)), 0);
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
		T_EQ_INT(inbox_receipt_parse("jobs", KEY, "ev-1", f, &l, rid),
		    -2);
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
		/* A replay's, malformed. */
		"1.2.3.4.r.0123456789abcdef0123456789abcdef",
		"1.2.3.4.r" RID,
		"1.2.3.4.r" RID ".",
		"1.2.3.4.r0123456789abcdef0123456.0123456789abcdef0123456789abcdef",
		"1.2.3.4.r0123456789abcdef012345678.0123456789abcdef0123456789abcdef",
		"1.2.3.4.r0123456789ABCDEF01234567.0123456789abcdef0123456789abcdef",
		"1.2.3.4.r0123456789abcdef0123456g.0123456789abcdef0123456789abcdef",
		"1.2.3.4.x" RID ".0123456789abcdef0123456789abcdef",
		"1.2.3.4.r" RID ".r" RID ".0123456789abcdef0123456789abcdef",
		"1.2.3.4.r" RID "0123456789abcdef0123456789abcdef",
	};
	struct store_lease	 l;
	char			 rid[STORE_REPLAY_ID_LEN + 1];
	size_t			 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (inbox_receipt_parse("jobs", KEY, "ev-1", bad[i], &l,
		    rid) != -1)
			t_fail(__FILE__, __LINE__, "accepted [%s]", bad[i]);
}

/* The states a lease goes through, and what is then known gone. */
static void
leases_states(void)
{
	struct inbox_leases	*m = inbox_leases_new(1000, 1000);
	struct store_lease	 again = L;

	T_EQ_INT(inbox_leases_gone(m, 0, NULL, &L), 0);
	inbox_leases_note(m, 0, NULL, &L, INBOX_LEASE_HELD, 0);
	T_EQ_INT(inbox_leases_gone(m, 0, NULL, &L), 0);
	/* The same event in another inbox is another lease. */
	inbox_leases_note(m, 1, NULL, &L, INBOX_LEASE_ACKED, 0);
	T_EQ_INT(inbox_leases_gone(m, 0, NULL, &L), 0);
	T_EQ_INT(inbox_leases_gone(m, 1, NULL, &L), 1);
	inbox_leases_note(m, 0, NULL, &L, INBOX_LEASE_RELEASED, 1);
	T_EQ_INT(inbox_leases_gone(m, 0, NULL, &L), 1);
	/* Handed out again: the old lease is gone, the new one held. */
	again.delivered++;
	again.dseq++;
	inbox_leases_note(m, 0, NULL, &again, INBOX_LEASE_HELD, 2);
	T_EQ_INT(inbox_leases_gone(m, 0, NULL, &L), 1);
	T_EQ_INT(inbox_leases_gone(m, 0, NULL, &again), 0);
	/* News of the older lease does not overwrite the newer one. */
	inbox_leases_note(m, 0, NULL, &L, INBOX_LEASE_ACKED, 3);
	T_EQ_INT(inbox_leases_gone(m, 0, NULL, &again), 0);
	T_EQ_INT(inbox_leases_count(m), 2);
	inbox_leases_free(m);
}

/*
 * A replay's consumer lends the same event under its own numbers: its
 * lease and the inbox's own are known apart.
 */
static void
leases_per_consumer(void)
{
	struct inbox_leases	*m = inbox_leases_new(1000, 1000);

	inbox_leases_note(m, 0, NULL, &L, INBOX_LEASE_HELD, 0);
	inbox_leases_note(m, 0, RID, &L, INBOX_LEASE_ACKED, 0);
	T_EQ_INT(inbox_leases_gone(m, 0, RID, &L), 1);
	T_EQ_INT(inbox_leases_gone(m, 0, NULL, &L), 0);
	T_EQ_INT(inbox_leases_gone(m, 0, "", &L), 0);
	T_EQ_INT(inbox_leases_gone(m, 0, RID2, &L), 0);
	inbox_leases_note(m, 0, "", &L, INBOX_LEASE_RELEASED, 1);
	T_EQ_INT(inbox_leases_gone(m, 0, NULL, &L), 1);
	T_EQ_INT(inbox_leases_gone(m, 0, RID2, &L), 0);
	T_EQ_INT(inbox_leases_count(m), 2);
	inbox_leases_free(m);
}

/*
 * A held lease runs out a lease after it was handed out or extended (a
 * margin early: JetStream's clock started first); not one acknowledged,
 * released, or handed out again (that is "gone"), nor one unknown.
 */
static void
leases_ran_out(void)
{
	struct inbox_leases	*m = inbox_leases_new(1000, 61000);
	struct store_lease	 next = L;

	T_EQ_INT(inbox_leases_ran_out(m, 0, NULL, &L, 5000), 0);
	inbox_leases_handout(m, 0, NULL, &L, INBOX_LEASE_HELD, 0);
	T_EQ_INT(inbox_leases_ran_out(m, 0, NULL, &L, 500), 0);
	T_EQ_INT(inbox_leases_ran_out(m, 0, NULL, &L, 879), 0);
	T_EQ_INT(inbox_leases_ran_out(m, 0, NULL, &L, 880), 1);
	T_EQ_INT(inbox_leases_ran_out(m, 0, RID, &L, 5000), 0);
	/* Extended at 600: held until 1600. */
	inbox_leases_note(m, 0, NULL, &L, INBOX_LEASE_HELD, 600);
	T_EQ_INT(inbox_leases_ran_out(m, 0, NULL, &L, 1400), 0);
	T_EQ_INT(inbox_leases_ran_out(m, 0, NULL, &L, 1500), 1);
	inbox_leases_note(m, 0, NULL, &L, INBOX_LEASE_ACKED, 700);
	T_EQ_INT(inbox_leases_ran_out(m, 0, NULL, &L, 5000), 0);
	next.dseq = L.dseq + 1;
	inbox_leases_handout(m, 0, NULL, &next, INBOX_LEASE_HELD, 800);
	T_EQ_INT(inbox_leases_ran_out(m, 0, NULL, &L, 5000), 0);
	T_EQ_INT(inbox_leases_gone(m, 0, NULL, &L), 1);
	inbox_leases_free(m);
}

/*
 * A handout is the newest lease there is, even under a lower delivery
 * sequence: a consumer re-created since counts from 1 again.
 */
static void
leases_handout(void)
{
	struct inbox_leases	*m = inbox_leases_new(1000, 1000);
	struct store_lease	 anew = L;

	inbox_leases_note(m, 0, NULL, &L, INBOX_LEASE_HELD, 0);
	anew.dseq = 1;
	anew.delivered = 1;
	T_ASSERT(anew.dseq < L.dseq);
	inbox_leases_handout(m, 0, NULL, &anew, INBOX_LEASE_HELD, 1);
	T_EQ_INT(inbox_leases_gone(m, 0, NULL, &anew), 0);
	/* Taken by a destructive fetch: the lease before it is gone. */
	inbox_leases_handout(m, 0, NULL, &L, INBOX_LEASE_HELD, 3);
	anew.dseq = L.dseq + 1;
	inbox_leases_handout(m, 0, NULL, &anew, INBOX_LEASE_ACKED, 4);
	T_EQ_INT(inbox_leases_gone(m, 0, NULL, &L), 1);
	T_EQ_INT(inbox_leases_count(m), 1);
	inbox_leases_free(m);
}

/* Forgotten keep_ms after the last note, and never more than the cap. */
static void
leases_forgotten(void)
{
	struct inbox_leases	*m = inbox_leases_new(1000, 1000);
	struct store_lease	 l = L;
	int			 i;

	inbox_leases_note(m, 0, NULL, &L, INBOX_LEASE_ACKED, 0);
	l.seq = L.seq + 1;
	inbox_leases_note(m, 0, NULL, &l, INBOX_LEASE_HELD, 1000);
	T_EQ_INT(inbox_leases_gone(m, 0, NULL, &L), 1);
	inbox_leases_note(m, 0, NULL, &l, INBOX_LEASE_HELD, 1001);
	T_EQ_INT(inbox_leases_gone(m, 0, NULL, &L), 0);
	T_EQ_INT(inbox_leases_count(m), 1);
	for (i = 0; i < INBOX_LEASE_MAX + 10; i++) {
		l.seq = 10000 + (uint64_t)i;
		inbox_leases_note(m, 0, NULL, &l, INBOX_LEASE_HELD, 1002);
	}
	T_ASSERT(inbox_leases_count(m) <= INBOX_LEASE_MAX + 1);
	inbox_leases_free(m);
}

static const struct t_case cases[] = {
	{ "receipt made and read back", receipt_round_trip },
	{ "receipt of an earlier relay still valid", receipt_old },
	{ "replay's receipt names its replay", receipt_replay },
	{ "receipt with a changed number refused", receipt_tampered },
	{ "malformed receipts", receipt_malformed },
	{ "lease states", leases_states },
	{ "leases kept apart per consumer", leases_per_consumer },
	{ "a handout over a higher sequence", leases_handout },
	{ "leases forgotten in time and over the cap", leases_forgotten },
	{ "a held lease runs out", leases_ran_out },
};

int
main(void)
{
	return t_run("inbox-lease", cases, T_NCASES(cases)) ? 1 : 0;
}

/*
 * t-netcheck: address classification for outbound delivery (SPEC 3's
 * refusal list), IPv4, IPv6 and the IPv6 forms that carry IPv4.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/util.h>

#include "harness.h"
#include "../../src/common/netcheck.h"

/* Classify a textual address (IPv4 or IPv6). */
static enum net_class
classify(const char *text)
{
	struct sockaddr_in	 in;
	struct sockaddr_in6	 in6;

	memset(&in, 0, sizeof(in));
	memset(&in6, 0, sizeof(in6));
	if (inet_pton(AF_INET, text, &in.sin_addr) == 1) {
		in.sin_family = AF_INET;
		return netcheck_classify((struct sockaddr *)&in);
	}
	if (inet_pton(AF_INET6, text, &in6.sin6_addr) == 1) {
		in6.sin6_family = AF_INET6;
		return netcheck_classify((struct sockaddr *)&in6);
	}
	return (enum net_class)-1;
}

struct row {
	const char	*addr;
	enum net_class	 want;
};

/* Check a table of addresses. */
static void
rows(const struct row *r, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		enum net_class got = classify(r[i].addr);

		if (got != r[i].want)
			t_fail(__FILE__, __LINE__, "%s: got %s, want %s",
			    r[i].addr, netcheck_class_name(got),
			    netcheck_class_name(r[i].want));
	}
}

/* IPv4: each range of the refusal list at its edges, and public ones. */
static void
ipv4(void)
{
	static const struct row r[] = {
		{ "0.0.0.0", NET_UNSPECIFIED }, { "0.255.255.255", NET_UNSPECIFIED },
		{ "127.0.0.1", NET_LOOPBACK }, { "127.255.255.254", NET_LOOPBACK },
		{ "10.0.0.1", NET_PRIVATE }, { "10.255.255.255", NET_PRIVATE },
		{ "172.16.0.1", NET_PRIVATE }, { "172.31.255.255", NET_PRIVATE },
		{ "172.15.255.255", NET_PUBLIC }, { "172.32.0.0", NET_PUBLIC },
		{ "192.168.1.1", NET_PRIVATE }, { "192.169.0.1", NET_PUBLIC },
		{ "100.64.0.1", NET_SHARED }, { "100.127.255.255", NET_SHARED },
		{ "100.63.255.255", NET_PUBLIC }, { "100.128.0.0", NET_PUBLIC },
		{ "169.254.169.254", NET_LINKLOCAL }, { "169.254.0.1", NET_LINKLOCAL },
		{ "169.253.255.255", NET_PUBLIC },
		{ "224.0.0.1", NET_MULTICAST }, { "239.255.255.255", NET_MULTICAST },
		{ "255.255.255.255", NET_MULTICAST },
		{ "240.0.0.1", NET_RESERVED }, { "192.0.0.8", NET_RESERVED },
		{ "192.0.2.1", NET_RESERVED }, { "198.18.0.1", NET_RESERVED },
		{ "198.19.255.255", NET_RESERVED }, { "198.20.0.0", NET_PUBLIC },
		{ "198.51.100.7", NET_RESERVED }, { "203.0.113.9", NET_RESERVED },
		{ "8.8.8.8", NET_PUBLIC }, { "1.1.1.1", NET_PUBLIC },
		{ "93.184.216.34", NET_PUBLIC }, { "223.255.255.255", NET_PUBLIC },
	};

	rows(r, sizeof(r) / sizeof(r[0]));
}

/* IPv6 ranges, and the IPv6 forms that carry an IPv4 address. */
static void
ipv6(void)
{
	static const struct row r[] = {
		{ "::", NET_UNSPECIFIED }, { "::1", NET_LOOPBACK },
		{ "fe80::1", NET_LINKLOCAL }, { "febf::1", NET_LINKLOCAL },
		{ "fc00::1", NET_ULA }, { "fd12:3456::1", NET_ULA },
		{ "ff02::1", NET_MULTICAST }, { "fec0::1", NET_PRIVATE },
		{ "2001:db8::1", NET_RESERVED }, { "100::1", NET_RESERVED },
		{ "::ffff:127.0.0.1", NET_LOOPBACK },
		{ "::ffff:10.1.2.3", NET_PRIVATE },
		{ "::ffff:169.254.169.254", NET_LINKLOCAL },
		{ "::ffff:8.8.8.8", NET_PUBLIC },
		{ "64:ff9b::10.0.0.1", NET_PRIVATE },
		{ "64:ff9b::8.8.8.8", NET_PUBLIC },
		{ "2002:0a00:0001::1", NET_PRIVATE },
		{ "2002:7f00:0001::", NET_LOOPBACK },
		{ "2002:0808:0808::1", NET_PUBLIC },
		{ "::8.8.8.8", NET_RESERVED }, { "::127.0.0.1", NET_RESERVED },
		{ "4000::1", NET_RESERVED }, { "e000::1", NET_RESERVED },
		{ "2606:4700::1111", NET_PUBLIC }, { "2a00:1450::1", NET_PUBLIC },
		{ "3fff:ffff::1", NET_PUBLIC },
	};

	rows(r, sizeof(r) / sizeof(r[0]));
}

/* Other families and NULL are never deliverable. */
static void
other_families(void)
{
	struct sockaddr	 sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_family = AF_UNIX;
	T_EQ_INT(netcheck_classify(&sa), NET_RESERVED);
	T_EQ_INT(netcheck_classify(NULL), NET_RESERVED);
	T_EQ_STR(netcheck_class_name(NET_LINKLOCAL), "link-local");
	T_EQ_STR(netcheck_class_name((enum net_class)99), "reserved");
}

/*
 * netcheck_pton answers as evutil_inet_pton does, the same address or the
 * same refusal, for dotted quads glibc takes and for those only libevent's
 * sscanf reads (leading zeros are decimal there: 0177 is 177, not 127).
 */
static void
pton_as_libevent(void)
{
	static const char *const v4[] = { "127.0.0.1", "8.8.8.8", "0.0.0.0",
	    "255.255.255.255", "10.0.0.01", "0177.0.0.1", "256.0.0.1",
	    "1.2.3", "1.2.3.4.5", "1.2.3.4 ", " 1.2.3.4", "+1.2.3.4",
	    "1..2.3", "", "::1", "example.com", "1.2.3.-4", "0x7f.0.0.1" };
	static const char *const v6[] = { "::1", "fe80::1", "::ffff:10.0.0.1",
	    "[::1]", "1.2.3.4", "2606:4700::1111", "::ffff:0177.0.0.1" };
	unsigned char	 a[16], b[16];
	size_t		 i;
	int		 x, y;

	for (i = 0; i < T_NCASES(v4); i++) {
		memset(a, 0xee, sizeof(a));
		memset(b, 0xee, sizeof(b));
		x = netcheck_pton(AF_INET, v4[i], a);
		y = evutil_inet_pton(AF_INET, v4[i], b);
		T_EQ_INT(x, y);
		if (x == 1)
			T_ASSERT(memcmp(a, b, 4) == 0);
	}
	T_EQ_INT(netcheck_pton(AF_INET, "0177.0.0.1", a), 1);
	T_ASSERT(a[0] == 177);
	for (i = 0; i < T_NCASES(v6); i++) {
		x = netcheck_pton(AF_INET6, v6[i], a);
		y = evutil_inet_pton(AF_INET6, v6[i], b);
		T_EQ_INT(x, y);
		if (x == 1)
			T_ASSERT(memcmp(a, b, 16) == 0);
	}
}

static const struct t_case cases[] = {
	{ "IPv4 refusal list and public addresses", ipv4 },
	{ "IPv6, mapped, NAT64 and 6to4 forms", ipv6 },
	{ "other families", other_families },
	{ "netcheck_pton answers as evutil_inet_pton", pton_as_libevent },
};

int
main(void)
{
	return t_run("netcheck", cases, sizeof(cases) / sizeof(cases[0])) ?
	    1 : 0;
}

/*
 * netcheck.c: classify IP addresses, so that deliveries never reach
 * loopback, private, link-local (cloud metadata at 169.254.169.254),
 * multicast or reserved addresses unless the operator allows it (SPEC 3).
 * Pure functions of their argument; any thread.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/util.h>

#include "netcheck.h"

/* Classify an IPv4 address given in host byte order. */
static enum net_class
netcheck_v4(uint32_t a)
{
	uint8_t	 b0 = a >> 24, b1 = (a >> 16) & 0xff, b2 = (a >> 8) & 0xff;

	if (b0 == 0)
		return NET_UNSPECIFIED;
	if (b0 == 127)
		return NET_LOOPBACK;
	if (b0 == 10 || (b0 == 172 && (b1 & 0xf0) == 16) ||
	    (b0 == 192 && b1 == 168))
		return NET_PRIVATE;
	if (b0 == 100 && (b1 & 0xc0) == 64)
		return NET_SHARED;
	if (b0 == 169 && b1 == 254)
		return NET_LINKLOCAL;
	if (a == 0xffffffffu || (b0 & 0xf0) == 224)
		return NET_MULTICAST;
	if ((b0 & 0xf0) == 240 ||			/* 240/4 */
	    (b0 == 192 && b1 == 0 && b2 == 0) ||	/* 192.0.0/24 */
	    (b0 == 192 && b1 == 0 && b2 == 2) ||	/* TEST-NET-1 */
	    (b0 == 198 && (b1 & 0xfe) == 18) ||		/* 198.18/15 */
	    (b0 == 198 && b1 == 51 && b2 == 100) ||	/* TEST-NET-2 */
	    (b0 == 203 && b1 == 0 && b2 == 113))	/* TEST-NET-3 */
		return NET_RESERVED;
	return NET_PUBLIC;
}

/* Four bytes of an IPv6 address as an IPv4 address, host order. */
static uint32_t
v4_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

/* Classify an IPv6 address. */
static enum net_class
netcheck_v6(const uint8_t *a)
{
	static const uint8_t	 zero[16];
	static const uint8_t	 mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
				    0xff, 0xff };
	static const uint8_t	 nat64[12] = { 0, 0x64, 0xff, 0x9b };

	if (memcmp(a, zero, 16) == 0)
		return NET_UNSPECIFIED;
	if (memcmp(a, zero, 15) == 0 && a[15] == 1)
		return NET_LOOPBACK;
	/* Forms that carry an IPv4 address: judge the IPv4 address. */
	if (memcmp(a, mapped, 12) == 0 || memcmp(a, nat64, 12) == 0)
		return netcheck_v4(v4_at(a + 12));
	if (memcmp(a, zero, 12) == 0)		/* IPv4-compatible, obsolete */
		return NET_RESERVED;
	if (a[0] == 0x20 && a[1] == 0x02)		/* 6to4 2002::/16 */
		return netcheck_v4(v4_at(a + 2));
	if (a[0] == 0xff)
		return NET_MULTICAST;
	if ((a[0] & 0xfe) == 0xfc)
		return NET_ULA;
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return NET_LINKLOCAL;
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0)	/* old site-local */
		return NET_PRIVATE;
	if ((a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8) ||
	    (a[0] == 0x01 && a[1] == 0 && memcmp(a + 2, zero, 6) == 0))
		return NET_RESERVED;	/* documentation, discard-only */
	if ((a[0] & 0xe0) != 0x20)
		return NET_RESERVED;	/* outside global unicast 2000::/3 */
	return NET_PUBLIC;
}

/* Classify a socket address. */
enum net_class
netcheck_classify(const struct sockaddr *sa)
{
	if (sa == NULL)
		return NET_RESERVED;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)
		    (const void *)sa;

		return netcheck_v4(ntohl(in->sin_addr.s_addr));
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)
		    (const void *)sa;

		return netcheck_v6(in6->sin6_addr.s6_addr);
	}
	return NET_RESERVED;
}

/* A class's name. */
const char *
netcheck_class_name(enum net_class c)
{
	static const char *const names[] = { "public", "unspecified",
	    "loopback", "private", "shared", "link-local", "multicast",
	    "unique-local", "reserved" };

	if ((unsigned)c < sizeof(names) / sizeof(names[0]))
		return names[c];
	return "reserved";
}

/* See netcheck.h. */
int
netcheck_pton(int af, const char *src, void *dst)
{
	if (af == AF_INET && inet_pton(AF_INET, src, dst) == 1)
		return 1;
	return evutil_inet_pton(af, src, dst);
}

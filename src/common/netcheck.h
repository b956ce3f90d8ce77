/*
 * netcheck.h: classify an IP address for outbound delivery (SPEC 3's
 * refusal list).  Pure functions; any thread.
 */
#ifndef NETCHECK_H
#define NETCHECK_H

struct sockaddr;

enum net_class {
	NET_PUBLIC,		/* may be delivered to */
	NET_UNSPECIFIED,	/* 0.0.0.0/8, :: */
	NET_LOOPBACK,		/* 127.0.0.0/8, ::1 */
	NET_PRIVATE,		/* 10/8, 172.16/12, 192.168/16 */
	NET_SHARED,		/* 100.64.0.0/10 (carrier-grade NAT) */
	NET_LINKLOCAL,		/* 169.254/16 (cloud metadata), fe80::/10 */
	NET_MULTICAST,		/* 224/4, ff00::/8, 255.255.255.255 */
	NET_ULA,		/* fc00::/7 */
	NET_RESERVED		/* 240/4, 192.0.0/24, 198.18/15, documentation */
};

/*
 * The class of the address in sa (AF_INET or AF_INET6).  IPv6 forms that
 * carry an IPv4 address (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d,
 * NAT64 64:ff9b::/96, 6to4 2002::/16) are classified by that address.
 * Anything else not understood is NET_RESERVED.
 */
enum net_class	 netcheck_classify(const struct sockaddr *sa);
/* Short name of a class, for logs and metrics ("private", ...). */
const char	*netcheck_class_name(enum net_class c);
/*
 * evutil_inet_pton's answer for src (AF_INET or AF_INET6), dst as there.
 * libevent 2.1 reads IPv4 with sscanf, some 2,400 instructions a call,
 * once per delivery; glibc's inet_pton takes the dotted quads it accepts
 * (a subset: no leading zeros or signs) in a tenth of that, and libevent
 * still decides every other string.
 */
int		 netcheck_pton(int af, const char *src, void *dst);

#endif

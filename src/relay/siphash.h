/*
 * siphash.h: SipHash-2-4 with a 128-bit result (Aumasson and Bernstein),
 * a keyed hash for short inputs: under a random key nobody can find two
 * inputs with the same result, or choose inputs that share a table slot.
 * OpenSSL has it only behind EVP_MAC, whose per-call set-up costs more
 * than hashing a bearer token with SHA-256, the work the token cache
 * (auth.c) saves.  Pure; any thread.
 */
#ifndef SIPHASH_H
#define SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/* out = SipHash-2-4-128(key, in[0..len)), as the reference's 16 bytes. */
void	siphash128(const unsigned char key[16], const void *in, size_t len,
	    unsigned char out[16]);

#endif

// SPDX-License-Identifier: MIT
/*
 * compress: LZ77 (hash chains, 32 KiB window) with an adaptive binary range
 * coder (bit trees for literals, lengths and distances), then the decoder;
 * the round trip must give back the input.  Input: generated text with a
 * skewed vocabulary, so that both stages have something to find.
 */
#include <stdlib.h>
#include <string.h>

#include "specbench.h"

#define WIN	32768
#define MINM	3
#define MAXM	(MINM + 255)
#define HBITS	15
#define DEPTH	24

struct model {
	uint16_t flag[2], lit[256][256], len[256], dist[32768];
};

struct rc {
	uint64_t low;
	uint32_t range, code;
	uint8_t cache;
	uint64_t pending;
	uint8_t *buf;
	size_t pos;
};

static void shift_low(struct rc *r)
{
	if ((uint32_t)r->low < 0xff000000u || (r->low >> 32)) {
		uint8_t carry = (uint8_t)(r->low >> 32), c = r->cache;

		do {
			r->buf[r->pos++] = (uint8_t)(c + carry);
			c = 0xff;
		} while (--r->pending);
		r->cache = (uint8_t)(r->low >> 24);
	}
	r->pending++;
	r->low = (r->low & 0x00ffffffu) << 8;
}

static void enc_bit(struct rc *r, uint16_t *p, int bit)
{
	uint32_t bound = (r->range >> 11) * *p;

	if (!bit) {
		r->range = bound;
		*p += (2048 - *p) >> 5;
	} else {
		r->low += bound;
		r->range -= bound;
		*p -= *p >> 5;
	}
	while (r->range < (1u << 24)) {
		r->range <<= 8;
		shift_low(r);
	}
}

static int dec_bit(struct rc *r, uint16_t *p)
{
	uint32_t bound = (r->range >> 11) * *p;
	int bit;

	if (r->code < bound) {
		r->range = bound;
		*p += (2048 - *p) >> 5;
		bit = 0;
	} else {
		r->code -= bound;
		r->range -= bound;
		*p -= *p >> 5;
		bit = 1;
	}
	while (r->range < (1u << 24)) {
		r->range <<= 8;
		r->code = (r->code << 8) | r->buf[r->pos++];
	}
	return bit;
}

static void enc_tree(struct rc *r, uint16_t *probs, int nbits, unsigned v)
{
	unsigned m = 1;

	for (int i = nbits - 1; i >= 0; i--) {
		int b = (v >> i) & 1;

		enc_bit(r, &probs[m], b);
		m = (m << 1) | (unsigned)b;
	}
}

static unsigned dec_tree(struct rc *r, uint16_t *probs, int nbits)
{
	unsigned m = 1;

	for (int i = 0; i < nbits; i++)
		m = (m << 1) | (unsigned)dec_bit(r, &probs[m]);
	return m - (1u << nbits);
}

static void model_init(struct model *m)
{
	uint16_t *p = (uint16_t *)m;

	for (size_t i = 0; i < sizeof(*m) / 2; i++)
		p[i] = 1024;
}

static size_t compress(const uint8_t *in, size_t n, uint8_t *out, struct model *m, size_t *matches)
{
	int32_t *head = malloc(sizeof(int32_t) << HBITS), *prev = malloc(sizeof(int32_t) * WIN);
	struct rc r = { .range = 0xffffffffu, .pending = 1, .buf = out };
	size_t i = 0;
	uint8_t last = 0;

	memset(head, 0xff, sizeof(int32_t) << HBITS);
	model_init(m);
	*matches = 0;
	while (i < n) {
		size_t best = 0, bdist = 0;

		if (i + MINM <= n) {
			uint32_t h = ((in[i] << 10) ^ (in[i + 1] << 5) ^ in[i + 2]) & ((1u << HBITS) - 1);
			int32_t c = head[h];

			for (int d = 0; d < DEPTH && c >= 0 && i - (size_t)c <= WIN - 1; d++) {
				size_t l = 0, max = n - i < MAXM ? n - i : MAXM;

				while (l < max && in[c + l] == in[i + l])
					l++;
				if (l > best) {
					best = l;
					bdist = i - (size_t)c;
				}
				c = prev[c % WIN];
			}
			prev[i % WIN] = head[h];
			head[h] = (int32_t)i;
		}
		if (best >= MINM) {
			enc_bit(&r, &m->flag[last > 127], 1);
			enc_tree(&r, m->len, 8, (unsigned)(best - MINM));
			enc_tree(&r, m->dist, 15, (unsigned)(bdist - 1));
			for (size_t k = 1; k < best; k++) {	/* index the bytes inside the match */
				size_t j = i + k;

				if (j + MINM <= n) {
					uint32_t h = ((in[j] << 10) ^ (in[j + 1] << 5) ^ in[j + 2]) &
						     ((1u << HBITS) - 1);

					prev[j % WIN] = head[h];
					head[h] = (int32_t)j;
				}
			}
			i += best;
			(*matches)++;
		} else {
			enc_bit(&r, &m->flag[last > 127], 0);
			enc_tree(&r, m->lit[last], 8, in[i]);
			i++;
		}
		last = in[i - 1];
	}
	for (int k = 0; k < 5; k++)
		shift_low(&r);
	free(head);
	free(prev);
	return r.pos;
}

static int decompress(uint8_t *in, uint8_t *out, size_t n, struct model *m)
{
	struct rc r = { .range = 0xffffffffu, .buf = in };
	size_t i = 0;
	uint8_t last = 0;

	model_init(m);
	for (int k = 0; k < 5; k++)
		r.code = (r.code << 8) | r.buf[r.pos++];
	while (i < n) {
		if (dec_bit(&r, &m->flag[last > 127])) {
			size_t len = dec_tree(&r, m->len, 8) + MINM, dist = dec_tree(&r, m->dist, 15) + 1;

			if (dist > i || len > n - i)
				return -1;
			for (size_t k = 0; k < len; k++, i++)
				out[i] = out[i - dist];
		} else {
			out[i++] = (uint8_t)dec_tree(&r, m->lit[last], 8);
		}
		last = out[i - 1];
	}
	return 0;
}

static size_t gen_text(uint8_t *buf, size_t n, uint64_t seed)
{
	static const char *syl[] = { "ka", "ri", "to", "ne", "su", "ma", "lo", "vi", "da", "pe",
				     "qu", "ex", "an", "or", "um", "is" };
	char words[512][16];
	size_t i = 0;

	for (int w = 0; w < 512; w++) {
		int ns = 1 + (int)(sb_rand(&seed) % 4);

		words[w][0] = 0;
		for (int s = 0; s < ns; s++)
			strcat(words[w], syl[sb_rand(&seed) % 16]);
	}
	while (i < n) {
		uint64_t r = sb_rand(&seed);
		/* skewed: low indexes far more often */
		int w = (int)((r % 512) * ((r >> 20) % 512) / 512);
		const char *s = words[w];

		while (*s && i < n)
			buf[i++] = (uint8_t)*s++;
		if (i < n)
			buf[i++] = (r >> 40) % 13 == 0 ? '\n' : (r >> 40) % 7 == 0 ? ',' : ' ';
	}
	return n;
}

int main(int argc, char **argv)
{
	struct sb_args a = { .threads = 1 };
	size_t n, clen, matches;
	uint8_t *in, *out, *back;
	struct model *m;
	int ok;

	if (sb_main_begin(argc, argv, "compress", &a))
		return 2;
	n = (size_t)sb_pick(&a, 5 << 20, 24 << 20, 96 << 20);
	in = malloc(n);
	out = malloc(n + n / 2 + 64);
	back = malloc(n);
	m = malloc(sizeof(*m));
	if (!in || !out || !back || !m)
		return 2;
	gen_text(in, n, 0x5eed0001ull + (uint64_t)a.size);
	clen = compress(in, n, out, m, &matches);
	ok = decompress(out, back, n, m) == 0 && memcmp(in, back, n) == 0;
	fprintf(a.out, "input %zu bytes hash %016llx\n", n, (unsigned long long)sb_hash(0, in, n));
	fprintf(a.out, "compressed %zu bytes matches %zu ratio %.4f\n", clen, matches, (double)clen / n);
	fprintf(a.out, "stream hash %016llx\n", (unsigned long long)sb_hash(0, out, clen));
	fprintf(a.out, "roundtrip %s\n", ok ? "ok" : "FAILED");
	free(in);
	free(out);
	free(back);
	free(m);
	if (sb_main_end(&a))
		return 1;
	return ok ? 0 : 1;
}

// SPDX-License-Identifier: MIT
/*
 * interp: a bytecode interpreter (a stack machine with locals, calls and an
 * array heap) running four programs assembled here: a prime sieve,
 * recursive Fibonacci, a string hash over generated text, and an insertion
 * sort with a checksum of the result.
 */
#include <stdlib.h>
#include <string.h>

#include "specbench.h"

enum op { PUSH, LOAD, STORE, ALOAD, ASTORE, ADD, SUB, MUL, MOD, AND, XOR, SHL, SHR, LT, EQ,
	  JZ, JMP, CALL, RET, POP, DUP, HALT };

struct vm {
	int64_t code[512];
	int n;
	int64_t *heap;
};

static int emit(struct vm *v, int64_t op, int64_t arg)
{
	v->code[v->n++] = op;
	v->code[v->n++] = arg;
	return v->n - 2;
}

#define E(op, arg) emit(v, op, arg)
#define HERE() (v->n)
#define PATCH(at, to) (v->code[(at) + 1] = (to))

/* Run from pc with a fresh frame; locals are frame-relative. */
static int64_t run(const struct vm *v, int pc, int64_t *stack, int64_t *frames, uint64_t *steps)
{
	int sp = 0, fp = 0, csp = 0;
	int64_t *loc = frames;
	uint64_t n = 0;

	for (;;) {
		int64_t op = v->code[pc], arg = v->code[pc + 1];

		pc += 2;
		n++;
		switch (op) {
		case PUSH: stack[sp++] = arg; break;
		case LOAD: stack[sp++] = loc[arg]; break;
		case STORE: loc[arg] = stack[--sp]; break;
		case ALOAD: stack[sp - 1] = v->heap[stack[sp - 1]]; break;
		case ASTORE: sp -= 2; v->heap[stack[sp]] = stack[sp + 1]; break;
		case ADD: sp--; stack[sp - 1] += stack[sp]; break;
		case SUB: sp--; stack[sp - 1] -= stack[sp]; break;
		case MUL: sp--; stack[sp - 1] *= stack[sp]; break;
		case MOD: sp--; stack[sp - 1] %= stack[sp]; break;
		case AND: sp--; stack[sp - 1] &= stack[sp]; break;
		case XOR: sp--; stack[sp - 1] ^= stack[sp]; break;
		case SHL: sp--; stack[sp - 1] = (int64_t)((uint64_t)stack[sp - 1] << stack[sp]); break;
		case SHR: sp--; stack[sp - 1] = (int64_t)((uint64_t)stack[sp - 1] >> stack[sp]); break;
		case LT: sp--; stack[sp - 1] = stack[sp - 1] < stack[sp]; break;
		case EQ: sp--; stack[sp - 1] = stack[sp - 1] == stack[sp]; break;
		case JZ: if (!stack[--sp]) pc = (int)arg; break;
		case JMP: pc = (int)arg; break;
		case CALL: /* arg: target; the argument on the stack becomes local 0 */
			fp += 16;
			frames[fp + 8] = pc;
			frames[fp] = stack[--sp];
			loc = frames + fp;
			csp++;
			pc = (int)arg;
			break;
		case RET:
			if (!csp) {
				*steps += n;
				return stack[sp - 1];
			}
			csp--;
			pc = (int)frames[fp + 8];
			fp -= 16;
			loc = frames + fp;
			break;
		case POP: sp--; break;
		case DUP: stack[sp] = stack[sp - 1]; sp++; break;
		case HALT: *steps += n; return sp ? stack[sp - 1] : 0;
		}
	}
}

/* count primes below N: heap[0..N) flags */
static int prog_sieve(struct vm *v, int64_t N)
{
	int start = HERE(), l1, l1x, l2, l2x, skip;

	E(PUSH, 2); E(STORE, 0);				/* i = 2 */
	E(PUSH, 0); E(STORE, 2);				/* count = 0 */
	l1 = HERE(); E(LOAD, 0); E(PUSH, N); E(LT, 0); l1x = E(JZ, 0);
	E(LOAD, 0); E(ALOAD, 0); skip = E(JZ, 0);		/* composite: next i */
	E(JMP, 0);						/* to next i, patched below */
	int jnext = HERE() - 2;
	PATCH(skip, HERE());
	E(LOAD, 2); E(PUSH, 1); E(ADD, 0); E(STORE, 2);		/* count++ */
	E(LOAD, 0); E(LOAD, 0); E(MUL, 0); E(STORE, 1);		/* j = i*i */
	l2 = HERE(); E(LOAD, 1); E(PUSH, N); E(LT, 0); l2x = E(JZ, 0);
	E(LOAD, 1); E(PUSH, 1); E(ASTORE, 0);			/* heap[j] = 1 */
	E(LOAD, 1); E(LOAD, 0); E(ADD, 0); E(STORE, 1); E(JMP, l2);
	PATCH(l2x, HERE());
	PATCH(jnext, HERE());
	E(LOAD, 0); E(PUSH, 1); E(ADD, 0); E(STORE, 0); E(JMP, l1);
	PATCH(l1x, HERE());
	E(LOAD, 2); E(HALT, 0);
	return start;
}

/* fib(n) = n < 2 ? n : fib(n-1) + fib(n-2); local 0 = n */
static int prog_fib(struct vm *v, int64_t n, int *entry)
{
	int fib = HERE(), base;

	E(LOAD, 0); E(PUSH, 2); E(LT, 0); base = E(JZ, 0);
	E(LOAD, 0); E(RET, 0);
	PATCH(base, HERE());
	E(LOAD, 0); E(PUSH, 1); E(SUB, 0); E(CALL, fib);
	E(LOAD, 0); E(PUSH, 2); E(SUB, 0); E(CALL, fib);
	E(ADD, 0); E(RET, 0);
	*entry = HERE();
	E(PUSH, n); E(CALL, fib); E(HALT, 0);
	return fib;
}

/* h = h*31 + heap[i] & mask over heap[0..len) */
static int prog_hash(struct vm *v, int64_t len)
{
	int start = HERE(), l, lx;

	E(PUSH, 0); E(STORE, 0); E(PUSH, 7); E(STORE, 1);
	l = HERE(); E(LOAD, 0); E(PUSH, len); E(LT, 0); lx = E(JZ, 0);
	E(LOAD, 1); E(PUSH, 31); E(MUL, 0); E(LOAD, 0); E(ALOAD, 0); E(ADD, 0);
	E(PUSH, 0xffffffffffffll); E(AND, 0); E(STORE, 1);
	E(LOAD, 0); E(PUSH, 1); E(ADD, 0); E(STORE, 0); E(JMP, l);
	PATCH(lx, HERE());
	E(LOAD, 1); E(HALT, 0);
	return start;
}

/* insertion sort of heap[0..len), then sum of heap[i]*(i+1) mod 2^48 */
static int prog_sort(struct vm *v, int64_t len)
{
	int start = HERE(), lo, lox, li, lix, brk, ls, lsx;

	E(PUSH, 1); E(STORE, 0);
	lo = HERE(); E(LOAD, 0); E(PUSH, len); E(LT, 0); lox = E(JZ, 0);
	E(LOAD, 0); E(ALOAD, 0); E(STORE, 2);			/* key */
	E(LOAD, 0); E(STORE, 1);				/* j = i */
	li = HERE(); E(PUSH, 0); E(LOAD, 1); E(LT, 0); lix = E(JZ, 0);	/* while 0 < j */
	E(LOAD, 2); E(LOAD, 1); E(PUSH, 1); E(SUB, 0); E(ALOAD, 0); E(LT, 0); brk = E(JZ, 0);
	E(LOAD, 1); E(LOAD, 1); E(PUSH, 1); E(SUB, 0); E(ALOAD, 0); E(ASTORE, 0);
	E(LOAD, 1); E(PUSH, 1); E(SUB, 0); E(STORE, 1); E(JMP, li);
	PATCH(lix, HERE()); PATCH(brk, HERE());
	E(LOAD, 1); E(LOAD, 2); E(ASTORE, 0);
	E(LOAD, 0); E(PUSH, 1); E(ADD, 0); E(STORE, 0); E(JMP, lo);
	PATCH(lox, HERE());
	E(PUSH, 0); E(STORE, 0); E(PUSH, 0); E(STORE, 1);
	ls = HERE(); E(LOAD, 0); E(PUSH, len); E(LT, 0); lsx = E(JZ, 0);
	E(LOAD, 1); E(LOAD, 0); E(ALOAD, 0); E(LOAD, 0); E(PUSH, 1); E(ADD, 0); E(MUL, 0);
	E(ADD, 0); E(PUSH, 0xffffffffffffll); E(AND, 0); E(STORE, 1);
	E(LOAD, 0); E(PUSH, 1); E(ADD, 0); E(STORE, 0); E(JMP, ls);
	PATCH(lsx, HERE());
	E(LOAD, 1); E(HALT, 0);
	return start;
}

int main(int argc, char **argv)
{
	struct sb_args a = { .threads = 1 };
	static struct vm vm;
	struct vm *v = &vm;
	int64_t *stack = calloc(1 << 16, sizeof(int64_t)), *frames = calloc(1 << 20, sizeof(int64_t));
	int64_t N, fibn, hlen, slen, r;
	uint64_t seed = 42, steps = 0;
	int pc, entry;

	if (sb_main_begin(argc, argv, "interp", &a))
		return 2;
	N = sb_pick(&a, 600000, 3000000, 30000000);
	fibn = sb_pick(&a, 24, 27, 31);
	hlen = sb_pick(&a, 600000, 3000000, 30000000);
	slen = sb_pick(&a, 1500, 3400, 11000);
	v->heap = calloc((size_t)(N > hlen ? N : hlen) + 16, sizeof(int64_t));
	if (!stack || !frames || !v->heap)
		return 2;

	pc = prog_sieve(v, N);
	r = run(v, pc, stack, frames, &steps);
	fprintf(a.out, "sieve %lld primes below %lld\n", (long long)r, (long long)N);

	v->n = 0;
	prog_fib(v, fibn, &entry);
	r = run(v, entry, stack, frames, &steps);
	fprintf(a.out, "fib %lld = %lld\n", (long long)fibn, (long long)r);

	v->n = 0;
	for (int64_t i = 0; i < hlen; i++)
		v->heap[i] = 'a' + (int64_t)(sb_rand(&seed) % 26);
	pc = prog_hash(v, hlen);
	r = run(v, pc, stack, frames, &steps);
	fprintf(a.out, "hash of %lld chars = %lld\n", (long long)hlen, (long long)r);

	v->n = 0;
	for (int64_t i = 0; i < slen; i++)
		v->heap[i] = (int64_t)(sb_rand(&seed) % 1000000);
	pc = prog_sort(v, slen);
	r = run(v, pc, stack, frames, &steps);
	for (int64_t i = 1; i < slen; i++)
		if (v->heap[i - 1] > v->heap[i])
			r = -1;
	fprintf(a.out, "sort of %lld values checksum %lld\n", (long long)slen, (long long)r);
	fprintf(a.out, "instructions %llu\n", (unsigned long long)steps);
	free(stack);
	free(frames);
	free(v->heap);
	return sb_main_end(&a);
}

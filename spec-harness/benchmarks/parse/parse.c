// SPDX-License-Identifier: MIT
/*
 * parse: a compiler front end and back end for a small language.  A
 * generated program of `let vN = EXPR;` statements (integer literals,
 * earlier variables, + - * / % and parentheses, and `if (EXPR) { ... }`
 * blocks) is tokenized, parsed by recursive descent into an AST,
 * constant-folded, compiled to stack-machine code and run.  Prints the
 * counts of each stage and a hash of the variables' final values.
 */
#include <stdlib.h>
#include <string.h>

#include "specbench.h"

enum tok { T_NUM, T_ID, T_LET, T_IF, T_OP, T_LP, T_RP, T_LB, T_RB, T_EQ, T_SEMI, T_END };
enum node { N_NUM, N_VAR, N_BIN, N_LET, N_IF, N_BLOCK };
enum ins { I_PUSH, I_LOAD, I_STORE, I_BIN, I_JZ };

struct token { int kind, val; };
struct ast { int kind, op, a, b, next; int64_t val; };	/* a, b, next: node indexes, -1 none */

static char *src;
static size_t srclen, srccap;
static struct token *toks;
static int ntok, ptok;
static struct ast *nodes;
static int nnode;
static int64_t *code;
static int ncode;
static int nfolded;

static void put(const char *s)
{
	size_t l = strlen(s);

	if (srclen + l + 1 > srccap) {
		srccap = (srccap + l + 1) * 2;
		src = realloc(src, srccap);
	}
	memcpy(src + srclen, s, l + 1);
	srclen += l;
}

static void gen_expr(uint64_t *seed, int nvars, int depth)
{
	char b[32];
	uint64_t r = sb_rand(seed);

	if (depth > 3 || r % 3 == 0) {
		if (nvars && (r >> 8) % 2)
			snprintf(b, sizeof(b), "v%d", (int)((r >> 16) % (uint64_t)nvars));
		else
			snprintf(b, sizeof(b), "%d", (int)((r >> 16) % 1000));
		put(b);
		return;
	}
	put("(");
	gen_expr(seed, nvars, depth + 1);
	snprintf(b, sizeof(b), " %c ", "+-*/%+-+"[(r >> 4) % 8]);
	put(b);
	gen_expr(seed, nvars, depth + 1);
	put(")");
}

static void gen_program(int nstmt, uint64_t seed)
{
	char b[32];

	for (int i = 0; i < nstmt; i++) {
		int cond = i > 8 && sb_rand(&seed) % 6 == 0;

		if (cond) {
			put("if (");
			gen_expr(&seed, i, 2);
			put(") { ");
		}
		snprintf(b, sizeof(b), "let v%d = ", i);
		put(b);
		gen_expr(&seed, i, 0);
		put(";");
		put(cond ? " }\n" : "\n");
		if (cond) {	/* the variable exists either way */
			snprintf(b, sizeof(b), "let v%d = v%d;\n", i, i);
			put(b);
		}
	}
}

static void lex(void)
{
	size_t i = 0;
	int cap = 1024;

	toks = malloc(sizeof(*toks) * (size_t)cap);
	while (1) {
		struct token t = { T_END, 0 };

		while (src[i] == ' ' || src[i] == '\n')
			i++;
		if (!src[i])
			break;
		if (src[i] >= '0' && src[i] <= '9') {
			t.kind = T_NUM;
			while (src[i] >= '0' && src[i] <= '9')
				t.val = t.val * 10 + (src[i++] - '0');
		} else if (src[i] == 'v' && src[i + 1] >= '0' && src[i + 1] <= '9') {
			t.kind = T_ID;
			i++;
			while (src[i] >= '0' && src[i] <= '9')
				t.val = t.val * 10 + (src[i++] - '0');
		} else if (!strncmp(src + i, "let", 3)) {
			t.kind = T_LET;
			i += 3;
		} else if (!strncmp(src + i, "if", 2)) {
			t.kind = T_IF;
			i += 2;
		} else {
			char c = src[i++];

			t.kind = c == '(' ? T_LP : c == ')' ? T_RP : c == '{' ? T_LB : c == '}' ? T_RB :
				 c == '=' ? T_EQ : c == ';' ? T_SEMI : T_OP;
			t.val = c;
		}
		if (ntok + 2 > cap)
			toks = realloc(toks, sizeof(*toks) * (size_t)(cap *= 2));
		toks[ntok++] = t;
	}
	toks[ntok].kind = T_END;
}

static int node(int kind, int op, int a, int b, int64_t val)
{
	static int cap;

	if (nnode >= cap)
		nodes = realloc(nodes, sizeof(*nodes) * (size_t)(cap = cap ? cap * 2 : 1024));
	nodes[nnode] = (struct ast){ kind, op, a, b, -1, val };
	return nnode++;
}

static int expect(int kind)
{
	if (toks[ptok].kind != kind) {
		fprintf(stderr, "parse: token %d: want kind %d, got %d\n", ptok, kind, toks[ptok].kind);
		exit(1);
	}
	return toks[ptok++].val;
}

static int parse_expr(void)
{
	int l, r, op;

	if (toks[ptok].kind == T_NUM)
		return node(N_NUM, 0, -1, -1, expect(T_NUM));
	if (toks[ptok].kind == T_ID)
		return node(N_VAR, 0, -1, -1, expect(T_ID));
	expect(T_LP);
	l = parse_expr();
	op = expect(T_OP);
	r = parse_expr();
	expect(T_RP);
	return node(N_BIN, op, l, r, 0);
}

static int parse_block(int until)
{
	int first = -1, last = -1;

	while (toks[ptok].kind != until) {
		int s;

		if (toks[ptok].kind == T_IF) {
			int c;

			ptok++;
			expect(T_LP);
			c = parse_expr();
			expect(T_RP);
			expect(T_LB);
			s = node(N_IF, 0, c, parse_block(T_RB), 0);
			expect(T_RB);
		} else {
			int var, e;

			expect(T_LET);
			var = expect(T_ID);
			expect(T_EQ);
			e = parse_expr();
			expect(T_SEMI);
			s = node(N_LET, 0, e, -1, var);
		}
		if (last >= 0)
			nodes[last].next = s;
		else
			first = s;
		last = s;
	}
	return node(N_BLOCK, 0, first, -1, 0);
}

static int64_t binop(int op, int64_t x, int64_t y)
{
	switch (op) {
	case '+': return (x + y) % 1000003;
	case '-': return (x - y) % 1000003;
	case '*': return (x * y) % 1000003;
	case '/': return y ? x / y : 0;
	default: return y ? x % y : 0;
	}
}

static void fold(int n)
{
	struct ast *e;

	if (n < 0)
		return;
	e = &nodes[n];
	if (e->kind == N_BIN) {
		fold(e->a);
		fold(e->b);
		if (nodes[e->a].kind == N_NUM && nodes[e->b].kind == N_NUM) {
			e->val = binop(e->op, nodes[e->a].val, nodes[e->b].val);
			e->kind = N_NUM;
			nfolded++;
		}
	} else if (e->kind == N_LET) {
		fold(e->a);
	} else if (e->kind == N_IF) {
		fold(e->a);
		fold(e->b);
	} else if (e->kind == N_BLOCK) {
		for (int s = e->a; s >= 0; s = nodes[s].next)
			fold(s);
	}
}

static void op2(int64_t op, int64_t arg)
{
	static int cap;

	if (ncode + 2 > cap)
		code = realloc(code, sizeof(*code) * (size_t)(cap = cap ? cap * 2 : 4096));
	code[ncode++] = op;
	code[ncode++] = arg;
}

static void gen(int n)
{
	const struct ast *e = &nodes[n];

	switch (e->kind) {
	case N_NUM: op2(I_PUSH, e->val); break;
	case N_VAR: op2(I_LOAD, e->val); break;
	case N_BIN: gen(e->a); gen(e->b); op2(I_BIN, e->op); break;
	case N_LET: gen(e->a); op2(I_STORE, e->val); break;
	case N_IF: {
		int at;

		gen(e->a);
		op2(I_JZ, 0);
		at = ncode - 1;
		gen(e->b);
		code[at] = ncode;
		break;
	}
	case N_BLOCK:
		for (int s = e->a; s >= 0; s = nodes[s].next)
			gen(s);
		break;
	}
}

static uint64_t execute(int64_t *vars)
{
	int64_t st[64];
	int sp = 0;
	uint64_t n = 0;

	for (int pc = 0; pc < ncode; pc += 2, n++) {
		int64_t arg = code[pc + 1];

		switch (code[pc]) {
		case I_PUSH: st[sp++] = arg; break;
		case I_LOAD: st[sp++] = vars[arg]; break;
		case I_STORE: vars[arg] = st[--sp]; break;
		case I_BIN: sp--; st[sp - 1] = binop((int)arg, st[sp - 1], st[sp]); break;
		case I_JZ: if (!st[--sp]) pc = (int)arg - 2; break;
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	struct sb_args a = { .threads = 1 };
	int nstmt, rounds, root = -1;
	uint64_t ran = 0, h = 0;
	int64_t *vars;

	if (sb_main_begin(argc, argv, "parse", &a))
		return 2;
	nstmt = (int)sb_pick(&a, 72000, 360000, 1200000);
	rounds = (int)sb_pick(&a, 4, 4, 4);
	vars = calloc((size_t)nstmt, sizeof(*vars));
	gen_program(nstmt, 0xc0de + (uint64_t)a.size);
	for (int r = 0; r < rounds; r++) {	/* the whole pipeline, again from the text */
		free(toks);
		toks = NULL;
		ntok = ptok = nnode = ncode = nfolded = 0;
		lex();
		root = parse_block(T_END);
		fold(root);
		gen(root);
		ran = execute(vars);
	}
	for (int i = 0; i < nstmt; i++)
		h = sb_hash(h, &vars[i], sizeof(vars[i]));
	fprintf(a.out, "source %zu bytes, %d statements\n", srclen, nstmt);
	fprintf(a.out, "tokens %d nodes %d folded %d\n", ntok, nnode, nfolded);
	fprintf(a.out, "code %d instructions, %llu executed\n", ncode / 2, (unsigned long long)ran);
	fprintf(a.out, "v0 %lld vlast %lld values hash %016llx\n", (long long)vars[0],
		(long long)vars[nstmt - 1], (unsigned long long)h);
	free(vars);
	free(src);
	free(toks);
	free(nodes);
	free(code);
	return sb_main_end(&a);
}

/* vperf-call: the guest side of the vperf hypercall port, for /init and the tests in tests/vm.
 *
 * Finds the vperf device by CPUID (leaf VPERF_CPUID_BASE signature "VPERF-KVM-PV", info leaf: ABI version,
 * features, port), gets access to the port with ioperm() (root), and issues one hypercall: `out %eax, %dx` with
 * the operation in EAX and arguments in RBX, RCX, RSI, RDI; the result comes back in RAX.
 *
 *   vperf-call detect              print the CPUID leaves; exit 0 if vperf is there, 3 if not
 *   vperf-call version             VPERF_HC_VERSION: print "version V features 0xF"
 *   vperf-call exit STATUS         VPERF_HC_EXIT: the VMM exits with STATUS (0..255); returns only on error
 *   vperf-call print MSG...        VPERF_UCALL_PRINT: the VMM prints "guest: MSG" on its stderr
 *   vperf-call values MSG [N...]   VPERF_UCALL_VALUES with up to 8 numbers
 *   vperf-call assert MSG          VPERF_UCALL_ASSERT: the VMM reports a crash (exit status 123)
 *   vperf-call raw OP [RBX [RCX [RSI [RDI]]]]   any operation with any arguments; prints RAX (signed)
 *   vperf-call ucall-gpa GPA       VPERF_HC_UCALL with an arbitrary guest-physical address; prints RAX
 *
 * Exit status: 0 success; 1 the hypercall returned an error (printed); 2 usage; 3 no vperf device (not under
 * vperf-vmm: safe to call anywhere, it touches no port then); 4 no access to the port (not root?).
 * Numbers may be decimal, 0x hex or negative.
 *
 * Build: gcc -std=c11 -O2 -static -I hv/include -o vperf-call tests/vm/guest/vperf-call.c
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vperf/abi.h>

#define EXIT_HCERR	1
#define EXIT_USAGE	2
#define EXIT_NODEV	3
#define EXIT_NOPORT	4

struct vperf_dev {
	uint32_t version, features, port, gsi;
};

static int detect(struct vperf_dev *d, int verbose)
{
	unsigned int a, b, c, dx;

	__cpuid(1, a, b, c, dx);
	if (!(c & (1u << 31))) {	/* not under a hypervisor: the hypervisor leaves mean nothing */
		if (verbose)
			printf("vperf-call: no hypervisor (CPUID.1:ECX bit 31 clear)\n");
		return -1;
	}
	__cpuid(VPERF_CPUID_BASE, a, b, c, dx);
	if (verbose)
		printf("vperf-call: cpuid 0x%x: eax=0x%x ebx=0x%x ecx=0x%x edx=0x%x\n", VPERF_CPUID_BASE, a, b, c, dx);
	if (b != VPERF_CPUID_SIG_EBX || c != VPERF_CPUID_SIG_ECX || dx != VPERF_CPUID_SIG_EDX ||
	    a < VPERF_CPUID_INFO)
		return -1;
	__cpuid(VPERF_CPUID_INFO, a, b, c, dx);
	if (verbose)
		printf("vperf-call: cpuid 0x%x: abi %u features 0x%x port 0x%x gsi %u\n", VPERF_CPUID_INFO, a, b, c,
		       dx);
	if (c > 0xfffc)
		return -1;
	*d = (struct vperf_dev){ .version = a, .features = b, .port = c, .gsi = dx };
	return 0;
}

static int64_t hypercall(const struct vperf_dev *d, uint32_t op, uint64_t a0, uint64_t a1, uint64_t a2,
			 uint64_t a3)
{
	uint64_t rax = op;

	__asm__ volatile("outl %%eax, %%dx"
			 : "+a"(rax)
			 : "d"((uint16_t)d->port), "b"(a0), "c"(a1), "S"(a2), "D"(a3)
			 : "memory");
	return (int64_t)rax;
}

static int parse_num(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	if (*s == '-')
		*v = (uint64_t)strtoll(s, &end, 0);
	else
		*v = strtoull(s, &end, 0);
	if (errno || !*s || *end) {
		fprintf(stderr, "vperf-call: '%s' is not a number\n", s);
		return -1;
	}
	return 0;
}

/* Guest-physical address of a locked page, from /proc/self/pagemap (needs root for the PFN). */
static int virt_to_phys(void *p, uint64_t *gpa)
{
	uint64_t entry, vaddr = (uint64_t)(uintptr_t)p, page = (uint64_t)sysconf(_SC_PAGESIZE);
	int fd = open("/proc/self/pagemap", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, &entry, sizeof(entry), (off_t)(vaddr / page * sizeof(entry)));
	close(fd);
	if (n != (ssize_t)sizeof(entry) || !(entry & (1ULL << 63)) || !(entry & ((1ULL << 55) - 1)))
		return -1;
	*gpa = (entry & ((1ULL << 55) - 1)) * page + vaddr % page;
	return 0;
}

static int ucall(const struct vperf_dev *d, uint32_t cmd, int argc, char **argv)
{
	struct vperf_ucall *uc;
	uint64_t gpa;
	int64_t ret;
	size_t off = 0;
	int i;

	/* One page, locked: the struct never straddles pages and stays at one physical address. */
	uc = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED, -1, 0);
	if (uc == MAP_FAILED) {
		perror("vperf-call: mmap");
		return EXIT_HCERR;
	}
	memset(uc, 0, sizeof(*uc));
	uc->cmd = cmd;
	if (cmd == VPERF_UCALL_VALUES) {
		if (argc < 1)
			return EXIT_USAGE;
		snprintf(uc->msg, sizeof(uc->msg), "%s", argv[0]);
		for (i = 1; i < argc && uc->nr_args < 8; i++) {
			uint64_t v;

			if (parse_num(argv[i], &v))
				return EXIT_USAGE;
			uc->args[uc->nr_args++] = v;
		}
	} else {
		for (i = 0; i < argc && off < sizeof(uc->msg) - 1; i++) {
			int n = snprintf(uc->msg + off, sizeof(uc->msg) - off, "%s%s", i ? " " : "", argv[i]);

			if (n < 0)
				break;
			off += (size_t)n;
		}
	}
	if (virt_to_phys(uc, &gpa)) {
		fprintf(stderr, "vperf-call: cannot find the physical address of the ucall page (root?)\n");
		return EXIT_HCERR;
	}
	ret = hypercall(d, VPERF_HC_UCALL, gpa, 0, 0, 0);
	if (ret < 0) {
		fprintf(stderr, "vperf-call: ucall: error %" PRId64 "\n", ret);
		return EXIT_HCERR;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: vperf-call detect | version | exit STATUS | print MSG... | values MSG [N...] | "
			"assert MSG... | raw OP [RBX [RCX [RSI [RDI]]]] | ucall-gpa GPA\n");
}

int main(int argc, char **argv)
{
	struct vperf_dev d;
	const char *cmd;
	uint64_t v, a[4] = { 0 };
	int64_t ret;
	int i;

	if (argc < 2) {
		usage();
		return EXIT_USAGE;
	}
	cmd = argv[1];
	if (detect(&d, !strcmp(cmd, "detect"))) {
		if (!strcmp(cmd, "detect"))
			printf("vperf-call: no vperf device\n");
		return EXIT_NODEV;
	}
	if (!strcmp(cmd, "detect"))
		return 0;
	if (ioperm(d.port, 4, 1) < 0) {
		fprintf(stderr, "vperf-call: ioperm(0x%x): %s (run as root)\n", d.port, strerror(errno));
		return EXIT_NOPORT;
	}

	if (!strcmp(cmd, "version")) {
		ret = hypercall(&d, VPERF_HC_VERSION, 0, 0, 0, 0);
		if (ret < 0) {
			fprintf(stderr, "vperf-call: version: error %" PRId64 "\n", ret);
			return EXIT_HCERR;
		}
		printf("version %" PRIu64 " features 0x%" PRIx64 "\n", (uint64_t)ret & 0xffffffff,
		       (uint64_t)ret >> 32);
		return 0;
	}
	if (!strcmp(cmd, "exit") && argc == 3) {
		if (parse_num(argv[2], &v))
			return EXIT_USAGE;
		fflush(NULL);
		ret = hypercall(&d, VPERF_HC_EXIT, v, 0, 0, 0);
		fprintf(stderr, "vperf-call: exit %s: error %" PRId64 "\n", argv[2], ret);
		return EXIT_HCERR;
	}
	if (!strcmp(cmd, "print"))
		return ucall(&d, VPERF_UCALL_PRINT, argc - 2, argv + 2);
	if (!strcmp(cmd, "assert"))
		return ucall(&d, VPERF_UCALL_ASSERT, argc - 2, argv + 2);
	if (!strcmp(cmd, "values"))
		return ucall(&d, VPERF_UCALL_VALUES, argc - 2, argv + 2);
	if ((!strcmp(cmd, "raw") && argc >= 3 && argc <= 7) || (!strcmp(cmd, "ucall-gpa") && argc == 3)) {
		uint64_t op = VPERF_HC_UCALL;

		if (!strcmp(cmd, "raw")) {
			if (parse_num(argv[2], &op))
				return EXIT_USAGE;
			for (i = 3; i < argc; i++) {
				if (parse_num(argv[i], &a[i - 3]))
					return EXIT_USAGE;
			}
		} else if (parse_num(argv[2], &a[0])) {
			return EXIT_USAGE;
		}
		ret = hypercall(&d, (uint32_t)op, a[0], a[1], a[2], a[3]);
		printf("%" PRId64 "\n", ret);
		return 0;
	}
	usage();
	return EXIT_USAGE;
}

#!/bin/sh
# acpi-iasl.sh ACPI_DUMP WORKDIR: disassemble vperf-vmm's ACPI tables with iasl (Debian package acpica-tools)
# and fail on any error, warning or checksum complaint; check the decoded FADT, MADT and DSDT; run the DSDT in
# acpiexec and evaluate \_S5 (what Linux reads to power off) and \_SB.COM1._CRS. (iasl cannot disassemble a
# standalone RSDP; the unit test vmm_acpi_tables checks its checksums.) Exits 77 (skip) without iasl.
set -eu
dump=$1 dir=$2
if ! command -v iasl >/dev/null 2>&1; then
	echo "SKIP: iasl not found (Debian package acpica-tools)"
	exit 77
fi
rm -rf "$dir"
mkdir -p "$dir"
"$dump" "$dir" 4
cd "$dir"
fail=0
for t in xsdt.dat rsdt.dat facp.dat apic.dat dsdt.dat; do
	if ! iasl -d "$t" >"${t%.dat}.log" 2>&1; then
		echo "FAIL: iasl -d $t"; cat "${t%.dat}.log"; fail=1; continue
	fi
	if grep -iE "error|warning|incorrect|invalid" "${t%.dat}.log" "${t%.dat}.dsl"; then
		echo "FAIL: iasl complains about $t"; fail=1
	fi
done
grep -q 'Name (_S5, Package (0x04)' dsdt.dsl || { echo "FAIL: no _S5 package in the DSDT"; fail=1; }
grep -q 'EisaId ("PNP0501")' dsdt.dsl || { echo "FAIL: no COM1 (PNP0501) in the DSDT"; fail=1; }
grep -q 'IRQNoFlags ()' dsdt.dsl || { echo "FAIL: no COM1 IRQ in the DSDT"; fail=1; }
grep -q 'Hardware Reduced (V5) : 1' facp.dsl || { echo "FAIL: FADT not hardware-reduced"; fail=1; }
[ "$(grep -c 'Subtable Type : 00 \[Processor Local APIC\]' apic.dsl)" = 4 ] || { echo "FAIL: MADT lacks 4 local APICs"; fail=1; }
grep -q 'Reset Register Supported (V2) : 1' facp.dsl || { echo "FAIL: FADT without a reset register"; fail=1; }
if command -v acpiexec >/dev/null 2>&1; then
	acpiexec -b 'evaluate \_S5; evaluate \_SB.COM1._CRS' dsdt.dat facp.dat >acpiexec.log 2>&1 ||
		{ echo "FAIL: acpiexec"; cat acpiexec.log; fail=1; }
	grep -A2 'Evaluation of \\_S5 returned' acpiexec.log | grep -q '\[Integer\] = 0000000000000005' ||
		{ echo "FAIL: \\_S5 does not evaluate to {5, ...}"; cat acpiexec.log; fail=1; }
	grep -q '47 01 F8 03 F8 03 01 08 22 10 00 79' acpiexec.log ||
		{ echo "FAIL: \\_SB.COM1._CRS"; cat acpiexec.log; fail=1; }
fi
[ "$fail" = 0 ] && echo "PASS: iasl -d accepts the tables; acpiexec evaluates \\_S5 and COM1._CRS"
exit "$fail"

#!/bin/sh
# Boots the bare-metal firmware on qemu-system-arm (machine virt, Cortex-A15)
# with semihosting as its console and exit. Passes when the firmware exits
# with status 0 and printed that its output matches the reference.
# Usage: run.sh firmware.elf [size report to print first] [qemu-system-arm]
set -u
elf=$1
[ $# -ge 2 ] && [ -n "$2" ] && cat "$2"
qemu=${3:-qemu-system-arm}
out=$(timeout 60 "$qemu" -M virt -cpu cortex-a15 -m 128M \
  -display none -monitor none -serial none -nic none \
  -chardev stdio,id=con -semihosting-config enable=on,target=native,chardev=con \
  -kernel "$elf" </dev/null)
rc=$?
printf '%s\n' "$out"
echo "firmware-baremetal: qemu exit status $rc"
[ "$rc" -eq 0 ] || exit 1
case $out in
  *"output matches the reference"*) echo "firmware-baremetal: passed" ;;
  *) echo "firmware-baremetal: no reference check in the output"; exit 1 ;;
esac

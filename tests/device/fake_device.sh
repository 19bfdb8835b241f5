#!/bin/sh
# A stand-in for `ssh DEVICE` in the tests of --device (tinyrt-perf,
# tinyrt-tune): runs its last argument, a shell command line, here, as the
# device's shell would; a tinyrt-runner built for ARM runs under qemu-user,
# as it would natively on the device. It logs each line to $FAKE_DEVICE_LOG
# when set.
#
#   fake_device.sh TARGET 'COMMAND LINE'     (TARGET: host, aarch64-neon, armv7-neon)
set -e
target=$1
line=$2
[ -n "$FAKE_DEVICE_LOG" ] && printf '%s\n' "$line" >> "$FAKE_DEVICE_LOG"
case $target in
  aarch64*) emu="qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu cortex-a72" ;;
  armv7*) emu="qemu-arm -L /usr/arm-linux-gnueabihf -cpu cortex-a15" ;;
  *) emu="" ;;
esac
# The runner is always the line's first word (Device::run), a quoted path.
case $line in
  "'/tmp/tinyrt."*"/tinyrt-runner' "*) line="$emu $line" ;;
esac
exec /bin/sh -c "$line"

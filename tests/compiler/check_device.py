#!/usr/bin/python3
"""--device CMD (tinyrt-perf, tinyrt-tune): the model timed on a device
reached through a command prefix, as `ssh pi@raspberrypi` would be. A
stand-in device (tests/device/fake_device.sh, the runner under qemu-user
for ARM) checks what the tools do there: a fresh directory from mktemp,
the runner, model and inputs copied with cat, the runs timed (ARM targets
too: median_ms, per-step medians with --profile), the directory removed
after; a device that cannot be reached is a usage error naming it; and
tinyrt-tune with --device measures time, not instructions.

  check_device.py TINYRT_PERF TINYRT_TUNE FAKE_DEVICE TARGET MODEL WORK
"""
import json
import os
import re
import subprocess
import sys


def main():
    perf, tune, fake, target, model, work = sys.argv[1:7]
    os.makedirs(work, exist_ok=True)
    log = os.path.join(work, "device.log")
    if os.path.exists(log):
        os.remove(log)
    env = dict(os.environ, FAKE_DEVICE_LOG=log)
    device = f"sh {fake} {target}"
    r = subprocess.run([perf, model, "--target", target, "--device", device, "--runs", "3", "--profile", "--json"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    j = json.loads(r.stdout.strip().splitlines()[-1])
    assert j["device"] == device and j["median_ms"] > 0, j
    assert "guest_instructions" not in j, j  # timed, not counted
    assert j["profile"] and all(row["median_ms"] >= 0 for row in j["profile"]), j["profile"]
    lines = open(log).read().splitlines()
    assert lines[0].startswith("mktemp -d"), lines
    dirs = {m.group(1) for l in lines[1:] for m in [re.search(r"(/tmp/tinyrt\.[A-Za-z0-9]+)", l)] if m}
    assert len(dirs) == 1, dirs
    there = dirs.pop()
    assert any(l.startswith("cat > '" + there + "/tinyrt-runner'") for l in lines), lines
    assert any(l.startswith("'" + there + "/tinyrt-runner' ") and "--profile" in l for l in lines), lines
    assert lines[-1] == f"rm -rf '{there}'" and not os.path.exists(there), (lines[-1], there)

    bad = subprocess.run([perf, model, "--target", target, "--device", "false", "--runs", "3"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "--device 'false': cannot make a directory there" in bad.stderr, bad.stderr

    out = os.path.join(work, "tune.json")
    t = subprocess.run([tune, model, "--target", target, "--device", device, "--minutes", "0.2", "--runs", "3",
                        "--rounds", "1", "-o", out], capture_output=True, text=True)
    assert t.returncode == 0, t.stdout + t.stderr
    tj = json.load(open(out))
    assert tj["measure"] == "median_ms" and tj["measured_on"] == "device: " + device, tj
    print(f"{target}: {j['median_ms']} ms a run on the device, {len(j['profile'])} steps profiled; "
          f"tinyrt-tune on the device measured {tj['candidates_measured']} tile candidates")


if __name__ == "__main__":
    main()

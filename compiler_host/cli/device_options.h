// device_options.h — the options tinyrt-perf and tinyrt-tune share for
// where and how runs are timed: `--device CMD` (device.h) and `--gap-us N`
// (tinyrt-runner's pause before each timed run).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace tinyrt {

inline void add_device_options(CLI::App &app, std::string &device, int &gap_us) {
  app.add_option("--device", device,
                 "CMD: time on a device: CMD runs its argument, a shell command line, there (e.g. 'ssh "
                 "pi@raspberrypi'); the runner built for the target, the model and its inputs are copied into a fresh "
                 "directory there and removed after (ARM targets are then timed, not counted under qemu)");
  app.add_option("--gap-us", gap_us,
                 "an untimed pause before each timed run, as an application that runs the model now and then (the "
                 "pool's threads then sleep between runs, which moves the serial-step threshold); timed runs only")
      ->check(CLI::Range(0, 10000000));
}

}  // namespace tinyrt

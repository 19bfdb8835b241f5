#!/usr/bin/python3
"""tinyrt-tune (a short budget) on a model with 3x3 convolutions and one
without: the file gives each of the first's 3x3 geometries its Winograd
forms' measured ratios to direct (positive figures), timed at two threads
on x86 it measures the serial-step threshold and the task splits on both
models, and a compile with the file takes the measured ratios (-v says
"tuned") and splits (the JSON's gemm.task_split). The file is
left at OUT for the tools' own tests (--tuning).

  check_tune.py TINYRT_TUNE TINYRT_COMPILE TARGET OUT CONV_MODEL OTHER_MODEL
"""
import json
import subprocess
import sys


def main():
    tune, compile_tool, target, out, conv_model, other_model = sys.argv[1:7]
    timed = target == "host" or target.startswith("x86")
    # 0.7 minutes: the stages before the tiles (serial, Winograd) take about
    # 15 s of its 31 on the host, alone; ctest runs two tests at once.
    args = [tune, conv_model, other_model, "--target", target, "--minutes", "0.7", "--runs", "5", "-o", out]
    if timed:
        args += ["--threads", "2"]
    r = subprocess.run(args, capture_output=True, text=True)
    log = r.stdout + r.stderr
    assert r.returncode == 0, log
    assert "geometries tuned" in r.stdout, log
    with open(out) as f:
        j = json.load(f)
    # Measured before the check, which may give a slowed model's entries back:
    # the stage's own lines name every 3x3 geometry with its two ratios.
    stage = [l for l in log.splitlines() if l.startswith("tinyrt-tune: 3x3 ")]
    assert any(" 16->16 at 32x32: f2 " in l for l in stage), log
    for e in j["winograd"]:
        assert e["f2"] > 0 and e["f4"] > 0 and e["f2rt"] > 0 and e["f4rt"] > 0 and e["convs"] >= 1, e
    if timed:
        sm = j.get("serial_models", {})
        assert set(sm) == {conv_model, other_model}, sm
        assert all(v["shared"] > 0 and v["serial"] > 0 and v["mean_step_ops"] > 0 for v in sm.values()), sm
        # The task splits' stage measured the built-in split on both models.
        assert sum(1 for l in log.splitlines() if l.startswith("tinyrt-tune: splits [") and " built-in:" in l) >= 2, log
        check_splits(compile_tool, target, out, [conv_model, other_model], j.get("task_splits", []))
    else:
        assert "serial_models" not in j and "serial_step_ops" not in j and "task_splits" not in j, j
    if j["winograd"]:
        c = subprocess.run([compile_tool, conv_model, "--target", target, "--tuning", out, "-o", out + ".model", "-v"],
                           capture_output=True, text=True)
        assert c.returncode == 0, c.stdout + c.stderr
        assert "(tuned, of direct: F(2,3) " in c.stdout + c.stderr, c.stdout + c.stderr
    print(f"{target}: {len(stage)} 3x3 geometries measured, {len(j['winograd'])} kept; "
          f"{len(j['tiles'])} tiles; {len(j.get('task_splits', []))} task splits; "
          f"serial threshold {j.get('serial_step_ops', 'as the tables')}")


def check_splits(compile_tool, target, tuning, models, entries):
    """Every GEMM of a geometry the file lists takes its split (the JSON's
    gemm.task_split), and the others the rule."""
    listed = {(e["kind"], e["oc"], e["row"], e["ic"], e["linear"]): e["split"] for e in entries}
    seen = 0
    for i, m in enumerate(models):
        out = f"{tuning}.split{i}"
        c = subprocess.run([compile_tool, m, "--target", target, "--tuning", tuning, "-o", out, "--name", "m"],
                           capture_output=True, text=True)
        assert c.returncode == 0, c.stdout + c.stderr
        with open(f"{out}/m.json") as f:
            groups = json.load(f)["fusion_groups"]
        for g in groups:
            if "gemm" not in g:
                continue
            tc = g["gemm"]["tile_class"]
            key = (tc["kind"], tc["oc"], tc["row"], tc["ic"], tc["linear"])
            assert g["gemm"]["task_split"] == listed.get(key, "rule"), (m, g["gemm"], listed.get(key))
            seen += key in listed
            assert g["serial"] or listed.get(key) != "serial", g
    assert seen or not listed, listed


if __name__ == "__main__":
    main()

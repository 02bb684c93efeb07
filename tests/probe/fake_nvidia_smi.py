#!/usr/bin/env python3
"""A stand-in for nvidia-smi, for running probes/device-check.sh on machines
without an NVIDIA GPU. It answers the forms the device check uses, for the
one GPU the stand-in libcuda makes (its UUID, its MIG slice), with figures
scripted through the environment:

  FAKE_DRIVER_VERSION=<int>  the driver's CUDA, as the stand-in libcuda's:
                             13000 or more is driver 580.65.06, else 550.54.15
  FAKE_MIG=1                 MIG mode on (as the stand-in libcuda's slice)
  FAKE_SMI_CC=1              Confidential Computing on (conf-compute -f)
  FAKE_SMI_EVENTS=<hex>      the clock event reasons while the GPU works
                             (0x40: HW thermal slowdown); 0 by default
  FAKE_SMI_SM_CLOCK=<MHz>    the SM clock while the GPU works (1980)
  FAKE_SMI_LINK=<gen>,<width>      the PCIe link while the GPU works (5,16)
  FAKE_SMI_LINK_MAX=<gen>,<width>  the link's maximum (the same)
  FAKE_SMI_HOST_GEN=<gen>    the host's maximum generation (N/A by default,
                             as under pass-through)
  FAKE_SMI_IDLE=0|all        every sample busy, or every sample idle (a
                             sampler that never saw the work); by default every third
                             sample of -lms is the GPU between timed parts:
                             345 MHz, idle (0x1) with a one-sample HW
                             slowdown (0x8) from the clock change, 0% busy,
                             the link at Gen1, as a real GPU shows

The forms: --query-gpu=FIELDS --format=csv[,noheader][,nounits] [-i ID]
[-lms MS] (then it prints a row every MS until it is stopped),
--help-query-gpu, -L, -q [-d ...], topo -m, conf-compute -f.
Built for the tests alone; never shipped.
"""
import os
import sys
import time

UUID = "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f"


def env(name, default):
    value = os.environ.get(name, "")
    return value if value else default


def state(idle=False):
    driver_cuda = int(env("FAKE_DRIVER_VERSION", "12040"))
    mig = env("FAKE_MIG", "0") == "1"
    gen, width = env("FAKE_SMI_LINK", "5,16").split(",")
    max_gen, max_width = env("FAKE_SMI_LINK_MAX", f"{gen},{width}").split(",")
    events = int(env("FAKE_SMI_EVENTS", "0"), 16)
    if idle:
        events, gen = 0x1 | 0x8, "1"
    return {
        "timestamp": time.strftime("%Y/%m/%d %H:%M:%S.000"),
        "index": "0",
        "name": "NVIDIA H200",
        "uuid": UUID,
        "driver_version": "580.65.06" if driver_cuda >= 13000 else "550.54.15",
        "pstate": "P0",
        "clocks.sm": "345" if idle else env("FAKE_SMI_SM_CLOCK", "1980"),
        "clocks.mem": "3201",
        "clocks.max.sm": "1980",
        "power.draw": "612.40",
        "power.limit": "700.00",
        "temperature.gpu": "58",
        "temperature.memory": "63",
        "utilization.gpu": "0" if idle else "100",
        "pcie.link.gen.current": gen,
        "pcie.link.gen.max": max_gen,
        "pcie.link.gen.gpumax": max_gen,
        "pcie.link.gen.hostmax": env("FAKE_SMI_HOST_GEN", "[N/A]"),
        "pcie.link.width.current": width,
        "pcie.link.width.max": max_width,
        "persistence_mode": "Enabled",
        "pci.bus_id": "00000000:3B:00.0",
        "compute_mode": "Default",
        "mig.mode.current": "Enabled" if mig else "Disabled",
        "memory.used": "1024",
        "memory.total": "143771",
        "ecc.mode.current": "Enabled",
        "ecc.errors.uncorrected.volatile.total": "0",
        "remapped_rows.pending": "No",
        "remapped_rows.failure": "No",
        "clocks_event_reasons.active": f"0x{events:016x}",
    }


def query(fields, fmt, every_ms):
    values = state()
    names = fields.split(",")
    for name in names:
        if name not in values:
            print(f'Field "{name}" is not a valid field to query.', file=sys.stderr)
            return 2
    options = fmt.split(",")
    if "noheader" not in options:
        print(", ".join(names))
    row = 0
    while True:
        mode = env("FAKE_SMI_IDLE", "1")
        idle = every_ms is not None and (mode == "all" or (mode == "1" and row % 3 == 0))
        values = state(idle)
        print(", ".join(values[n] for n in names), flush=True)
        if every_ms is None:
            return 0
        row += 1
        time.sleep(every_ms / 1000)


def main(argv):
    if not argv:
        print(f"+ NVIDIA-SMI {state()['driver_version']}  stand-in +")
        return 0
    if argv[0] == "--help-query-gpu":
        for name in state():
            print(f'"{name}"')
        return 0
    if argv[0] == "-L":
        print(f"GPU 0: NVIDIA H200 (UUID: {UUID})")
        return 0
    if argv[0] == "-q":
        s = state()
        print("==============NVSMI LOG==============")
        print(f"Driver Version                            : {s['driver_version']}")
        print(f"GPU 00000000:00:1E.0\n    Product Name                          : {s['name']}")
        print(f"    MIG Mode\n        Current                           : {s['mig.mode.current']}")
        print(f"    Persistence Mode                      : {s['persistence_mode']}")
        return 0
    if argv[:2] == ["topo", "-m"]:
        print("\tGPU0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t0-1\t0")
        return 0
    if argv[:2] == ["conf-compute", "-f"]:
        print("CC status: " + ("ON" if env("FAKE_SMI_CC", "0") == "1" else "OFF"))
        return 0
    fields = fmt = None
    every_ms = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("--query-gpu="):
            fields = a.split("=", 1)[1]
        elif a.startswith("--format="):
            fmt = a.split("=", 1)[1]
        elif a in ("-i", "--id") and i + 1 < len(argv):
            i += 1
            if argv[i] not in ("0", UUID):
                print(f"No devices were found matching the identifier {argv[i]}", file=sys.stderr)
                return 6
        elif a == "-lms" and i + 1 < len(argv):
            i += 1
            every_ms = int(argv[i])
        else:
            print(f"nvidia-smi (stand-in): unsupported argument {a}", file=sys.stderr)
            return 2
        i += 1
    if fields is None or fmt is None:
        print("nvidia-smi (stand-in): --query-gpu needs --format", file=sys.stderr)
        return 2
    return query(fields, fmt, every_ms)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(0)

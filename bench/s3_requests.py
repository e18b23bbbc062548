"""Benchmark: what one S3 request costs against the embedded server, and what making a client costs.

    .venv/bin/python -m bench.s3_requests [--server s3-only|moto-all] [--objects 1000] [--repeat 3]

In:  the server to measure, started in a child process exactly as the package starts it:
     ``s3-only`` is `regionchaos.storage.EmbeddedS3` (moto's S3 app served alone; ``in_process=True``,
     so the measured process serves, as the package's own child does), ``moto-all``
     is moto's own `ThreadedMotoServer` (every AWS service behind one dispatcher, what
     EmbeddedS3 used before 2b392f8); objects of 2,000 bytes.
Out: one JSON object on stdout: per repetition and operation (``put_many`` and ``get_many`` of
     ``--objects`` objects on 16 threads, then ``put`` of 300 objects one after the other) the
     wall seconds and the CPU seconds of this process (the boto3 client) and of the server
     process (from /proc); then the seconds to make one client, with a new boto3 session
     each time (as before 2b392f8) and through `StorageConfig.client` (one kept session).
     The 1-minute load average before and after: the machines here are shared. Write-up of the
     committed runs: bench/results/s3_requests/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SERVER = r"""
import json, os, sys, time
os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1")
if sys.argv[1] == "s3-only":
    from regionchaos.storage import EmbeddedS3
    server = EmbeddedS3(bucket="bench", in_process=True)  # served by this process, whose CPU is measured
    config = server.start()
    print(json.dumps({"endpoint_url": config.endpoint_url}), flush=True)
else:
    from moto.server import ThreadedMotoServer
    from regionchaos.storage.embedded import create_bucket
    from regionchaos.storage.s3serve import quiet_request_log
    from regionchaos.storage import StorageConfig
    quiet_request_log()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    create_bucket(StorageConfig(endpoint_url=f"http://{host}:{port}", bucket="bench"))
    print(json.dumps({"endpoint_url": f"http://{host}:{port}"}), flush=True)
time.sleep(3600)
"""


def _cpu_of(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", choices=("s3-only", "moto-all"), default="s3-only")
    p.add_argument("--objects", type=int, default=1000)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)

    os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1")
    import boto3

    from regionchaos.storage import ObjectStore, StorageConfig

    load_before = os.getloadavg()[0]
    child = subprocess.Popen([sys.executable, "-c", SERVER, args.server], stdout=subprocess.PIPE, text=True)
    try:
        config = StorageConfig(endpoint_url=json.loads(child.stdout.readline())["endpoint_url"], bucket="bench")
        store = ObjectStore.for_run(config, "bench")
        items = [(f"k/{i}", b"x" * 2000) for i in range(args.objects)]
        store.put_many(items[:50])  # connections and threads warm
        operations = {
            "put_many": lambda: store.put_many(items),
            "get_many": lambda: store.get_many([k for k, _ in items]),
            "put_serial_300": lambda: [store.put(k, b) for k, b in items[:300]],
        }
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in operations}
        for _ in range(args.repeat):
            for name, operation in operations.items():
                wall, client, server = time.perf_counter(), time.process_time(), _cpu_of(child.pid)
                operation()
                runs[name].append({"wall_s": round(time.perf_counter() - wall, 3),
                                   "client_cpu_s": round(time.process_time() - client, 3),
                                   "server_cpu_s": round(_cpu_of(child.pid) - server, 3)})
        per_request_ms = {name: round(1000 * statistics.median(r["wall_s"] for r in rs)
                                      / (300 if name == "put_serial_300" else args.objects), 2)
                          for name, rs in runs.items()}

        def time_clients(make) -> float:
            make()
            started = time.perf_counter()
            for _ in range(10):
                make()
            return round((time.perf_counter() - started) / 10, 4)

        client_s = {
            "new_session_each": time_clients(lambda: boto3.session.Session().client(
                "s3", endpoint_url=config.endpoint_url, region_name=config.region_name)),
            "storage_config_client": time_clients(config.client),
        }
    finally:
        child.kill()
        child.wait()
    print(json.dumps({"server": args.server, "objects": args.objects, "runs": runs,
                      "median_wall_ms_per_request": per_request_ms, "seconds_per_client": client_s,
                      "load_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

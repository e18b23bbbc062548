"""Profile one smoke validation (cProfile): emulate smoke seed 1 into the embedded S3, validate it
twice (the first pays JVM and GX start-up), print the top of the second profile by cumulative time.

    .venv/bin/python -m bench.profile_validate > profile.txt

The write-up of its output: bench/results/profile_validate/README.md.
"""
import cProfile, pstats, time, io
from regionchaos import runner
from regionchaos.scenario import load
from regionchaos.storage import ObjectStore
from regionchaos.judge.runs import judge_stores
from regionchaos.spark import get_spark
with runner.storage_for(None) as config:
    spark = get_spark()
    sc = load("smoke", seed=1)
    rid = "prof-smoke"
    st = ObjectStore.for_run(config, rid)
    runner.start(st, sc, run_id=rid, mutant=None, replay="-")
    # warm: a first validation (JVM, GX import), then a profiled one
    for label in ("first", "second"):
        pr = cProfile.Profile(); t = time.perf_counter(); pr.enable()
        res = judge_stores(spark, [st])
        pr.disable(); print(label, "validate wall", round(time.perf_counter() - t, 1), res[rid].verdict)
        s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(45); print(s.getvalue()[:9000])

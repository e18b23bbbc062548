"""What the shuffles of a GX pass cost: the suites' plans with and without their one-partition exchanges.

    .venv/bin/python bench/exchanges.py [--scenario smoke] [--seed 1] [--repeat 3] > bench/results/exchanges/NAME.md

On a run's small tables (one partition each, `regionchaos.validate.prepare_tables`) Spark still puts a
shuffle between most joins: the output of an inner sort-merge join has a `PartitioningCollection` of its
children's partitionings, and `EnsureRequirements` keeps a join's children unshuffled only when each
child's partitioning *is* `SinglePartition`, so every join above another join shuffles both sides, from
one partition into one partition. This probe measures what those moves cost. It compiles (with `javac`,
against the venv's Spark jars, into a temporary folder) a Spark session extension that removes every
shuffle whose child and output are both one partition, switched on per query by the SQL setting
``regionchaos.sql.dropSinglePartitionExchanges`` (it runs after `EnsureRequirements`, as a columnar
rule's pre-transition step; moving every row of one partition into one partition is the identity, so
the results cannot change). Then, on one emulated run, for each variant and repetition: per suite the
planning and execution time of the suite's one query, its exchanges (in the executed plan) and stages
(Spark's status tracker); and one whole GX pass, whose per-rule results must be the same with and
without the extension (checked; exit 1 if not).

A measurement, not a change to the judge: `regionchaos.validate` does not load the extension.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from regionchaos import runner
from regionchaos import validate as V
from regionchaos.scenario import load
from regionchaos.storage import ObjectStore

SETTING = "regionchaos.sql.dropSinglePartitionExchanges"
CLASS = "regionchaos.bench.SinglePartitionExchanges"
JAVA = """\
package regionchaos.bench;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.ColumnarRule;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.exchange.ShuffleExchangeExec;
import org.apache.spark.sql.internal.SQLConf;

import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/** Removes the shuffles from one partition into one partition, where the session asks for it. */
public final class SinglePartitionExchanges extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    extensions.injectColumnar(new AbstractFunction1<SparkSession, ColumnarRule>() {
      @Override
      public ColumnarRule apply(SparkSession session) {
        return new ColumnarRule() {
          @Override
          public Rule<SparkPlan> preColumnarTransitions() {
            return new Drop();
          }
        };
      }
    });
    return BoxedUnit.UNIT;
  }

  static final class Drop extends Rule<SparkPlan> {
    @Override
    public SparkPlan apply(SparkPlan plan) {
      return "true".equals(SQLConf.get().getConfString("%s", "false")) ? strip(plan) : plan;
    }

    private static SparkPlan strip(SparkPlan plan) {
      List<SparkPlan> children = CollectionConverters.asJava(plan.children());
      List<SparkPlan> stripped = new ArrayList<>(children.size());
      boolean changed = false;
      for (SparkPlan child : children) {
        SparkPlan s = strip(child);
        changed |= s != child;
        stripped.add(s);
      }
      SparkPlan out = changed ? plan.withNewChildren(CollectionConverters.asScala(stripped).toSeq()) : plan;
      if (out instanceof ShuffleExchangeExec) {
        ShuffleExchangeExec e = (ShuffleExchangeExec) out;
        if (e.outputPartitioning().numPartitions() == 1 && e.child().outputPartitioning().numPartitions() == 1) {
          return e.child();
        }
      }
      return out;
    }
  }
}
""" % SETTING


def build_jar(folder: Path) -> Path:
    """The extension compiled against the venv's Spark jars into ``folder``."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    src = folder / "src" / "regionchaos" / "bench" / "SinglePartitionExchanges.java"
    src.parent.mkdir(parents=True)
    src.write_text(JAVA)
    classes = folder / "classes"
    subprocess.run(["javac", "--release", "17", "-nowarn", "-cp", f"{jars}/*", "-d", str(classes), str(src)],
                   check=True)
    jar = folder / "regionchaos-bench.jar"
    subprocess.run(["jar", "cf", str(jar), "-C", str(classes), "."], check=True)
    return jar


def session_with(jar: Path):
    """The process's session, built here (before `regionchaos.spark.get_spark` would) with the extension."""
    from pyspark.sql import SparkSession

    from regionchaos.spark import get_spark, spark_conf

    builder = SparkSession.builder
    settings = spark_conf("bench-exchanges", "local[2]")
    settings.update({"spark.sql.extensions": CLASS, "spark.driver.extraClassPath": str(jar)})
    for key, value in settings.items():
        builder = builder.config(key, value)
    builder.getOrCreate()
    return get_spark()


@contextmanager
def setting(spark, on: bool):
    spark.conf.set(SETTING, "true" if on else "false")
    try:
        yield
    finally:
        spark.conf.unset(SETTING)


def per_suite(spark, custom, suites, tag: str) -> list[tuple]:
    tracker, out = spark.sparkContext.statusTracker(), []
    for s in suites:
        group = f"{tag}-{s.name}"
        spark.sparkContext.setJobGroup(group, group)
        t0 = time.perf_counter()
        df = spark.sql(custom.violations_query(s.combined_sql(), s.rule_names))
        plan = df._jdf.queryExecution().executedPlan().toString()
        t1 = time.perf_counter()
        df.collect()
        t2 = time.perf_counter()
        stages = sum(len(tracker.getJobInfo(j).stageIds) for j in tracker.getJobIdsForGroup(group))
        out.append((s.name, t1 - t0, t2 - t1, plan.count("Exchange"), stages))
    spark.sparkContext.setJobGroup("", "")
    return out


def rule_counts(per_run: dict) -> dict:
    return {(run, c["name"]): (c.get("success"), c.get("rules")) for run, checks in per_run.items() for c in checks}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", default="smoke")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"# Shuffles of a GX pass: `bench/exchanges.py --scenario {args.scenario} --seed {args.seed} "
          f"--repeat {args.repeat}`\n")
    print(f"load average before: {os.getloadavg()[0]:.2f}; JAVA_TOOL_OPTIONS={os.environ.get('JAVA_TOOL_OPTIONS', '')!r}\n")
    with tempfile.TemporaryDirectory(prefix="rc-exchanges-") as tmp, runner.storage_for(None) as config:
        spark = session_with(build_jar(Path(tmp)))
        scenario = load(args.scenario, seed=args.seed)
        run_id = f"bench-exchanges-{args.scenario}-s{args.seed}"
        store = ObjectStore.for_run(config, run_id)
        runner.start(store, scenario, run_id=run_id, mutant=None, replay="-")
        custom, suites = V.load_custom(), V.load_suites()
        with V.tables_mod.spill_directory(spark) as spill:
            tables, frames, _ = V.load_many(spark, [store], spill_dir=spill)
            rows = V.table_rows(frames)
            print(f"{rows:,} rows\n")
            results, passes = {}, {False: [], True: []}
            for _ in range(args.repeat + 1):  # the first round warms the JVM and GX; not reported
                for on in (False, True):
                    with setting(spark, on):
                        t = time.perf_counter()
                        per_run = {r: j["checks"] for r, j in V.judge(spark, tables, [run_id], total_rows=rows)[0].items()}
                        passes[on].append(time.perf_counter() - t)
                        results.setdefault(on, rule_counts(per_run))
            same = results[False] == results[True]
            small = V.prepare_tables(tables, rows)
            V.register_views(small)
            small["run"].createOrReplaceTempView(custom.BATCH_VIEW)
            table: dict[bool, list] = {False: [], True: []}
            with V.tuned_session(spark, rows):
                for _ in range(args.repeat):
                    for on in (False, True):
                        with setting(spark, on):
                            table[on].append(per_suite(spark, custom, suites, f"{on}-{len(table[on])}"))
    print("| variant | GX pass s (each repetition after a warm-up) | plan s | execute s | exchanges | stages |")
    print("|---|---|---|---|---|---|")
    for on in (False, True):
        reps = table[on]
        plan = [sum(r[1] for r in rep) for rep in reps]
        run = [sum(r[2] for r in rep) for rep in reps]
        print(f"| {'one-partition shuffles removed' if on else 'as Spark plans it'} | "
              f"{', '.join(f'{x:.1f}' for x in passes[on][1:])} | {', '.join(f'{x:.1f}' for x in plan)} | "
              f"{', '.join(f'{x:.1f}' for x in run)} | {sum(r[3] for r in reps[-1])} | {sum(r[4] for r in reps[-1])} |")
    print("\nPer suite (last repetition): exchanges and stages as planned / with the shuffles removed\n")
    print("| suite | exchanges | stages | execute s |\n|---|---|---|---|")
    for a, b in zip(table[False][-1], table[True][-1]):
        print(f"| {a[0]} | {a[3]} / {b[3]} | {a[4]} / {b[4]} | {a[2]:.2f} / {b[2]:.2f} |")
    print(f"\nper-rule results identical with and without the extension: {same}")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

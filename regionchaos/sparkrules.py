"""The judge's Spark session extension: one physical-plan rule, compiled from ``regionchaos/java``.

In:  the Java sources under ``regionchaos/java`` (`SOURCES`), pyspark's jars (the classpath they compile
     against), ``javac`` and ``jar`` (``JAVA_HOME/bin``, else PATH; a JDK, which a bare JRE is not).
Out: `ensure()`: the extension's jar, compiled on first use into ``<venv>/share/regionchaos/`` and reused
     while neither the sources nor pyspark change; None where it cannot be built (no JDK: the reason is
     `last_error`) or is off (``REGIONCHAOS_SPARK_RULES=off``). `session_conf()`: the settings that load a
     built jar into a session (`regionchaos.spark.spark_conf`). `pass_conf(spark, rows)`: the settings that
     turn the rule on for one GX pass of fewer than `MAX_ROWS` rows (`regionchaos.judge.engine.tuned_session`),
     empty where it is off or the session lacks it.

The rule (``SinglePartitionShuffles.java``): in a small pass every table is one partition and every shuffle
goes into one partition, yet Spark plans a shuffle above every join whose output is not known to be a
``SinglePartition`` (a join's output is a collection of its children's hash partitionings): a deep ``smoke``
run's pass ran 121 stages of one task each, 34 with the rule (bench/results/exchanges/README.md). After
Spark's ``EnsureRequirements`` the rule drops every shuffle from one partition into one partition (the same
rows in the same one partition), except a shuffle that occurs twice in a plan, whose output Spark computes
once and reuses. It acts only where `pass_conf` switched it on, and only with
``spark.sql.unionOutputPartitioning`` off. With it on, a ``UNION ALL`` whose children share a partitioning
reports that partitioning and runs as one partition only while each child is a shuffle's output; a shuffle
dropped below it makes it several partitions at run time under a parent planned for one. The rule with that
guard removed gave a window over such a union wrong counts, silently (bench/results/exchanges/README.md;
an earlier probe of a rule like it failed with "Can't zip RDDs with unequal numbers of partitions").
Off, a union reports the sum of its children's partitions, which is what it runs as; of Spark's physical
operators only the union executes by its partitioning (their bytecode), and every other one keeps its
child's partition count, so no operator above a dropped shuffle runs on other partitions than it was
planned for.

Where the jar cannot be built the judge runs as before, with the shuffles (the same results, slower).

pyspark is imported inside the functions that need its jars and version: `regionchaos.spark` imports this
module, and importing it must stay cheap.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from .javabuild import BuildFailed, compile_jar, find_tool, sources_digest
from .judge.policy import done, infrastructure

SOURCES = Path(__file__).resolve().parent / "java"
EXTENSION_CLASS = "regionchaos.spark.SinglePartitionShuffles"
ENABLED_KEY = "spark.regionchaos.dropSinglePartitionShuffles"  # the Java class's ENABLED
SWITCH_ENV = "REGIONCHAOS_SPARK_RULES"  # "off": neither loaded into a session nor switched on in a pass
JAVA_RELEASE = "17"  # Spark 4's minimum
# Above this many rows a pass is faster with the shuffles: each suite's query then runs as one task on one core,
# where its stages had run side by side. A swarm's cold pass, the rule on against off, alternating
# (bench/results/exchanges/README.md): 1 seed (1,641 rows) 5.8-6.3 s against 6.5-6.8; 500 seeds (850,000 rows)
# 17.8 and 18.1 against 16.2 and 16.2. Before reused shuffles were kept: 100 seeds (about 170,000 rows) 9.1 and
# 9.5 against 9.3 and 10.6; 250 seeds (425,000) 13.1 and 13.3 against 12.5 and 12.7.
MAX_ROWS = 200_000
last_error: str | None = None  # why the last `ensure` built nothing (None: it built, found, or was off)


def enabled() -> bool:
    return os.environ.get(SWITCH_ENV, "on") != "off"


def jar_path() -> Path:
    """``<venv>/share/regionchaos/spark-rules-<pyspark version>-<sources' digest>.jar``."""
    import pyspark

    digest = sources_digest(SOURCES, pyspark.__version__)
    return Path(sys.prefix) / "share" / "regionchaos" / f"spark-rules-{pyspark.__version__}-{digest}.jar"


def built() -> Path | None:
    """The jar a session started now loads: built, and not switched off."""
    if not enabled():
        return None
    path = jar_path()
    return path if path.is_file() else None


def ensure() -> Path | None:
    """`built()`, compiling the jar first when it is missing (about 1.5 s, once per venv and source change;
    `regionchaos.javabuild`), and removing earlier sources' builds. None, with the reason in `last_error`, where
    there is no JDK or the build fails; the judge then plans the shuffles as Spark does."""
    global last_error
    last_error = None
    if not enabled():
        return None
    target = jar_path()
    if target.is_file():
        return target
    javac, jar = find_tool("javac"), find_tool("jar")
    if javac is None or jar is None:
        last_error = "no javac/jar (a JDK) on JAVA_HOME or PATH"
        return None
    import pyspark

    classpath = str(Path(pyspark.__file__).resolve().parent / "jars" / "*")
    try:
        compile_jar(target, javac=javac, jar=jar, root=SOURCES, classpath=classpath, release=JAVA_RELEASE,
                    timeout=120)
        for stale in target.parent.glob(f"{target.name.rsplit('-', 1)[0]}-*.jar"):  # earlier sources' builds
            if stale != target:
                stale.unlink(missing_ok=True)
    except BuildFailed as exc:
        last_error = str(exc)[:600]
        return None
    except (OSError, subprocess.SubprocessError) as exc:  # a read-only venv, a javac that hangs
        last_error = f"cannot build {target}: {type(exc).__name__}: {exc}"
        return None
    return target


def session_conf(jar: Path | None) -> dict[str, str]:
    """The settings that load ``jar`` (`built`) into a session built by pyspark (whose spark-submit puts
    ``spark.jars`` on the driver's class path); none without a jar."""
    if jar is None:
        return {}
    return {"spark.jars": str(jar), "spark.sql.extensions": EXTENSION_CLASS}


def loaded(spark) -> bool:
    """Does ``spark`` have the extension (its session was started with `session_conf`)?"""
    return EXTENSION_CLASS in (spark.conf.get("spark.sql.extensions", None) or "")


def pass_conf(spark, total_rows: int) -> dict[str, str]:
    """The settings of a pass over ``total_rows`` rows that turn the rule on: below `MAX_ROWS`, in a session
    that has it (`loaded`), and only where `regionchaos.judge.engine.tuned_session` makes a small pass. Elsewhere
    none: a session without the rule keeps Spark's union output partitioning too."""
    if not enabled() or total_rows >= MAX_ROWS or not loaded(spark):
        return {}
    return {ENABLED_KEY: "true", "spark.sql.unionOutputPartitioning": "false"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m regionchaos.sparkrules",
                                     description="Compile the judge's Spark plan rule (regionchaos/java) into "
                                                 "the venv, if it is not there yet.")
    parser.parse_args(argv)
    path = ensure()
    if path is None:  # an infrastructure error, not a judged run's "invariant violated"
        why = f"no Spark plan rule: {last_error or f'{SWITCH_ENV}=off'}; the judge runs without it"
        print(why, file=sys.stderr)
        return infrastructure(why).exit_code
    print(path)
    return done(f"the Spark plan rule is {path}").exit_code


if __name__ == "__main__":
    sys.exit(main())

package regionchaos.spark;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.ColumnarRule;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.exchange.ShuffleExchangeExec;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * A Spark session extension ({@code spark.sql.extensions}) with one physical-plan rule: a shuffle from one
 * partition into one partition is dropped, its child taking its place (regionchaos/sparkrules.py builds
 * and loads it, and says what it saves).
 *
 * <p>Why: the judge's small pass ({@code regionchaos.judge.engine.tuned_session}) puts every table in one
 * partition and shuffles into one partition. Spark's {@code EnsureRequirements} still plans a shuffle
 * under a join whose child is not known to be a {@code SinglePartition}: the output of a join is a
 * {@code PartitioningCollection} of its children's hash partitionings, so the next join shuffles both
 * sides again, into the one partition they are already in, a stage each.
 *
 * <p>Why it is safe: with one partition in and one out, a shuffle moves every row of the one input
 * partition to the one output partition; dropping it leaves the same rows in the same partition. The rule
 * acts only on shuffles whose own and whose child's partition counts are both 1, only when the session's
 * {@value #ENABLED} is {@code true} (the small pass sets it, with adaptive execution off, so no stage is
 * re-planned afterwards), and only with {@value #UNION_PARTITIONING} off. With that on, a union whose
 * children share a partitioning reports it and runs as one partition only while each child is still a
 * shuffle's output: dropping a shuffle below it would make it several partitions at run time under a
 * parent planned for one. With it off a union reports the sum of its children's partitions, what it runs
 * as, and every other operator keeps its child's partition count, so every operator above a dropped
 * shuffle runs on the partitions it was planned for.
 *
 * <p>A shuffle that occurs more than once in a plan is kept: Spark computes it once and reuses its output
 * (exchange reuse runs after this rule), where without it the subtree below would run once per occurrence.
 *
 * <p>It runs after {@code EnsureRequirements}, as a post-columnar-transition rule, which
 * {@code QueryExecution}'s preparations apply to every query and subquery plan.
 */
public final class SinglePartitionShuffles extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
    public static final String ENABLED = "spark.regionchaos.dropSinglePartitionShuffles";
    public static final String UNION_PARTITIONING = "spark.sql.unionOutputPartitioning";

    @Override
    public BoxedUnit apply(SparkSessionExtensions extensions) {
        extensions.injectColumnar(new AbstractFunction1<SparkSession, ColumnarRule>() {
            @Override
            public ColumnarRule apply(SparkSession session) {
                return new Columnar();
            }
        });
        return BoxedUnit.UNIT;
    }

    static final class Columnar extends ColumnarRule {
        private final Rule<SparkPlan> rule = new Drop();

        @Override
        public Rule<SparkPlan> postColumnarTransitions() {
            return rule;
        }
    }

    static final class Drop extends Rule<SparkPlan> {
        @Override
        public SparkPlan apply(SparkPlan plan) {
            boolean on = "true".equals(conf().getConfString(ENABLED, "false"))
                    && "false".equals(conf().getConfString(UNION_PARTITIONING, "true"));
            if (!on) {
                return plan;
            }
            Map<SparkPlan, Integer> seen = new HashMap<>();
            count(plan, seen);
            return drop(plan, seen);
        }
    }

    /** How often each shuffle occurs in ``plan``, by its canonical form (what Spark's exchange reuse compares). */
    static void count(SparkPlan plan, Map<SparkPlan, Integer> seen) {
        if (plan instanceof ShuffleExchangeExec) {
            seen.merge(plan.canonicalized(), 1, Integer::sum);
        }
        for (SparkPlan child : CollectionConverters.asJava(plan.children())) {
            count(child, seen);
        }
    }

    /**
     * The plan with every one-to-one-partition shuffle replaced by its child, bottom up, except a shuffle that
     * occurs more than once: Spark computes such a shuffle once and reads its output wherever it occurs (exchange
     * reuse, which runs after this rule); without it the subtree below would run once per occurrence.
     */
    static SparkPlan drop(SparkPlan plan, Map<SparkPlan, Integer> seen) {
        boolean shared = plan instanceof ShuffleExchangeExec && seen.getOrDefault(plan.canonicalized(), 0) > 1;
        List<SparkPlan> children = CollectionConverters.asJava(plan.children());
        List<SparkPlan> kept = new ArrayList<>(children.size());
        boolean changed = false;
        for (SparkPlan child : children) {
            SparkPlan next = drop(child, seen);
            changed |= next != child;
            kept.add(next);
        }
        SparkPlan out = changed ? plan.withNewChildren(CollectionConverters.asScala(kept).toSeq()) : plan;
        if (out instanceof ShuffleExchangeExec && !shared) {
            ShuffleExchangeExec exchange = (ShuffleExchangeExec) out;
            if (exchange.outputPartitioning().numPartitions() == 1
                    && exchange.child().outputPartitioning().numPartitions() == 1) {
                return exchange.child();
            }
        }
        return out;
    }
}

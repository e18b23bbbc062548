package regionchaos.flink;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.serialization.SimpleStringEncoder;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.filesystem.bucketassigners.BasePathBucketAssigner;
import org.apache.flink.streaming.api.functions.sink.filesystem.rollingpolicies.OnCheckpointRollingPolicy;
import org.apache.flink.util.Collector;

/**
 * The real-Flink workload of regionchaos: a bounded sequence -> keyBy -> keyed counter -> FileSink.
 *
 * In:  program arguments {@code --records N --keys K --rate R --output DIR}: the source emits the
 *      sequence 0..N-1 (split by Flink among the source's subtasks), at most R records per second in
 *      total (R = 0: unthrottled), so a run lasts about N / R seconds. Every other setting (parallelism,
 *      checkpoint interval and folder, state backend, retained checkpoints, retention on cancellation)
 *      is a Flink Configuration key given with {@code flink run -D key=value} (regionchaos.flink.cluster).
 * Out: text files under DIR, committed by the exactly-once FileSink when a checkpoint completes
 *      (rolling on every checkpoint), all in DIR itself (no date buckets); one line per record: {@code key,count,seq} where key = seq mod K
 *      and count is the key's running count kept in ValueState. Exactly-once means every key's counts
 *      are 1..n and every seq appears once in the committed files.
 */
public final class CounterJob {

    private CounterJob() {}

    public static void main(String[] args) throws Exception {
        long records = Long.parseLong(arg(args, "--records", "20000"));
        long keys = Long.parseLong(arg(args, "--keys", "16"));
        double rate = Double.parseDouble(arg(args, "--rate", "0"));
        String output = arg(args, "--output", null);
        if (output == null) {
            throw new IllegalArgumentException("--output DIR is required");
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        RateLimiterStrategy limit = rate > 0 ? RateLimiterStrategy.perSecond(rate) : RateLimiterStrategy.noOp();
        DataGeneratorSource<Long> source = new DataGeneratorSource<>(seq -> seq, records, limit, Types.LONG);
        FileSink<String> sink = FileSink.forRowFormat(new Path(output), new SimpleStringEncoder<String>("UTF-8"))
                .withBucketAssigner(new BasePathBucketAssigner<>())
                .withRollingPolicy(OnCheckpointRollingPolicy.build())
                .build();
        final long k = keys;
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "sequence").uid("sequence")
                .keyBy(seq -> seq % k, Types.LONG)
                .process(new Counter()).uid("counter").name("counter")
                .sinkTo(sink).uid("sink").name("sink");
        env.execute("regionchaos-counter");
    }

    /** The value after {@code name} in {@code args}, else {@code fallback}. */
    static String arg(String[] args, String name, String fallback) {
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals(name)) {
                return args[i + 1];
            }
        }
        return fallback;
    }

    /** Counts the records of each key in ValueState; emits {@code key,count,seq}. */
    static final class Counter extends KeyedProcessFunction<Long, Long, String> {
        private transient ValueState<Long> count;

        @Override
        public void open(OpenContext context) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
        }

        @Override
        public void processElement(Long seq, Context ctx, Collector<String> out) throws Exception {
            Long before = count.value();
            long now = (before == null ? 0L : before) + 1L;
            count.update(now);
            out.collect(ctx.getCurrentKey() + "," + now + "," + seq);
        }
    }
}

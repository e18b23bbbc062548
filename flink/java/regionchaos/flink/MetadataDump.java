package regionchaos.flink;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.FileInputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.runtime.state.StateObject;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;

/**
 * Reads checkpoint metadata files with Flink's own reader and prints what they name, as JSON.
 *
 * In:  arguments {@code METADATA_FILE POINTER} pairs: a copy of a {@code chk-N/_metadata} file and the
 *      checkpoint folder it was read from (Flink's "external pointer", used only to resolve relative paths).
 * Out: one JSON object per pair on stdout, one per line:
 *      {@code {"metadata": FILE, "checkpoint_id": N, "operators": [{"operator_id", "name", "uid",
 *      "parallelism", "max_parallelism", "coordinator": HANDLE|null, "subtasks": [{"subtask", "finished",
 *      "handles": [{"slot", "role", "kind", "size", "path"?}]}]}]}}.
 *      A handle's kind is {@code inline} (ByteStreamStateHandle: size only, never a path: its name is not
 *      a file), {@code file} (a file the checkpoint names, with its path), or the handle's class name.
 *      RocksDB incremental state is one handle per file: role {@code shared} (the SSTs under shared/),
 *      {@code private} and {@code meta}. A file that cannot be read prints {"metadata": FILE, "error": ...}.
 */
public final class MetadataDump {

    private MetadataDump() {}

    public static void main(String[] args) {
        ClassLoader loader = MetadataDump.class.getClassLoader();
        for (int i = 0; i + 1 < args.length; i += 2) {
            String file = args[i];
            try (DataInputStream in = new DataInputStream(new BufferedInputStream(new FileInputStream(file)))) {
                CheckpointMetadata metadata = Checkpoints.loadCheckpointMetadata(in, loader, args[i + 1]);
                System.out.println(dump(file, metadata));
            } catch (Exception e) {
                System.out.println("{\"metadata\": " + quote(file) + ", \"error\": " + quote(String.valueOf(e)) + "}");
            }
        }
    }

    static String dump(String file, CheckpointMetadata metadata) {
        List<String> operators = new ArrayList<>();
        for (OperatorState op : metadata.getOperatorStates()) {
            List<String> subtasks = new ArrayList<>();
            for (Map.Entry<Integer, OperatorSubtaskState> e : op.getSubtaskStates().entrySet()) {
                subtasks.add(subtask(e.getKey(), e.getValue()));
            }
            ByteStreamStateHandle coordinator = op.getCoordinatorState();
            operators.add("{\"operator_id\": " + quote(op.getOperatorID().toString())
                    + ", \"name\": " + quote(op.getOperatorName().orElse(null))
                    + ", \"uid\": " + quote(op.getOperatorUid().orElse(null))
                    + ", \"parallelism\": " + op.getParallelism()
                    + ", \"max_parallelism\": " + op.getMaxParallelism()
                    + ", \"coordinator\": " + (coordinator == null ? "null" : stream("coordinator", "coordinator", coordinator))
                    + ", \"subtasks\": [" + String.join(", ", subtasks) + "]}");
        }
        return "{\"metadata\": " + quote(file) + ", \"checkpoint_id\": " + metadata.getCheckpointId()
                + ", \"operators\": [" + String.join(", ", operators) + "]}";
    }

    static String subtask(int index, OperatorSubtaskState state) {
        List<String> handles = new ArrayList<>();
        for (OperatorStateHandle h : state.getManagedOperatorState()) {
            handles.add(stream("managed_operator", "data", h.getDelegateStateHandle()));
        }
        for (OperatorStateHandle h : state.getRawOperatorState()) {
            handles.add(stream("raw_operator", "data", h.getDelegateStateHandle()));
        }
        for (KeyedStateHandle h : state.getManagedKeyedState()) {
            keyed("managed_keyed", h, handles);
        }
        for (KeyedStateHandle h : state.getRawKeyedState()) {
            keyed("raw_keyed", h, handles);
        }
        for (StateObject h : state.getInputChannelState()) {
            handles.add(other("input_channel", "data", h));
        }
        for (StateObject h : state.getResultSubpartitionState()) {
            handles.add(other("result_subpartition", "data", h));
        }
        return "{\"subtask\": " + index + ", \"finished\": " + state.isFinished()
                + ", \"handles\": [" + String.join(", ", handles) + "]}";
    }

    static void keyed(String slot, KeyedStateHandle h, List<String> handles) {
        if (h instanceof KeyGroupsStateHandle) {
            handles.add(stream(slot, "data", ((KeyGroupsStateHandle) h).getDelegateStateHandle()));
        } else if (h instanceof IncrementalRemoteKeyedStateHandle) {
            IncrementalRemoteKeyedStateHandle inc = (IncrementalRemoteKeyedStateHandle) h;
            for (HandleAndLocalPath p : inc.getSharedState()) {
                handles.add(stream(slot, "shared", p.getHandle()));
            }
            for (HandleAndLocalPath p : inc.getPrivateState()) {
                handles.add(stream(slot, "private", p.getHandle()));
            }
            handles.add(stream(slot, "meta", inc.getMetaDataStateHandle()));
        } else {
            handles.add(other(slot, "data", h));
        }
    }

    static String stream(String slot, String role, StreamStateHandle h) {
        String head = "{\"slot\": " + quote(slot) + ", \"role\": " + quote(role) + ", \"size\": " + h.getStateSize();
        if (h instanceof ByteStreamStateHandle) {
            return head + ", \"kind\": \"inline\"}";
        }
        Optional<Path> path = h.maybeGetPath();
        if (path.isPresent()) {
            return head + ", \"kind\": \"file\", \"path\": " + quote(path.get().toString()) + "}";
        }
        return head + ", \"kind\": " + quote(h.getClass().getSimpleName()) + "}";
    }

    static String other(String slot, String role, StateObject h) {
        return "{\"slot\": " + quote(slot) + ", \"role\": " + quote(role) + ", \"size\": " + h.getStateSize()
                + ", \"kind\": " + quote(h.getClass().getSimpleName()) + "}";
    }

    static String quote(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }
}

/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file
 * except in compliance with the License. You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software distributed under the
 * License is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND,
 * either express or implied. See the License for the specific language governing permissions
 * and limitations under the License.
 */

package io.clonos.streaming.operators;

import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.causal.LocalRecoveryImpossibleException;
import io.clonos.streaming.causal.CausalProcessingTimeService;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.functions.async.AsyncFunction;
import org.apache.flink.streaming.api.functions.async.AsyncRetryStrategy;
import org.apache.flink.streaming.api.functions.async.ResultFuture;
import org.apache.flink.streaming.api.graph.StreamConfig;
import org.apache.flink.streaming.api.operators.AbstractUdfStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.ChainingStrategy;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.Output;
import org.apache.flink.streaming.api.operators.TimestampedCollector;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeService;
import org.apache.flink.streaming.runtime.tasks.StreamTask;
import org.apache.flink.util.function.ThrowingRunnable;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

/**
 * Async I/O whose results a recovered task gets back from its causal log: Clonos's replacement for
 * Flink's {@code AsyncWaitOperator}, which {@code StreamTaskRewriter} swaps in. Flink's operator
 * applies a result in a mail from the caller's thread, at a point of the task's work no replay
 * could find again, and its snapshot does not say which call an entry was.
 *
 * <p>Here every record gets a number that is the same in every attempt (snapshots carry the counter
 * and each waiting record's number). A result takes effect on the task thread, where {@link
 * CausalTask#asyncCompleted} logs the point, the record's number and the serialized result before
 * it is applied. A recovering task does not call the user's function: the replay hands the logged
 * results back at their logged points ({@link CausalTask#fireNextDue}); the records still waiting
 * when the replay ends are then called, as a restored Flink operator calls its restored records. An
 * external call thus happens once per result that took effect.
 *
 * <p>The operator waits for a result only where Flink's does (at capacity, at the end of input);
 * while replaying it waits for exactly the logged mailbox actions that freed its predecessor.
 * Ordered and unordered output, watermarks, timeouts (the user function's {@code timeout}) are as
 * in Flink.
 *
 * <p>Retries ({@link AsyncRetryStrategy}) are as in Flink too: a result or failure that the
 * strategy's predicates match is not applied; after the back-off the user function is called again,
 * at the end of input at once and for the last time. Only the result that takes effect is logged,
 * so a replay neither retries nor waits for a back-off: which calls failed, and how long they took,
 * is the external world's business, like the answers themselves. The back-off therefore runs
 * outside the task's (logged) timers.
 */
@Internal
public final class CausalAsyncWaitOperator<IN, OUT>
        extends AbstractUdfStreamOperator<OUT, AsyncFunction<IN, OUT>>
        implements OneInputStreamOperator<IN, OUT>, BoundedOneInput {

    private static final long serialVersionUID = 1L;

    static final String STATE_NAME = "_clonos_async_wait_operator_state_";

    private static final byte HEADER = 0;
    private static final byte RECORD = 1;
    private static final byte WATERMARK = 2;

    private final long timeout;
    private final int capacity;
    private final boolean ordered;

    /** The job's retry strategy; null when it does not retry. */
    @Nullable private final AsyncRetryStrategy<OUT> retry;

    private transient AsyncRetries<OUT> retries;

    private final transient MailboxExecutor mailbox;

    private transient AsyncEntries<IN, OUT> entries;
    private transient TypeSerializer<IN> inSerializer;
    private transient TypeSerializer<OUT> outSerializer;
    private transient TimestampedCollector<OUT> collector;
    private transient ListState<byte[]> state;
    private transient boolean objectReuse;

    /** The number of the next record. */
    private transient long nextId;

    @Nullable private transient CausalTask causal;
    private transient int callbackId;

    /** Records that arrived while the task replayed: they are called once it runs. */
    private transient List<AsyncEntries.Entry<IN, OUT>> uncalled;

    public CausalAsyncWaitOperator(
            AsyncFunction<IN, OUT> function,
            long timeout,
            int capacity,
            boolean ordered,
            @Nullable AsyncRetryStrategy<OUT> retry,
            ProcessingTimeService processingTimeService,
            MailboxExecutor mailbox) {
        super(function);
        if (capacity <= 0) {
            throw new IllegalArgumentException(
                    "The capacity of async I/O must be positive, was " + capacity);
        }
        this.timeout = timeout;
        this.capacity = capacity;
        this.ordered = ordered;
        this.retry = retry;
        this.processingTimeService = processingTimeService;
        this.mailbox = mailbox;
        setChainingStrategy(ChainingStrategy.ALWAYS);
    }

    @Override
    public void setup(
            StreamTask<?, ?> containingTask,
            StreamConfig config,
            Output<StreamRecord<OUT>> output) {
        super.setup(containingTask, config, output);
        this.inSerializer = config.getTypeSerializerIn(0, getUserCodeClassloader());
        this.outSerializer = config.getTypeSerializerOut(getUserCodeClassloader());
        this.entries = new AsyncEntries<>(ordered);
        this.collector = new TimestampedCollector<>(output);
        this.uncalled = new ArrayList<>();
        this.retries = new AsyncRetries<>(retry);
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        state =
                context.getOperatorStateStore()
                        .getListState(
                                new ListStateDescriptor<>(
                                        STATE_NAME, BytePrimitiveArraySerializer.INSTANCE));
        if (context.isRestored()) {
            restore(state.get());
        }
    }

    @Override
    public void open() throws Exception {
        super.open();
        objectReuse = getExecutionConfig().isObjectReuseEnabled();
        ProcessingTimeService service = getProcessingTimeService();
        if (service instanceof CausalProcessingTimeService) {
            causal = ((CausalProcessingTimeService) service).task();
            callbackId = causal.registerAsyncOperator(this::replayed);
            causal.recovery().whenRunning(this::callUncalledLater);
        }
        for (AsyncEntries.Entry<IN, OUT> entry : entries) {
            if (!entry.isCompleted()) {
                start(entry);
            }
        }
        entries.emitReady(this::emit);
    }

    @Override
    public void processElement(StreamRecord<IN> record) throws Exception {
        waitForCapacity();
        StreamRecord<IN> input =
                objectReuse ? record.copy(inSerializer.copy(record.getValue())) : record;
        start(entries.addRecord(nextId++, input));
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        waitForCapacity();
        entries.addWatermark(mark);
        entries.emitReady(this::emit);
    }

    @Override
    public void endInput() throws Exception {
        retries.stop();
        for (AsyncEntries.Entry<IN, OUT> entry : entries) {
            if (entry.retryPending) {
                retryNow(entry);
            }
        }
        while (!entries.isEmpty()) {
            waitForOneAction();
        }
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        List<byte[]> snapshot = new ArrayList<>();
        DataOutputSerializer out = new DataOutputSerializer(64);
        out.writeByte(HEADER);
        out.writeLong(nextId);
        snapshot.add(out.getCopyOfBuffer());
        for (AsyncEntries.Entry<IN, OUT> entry : entries) {
            out.clear();
            write(entry, out);
            snapshot.add(out.getCopyOfBuffer());
        }
        state.update(snapshot);
    }

    // ------------------------------------------------------------------------------------------

    /** Registers the record's timeout, and calls the user function unless the task replays. */
    private void start(AsyncEntries.Entry<IN, OUT> entry) throws Exception {
        if (timeout > 0) {
            if (entry.timeoutAt < 0) {
                entry.timeoutAt = getProcessingTimeService().getCurrentProcessingTime() + timeout;
            }
            // a restored record keeps its deadline: a replay fires its timeout at the logged time
            entry.timeout =
                    getProcessingTimeService()
                            .registerTimer(entry.timeoutAt, time -> timedOut(entry));
        }
        if (isRunning()) {
            call(entry);
        } else {
            uncalled.add(entry);
        }
    }

    private void call(AsyncEntries.Entry<IN, OUT> entry) throws Exception {
        outsideTheLog(() -> userFunction.asyncInvoke(entry.input.getValue(), new Result(entry)));
    }

    /**
     * Runs the user's code that a replay does not run again (a call, its timeout, the retry
     * strategy's predicates): its choices (a causal clock's reading, a random number) shape only
     * what a result's determinants record, so they are not logged.
     */
    private <E extends Exception> void outsideTheLog(ThrowingRunnable<E> code) throws E {
        if (causal == null) {
            code.run();
        } else {
            causal.outsideTheLog(code);
        }
    }

    /**
     * Whether the strategy retries the record after this result ({@code results}) or failure
     * ({@code error}) of its current attempt: task thread, running normally.
     */
    private boolean retries(
            AsyncEntries.Entry<IN, OUT> entry,
            @Nullable Collection<OUT> results,
            @Nullable Throwable error) {
        boolean[] retried = new boolean[1];
        outsideTheLog(() -> retried[0] = retries.retries(entry.attempt, results, error));
        return retried[0];
    }

    /** Calls the user function again for the record once the strategy's back-off passed. */
    private void retryLater(AsyncEntries.Entry<IN, OUT> entry) {
        entry.retryPending = true;
        int attempt = entry.attempt;
        retries.afterBackoff(
                attempt,
                mailbox,
                () -> {
                    if (entry.attempt == attempt) {
                        retryNow(entry);
                    }
                });
    }

    private void retryNow(AsyncEntries.Entry<IN, OUT> entry) throws Exception {
        if (!entry.retryPending || entry.isCompleted()) {
            return;
        }
        entry.retryPending = false;
        entry.attempt++;
        call(entry);
    }

    private boolean isRunning() {
        return causal == null || causal.recovery().isRunning();
    }

    /** The replay ended: the records it left waiting are called, on the task thread. */
    private void callUncalledLater() {
        try {
            mailbox.execute(this::callUncalled, "call the async I/O records a replay left waiting");
        } catch (RejectedExecutionException closed) {
            // the task ends; nothing to call any more
        }
    }

    private void callUncalled() throws Exception {
        List<AsyncEntries.Entry<IN, OUT>> toCall = new ArrayList<>(uncalled);
        uncalled.clear();
        for (AsyncEntries.Entry<IN, OUT> entry : toCall) {
            if (!entry.isCompleted()) {
                call(entry);
            }
        }
    }

    private void timedOut(AsyncEntries.Entry<IN, OUT> entry) throws Exception {
        // while replaying, what the timeout led to (a result, or the failure) is in the log
        if (!entry.isCompleted() && isRunning()) {
            // as in Flink, the timeout takes the place of a retry due, and its answer may be
            // retried
            entry.retryPending = false;
            outsideTheLog(() -> userFunction.timeout(entry.input.getValue(), new Result(entry)));
        }
    }

    /** A result of attempt {@code attempt} arrived: task thread. */
    private void completed(AsyncEntries.Entry<IN, OUT> entry, Collection<OUT> results, int attempt)
            throws IOException {
        if (!isAnswerDue(entry, attempt)) {
            return;
        }
        if (retries(entry, results, null)) {
            retryLater(entry);
            return;
        }
        if (causal != null) {
            byte[] bytes = serialize(results);
            causal.asyncCompleted(callbackId, entry.id, bytes);
            // the replay applies the deserialized result: so does the original
            results = deserialize(bytes);
        }
        apply(entry, results);
    }

    /** A logged result during a replay. */
    private void replayed(long id, byte[] result) {
        AsyncEntries.Entry<IN, OUT> entry = entries.waiting(id);
        if (entry == null) {
            throw new LocalRecoveryImpossibleException(
                    "The recovered "
                            + getOperatorName()
                            + " has no waiting record "
                            + id
                            + " for a logged async result");
        }
        try {
            apply(entry, deserialize(result));
        } catch (IOException e) {
            throw new LocalRecoveryImpossibleException(
                    "A logged async result of " + getOperatorName() + " cannot be read: " + e);
        }
    }

    private void apply(AsyncEntries.Entry<IN, OUT> entry, Collection<OUT> results) {
        if (entry.timeout != null) {
            entry.timeout.cancel(false);
        }
        entries.complete(entry, results);
        entries.emitReady(this::emit);
    }

    private void emit(AsyncEntries.Entry<IN, OUT> entry) {
        if (!entry.isRecord()) {
            output.emitWatermark(entry.watermark);
            return;
        }
        collector.setTimestamp(entry.input);
        for (OUT result : entry.results) {
            collector.collect(result);
        }
    }

    private void waitForCapacity() throws Exception {
        while (entries.size() >= capacity) {
            waitForOneAction();
        }
    }

    /**
     * Lets one mailbox action run. While replaying, that is the next logged one due now: exactly
     * what freed the predecessor here.
     */
    private void waitForOneAction() throws Exception {
        if (!isRunning()) {
            if (causal.fireNextDue() || isRunning()) {
                return;
            }
            throw new LocalRecoveryImpossibleException(
                    "The recovered "
                            + getOperatorName()
                            + " waits for an async result where its predecessor had none logged");
        }
        mailbox.yield();
    }

    // ------------------------------------------------------------------------------------------

    private byte[] serialize(Collection<OUT> results) throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(64);
        out.writeInt(results.size());
        for (OUT result : results) {
            outSerializer.serialize(result, out);
        }
        return out.getCopyOfBuffer();
    }

    private List<OUT> deserialize(byte[] bytes) throws IOException {
        DataInputDeserializer in = new DataInputDeserializer(bytes);
        int count = in.readInt();
        if (count < 0) {
            throw new IOException("A negative number of results: " + count);
        }
        List<OUT> results = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            results.add(outSerializer.deserialize(in));
        }
        if (in.available() > 0) {
            throw new IOException(in.available() + " bytes left after " + count + " results");
        }
        return results;
    }

    private void write(AsyncEntries.Entry<IN, OUT> entry, DataOutputSerializer out)
            throws IOException {
        if (!entry.isRecord()) {
            out.writeByte(WATERMARK);
            out.writeLong(entry.watermark.getTimestamp());
            return;
        }
        out.writeByte(RECORD);
        out.writeLong(entry.id);
        out.writeBoolean(entry.input.hasTimestamp());
        out.writeLong(entry.input.getTimestamp());
        inSerializer.serialize(entry.input.getValue(), out);
        out.writeLong(entry.timeoutAt);
        out.writeLong(entry.completedAs);
        if (entry.isCompleted()) {
            byte[] results = serialize(entry.results);
            out.writeInt(results.length);
            out.write(results);
        }
    }

    private void restore(Iterable<byte[]> snapshot) throws IOException {
        List<AsyncEntries.Entry<IN, OUT>> restored = new ArrayList<>();
        int headers = 0;
        for (byte[] bytes : snapshot) {
            DataInputDeserializer in = new DataInputDeserializer(bytes);
            byte kind = in.readByte();
            if (kind == HEADER) {
                nextId = Math.max(nextId, in.readLong());
                headers++;
            } else if (kind == WATERMARK) {
                restored.add(new AsyncEntries.Entry<>(-1, null, new Watermark(in.readLong())));
            } else if (kind == RECORD) {
                long id = in.readLong();
                boolean hasTimestamp = in.readBoolean();
                long timestamp = in.readLong();
                IN value = inSerializer.deserialize(in);
                AsyncEntries.Entry<IN, OUT> entry =
                        new AsyncEntries.Entry<>(
                                id,
                                hasTimestamp
                                        ? new StreamRecord<>(value, timestamp)
                                        : new StreamRecord<>(value),
                                null);
                entry.timeoutAt = in.readLong();
                entry.completedAs = in.readLong();
                if (entry.completedAs >= 0) {
                    byte[] results = new byte[in.readInt()];
                    in.readFully(results);
                    entry.results = deserialize(results);
                }
                restored.add(entry);
            } else {
                throw new IOException(
                        "Unknown async I/O entry kind "
                                + kind
                                + " in the state of "
                                + getOperatorName());
            }
        }
        for (AsyncEntries.Entry<IN, OUT> entry : restored) {
            // after rescaling, several subtasks' entries meet: numbers are only unique per subtask,
            // and no replay follows a rescaling, so they are numbered afresh
            AsyncEntries.Entry<IN, OUT> kept =
                    headers > 1 && entry.isRecord() ? renumbered(entry) : entry;
            entries.restore(kept);
        }
    }

    private AsyncEntries.Entry<IN, OUT> renumbered(AsyncEntries.Entry<IN, OUT> entry) {
        AsyncEntries.Entry<IN, OUT> copy = new AsyncEntries.Entry<>(nextId++, entry.input, null);
        copy.results = entry.results;
        copy.timeoutAt = entry.timeoutAt;
        copy.completedAs = entry.completedAs;
        return copy;
    }

    /**
     * Whether an answer (result or failure) of call {@code attempt} counts: the first answer of a
     * record's current call, in a running task; not a late answer after a timeout's, nor one of a
     * call that is being retried.
     */
    private boolean isAnswerDue(AsyncEntries.Entry<IN, OUT> entry, int attempt) {
        return !entry.isCompleted()
                && isRunning()
                && attempt == entry.attempt
                && !entry.retryPending;
    }

    /** A failure of attempt {@code attempt} arrived, with a retry strategy: task thread. */
    private void failed(AsyncEntries.Entry<IN, OUT> entry, Throwable error, int attempt) {
        if (!isAnswerDue(entry, attempt)) {
            return;
        }
        if (retries(entry, null, error)) {
            retryLater(entry);
            return;
        }
        fail(entry, error);
    }

    private void fail(AsyncEntries.Entry<IN, OUT> entry, Throwable error) {
        getContainingTask()
                .getEnvironment()
                .failExternally(
                        new Exception(
                                "Could not complete the stream element " + entry.input + '.',
                                error));
    }

    /** The user function's handle on the result of one call for a record. */
    private final class Result implements ResultFuture<OUT> {
        private final AsyncEntries.Entry<IN, OUT> entry;
        private final int attempt;

        Result(AsyncEntries.Entry<IN, OUT> entry) {
            this.entry = entry;
            this.attempt = entry.attempt;
        }

        @Override
        public void complete(Collection<OUT> results) {
            // through the mailbox even from the task thread (a function that answers at once, a
            // timeout): the result then takes effect at a mailbox point, which the log can name
            try {
                mailbox.execute(() -> completed(entry, results, attempt), "async I/O result");
            } catch (RejectedExecutionException closed) {
                // the task ends; the result has no effect
            }
        }

        @Override
        public void completeExceptionally(Throwable error) {
            if (retry == null) {
                fail(entry, error);
                return;
            }
            try {
                mailbox.execute(() -> failed(entry, error, attempt), "async I/O failure");
            } catch (RejectedExecutionException closed) {
                // the task ends; the failure has no effect
            }
        }
    }
}

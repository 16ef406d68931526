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

package io.clonos.streaming.causal;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.asyncprocessing.AsyncExecutionController;
import org.apache.flink.runtime.metrics.groups.TaskIOMetricGroup;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupStatePartitionStreamProvider;
import org.apache.flink.runtime.state.KeyedStateCheckpointOutputStream;
import org.apache.flink.streaming.api.operators.InternalTimeServiceManager;
import org.apache.flink.streaming.api.operators.InternalTimeServiceManagerImpl;
import org.apache.flink.streaming.api.operators.InternalTimer;
import org.apache.flink.streaming.api.operators.InternalTimerService;
import org.apache.flink.streaming.api.operators.KeyContext;
import org.apache.flink.streaming.api.operators.Triggerable;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeService;
import org.apache.flink.streaming.runtime.tasks.StreamTaskCancellationContext;
import org.apache.flink.util.clock.Clock;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;

/**
 * Fires the keyed timers that are due together in one canonical order: by timer service, then
 * timestamp, then serialized key and namespace.
 *
 * <p>Flink fires due timers in the order of its timer heap, which breaks ties between equal
 * timestamps by the heap's history: a processing-time window fires the windows of all its keys at
 * the same instant, in an order that differs after a restore, when the heap is rebuilt from the
 * checkpoint. Records then reach the consumers in another order than before the failure and the
 * recovered task cannot reproduce its predecessor. With a canonical order the firing order follows
 * from the set of due timers alone, which the replay reproduces.
 *
 * <p>Installed through Flink's timer service provider of the task configuration. The due timers of
 * one firing are collected and then handed to the operator: a timer that the operator deletes while
 * another due timer of the same firing runs still fires; an event-time timer that the operator
 * registers at or before the watermark fires with the same watermark, as in Flink.
 */
@Internal
public final class CanonicalTimerOrder implements InternalTimeServiceManager.Provider {

    private static final long serialVersionUID = 1L;

    @Override
    public <K> InternalTimeServiceManager<K> create(
            TaskIOMetricGroup metrics,
            CheckpointableKeyedStateBackend<K> keyedStateBackend,
            ClassLoader userClassLoader,
            KeyContext keyContext,
            ProcessingTimeService processingTimeService,
            Iterable<KeyGroupStatePartitionStreamProvider> rawKeyedStates,
            StreamTaskCancellationContext cancellationContext)
            throws Exception {
        Firing<K> firing = new Firing<>(keyContext);
        InternalTimeServiceManager<K> flink =
                InternalTimeServiceManagerImpl.create(
                        metrics,
                        keyedStateBackend,
                        userClassLoader,
                        keyContext,
                        new FiringProcessingTimeService(processingTimeService, firing),
                        rawKeyedStates,
                        cancellationContext);
        return new Manager<>(flink, firing);
    }

    /** Flink's manager, with every timer service's due timers going through one {@link Firing}. */
    private static final class Manager<K> implements InternalTimeServiceManager<K> {

        private final InternalTimeServiceManager<K> flink;
        private final Firing<K> firing;
        private int services;

        Manager(InternalTimeServiceManager<K> flink, Firing<K> firing) {
            this.flink = flink;
            this.firing = firing;
        }

        @Override
        public <N> InternalTimerService<N> getInternalTimerService(
                String name,
                TypeSerializer<K> keySerializer,
                TypeSerializer<N> namespaceSerializer,
                Triggerable<K, N> triggerable) {
            return flink.getInternalTimerService(
                    name,
                    keySerializer,
                    namespaceSerializer,
                    firing.target(services++, keySerializer, namespaceSerializer, triggerable));
        }

        /** The asynchronous state API's timers are left in Flink's order. */
        @Override
        public <N> InternalTimerService<N> getAsyncInternalTimerService(
                String name,
                TypeSerializer<K> keySerializer,
                TypeSerializer<N> namespaceSerializer,
                Triggerable<K, N> triggerable,
                AsyncExecutionController<K> controller) {
            return flink.getAsyncInternalTimerService(
                    name, keySerializer, namespaceSerializer, triggerable, controller);
        }

        @Override
        public void advanceWatermark(Watermark watermark) throws Exception {
            do {
                firing.begin();
                try {
                    flink.advanceWatermark(watermark);
                } finally {
                    firing.end();
                }
            } while (firing.fire() > 0);
        }

        @Override
        public boolean tryAdvanceWatermark(Watermark watermark, ShouldStopAdvancingFn shouldStop)
                throws Exception {
            boolean done;
            do {
                firing.begin();
                try {
                    done = flink.tryAdvanceWatermark(watermark, shouldStop);
                } finally {
                    firing.end();
                }
            } while (firing.fire() > 0 && done);
            return done;
        }

        @Override
        public void snapshotToRawKeyedState(
                KeyedStateCheckpointOutputStream stateCheckpointOutputStream, String operatorName)
                throws Exception {
            flink.snapshotToRawKeyedState(stateCheckpointOutputStream, operatorName);
        }
    }

    /** The due timers of one firing, collected while Flink pops them and then fired in order. */
    static final class Firing<K> {

        private final KeyContext keyContext;
        private final List<Due<K, ?>> due = new ArrayList<>();
        private boolean collecting;

        Firing(KeyContext keyContext) {
            this.keyContext = keyContext;
        }

        <N> Triggerable<K, N> target(
                int service,
                TypeSerializer<K> keySerializer,
                TypeSerializer<N> namespaceSerializer,
                Triggerable<K, N> operator) {
            return new Target<>(
                    this,
                    service,
                    keySerializer.duplicate(),
                    namespaceSerializer.duplicate(),
                    operator);
        }

        void begin() {
            collecting = true;
        }

        void end() {
            collecting = false;
        }

        /** Fires what was collected, in canonical order; returns how many timers fired. */
        int fire() throws Exception {
            if (due.isEmpty()) {
                return 0;
            }
            List<Due<K, ?>> now = new ArrayList<>(due);
            due.clear();
            now.sort(Due.ORDER);
            for (Due<K, ?> timer : now) {
                keyContext.setCurrentKey(timer.timer.getKey());
                timer.fire();
            }
            return now.size();
        }

        <N> void due(Target<K, N> target, InternalTimer<K, N> timer, boolean eventTime)
                throws Exception {
            if (!collecting) {
                // fired outside a firing this class knows of: Flink's order, nothing to sort
                if (eventTime) {
                    target.operator.onEventTime(timer);
                } else {
                    target.operator.onProcessingTime(timer);
                }
                return;
            }
            due.add(new Due<>(target, timer, eventTime, target.sortKey(timer)));
        }
    }

    private static final class Target<K, N> implements Triggerable<K, N> {

        private final Firing<K> firing;
        private final int service;
        private final TypeSerializer<K> keySerializer;
        private final TypeSerializer<N> namespaceSerializer;
        private final Triggerable<K, N> operator;
        private final DataOutputSerializer out = new DataOutputSerializer(32);

        Target(
                Firing<K> firing,
                int service,
                TypeSerializer<K> keySerializer,
                TypeSerializer<N> namespaceSerializer,
                Triggerable<K, N> operator) {
            this.firing = firing;
            this.service = service;
            this.keySerializer = keySerializer;
            this.namespaceSerializer = namespaceSerializer;
            this.operator = operator;
        }

        @Override
        public void onEventTime(InternalTimer<K, N> timer) throws Exception {
            firing.due(this, timer, true);
        }

        @Override
        public void onProcessingTime(InternalTimer<K, N> timer) throws Exception {
            firing.due(this, timer, false);
        }

        byte[] sortKey(InternalTimer<K, N> timer) throws IOException {
            out.clear();
            keySerializer.serialize(timer.getKey(), out);
            namespaceSerializer.serialize(timer.getNamespace(), out);
            return out.getCopyOfBuffer();
        }
    }

    private record Due<K, N>(
            Target<K, N> target, InternalTimer<K, N> timer, boolean eventTime, byte[] sortKey) {

        static final Comparator<Due<?, ?>> ORDER =
                Comparator.<Due<?, ?>>comparingInt(d -> d.target.service)
                        .thenComparingLong(d -> d.timer.getTimestamp())
                        .thenComparing(d -> d.sortKey, Arrays::compareUnsigned);

        void fire() throws Exception {
            if (eventTime) {
                target.operator.onEventTime(timer);
            } else {
                target.operator.onProcessingTime(timer);
            }
        }
    }

    /**
     * The processing-time service Flink's timer services schedule their firings with: each firing
     * collects the due timers and then fires them in order.
     */
    private static final class FiringProcessingTimeService implements ProcessingTimeService {

        private final ProcessingTimeService task;
        private final Firing<?> firing;

        FiringProcessingTimeService(ProcessingTimeService task, Firing<?> firing) {
            this.task = task;
            this.firing = firing;
        }

        @Override
        public long getCurrentProcessingTime() {
            return task.getCurrentProcessingTime();
        }

        @Override
        public Clock getClock() {
            return task.getClock();
        }

        @Override
        public ScheduledFuture<?> registerTimer(long timestamp, ProcessingTimeCallback target) {
            return task.registerTimer(
                    timestamp,
                    time -> {
                        firing.begin();
                        try {
                            target.onProcessingTime(time);
                        } finally {
                            firing.end();
                        }
                        firing.fire();
                    });
        }

        @Override
        public ScheduledFuture<?> scheduleAtFixedRate(
                ProcessingTimeCallback callback, long initialDelay, long period) {
            return task.scheduleAtFixedRate(callback, initialDelay, period);
        }

        @Override
        public ScheduledFuture<?> scheduleWithFixedDelay(
                ProcessingTimeCallback callback, long initialDelay, long period) {
            return task.scheduleWithFixedDelay(callback, initialDelay, period);
        }

        @Override
        public CompletableFuture<Void> quiesce() {
            return task.quiesce();
        }
    }
}

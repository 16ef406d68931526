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
import org.apache.flink.runtime.metrics.groups.TaskIOMetricGroup;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupStatePartitionStreamProvider;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.Keyed;
import org.apache.flink.runtime.state.PriorityComparable;
import org.apache.flink.runtime.state.PriorityQueueSetFactory;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.streaming.api.operators.ClonosTimerQueuePatch;
import org.apache.flink.streaming.api.operators.InternalTimeServiceManager;
import org.apache.flink.streaming.api.operators.KeyContext;
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeService;
import org.apache.flink.streaming.runtime.tasks.StreamTaskCancellationContext;

/**
 * Fires the keyed timers that are due at the same instant in one canonical order: by key and
 * namespace, as serialized ({@link CanonicalTimerQueue}).
 *
 * <p>Flink fires due timers in the order of its timer heap, which breaks ties between equal
 * timestamps by the heap's history: an event-time or processing-time window fires the windows of
 * all its keys at the same instant, in an order that differs after a restore, when the heap is
 * rebuilt from the checkpoint. Records then reach the consumers in another order than before the
 * failure and the recovered task cannot reproduce its predecessor. With a canonical order the
 * firing order follows from the set of due timers alone, which the replay reproduces.
 *
 * <p>Installed through Flink's timer service provider of the task configuration. The manager is
 * Flink's own ({@code InternalTimeServiceManagerImpl}, which Beam's operators require), and so is
 * everything it does but the choice among tied timers: a timer deleted before its turn does not
 * fire, and one registered at or before the current time fires in the same advance, as in Flink.
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
        return ClonosTimerQueuePatch.create(
                metrics,
                keyedStateBackend,
                userClassLoader,
                keyContext,
                processingTimeService,
                rawKeyedStates,
                cancellationContext,
                Queues::new);
    }

    /** The backend's timer queues, each with its ties broken canonically. */
    static final class Queues implements PriorityQueueSetFactory {

        private final PriorityQueueSetFactory backend;

        Queues(PriorityQueueSetFactory backend) {
            this.backend = backend;
        }

        @Override
        public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
                KeyGroupedInternalPriorityQueue<T> create(
                        String stateName, TypeSerializer<T> byteOrderedElementSerializer) {
            return new CanonicalTimerQueue<>(
                    backend.create(stateName, byteOrderedElementSerializer),
                    byteOrderedElementSerializer);
        }

        @Override
        public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
                KeyGroupedInternalPriorityQueue<T> create(
                        String stateName,
                        TypeSerializer<T> byteOrderedElementSerializer,
                        boolean allowFutureMetadataUpdates) {
            return new CanonicalTimerQueue<>(
                    backend.create(
                            stateName, byteOrderedElementSerializer, allowFutureMetadataUpdates),
                    byteOrderedElementSerializer);
        }
    }
}

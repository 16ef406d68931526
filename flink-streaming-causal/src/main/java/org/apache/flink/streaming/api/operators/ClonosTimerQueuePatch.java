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

package org.apache.flink.streaming.api.operators;

import io.clonos.runtime.reflect.ReflectedField;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.metrics.groups.TaskIOMetricGroup;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupStatePartitionStreamProvider;
import org.apache.flink.runtime.state.PriorityQueueSetFactory;
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeService;
import org.apache.flink.streaming.runtime.tasks.StreamTaskCancellationContext;

import java.util.List;
import java.util.function.UnaryOperator;

/**
 * <b>Patch of Flink's behaviour.</b> Makes Flink's own timer service manager ({@link
 * InternalTimeServiceManagerImpl}, which Beam's operators require by class) keep its timers in
 * queues of Clonos's choosing. The manager creates each timer service's queues from the keyed state
 * backend it was created with, which it keeps in a private final field without a setter; that field
 * is replaced by reflection, here only, right after the manager is created and before any timer
 * service exists. Timers kept in raw keyed state (Flink's legacy timer snapshots) are restored
 * after the replacement, as Flink restores them, so that they land in those queues too.
 */
@Internal
public final class ClonosTimerQueuePatch {

    private static final ReflectedField QUEUE_FACTORY =
            ReflectedField.of(InternalTimeServiceManagerImpl.class, "priorityQueueSetFactory");

    private ClonosTimerQueuePatch() {}

    /**
     * Flink's manager, as {@link InternalTimeServiceManagerImpl#create} makes it, whose timer
     * queues come from {@code queues} applied to the backend's own factory.
     */
    public static <K> InternalTimeServiceManagerImpl<K> create(
            TaskIOMetricGroup metrics,
            CheckpointableKeyedStateBackend<K> backend,
            ClassLoader userClassLoader,
            KeyContext keyContext,
            ProcessingTimeService processingTimeService,
            Iterable<KeyGroupStatePartitionStreamProvider> rawKeyedStates,
            StreamTaskCancellationContext cancellationContext,
            UnaryOperator<PriorityQueueSetFactory> queues)
            throws Exception {
        InternalTimeServiceManagerImpl<K> manager =
                InternalTimeServiceManagerImpl.create(
                        metrics,
                        backend,
                        userClassLoader,
                        keyContext,
                        processingTimeService,
                        List.of(),
                        cancellationContext);
        QUEUE_FACTORY.set(manager, queues.apply(backend));
        KeyGroupRange keyGroups = backend.getKeyGroupRange();
        for (KeyGroupStatePartitionStreamProvider state : rawKeyedStates) {
            int keyGroup = state.getKeyGroupId();
            if (!keyGroups.contains(keyGroup)) {
                throw new IllegalArgumentException(
                        "Key Group " + keyGroup + " does not belong to the local range.");
            }
            new InternalTimerServiceSerializationProxy<>(manager, userClassLoader, keyGroup)
                    .read(state.getStream());
        }
        return manager;
    }
}

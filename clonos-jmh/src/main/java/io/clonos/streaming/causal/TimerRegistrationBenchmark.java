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

import io.clonos.jmh.PerRecordBenchmark;

import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSetFactory;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * What a processing-time window's element costs in the timer queue, as its operator calls it: a
 * look at the head, then its window's end registered twice (trigger and cleanup), on Flink's heap
 * queue alone ({@code flink}) and with Clonos's canonical order of ties ({@code canonical}). The
 * elements' 64 keys take turns, so every window's timer is registered again and again, and the
 * windows end together, so their timers are tied. Every 64 Ki elements the due timers fire and the
 * next window begins. (In this package because the canonical queue is package-private.)
 */
public class TimerRegistrationBenchmark extends PerRecordBenchmark {

    static final int KEYS = 64;
    static final int WINDOW_ELEMENTS = 64 * 1024;
    private static final int KEY_GROUPS = 128;

    @Param({"flink", "canonical"})
    public String queue;

    KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Long, TimeWindow>> timers;
    private final Long[] keys = new Long[KEYS];
    private TimeWindow window;
    private int elements;

    @Setup
    public void setUp() {
        HeapPriorityQueueSetFactory heap =
                new HeapPriorityQueueSetFactory(
                        KeyGroupRange.of(0, KEY_GROUPS - 1), KEY_GROUPS, 128);
        TimerSerializer<Long, TimeWindow> serializer =
                new TimerSerializer<>(LongSerializer.INSTANCE, new TimeWindow.Serializer());
        timers =
                "canonical".equals(queue)
                        ? new CanonicalTimerOrder.Queues(heap).create("timers", serializer)
                        : heap.create("timers", serializer);
        for (int k = 0; k < KEYS; k++) {
            keys[k] = (long) k;
        }
        window = new TimeWindow(0, 100);
    }

    @Benchmark
    public Object element() {
        Object head = timers.peek();
        Long key = keys[elements & (KEYS - 1)];
        long end = window.maxTimestamp();
        timers.add(new TimerHeapInternalTimer<>(end, key, window));
        timers.add(new TimerHeapInternalTimer<>(end, key, window));
        if (++elements == WINDOW_ELEMENTS) {
            elements = 0;
            while (timers.poll() != null) {
                // the window's timers fire
            }
            window = new TimeWindow(window.getEnd(), window.getEnd() + 100);
        }
        return head;
    }
}

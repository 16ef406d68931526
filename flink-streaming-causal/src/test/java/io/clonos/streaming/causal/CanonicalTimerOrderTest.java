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

import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSetFactory;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Timers due together leave Flink's heap queue in an order that depends on the set of due timers
 * alone, whatever order they were added in; everything else is Flink's queue.
 */
class CanonicalTimerOrderTest {

    private static final int KEY_GROUPS = 128;

    /**
     * Flink's heap queue, with its ties broken canonically; {@code heap} false hides that it is the
     * heap's (as RocksDB's queue is not), so that the queue asks its set of ties whether a timer
     * was registered before, rather than the heap's size.
     */
    private static KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<String, Integer>> queue(
            boolean heap) {
        HeapPriorityQueueSetFactory heaps =
                new HeapPriorityQueueSetFactory(
                        KeyGroupRange.of(0, KEY_GROUPS - 1), KEY_GROUPS, 16);
        TimerSerializer<String, Integer> serializer =
                new TimerSerializer<>(StringSerializer.INSTANCE, IntSerializer.INSTANCE);
        return heap
                ? new CanonicalTimerOrder.Queues(heaps).create("timers", serializer)
                : new CanonicalTimerQueue<>(
                        notTheHeap(heaps.create("timers", serializer)), serializer);
    }

    /** The queue behind an interface of its own: not Flink's heap queue to the canonical one. */
    @SuppressWarnings("unchecked")
    private static <T> KeyGroupedInternalPriorityQueue<T> notTheHeap(
            KeyGroupedInternalPriorityQueue<T> queue) {
        return (KeyGroupedInternalPriorityQueue<T>)
                Proxy.newProxyInstance(
                        CanonicalTimerOrderTest.class.getClassLoader(),
                        new Class<?>[] {KeyGroupedInternalPriorityQueue.class},
                        (proxy, method, args) -> {
                            try {
                                return method.invoke(queue, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                        });
    }

    private static TimerHeapInternalTimer<String, Integer> timer(long time, String key, int ns) {
        return new TimerHeapInternalTimer<>(time, key, ns);
    }

    private static List<String> drain(
            KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<String, Integer>> queue) {
        List<String> order = new ArrayList<>();
        TimerHeapInternalTimer<String, Integer> next;
        while ((next = queue.poll()) != null) {
            order.add(name(next));
        }
        return order;
    }

    private static String name(TimerHeapInternalTimer<String, Integer> timer) {
        return timer.getTimestamp() + "/" + timer.getKey() + "/" + timer.getNamespace();
    }

    private static List<TimerHeapInternalTimer<String, Integer>> timers() {
        List<TimerHeapInternalTimer<String, Integer>> timers = new ArrayList<>();
        for (int key = 0; key < 40; key++) {
            timers.add(timer(key % 3 == 0 ? 100 : 200, "key-" + key, key % 2));
            timers.add(timer(300, "key-" + key, 7));
        }
        return timers;
    }

    @ParameterizedTest(name = "heap queue: {0}")
    @ValueSource(booleans = {true, false})
    void tiedTimersLeaveInTheSameOrderWhateverTheOrderTheyCameIn(boolean heap) {
        List<TimerHeapInternalTimer<String, Integer>> timers = timers();
        KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<String, Integer>> first =
                queue(heap);
        first.addAll(timers);
        List<String> expected = drain(first);

        Random random = new Random(7);
        for (int round = 0; round < 5; round++) {
            List<TimerHeapInternalTimer<String, Integer>> shuffled = new ArrayList<>(timers);
            Collections.shuffle(shuffled, random);
            KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<String, Integer>> queue =
                    queue(heap);
            shuffled.forEach(queue::add);
            assertThat(drain(queue)).containsExactlyElementsOf(expected);
        }
        assertThat(expected).hasSize(timers.size());
        // by timestamp first, ties by key and namespace as serialized: a string's length first
        List<String> byTimestamp = new ArrayList<>(expected);
        byTimestamp.sort(Comparator.comparingLong(n -> Long.parseLong(n.split("/")[0])));
        assertThat(expected).containsExactlyElementsOf(byTimestamp);
        assertThat(expected.subList(0, 5))
                .containsExactly(
                        "100/key-0/0", "100/key-3/1", "100/key-6/0", "100/key-9/1", "100/key-12/0");
    }

    @ParameterizedTest(name = "heap queue: {0}")
    @ValueSource(booleans = {true, false})
    void aTimerAddedOrRemovedAmongTheTiesTakesItsPlace(boolean heap) {
        KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<String, Integer>> queue =
                queue(heap);
        queue.add(timer(10, "b", 0));
        queue.add(timer(10, "d", 0));
        queue.add(timer(20, "a", 0));
        assertThat(name(queue.peek())).isEqualTo("10/b/0");

        // what an operator does while its timers fire: add some due at once, delete others
        queue.add(timer(10, "a", 0));
        queue.add(timer(10, "c", 0));
        queue.add(timer(5, "z", 0));
        queue.remove(timer(10, "d", 0));
        // registered again, as a window registers its timer for every element: once
        queue.add(timer(10, "c", 0));
        queue.add(timer(5, "z", 0));
        assertThat(queue.size()).isEqualTo(5);
        assertThat(drain(queue)).containsExactly("5/z/0", "10/a/0", "10/b/0", "10/c/0", "20/a/0");
        assertThat(queue.isEmpty()).isTrue();
        assertThat(queue.peek()).isNull();
    }

    /** A registration again is recognized without serializing; a timer gone is not "again". */
    @ParameterizedTest(name = "heap queue: {0}")
    @ValueSource(booleans = {true, false})
    void aTimerDeletedOrFiredAmongTheTiesCanBeRegisteredAgain(boolean heap) {
        KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<String, Integer>> queue =
                queue(heap);
        queue.add(timer(10, "b", 0));
        queue.add(timer(10, "d", 0));
        queue.add(timer(20, "a", 0));
        assertThat(name(queue.peek())).isEqualTo("10/b/0");

        queue.remove(timer(10, "d", 0));
        queue.add(timer(10, "d", 0));
        assertThat(name(queue.poll())).isEqualTo("10/b/0");
        // fired, and registered again for the same instant by the timer's own callback
        queue.add(timer(10, "b", 0));
        assertThat(queue.size()).isEqualTo(3);
        assertThat(drain(queue)).containsExactly("10/b/0", "10/d/0", "20/a/0");
    }

    @ParameterizedTest(name = "heap queue: {0}")
    @ValueSource(booleans = {true, false})
    void theBackendsQueueKeepsEveryTimerUntilItIsPolled(boolean heap) {
        KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<String, Integer>> queue =
                queue(heap);
        timers().forEach(queue::add);
        assertThat(queue.peek()).isNotNull();
        // a snapshot between two firings sees every timer not yet fired
        int inKeyGroups = 0;
        for (int keyGroup = 0; keyGroup < KEY_GROUPS; keyGroup++) {
            inKeyGroups += queue.getSubsetForKeyGroup(keyGroup).size();
        }
        assertThat(inKeyGroups).isEqualTo(timers().size());
        queue.poll();
        assertThat(queue.size()).isEqualTo(timers().size() - 1);
    }
}

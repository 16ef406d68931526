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
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.operators.InternalTimer;
import org.apache.flink.streaming.api.operators.KeyContext;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.Triggerable;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** Timers due together fire in an order that depends on the set of due timers alone. */
class CanonicalTimerOrderTest {

    /** The operator: records which timer fired under which current key. */
    private static final class Recording implements Triggerable<String, VoidNamespace>, KeyContext {
        final List<String> fired = new ArrayList<>();
        Object currentKey;

        @Override
        public void onEventTime(InternalTimer<String, VoidNamespace> timer) {
            fired.add(
                    "event "
                            + timer.getTimestamp()
                            + " "
                            + timer.getKey()
                            + " under "
                            + currentKey);
        }

        @Override
        public void onProcessingTime(InternalTimer<String, VoidNamespace> timer) {
            fired.add(
                    "processing "
                            + timer.getTimestamp()
                            + " "
                            + timer.getKey()
                            + " under "
                            + currentKey);
        }

        @Override
        public void setCurrentKey(Object key) {
            currentKey = key;
        }

        @Override
        public Object getCurrentKey() {
            return currentKey;
        }
    }

    private static List<String> fireInHeapOrder(
            List<TimerHeapInternalTimer<String, VoidNamespace>> heapOrder) throws Exception {
        Recording operator = new Recording();
        CanonicalTimerOrder.Firing<String> firing = new CanonicalTimerOrder.Firing<>(operator);
        Triggerable<String, VoidNamespace> target =
                firing.target(
                        0, StringSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE, operator);
        firing.begin();
        for (TimerHeapInternalTimer<String, VoidNamespace> timer : heapOrder) {
            // Flink sets the key and then pops the timer; the operator does not run yet
            operator.setCurrentKey(timer.getKey());
            target.onProcessingTime(timer);
        }
        firing.end();
        assertThat(operator.fired).isEmpty();
        assertThat(firing.fire()).isEqualTo(heapOrder.size());
        return operator.fired;
    }

    @Test
    void tiedTimersFireInTheSameOrderWhateverTheHeapOrder() throws Exception {
        List<TimerHeapInternalTimer<String, VoidNamespace>> timers = new ArrayList<>();
        for (int key = 0; key < 20; key++) {
            timers.add(
                    new TimerHeapInternalTimer<>(
                            key % 3 == 0 ? 100 : 200, "key-" + key, VoidNamespace.INSTANCE));
        }
        List<String> first = fireInHeapOrder(timers);
        Random random = new Random(7);
        for (int round = 0; round < 5; round++) {
            List<TimerHeapInternalTimer<String, VoidNamespace>> shuffled = new ArrayList<>(timers);
            Collections.shuffle(shuffled, random);
            assertThat(fireInHeapOrder(shuffled)).containsExactlyElementsOf(first);
        }
        // earlier timestamps first, each under its own key
        assertThat(first.get(0)).startsWith("processing 100 ");
        assertThat(first.get(first.size() - 1)).startsWith("processing 200 ");
        assertThat(first)
                .allSatisfy(line -> assertThat(line.split(" ")[2]).isEqualTo(line.split(" ")[4]));
    }

    @Test
    void timersOfOneServiceFireBeforeThoseOfTheNextOne() throws Exception {
        Recording operator = new Recording();
        CanonicalTimerOrder.Firing<String> firing = new CanonicalTimerOrder.Firing<>(operator);
        Triggerable<String, VoidNamespace> windows =
                firing.target(
                        0, StringSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE, operator);
        Recording other = new Recording();
        Triggerable<String, Integer> user =
                firing.target(
                        1,
                        StringSerializer.INSTANCE,
                        IntSerializer.INSTANCE,
                        new Triggerable<>() {
                            @Override
                            public void onEventTime(InternalTimer<String, Integer> timer) {
                                other.fired.add("user " + timer.getKey());
                                operator.fired.add("user " + timer.getKey());
                            }

                            @Override
                            public void onProcessingTime(InternalTimer<String, Integer> timer) {}
                        });
        firing.begin();
        user.onEventTime(new TimerHeapInternalTimer<>(5, "a", 1));
        windows.onEventTime(new TimerHeapInternalTimer<>(9, "b", VoidNamespace.INSTANCE));
        firing.end();
        firing.fire();
        assertThat(operator.fired).containsExactly("event 9 b under b", "user a");
    }

    @Test
    void aTimerOutsideAFiringRunsAtOnce() throws Exception {
        Recording operator = new Recording();
        CanonicalTimerOrder.Firing<String> firing = new CanonicalTimerOrder.Firing<>(operator);
        Triggerable<String, VoidNamespace> target =
                firing.target(
                        0, StringSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE, operator);
        operator.setCurrentKey("k");
        target.onEventTime(new TimerHeapInternalTimer<>(1, "k", VoidNamespace.INSTANCE));
        assertThat(operator.fired).containsExactly("event 1 k under k");
        assertThat(firing.fire()).isZero();
    }
}

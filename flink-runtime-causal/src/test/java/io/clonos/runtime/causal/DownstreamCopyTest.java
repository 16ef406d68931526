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

package io.clonos.runtime.causal;

import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a consumer connection is given of a task's own log and the logs it holds, at DSD 1, with
 * hops inside a TaskManager free and with every hop counted.
 */
class DownstreamCopyTest {

    private static final CausalLogId OWN = CausalLogId.main("b", 0);

    /** Held at distance 0: its task is upstream in this task's TaskManager. */
    private static final CausalLogId LOCAL_UPSTREAM = CausalLogId.main("a", 0);

    /** Held at distance 1: its task is upstream in another TaskManager. */
    private static final CausalLogId REMOTE_UPSTREAM = CausalLogId.main("a", 1);

    private static CausalTask task(DeterminantSharing sharing) throws Exception {
        TaskCausalLog log = new TaskCausalLog(OWN, 1);
        HeldCausalLogs held = new HeldCausalLogs();
        CausalTask task =
                new CausalTask(
                        log, held, CausalRecovery.notRecovering("b (1/2)", OWN), 2, 1, sharing);
        log.append(new Determinant.RandomSeed(1));
        hold(held, LOCAL_UPSTREAM, 0);
        hold(held, REMOTE_UPSTREAM, 1);
        return task;
    }

    private static void hold(HeldCausalLogs held, CausalLogId id, int distance) throws Exception {
        TaskCausalLog upstream = new TaskCausalLog(id, 1);
        upstream.append(new Determinant.Order(0, 7));
        for (CausalLogDelta delta : upstream.deltasSince(new TaskCausalLog.Position())) {
            held.merge(new SharedDelta(delta, distance));
        }
    }

    /** Each log the holder got, with the distance it got it at. */
    private static Map<CausalLogId, Integer> given(CausalTask task, boolean remote) {
        Map<CausalLogId, Integer> given =
                new TreeMap<>(java.util.Comparator.comparing(Object::toString));
        for (SharedDelta shared : new DownstreamCopy(remote).next(task)) {
            given.put(shared.delta().log(), shared.distance());
        }
        return given;
    }

    @Test
    void withFreeHopsInsideATaskManagerDsd1CarriesLogsToTheFirstTaskManagerBoundary()
            throws Exception {
        CausalTask task = task(new DeterminantSharing(1, false));
        // a consumer in another TaskManager: the local upstream's log leaves it with this hop
        assertThat(given(task, true)).isEqualTo(Map.of(OWN, 1, LOCAL_UPSTREAM, 1));
        // a consumer in this TaskManager: every log, none further away than before
        assertThat(given(task, false))
                .isEqualTo(Map.of(OWN, 0, LOCAL_UPSTREAM, 0, REMOTE_UPSTREAM, 1));
    }

    @Test
    void withEveryHopCountedDsd1CarriesTheOwnLogOnly() throws Exception {
        CausalTask task = task(new DeterminantSharing(1, true));
        assertThat(given(task, true)).isEqualTo(Map.of(OWN, 1));
        assertThat(given(task, false)).isEqualTo(Map.of(OWN, 1));
    }

    @Test
    void theFullDepthCarriesEveryLogOneCountedHopFurther() throws Exception {
        CausalTask free = task(DeterminantSharing.full());
        assertThat(given(free, true))
                .isEqualTo(Map.of(OWN, 1, LOCAL_UPSTREAM, 1, REMOTE_UPSTREAM, 2));
        CausalTask everyTask = task(new DeterminantSharing(-1, true));
        assertThat(given(everyTask, false))
                .isEqualTo(Map.of(OWN, 1, LOCAL_UPSTREAM, 1, REMOTE_UPSTREAM, 2));
    }

    @Test
    void aRecoveringTaskKeepsWhatItsConsumerHandsBackOfItsUpstream() {
        DeterminantSharing free = new DeterminantSharing(1, false);
        // the hop to the consumer is not known: kept at the closest distance it may have
        assertThat(free.handedBackDistance(1)).isEqualTo(0);
        assertThat(free.handedBackDistance(0)).isEqualTo(0);
        assertThat(free.handedBackDistance(3)).isEqualTo(2);
        DeterminantSharing everyTask = new DeterminantSharing(2, true);
        // at distance 1 from the consumer: another producer's log, not this task's upstream
        assertThat(everyTask.handedBackDistance(1)).isEqualTo(-1);
        assertThat(everyTask.handedBackDistance(2)).isEqualTo(1);
    }
}

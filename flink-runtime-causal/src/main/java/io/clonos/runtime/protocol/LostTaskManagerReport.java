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

package io.clonos.runtime.protocol;

import org.apache.flink.annotation.Internal;

/**
 * The sending task's data connection to another TaskManager broke. Clonos consumers outlive a
 * producer's loss (they wait for its new attempt), so unlike Flink's tasks they do not fail when a
 * connection breaks, and without this report the JobManager would learn of a dead TaskManager only
 * from missed heartbeats; it probes the TaskManager before it acts.
 *
 * <p>A consumer names its producer's TaskManager by host and data port. A producer, whose consumer
 * connected from a port of its own, knows only the consumer's host ({@link #knowsDataPort()}): then
 * every TaskManager of the job on that host is a suspect. That matters where a TaskManager runs
 * consumers only (a sink's slot): nobody reads from it, so no consumer would report it.
 *
 * @param host the host of the TaskManager whose data connection broke
 * @param dataPort its data port, or {@link #UNKNOWN_DATA_PORT}
 */
@Internal
public record LostTaskManagerReport(String host, int dataPort) implements TaskReport {

    private static final long serialVersionUID = 1L;

    /** The data port of a report whose peer was a consumer. */
    public static final int UNKNOWN_DATA_PORT = -1;

    /** A producer's connection to a consumer on {@code host} broke. */
    public static LostTaskManagerReport ofConsumerHost(String host) {
        return new LostTaskManagerReport(host, UNKNOWN_DATA_PORT);
    }

    /** Whether the report names the TaskManager's data port. */
    public boolean knowsDataPort() {
        return dataPort != UNKNOWN_DATA_PORT;
    }
}

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

package io.clonos.connector.kafka.compatibility;

import io.clonos.runtime.compatibility.PatchSet;

import org.apache.flink.annotation.Internal;
import org.apache.flink.connector.kafka.sink.ClonosKafkaSinkPatch;

import java.util.List;

/** The patches of Flink's Kafka connector that the Clonos Kafka sink needs. */
@Internal
public final class KafkaConnectorPatches implements PatchSet {

    @Override
    public List<Class<?>> patchClasses() {
        return List.of(ClonosKafkaSinkPatch.class);
    }
}

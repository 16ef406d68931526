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

package org.apache.flink.connector.kafka.sink;

import io.clonos.runtime.reflect.ReflectedField;

import org.apache.flink.annotation.Internal;
import org.apache.flink.connector.base.DeliveryGuarantee;

import java.util.Properties;

/**
 * <b>Patch of Flink's behaviour.</b> Reads what a job's {@link KafkaSink} was built with (delivery
 * guarantee, producer properties, record serializer), so that the rewriting at submission can put
 * the Clonos Kafka sink in its place. Flink's Kafka connector keeps these in private fields without
 * getters; they are read by reflection, here only.
 */
@Internal
public final class ClonosKafkaSinkPatch {

    private static final ReflectedField DELIVERY_GUARANTEE = sinkField("deliveryGuarantee");
    private static final ReflectedField PRODUCER_CONFIG = sinkField("kafkaProducerConfig");
    private static final ReflectedField RECORD_SERIALIZER = sinkField("recordSerializer");

    private ClonosKafkaSinkPatch() {}

    public static DeliveryGuarantee deliveryGuarantee(KafkaSink<?> sink) {
        return (DeliveryGuarantee) DELIVERY_GUARANTEE.get(sink);
    }

    /** A copy of the sink's producer properties. */
    public static Properties producerConfig(KafkaSink<?> sink) {
        Properties copy = new Properties();
        copy.putAll((Properties) PRODUCER_CONFIG.get(sink));
        return copy;
    }

    @SuppressWarnings("unchecked")
    public static <IN> KafkaRecordSerializationSchema<IN> recordSerializer(KafkaSink<IN> sink) {
        return (KafkaRecordSerializationSchema<IN>) RECORD_SERIALIZER.get(sink);
    }

    private static ReflectedField sinkField(String name) {
        return ReflectedField.of(KafkaSink.class, name);
    }
}

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

package io.clonos.streaming.operators;

import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class AsyncEntriesTest {

    @Test
    void orderedOutputWaitsForEarlierRecords() {
        AsyncEntries<String, String> entries = new AsyncEntries<>(true);
        AsyncEntries.Entry<String, String> a = entries.addRecord(0, new StreamRecord<>("a"));
        AsyncEntries.Entry<String, String> b = entries.addRecord(1, new StreamRecord<>("b"));
        entries.addWatermark(new Watermark(10));
        AsyncEntries.Entry<String, String> c = entries.addRecord(2, new StreamRecord<>("c"));

        entries.complete(b, List.of("B"));
        assertThat(emitted(entries)).isEmpty();
        entries.complete(c, List.of("C"));
        assertThat(emitted(entries)).isEmpty();
        entries.complete(a, List.of("A"));
        assertThat(emitted(entries)).containsExactly("A", "B", "W10", "C");
        assertThat(entries.isEmpty()).isTrue();
    }

    @Test
    void unorderedOutputFollowsCompletionsButNotAcrossWatermarks() {
        AsyncEntries<String, String> entries = new AsyncEntries<>(false);
        AsyncEntries.Entry<String, String> a = entries.addRecord(0, new StreamRecord<>("a"));
        AsyncEntries.Entry<String, String> b = entries.addRecord(1, new StreamRecord<>("b"));
        entries.addWatermark(new Watermark(10));
        AsyncEntries.Entry<String, String> c = entries.addRecord(2, new StreamRecord<>("c"));
        AsyncEntries.Entry<String, String> d = entries.addRecord(3, new StreamRecord<>("d"));

        entries.complete(b, List.of("B"));
        assertThat(emitted(entries)).containsExactly("B");
        entries.complete(d, List.of("D"));
        entries.complete(c, List.of("C"));
        assertThat(emitted(entries)).as("behind the watermark").isEmpty();
        entries.complete(a, List.of("A"));
        assertThat(emitted(entries))
                .as("then in the order they completed")
                .containsExactly("A", "W10", "D", "C");
        assertThat(entries.isEmpty()).isTrue();
    }

    @Test
    void onlyWaitingRecordsCanBeCompletedByNumber() {
        AsyncEntries<String, String> entries = new AsyncEntries<>(true);
        AsyncEntries.Entry<String, String> a = entries.addRecord(7, new StreamRecord<>("a"));
        entries.addRecord(8, new StreamRecord<>("b"));

        assertThat(entries.waiting(7)).isSameAs(a);
        entries.complete(a, List.of("A"));
        assertThat(entries.waiting(7)).as("completed already").isNull();
        assertThat(entries.waiting(9)).as("no such record").isNull();
    }

    @Test
    void restoredCompletionsKeepTheirOrder() {
        AsyncEntries<String, String> entries = new AsyncEntries<>(false);
        AsyncEntries.Entry<String, String> restored =
                new AsyncEntries.Entry<>(4, new StreamRecord<>("a"), null);
        restored.results = List.of("A");
        restored.completedAs = 41;
        entries.restore(restored);
        AsyncEntries.Entry<String, String> b = entries.addRecord(5, new StreamRecord<>("b"));

        entries.complete(b, List.of("B"));

        assertThat(b.completedAs).as("numbered after the restored completion").isGreaterThan(41);
        assertThat(emitted(entries)).containsExactly("A", "B");
    }

    private static List<String> emitted(AsyncEntries<String, String> entries) {
        List<String> out = new ArrayList<>();
        entries.emitReady(
                entry -> {
                    if (entry.isRecord()) {
                        out.addAll(entry.results);
                    } else {
                        out.add("W" + entry.watermark.getTimestamp());
                    }
                });
        return out;
    }
}

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

package io.clonos.nexmark;

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.nexmark.NexmarkConfiguration;
import org.apache.beam.sdk.nexmark.NexmarkLauncher;
import org.apache.beam.sdk.nexmark.NexmarkUtils;
import org.apache.beam.sdk.nexmark.model.Event;
import org.apache.beam.sdk.nexmark.queries.BoundedSideInputJoin;
import org.apache.beam.sdk.nexmark.queries.NexmarkQuery;
import org.apache.beam.sdk.nexmark.queries.NexmarkQueryTransform;
import org.apache.beam.sdk.nexmark.queries.Query0;
import org.apache.beam.sdk.nexmark.queries.Query1;
import org.apache.beam.sdk.nexmark.queries.Query11;
import org.apache.beam.sdk.nexmark.queries.Query12;
import org.apache.beam.sdk.nexmark.queries.Query13;
import org.apache.beam.sdk.nexmark.queries.Query14;
import org.apache.beam.sdk.nexmark.queries.Query2;
import org.apache.beam.sdk.nexmark.queries.Query3;
import org.apache.beam.sdk.nexmark.queries.Query4;
import org.apache.beam.sdk.nexmark.queries.Query5;
import org.apache.beam.sdk.nexmark.queries.Query6;
import org.apache.beam.sdk.nexmark.queries.Query7;
import org.apache.beam.sdk.nexmark.queries.Query8;
import org.apache.beam.sdk.nexmark.queries.Query9;
import org.apache.beam.sdk.nexmark.queries.SessionSideInputJoin;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;

import javax.annotation.Nullable;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Beam's Nexmark queries as the harness runs them: a bounded, deterministic event generator, one
 * query, and its results as text lines. The queries are Beam's own ({@link NexmarkLauncher} builds
 * the same ones); the harness only picks and wires them.
 */
public final class NexmarkQueries {

    /**
     * The queries the harness runs, by number: all but 10, which writes sharded files to cloud
     * storage. 13 and 14 are the side-input joins, 15 and 16 Beam's portability-batch and reshuffle
     * queries.
     */
    public static final List<Integer> QUERIES =
            List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16);

    /**
     * The queries that need a bounded input: 15 (Beam's Query13) groups in the global window
     * without a trigger, which Beam rejects for an unbounded input.
     */
    public static final Set<Integer> BOUNDED_INPUT = Set.of(15);

    private NexmarkQueries() {}

    /** A configuration for a bounded run of {@code events} events. */
    public static NexmarkConfiguration configuration(long events) {
        NexmarkConfiguration config = NexmarkConfiguration.DEFAULT.copy();
        config.numEvents = events;
        config.numEventGenerators = 2;
        // the side-input joins read their side input from the generator, not from files
        config.sideInputType = NexmarkUtils.SideInputType.DIRECT;
        config.sideInputRowCount = 50;
        return config;
    }

    /**
     * Adds the events of Beam's bounded generator and query {@code query} to {@code pipeline};
     * returns its results as lines.
     */
    public static PCollection<String> apply(
            Pipeline pipeline, NexmarkConfiguration config, int query) {
        return apply(pipeline, config, query, NexmarkUtils.batchEventsSource(config), null);
    }

    /**
     * As {@link #apply(Pipeline, NexmarkConfiguration, int)}, with the events of {@code source},
     * and {@code tap} (if not null) between the events and the query: a pass-through step that
     * observes the events.
     */
    public static PCollection<String> apply(
            Pipeline pipeline,
            NexmarkConfiguration config,
            int query,
            PTransform<PBegin, PCollection<Event>> source,
            @Nullable PTransform<? super PCollection<Event>, PCollection<Event>> tap) {
        NexmarkUtils.setupPipeline(config.coderStrategy, pipeline);
        NexmarkQueryTransform<?> transform = transform(config, query);
        if (transform.needsSideInput()) {
            transform.setSideInput(NexmarkUtils.prepareSideInput(pipeline, config));
        }
        @SuppressWarnings({"rawtypes", "unchecked"})
        NexmarkQuery<?> nexmark = new NexmarkQuery(config, transform);
        PCollection<Event> events = pipeline.apply("Events", source);
        if (tap != null) {
            events = events.apply("Tap", tap);
        }
        return events.apply(nexmark)
                .apply(
                        "Lines",
                        MapElements.into(TypeDescriptors.strings())
                                .via(result -> String.valueOf(result.getValue())));
    }

    /**
     * The results of query {@code query} in the form two runs are compared in: sorted, except for
     * two queries whose results depend on when, not only on what, records arrive (on Flink as much
     * as on Clonos). Query 12 counts bids in processing-time panes, whose boundaries no two runs
     * share: it compares as each bidder's total. Query 6 emits, on every auction a seller closes,
     * the average of the seller's last ten prices in the order the closings arrive from parallel
     * upstream tasks: it compares as the number of results per seller.
     */
    public static List<String> canonical(int query, List<String> lines) {
        switch (query) {
            case 12:
                return totals(
                        lines,
                        Pattern.compile("\"personId\":(\\d+),\"bidsPerSession\":(\\d+)"),
                        true);
            case 6:
                return totals(lines, Pattern.compile("\"seller\":(\\d+)"), false);
            default:
                return lines.stream().sorted().toList();
        }
    }

    /** Per key (the pattern's first group): the sum of its second group, or the number of lines. */
    private static List<String> totals(List<String> lines, Pattern fields, boolean sum) {
        Map<Long, Long> totals = new TreeMap<>();
        for (String line : lines) {
            Matcher matcher = fields.matcher(line);
            if (!matcher.find()) {
                throw new IllegalArgumentException("Not a result of this query: " + line);
            }
            totals.merge(
                    Long.parseLong(matcher.group(1)),
                    sum ? Long.parseLong(matcher.group(2)) : 1L,
                    Long::sum);
        }
        return totals.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList();
    }

    private static NexmarkQueryTransform<?> transform(NexmarkConfiguration config, int query) {
        switch (query) {
            case 0:
                return new Query0();
            case 1:
                return new Query1(config);
            case 2:
                return new Query2(config);
            case 3:
                return new Query3(config);
            case 4:
                return new Query4(config);
            case 5:
                return new Query5(config);
            case 6:
                return new Query6(config);
            case 7:
                return new Query7(config);
            case 8:
                return new Query8(config);
            case 9:
                return new Query9(config);
            case 11:
                return new Query11(config);
            case 12:
                return new Query12(config);
            case 13:
                return new BoundedSideInputJoin(config);
            case 14:
                return new SessionSideInputJoin(config);
            case 15:
                return new Query13(config);
            case 16:
                return new Query14(config);
            default:
                throw new IllegalArgumentException(
                        "No Nexmark query " + query + " in the harness; it runs " + QUERIES);
        }
    }
}

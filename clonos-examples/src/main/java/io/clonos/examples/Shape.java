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

package io.clonos.examples;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Collectors;

/** A generated job's shape: the source's parallelism, the stages, the hash chain's parallelism. */
public final class Shape implements Serializable {
    private static final long serialVersionUID = 1L;
    public final int sourceParallelism;
    public final List<Stage> stages;
    public final int chainParallelism;

    /**
     * Whether the source is two sources chained to an operator that merges them (Flink's {@code
     * MultipleInputStreamTask} with chained sources), rather than one source.
     */
    public final boolean chainedSources;

    public Shape(int sourceParallelism, List<Stage> stages, int chainParallelism) {
        this(sourceParallelism, stages, chainParallelism, false);
    }

    public Shape(
            int sourceParallelism,
            List<Stage> stages,
            int chainParallelism,
            boolean chainedSources) {
        this.sourceParallelism = sourceParallelism;
        this.stages = List.copyOf(stages);
        this.chainParallelism = chainParallelism;
        this.chainedSources = chainedSources;
        int upstream = sourceParallelism;
        boolean processingTimeRecords = false;
        for (Stage stage : stages) {
            if (stage.kind == Kind.WINDOW && processingTimeRecords) {
                throw new IllegalArgumentException(
                        "a window stage cannot follow a stage with processing-time timers, whose"
                                + " records carry no event time");
            }
            processingTimeRecords |= stage.kind.dropsEventTime();
            if ((stage.edge == Edge.FORWARD || stage.edge == Edge.MERGE)
                    && stage.parallelism != upstream) {
                throw new IllegalArgumentException(
                        "a forward edge joins stages of one parallelism, not "
                                + upstream
                                + " and "
                                + stage.parallelism);
            }
            upstream = stage.parallelism;
        }
    }

    /**
     * {@code edge:kind:parallelism} stages separated by {@code /}; the chain takes the last stage's
     * parallelism.
     */
    public static Shape parse(int sourceParallelism, String stages) {
        List<Stage> parsed = new ArrayList<>();
        for (String stage : stages.isBlank() ? new String[0] : stages.split("/")) {
            String[] parts = stage.trim().split(":");
            if (parts.length != 3) {
                throw new IllegalArgumentException(
                        "a stage is edge:kind:parallelism, not '" + stage + "'");
            }
            parsed.add(
                    new Stage(
                            Edge.valueOf(parts[0].toUpperCase()),
                            Kind.valueOf(parts[1].toUpperCase()),
                            Integer.parseInt(parts[2])));
        }
        return new Shape(
                sourceParallelism,
                parsed,
                parsed.isEmpty() ? sourceParallelism : parsed.get(parsed.size() - 1).parallelism);
    }

    /**
     * A random shape of depth 2 to {@code maxDepth} (source and chain included), parallelism 1 to
     * {@code maxParallelism}; the same seed gives the same shape.
     */
    public static Shape random(long seed, int maxDepth, int maxParallelism) {
        Random random = new Random(seed);
        int sourceParallelism = 1 + random.nextInt(maxParallelism);
        int stages = random.nextInt(Math.max(1, maxDepth - 1));
        List<Stage> list = new ArrayList<>();
        int upstream = sourceParallelism;
        boolean processingTimeRecords = false;
        for (int i = 0; i < stages; i++) {
            Kind kind = Kind.values()[random.nextInt(Kind.values().length)];
            if (kind == Kind.WINDOW && processingTimeRecords) {
                // records a processing-time timer emitted carry no event time to window by
                kind = Kind.EVENT_TIMERS;
            }
            processingTimeRecords |= kind.dropsEventTime();
            Edge edge;
            int parallelism = 1 + random.nextInt(maxParallelism);
            if (kind == Kind.WINDOW) {
                edge = Edge.KEYBY;
            } else if (kind.keyed()) {
                edge =
                        new Edge[] {Edge.KEYBY, Edge.KEYBY, Edge.UNION, Edge.CONNECT}
                                [random.nextInt(4)];
            } else {
                edge =
                        new Edge[] {Edge.FORWARD, Edge.REBALANCE, Edge.RESCALE, Edge.BROADCAST}
                                [random.nextInt(4)];
                if (edge == Edge.FORWARD) {
                    parallelism = upstream;
                }
            }
            list.add(new Stage(edge, kind, parallelism));
            upstream = parallelism;
        }
        return new Shape(sourceParallelism, list, 1 + random.nextInt(maxParallelism));
    }

    /** This shape with its source made of two sources chained to a merging operator. */
    public Shape withChainedSources() {
        return new Shape(sourceParallelism, stages, chainParallelism, true);
    }

    /** How many operators deep the job is: the source, the stages and the chain. */
    public int depth() {
        return stages.size() + 2;
    }

    /**
     * The job's tasks as Flink chains them: per vertex, its first and last stage (0 is the source,
     * {@code stages.size() + 1} the chain with its sink). A stage behind a forward edge runs in its
     * predecessor's task, but behind a window stage, whose output is a union (its windows' and its
     * late records'), which Flink does not chain.
     */
    public List<int[]> vertices() {
        List<int[]> vertices = new ArrayList<>();
        int first = 0;
        for (int stage = 1; stage <= stages.size() + 1; stage++) {
            if (stage > stages.size()
                    || stages.get(stage - 1).edge != Edge.FORWARD
                    || (stage > 1 && stages.get(stage - 2).kind == Kind.WINDOW)) {
                vertices.add(new int[] {first, stage - 1});
                first = stage;
            }
        }
        vertices.add(new int[] {first, stages.size() + 1});
        return vertices;
    }

    /** The parallelism of stage {@code stage} (0 the source, the last the chain). */
    public int parallelism(int stage) {
        return stage == 0
                ? sourceParallelism
                : stage > stages.size() ? chainParallelism : stages.get(stage - 1).parallelism;
    }

    /** The index in {@link #vertices()} of the Flink vertex named {@code name}. */
    public int vertexOf(String name) {
        String first = name.split(" -> ")[0];
        int stage;
        if (first.startsWith("Source: ") || first.startsWith(MERGED_SOURCES + " [")) {
            stage = 0;
        } else if (first.equals("chain")) {
            stage = stages.size() + 1;
        } else if (first.startsWith("stage")) {
            stage = Integer.parseInt(first.substring("stage".length(), first.indexOf('-')));
        } else {
            throw new IllegalArgumentException(
                    "No stage of " + this + " starts vertex '" + name + "'");
        }
        List<int[]> vertices = vertices();
        for (int v = 0; v < vertices.size(); v++) {
            if (vertices.get(v)[0] == stage) {
                return v;
            }
        }
        throw new IllegalArgumentException(
                "No vertex of " + this + " starts with stage " + stage + " ('" + name + "')");
    }

    /**
     * The subtasks of vertex {@code vertex + 1} that read subtask {@code subtask} of vertex {@code
     * vertex}, as Flink connects them: all of them behind a keyBy or rebalance; behind rescale, a
     * contiguous range (Flink's pointwise distribution).
     */
    public List<Integer> consumers(int vertex, int subtask) {
        List<int[]> vertices = vertices();
        if (vertex + 1 >= vertices.size()) {
            return List.of();
        }
        int next = vertices.get(vertex + 1)[0];
        int sources = parallelism(vertices.get(vertex)[1]);
        int targets = parallelism(next);
        Edge edge = next > stages.size() ? Edge.KEYBY : stages.get(next - 1).edge;
        List<Integer> consumers = new ArrayList<>();
        if (edge != Edge.RESCALE) {
            for (int t = 0; t < targets; t++) {
                consumers.add(t);
            }
        } else if (sources >= targets) {
            for (int t = 0; t < targets; t++) {
                if (subtask >= t * sources / targets && subtask < (t + 1) * sources / targets) {
                    consumers.add(t);
                }
            }
        } else {
            for (int t = (subtask * targets + sources - 1) / sources;
                    t < ((subtask + 1) * targets + sources - 1) / sources;
                    t++) {
                consumers.add(t);
            }
        }
        return consumers;
    }

    /** The name of the operator the chained sources are merged by. */
    public static final String MERGED_SOURCES = "sources";

    @Override
    public String toString() {
        return (chainedSources ? "chained-sources:" : "source:")
                + sourceParallelism
                + "/"
                + stages.stream().map(Stage::toString).collect(Collectors.joining("/"))
                + (stages.isEmpty() ? "" : "/")
                + "chain:"
                + chainParallelism;
    }

    /** How a stage reads its predecessor's output. */
    public enum Edge {
        FORWARD,
        KEYBY,
        REBALANCE,
        RESCALE,
        /** Every record to every subtask, each keeping its share. */
        BROADCAST,
        /** The predecessor's output split in two and unioned again, keyed: two input gates. */
        UNION,
        /** The predecessor's output split in two and connected to a two-input keyed operator. */
        CONNECT,
        /**
         * The predecessor's output split in two and unioned again through forward edges: a task of
         * its own whose two input gates read one producer (Beam's {@code Flatten} of two outputs of
         * one step). Spelled out in a shape only; random shapes do not draw it.
         */
        MERGE;

        boolean keyed() {
            return this == KEYBY || this == UNION || this == CONNECT;
        }
    }

    /** What a stage does with a record. */
    public enum Kind {
        /** Stateless: mixes a constant into the record's value. */
        MAP,
        /**
         * Stateless: a timestamp assigner with a bounded-out-of-orderness watermark generator
         * ({@code assignTimestampsAndWatermarks}) that keeps each record's event time and makes
         * watermarks of its own, then as {@link #MAP}.
         */
        ASSIGN,
        /**
         * Event-time tumbling windows of 100 of event time per key (keyBy only), which emit each of
         * their records with the window mixed in when they fire; late records go to a side output
         * that joins the window's output.
         */
        WINDOW,
        /** Keyed state: a digest per key over the records and the processing time. */
        STATE,
        /**
         * As {@link #STATE}, and a processing-time timer per key every 50 ms that emits a record.
         */
        TIMERS,
        /**
         * As {@link #STATE}, and an event-time timer per key every 100 of event time that emits a
         * record.
         */
        EVENT_TIMERS,
        /**
         * Stateless, as {@link #MAP}, in Flink SQL: the records as a table, a projection that mixes
         * the constant in with a scalar function, and back to a stream ({@link SqlStage}).
         */
        SQL;

        /** Whether the stage reads a keyed stream. */
        public boolean keyed() {
            return this != MAP && this != ASSIGN && this != SQL;
        }

        /** Whether records the stage emits may carry no event time (processing-time timers'). */
        public boolean dropsEventTime() {
            return this == TIMERS;
        }
    }

    /** One stage of a {@link Shape}. */
    public static final class Stage implements Serializable {
        private static final long serialVersionUID = 1L;
        public final Edge edge;
        public final Kind kind;
        public final int parallelism;

        public Stage(Edge edge, Kind kind, int parallelism) {
            if (edge.keyed() != kind.keyed()) {
                throw new IllegalArgumentException(
                        "stateful stages are keyed, stateless ones are not: " + edge + ":" + kind);
            }
            if (kind == Kind.WINDOW && edge != Edge.KEYBY) {
                throw new IllegalArgumentException(
                        "a window stage reads a keyBy edge, not " + edge);
            }
            if (parallelism < 1) {
                throw new IllegalArgumentException(
                        "parallelism must be at least 1, not " + parallelism);
            }
            this.edge = edge;
            this.kind = kind;
            this.parallelism = parallelism;
        }

        @Override
        public String toString() {
            return edge.name().toLowerCase() + ":" + kind.name().toLowerCase() + ":" + parallelism;
        }
    }
}

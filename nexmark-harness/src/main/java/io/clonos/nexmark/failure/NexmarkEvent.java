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

package io.clonos.nexmark.failure;

import org.apache.flink.annotation.Internal;

import javax.annotation.Nullable;

/**
 * A Nexmark event as the failure experiment's input topic carries it and its Flink jobs see it: one
 * line of text, {@code |}-separated, with the fields Q3 and Q8 read (a Flink POJO, so that the jobs
 * need no Beam classes) and the generator's padding, {@code extra}, which Nexmark sizes so that
 * persons and auctions have their configured average sizes: the queries keep the events in state,
 * so the padding sizes their state as it sizes Nexmark's. The line is the topic's record value; the
 * record's timestamp is the event's time.
 *
 * <pre>
 * P|id|name|city|state|dateTime|extra
 * A|id|seller|category|reserve|dateTime|extra
 * B|auction|bidder|price|dateTime
 * </pre>
 */
@Internal
public class NexmarkEvent {
    public static final char PERSON = 'P';
    public static final char AUCTION = 'A';

    /** {@link #PERSON} or {@link #AUCTION}; bids are dropped when read. */
    public char kind;

    /** The person's or the auction's id. */
    public long id;

    public String name;
    public String city;
    public String state;
    public long seller;
    public long category;
    public long reserve;
    public long dateTime;

    /** The generator's padding: no query reads it, but it is kept with the event. */
    public String extra;

    public NexmarkEvent() {}

    /**
     * The person or auction of a line, null for a bid (neither query reads bids).
     *
     * @throws IllegalArgumentException for a line that is no event: the input topic holds something
     *     else, and a query over it would give a silently wrong answer
     */
    @Nullable
    public static NexmarkEvent parse(String line) {
        String[] f = line.split("\\|", -1);
        try {
            NexmarkEvent event = new NexmarkEvent();
            switch (f.length > 0 ? f[0] : "") {
                case "P" -> {
                    check(f, 7, line);
                    event.kind = PERSON;
                    event.id = Long.parseLong(f[1]);
                    event.name = f[2];
                    event.city = f[3];
                    event.state = f[4];
                    event.dateTime = Long.parseLong(f[5]);
                    event.extra = f[6];
                    return event;
                }
                case "A" -> {
                    check(f, 7, line);
                    event.kind = AUCTION;
                    event.id = Long.parseLong(f[1]);
                    event.seller = Long.parseLong(f[2]);
                    event.category = Long.parseLong(f[3]);
                    event.reserve = Long.parseLong(f[4]);
                    event.dateTime = Long.parseLong(f[5]);
                    event.extra = f[6];
                    return event;
                }
                case "B" -> {
                    check(f, 5, line);
                    return null;
                }
                default ->
                        throw new IllegalArgumentException(
                                "Not a Nexmark event line: '" + line + "'");
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Not a Nexmark event line: '" + line + "'", e);
        }
    }

    private static void check(String[] fields, int expected, String line) {
        if (fields.length != expected) {
            throw new IllegalArgumentException(
                    "Not a Nexmark event line (" + expected + " fields expected): '" + line + "'");
        }
    }
}

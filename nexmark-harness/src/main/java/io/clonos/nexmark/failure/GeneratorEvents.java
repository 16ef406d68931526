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

import org.apache.beam.sdk.nexmark.model.Auction;
import org.apache.beam.sdk.nexmark.model.Bid;
import org.apache.beam.sdk.nexmark.model.Event;
import org.apache.beam.sdk.nexmark.model.Person;

/**
 * Beam's generated Nexmark events as the lines the failure experiment's input topic holds. Apart
 * from {@link NexmarkEvent}, so that the job's own types never refer to Beam: a cluster that runs
 * the job (Flink inspects its types by reflection) need not have Beam's jars.
 */
@Internal
final class GeneratorEvents {

    private GeneratorEvents() {}

    /** The line of a generator's event, as {@link NexmarkEvent#parse} reads it. */
    public static String line(Event event) {
        if (event.newPerson != null) {
            Person p = event.newPerson;
            return "P|"
                    + p.id
                    + "|"
                    + clean(p.name)
                    + "|"
                    + clean(p.city)
                    + "|"
                    + clean(p.state)
                    + "|"
                    + p.dateTime.getMillis()
                    + "|"
                    + clean(p.extra);
        }
        if (event.newAuction != null) {
            Auction a = event.newAuction;
            return "A|"
                    + a.id
                    + "|"
                    + a.seller
                    + "|"
                    + a.category
                    + "|"
                    + a.reserve
                    + "|"
                    + a.dateTime.getMillis()
                    + "|"
                    + clean(a.extra);
        }
        Bid b = event.bid;
        return "B|" + b.auction + "|" + b.bidder + "|" + b.price + "|" + b.dateTime.getMillis();
    }

    private static String clean(String text) {
        return text.replace('|', '/');
    }
}

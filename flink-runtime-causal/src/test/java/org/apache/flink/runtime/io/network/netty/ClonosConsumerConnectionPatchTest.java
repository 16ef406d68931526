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

package org.apache.flink.runtime.io.network.netty;

import org.apache.flink.runtime.io.network.partition.consumer.InputChannelID;
import org.apache.flink.shaded.netty4.io.netty.channel.embedded.EmbeddedChannel;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The patch finds a remote consumer's connection in Flink's reader of this Flink version. */
class ClonosConsumerConnectionPatchTest {

    @Test
    void aRemoteReaderLeadsToItsConnectionALocalOneToNone() {
        PartitionRequestQueue queue = new PartitionRequestQueue();
        EmbeddedChannel connection = new EmbeddedChannel(queue);
        CreditBasedSequenceNumberingViewReader reader =
                new CreditBasedSequenceNumberingViewReader(new InputChannelID(), 2, queue);

        assertThat(ClonosConsumerConnectionPatch.connectionOf(reader)).isSameAs(connection);
        assertThat(ClonosConsumerConnectionPatch.connectionOf(view -> {})).isNull();
    }
}

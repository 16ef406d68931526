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

package org.apache.flink.streaming.api.operators;

import io.clonos.runtime.reflect.ReflectedField;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceSplit;

/**
 * <b>Patch of Flink's behaviour.</b> Puts a wrapper around the reader of a {@link SourceOperator},
 * so that Clonos logs (and a recovered task replays) the order in which a reader with several
 * splits emits them. The operator creates its reader from the source and keeps it in a private
 * field without a setter; it is replaced by reflection, here only, after the task created the
 * reader and before the operator opens.
 */
@Internal
public final class ClonosSourceReaderPatch {

    private static final ReflectedField SOURCE_READER =
            ReflectedField.of(SourceOperator.class, "sourceReader");

    private ClonosSourceReaderPatch() {}

    /** Replaces the operator's reader, which must exist, by {@code wrapper}, which wraps it. */
    public static <T, SplitT extends SourceSplit> void replaceReader(
            SourceOperator<T, SplitT> operator, SourceReader<T, SplitT> wrapper) {
        if (operator.getSourceReader() == null) {
            throw new IllegalStateException("The source operator has no reader yet");
        }
        SOURCE_READER.set(operator, wrapper);
    }
}

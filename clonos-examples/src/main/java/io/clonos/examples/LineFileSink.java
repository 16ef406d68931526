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

import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;

/**
 * Writes each record as a line to {@code <directory>/part-<subtask>-<attempt>}, flushed at every
 * checkpoint. Appends only, with no transactions: enough for examples whose directory is read after
 * the job, not an exactly-once sink.
 */
final class LineFileSink implements Sink<String> {

    private static final long serialVersionUID = 1L;

    private final String directory;

    LineFileSink(String directory) {
        this.directory = directory;
    }

    @Override
    @SuppressWarnings("deprecation")
    public SinkWriter<String> createWriter(InitContext context) throws IOException {
        Path dir = Paths.get(directory);
        Files.createDirectories(dir);
        Path file =
                dir.resolve("part-" + context.getSubtaskId() + "-" + context.getAttemptNumber());
        return new LineWriter(
                Files.newBufferedWriter(
                        file,
                        StandardCharsets.UTF_8,
                        StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND));
    }

    private static final class LineWriter implements SinkWriter<String> {

        private final BufferedWriter writer;

        LineWriter(BufferedWriter writer) {
            this.writer = writer;
        }

        @Override
        public void write(String line, Context context) throws IOException {
            writer.write(line);
            writer.newLine();
        }

        @Override
        public void flush(boolean endOfInput) throws IOException {
            writer.flush();
        }

        @Override
        public void close() throws IOException {
            writer.close();
        }
    }
}

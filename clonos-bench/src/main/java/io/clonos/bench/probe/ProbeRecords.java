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

package io.clonos.bench.probe;

import org.apache.flink.annotation.Internal;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * What a benchmark's probes observed: rows of {@code width} longs that the functions of a job on an
 * embedded cluster write, each instance to a file of its own, in a directory the benchmark names;
 * the benchmark reads them once the job ended. Files rather than a collection in the JVM: Flink
 * runs deserialized copies of the functions, and a collection they could all reach would be mutable
 * static state, shared by every cluster and every run in the JVM.
 *
 * <p>A task that is cancelled without closing its writer may lose its last rows; a partial row at
 * the end of a file is ignored.
 */
@Internal
public final class ProbeRecords {

    private ProbeRecords() {}

    /** One function instance's rows. */
    public static final class Writer implements Closeable {
        private final int width;
        private final DataOutputStream out;

        private Writer(Path file, int width) throws IOException {
            this.width = width;
            this.out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(file)));
        }

        /** Writes one row; the values must be {@code width}. */
        public void write(long... values) throws IOException {
            if (values.length != width) {
                throw new IllegalArgumentException(
                        "A row of " + values.length + " values where " + width + " are expected");
            }
            for (long value : values) {
                out.writeLong(value);
            }
        }

        public void flush() throws IOException {
            out.flush();
        }

        @Override
        public void close() throws IOException {
            out.close();
        }
    }

    /** A writer of rows named {@code kind} in {@code directory}. */
    public static Writer create(String directory, String kind, int width) throws IOException {
        return open(file(directory, kind), width);
    }

    /**
     * A fresh file for rows named {@code kind} in {@code directory}, for a writer that writes
     * elsewhere first and moves its file there once its rows count (a transactional probe).
     */
    public static Path file(String directory, String kind) throws IOException {
        Path dir = Files.createDirectories(Path.of(directory));
        return dir.resolve(kind + "-" + UUID.randomUUID() + ".bin");
    }

    /** A writer of rows to {@code file}, which it creates. */
    public static Writer open(Path file, int width) throws IOException {
        return new Writer(file, width);
    }

    /** Every row named {@code kind} in {@code directory}, none if it does not exist. */
    public static List<long[]> read(Path directory, String kind, int width) throws IOException {
        List<long[]> rows = new ArrayList<>();
        if (!Files.isDirectory(directory)) {
            return rows;
        }
        // the file's UUID, exactly: a kind whose name starts with this one's is another kind
        String uuid = "????????-????-????-????-????????????";
        try (DirectoryStream<Path> files =
                Files.newDirectoryStream(directory, kind + "-" + uuid + ".bin")) {
            for (Path file : files) {
                try (InputStream stream = Files.newInputStream(file);
                        DataInputStream in = new DataInputStream(new BufferedInputStream(stream))) {
                    readRows(in, width, rows);
                }
            }
        }
        return rows;
    }

    private static void readRows(DataInputStream in, int width, List<long[]> rows)
            throws IOException {
        while (true) {
            long[] row = new long[width];
            try {
                for (int i = 0; i < width; i++) {
                    row[i] = in.readLong();
                }
            } catch (EOFException e) {
                return;
            }
            rows.add(row);
        }
    }
}

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

package io.clonos.runtime.inflightlog;

import org.apache.flink.annotation.Internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The file that holds one epoch's spilled buffers, appended to and read back by position. It is
 * created on the first append, so an epoch that never spills leaves no file.
 *
 * <p>Flink cancels a task by interrupting its thread, and an interrupt closes a {@link FileChannel}
 * in the middle of a transfer. The file itself is intact, so the transfer is done again on a fresh
 * channel and the interrupt is handed back to the thread for its cancellation: cancelling a task
 * while it spills or replays must not cost its log, which would turn the next local recovery into a
 * global rollback. Not thread-safe; the log's lock guards it.
 */
@Internal
final class EpochFile {

    private static final Logger LOG = LoggerFactory.getLogger(EpochFile.class);

    private final Path path;

    @Nullable private FileChannel channel;

    private boolean created;

    private long size;

    EpochFile(Path path) {
        this.path = path;
    }

    Path path() {
        return path;
    }

    /** Writes all of {@code data} at the end of the file and returns the offset it starts at. */
    long append(ByteBuffer data) throws IOException {
        long offset = size;
        int length = data.remaining();
        int start = data.position();
        while (data.hasRemaining()) {
            // the buffer's position says what was written, even when an interrupt ended the
            // write after it wrote
            transfer(channel -> channel.write(data, offset + data.position() - start));
        }
        size = offset + length;
        return offset;
    }

    /** Reads {@code length} bytes from {@code offset}. */
    ByteBuffer read(long offset, int length) throws IOException {
        if (!created) {
            throw new IOException("the epoch has no file");
        }
        ByteBuffer region = ByteBuffer.allocate(length);
        while (region.hasRemaining()) {
            int read = transfer(channel -> channel.read(region, offset + region.position()));
            if (read < 0) {
                throw new EOFException(
                        "the file ends before byte " + (offset + length) + " of the epoch");
            }
        }
        region.flip();
        return region;
    }

    /** Closes and deletes the file; a file that cannot be deleted is logged, not thrown. */
    void delete(String logName) {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException e) {
                LOG.debug("{}: closing {} failed.", logName, path, e);
            }
            channel = null;
        }
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            LOG.warn("{}: could not delete {}.", logName, path, e);
        }
    }

    private int transfer(Transfer transfer) throws IOException {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return transfer.on(channel());
                } catch (ClosedByInterruptException e) {
                    interrupted = true;
                    Thread.interrupted();
                    channel = null;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private FileChannel channel() throws IOException {
        if (channel == null) {
            if (created) {
                channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
            } else {
                Files.createDirectories(path.getParent());
                channel =
                        FileChannel.open(
                                path,
                                StandardOpenOption.CREATE_NEW,
                                StandardOpenOption.READ,
                                StandardOpenOption.WRITE);
                created = true;
            }
        }
        return channel;
    }

    /** A read or a write on the file. */
    @FunctionalInterface
    private interface Transfer {
        int on(FileChannel channel) throws IOException;
    }
}

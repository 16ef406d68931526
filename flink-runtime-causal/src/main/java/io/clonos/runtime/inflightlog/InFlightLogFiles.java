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
import org.apache.flink.util.FileUtils;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The spill directory of one TaskManager's in-flight logs, under the first of Flink's {@code
 * io.tmp.dirs}: {@code clonos-inflight-<uuid>}, holding a locked {@code owner.lock} for as long as
 * the TaskManager runs, and one directory per spilling log.
 *
 * <p>A TaskManager that crashed (SIGKILL, OOM kill) leaves its directory behind. The next one to
 * start on the machine deletes every such directory whose lock nobody holds: the operating system
 * releases a dead process's file locks, while several live TaskManagers (of one machine, of one
 * JVM) keep theirs. A directory too young to have its lock yet is left alone.
 */
@Internal
public final class InFlightLogFiles implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(InFlightLogFiles.class);

    static final String PREFIX = "clonos-inflight-";
    static final String LOCK_FILE = "owner.lock";

    /** How old an unlocked directory must be before it counts as left behind by a crash. */
    private static final Duration CREATION_GRACE = Duration.ofMinutes(1);

    private final Path directory;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final AtomicLong logs = new AtomicLong();

    private InFlightLogFiles(Path directory, FileChannel lockChannel, FileLock lock) {
        this.directory = directory;
        this.lockChannel = lockChannel;
        this.lock = lock;
    }

    /** Creates the directory under the first of {@code tmpDirs}, after deleting stale ones. */
    public static InFlightLogFiles create(String[] tmpDirs) throws IOException {
        if (tmpDirs.length == 0) {
            throw new IOException("No temporary directory (io.tmp.dirs) for in-flight log files");
        }
        for (String tmpDir : tmpDirs) {
            deleteLeftBehind(Paths.get(tmpDir));
        }
        Path directory =
                Files.createDirectories(Paths.get(tmpDirs[0]).resolve(PREFIX + UUID.randomUUID()));
        FileChannel channel =
                FileChannel.open(
                        directory.resolve(LOCK_FILE),
                        StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE);
        FileLock lock = channel.tryLock();
        if (lock == null) {
            channel.close();
            throw new IOException("Could not lock " + directory.resolve(LOCK_FILE));
        }
        LOG.info("In-flight logs spill to {}.", directory);
        return new InFlightLogFiles(directory, channel, lock);
    }

    /**
     * Deletes the directories in {@code tmpDir} that TaskManagers which are gone left behind;
     * returns how many.
     */
    static int deleteLeftBehind(Path tmpDir) {
        if (!Files.isDirectory(tmpDir)) {
            return 0;
        }
        int deleted = 0;
        try (DirectoryStream<Path> candidates = Files.newDirectoryStream(tmpDir, PREFIX + "*")) {
            for (Path candidate : candidates) {
                if (isLeftBehind(candidate)) {
                    FileUtils.deleteDirectoryQuietly(candidate.toFile());
                    LOG.info(
                            "Deleted in-flight log files left behind by a TaskManager: {}",
                            candidate);
                    deleted++;
                }
            }
        } catch (IOException e) {
            LOG.warn("Could not look for in-flight log files left behind in {}.", tmpDir, e);
        }
        return deleted;
    }

    private static boolean isLeftBehind(Path candidate) throws IOException {
        if (!Files.isDirectory(candidate)) {
            return false;
        }
        Path lockFile = candidate.resolve(LOCK_FILE);
        if (!Files.exists(lockFile)) {
            return Files.getLastModifiedTime(candidate).toMillis()
                    < System.currentTimeMillis() - CREATION_GRACE.toMillis();
        }
        try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.WRITE)) {
            FileLock probe = channel.tryLock();
            if (probe == null) {
                return false; // another process holds it
            }
            probe.release();
            return true;
        } catch (OverlappingFileLockException e) {
            return false; // a TaskManager of this JVM holds it
        }
    }

    /** A fresh directory for one log's files, named after the log; created by the log. */
    public Path directoryFor(String logName) {
        String safe = logName.replaceAll("[^A-Za-z0-9._-]", "_");
        if (safe.length() > 100) {
            safe = safe.substring(0, 100);
        }
        return directory.resolve(safe + "-" + logs.incrementAndGet());
    }

    public Path directory() {
        return directory;
    }

    @Override
    public void close() {
        try {
            lock.release();
            lockChannel.close();
        } catch (IOException e) {
            LOG.warn("Could not release the lock of {}.", directory, e);
        }
        FileUtils.deleteDirectoryQuietly(directory.toFile());
    }
}

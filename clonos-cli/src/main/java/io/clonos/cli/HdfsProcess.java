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

package io.clonos.cli;

import org.apache.flink.annotation.Internal;

import org.apache.commons.io.FileUtils;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * HDFS in a process of its own: a NameNode and a DataNode of Hadoop's mini cluster ({@code
 * MiniHadoopClusterManager} without MapReduce), from the distribution's {@code opt/hadoop/}, so
 * that the experiments on separate processes restore their checkpoints over HDFS's RPC and data
 * transfer like a production cluster, not from the local file system. The cluster processes reach
 * it with {@link #CLASS_PATH} on their class path (Flink's {@code HADOOP_CLASSPATH}).
 */
@Internal
public final class HdfsProcess implements AutoCloseable {

    private static final String MAIN = "org.apache.hadoop.mapreduce.MiniHadoopClusterManager";
    private static final Duration START_TIMEOUT = Duration.ofMinutes(2);

    /** The distribution's Hadoop jars, relative to its home. */
    static final String CLASS_PATH = "opt/hadoop";

    private final Process process;
    private final Path dir;
    private final int port;

    private HdfsProcess(Process process, Path dir, int port) {
        this.process = process;
        this.dir = dir;
        this.port = port;
    }

    /** The Hadoop class path of the distribution at {@code home}, for the cluster processes. */
    public static String classPath(Path home) throws IOException {
        Path jars = home.resolve(CLASS_PATH);
        if (!Files.isDirectory(jars)) {
            throw new IOException("HDFS needs the distribution's " + jars + ", which is missing");
        }
        return jars.toAbsolutePath() + File.separator + "*";
    }

    /** Formats and starts HDFS with its files and log in {@code dir}; waits until it serves. */
    public static HdfsProcess start(Path home, Path dir) throws IOException, InterruptedException {
        return start(home, dir, 0);
    }

    /** The same, its NameNode on {@code port} (0: a free one). */
    public static HdfsProcess start(Path home, Path dir, int port)
            throws IOException, InterruptedException {
        Files.createDirectories(dir);
        if (port == 0) {
            try (ServerSocket socket = new ServerSocket(0)) {
                port = socket.getLocalPort();
            }
        }
        Path config = dir.resolve("hdfs-site.xml");
        Files.deleteIfExists(config);
        List<String> command =
                List.of(
                        Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx512m",
                        "-cp",
                        home.resolve("lib").toAbsolutePath()
                                + File.separator
                                + "*"
                                + File.pathSeparator
                                + classPath(home),
                        MAIN,
                        "-nomr",
                        "-format",
                        "-nnport",
                        String.valueOf(port),
                        "-D",
                        "hdfs.minidfs.basedir=" + dir.resolve("data").toAbsolutePath(),
                        "-writeConfig",
                        config.toAbsolutePath().toString());
        Process process =
                new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(dir.resolve("hdfs.out").toFile())
                        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                        .start();
        HdfsProcess hdfs = new HdfsProcess(process, dir, port);
        Instant deadline = Instant.now().plus(START_TIMEOUT);
        // the manager writes its configuration once the NameNode and DataNode are up
        while (!(Files.isRegularFile(config) && hdfs.accepts())) {
            if (!process.isAlive() || Instant.now().isAfter(deadline)) {
                hdfs.close();
                throw new IOException(
                        "HDFS did not start within "
                                + START_TIMEOUT.toSeconds()
                                + " s: see "
                                + dir.resolve("hdfs.out"));
            }
            Thread.sleep(200);
        }
        return hdfs;
    }

    private boolean accepts() {
        try (Socket socket = new Socket("localhost", port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The file system's address, {@code hdfs://localhost:<port>}. */
    public String uri() {
        return "hdfs://localhost:" + port;
    }

    /** Stops the process and deletes its files. */
    @Override
    public void close() throws IOException, InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
        FileUtils.deleteDirectory(dir.resolve("data").toFile());
    }
}

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

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs a command of a test ({@code bin/clonos}, a cluster process) within a time limit. Past the
 * limit the command and every process it started (its cluster's JobManager and TaskManagers) are
 * killed, and the test fails with what the command printed until then: a hung command must neither
 * outlive its test and slow the tests after it, nor hide why it hung.
 */
public final class CliRun {

    private CliRun() {}

    /** What a finished command printed (stdout and stderr) and its exit code. */
    public record Result(int exitCode, String stdout) {
        /** The id of the job a {@code clonos run} submitted, as it printed it. */
        String jobId() {
            Matcher jobId = Pattern.compile("JobID ([0-9a-f]{32})").matcher(stdout);
            assertThat(jobId.find()).as(toString()).isTrue();
            return jobId.group(1);
        }

        @Override
        public String toString() {
            return "exit " + exitCode + ":\n" + stdout;
        }
    }

    public static Result run(List<String> command, Duration limit) throws Exception {
        return run(command, Map.of(), limit);
    }

    /** As {@link #run(List, Duration)}, with {@code environment} added to the command's. */
    public static Result run(List<String> command, Map<String, String> environment, Duration limit)
            throws Exception {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().putAll(environment);
        Process process = builder.start();
        process.getOutputStream().close();
        ByteArrayOutputStream output = new ByteArrayOutputStream();
        Thread reader = new Thread(() -> copy(process.getInputStream(), output), "cli-output");
        reader.setDaemon(true);
        reader.start();
        boolean ended = process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS);
        if (!ended) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
        reader.join(TimeUnit.SECONDS.toMillis(30));
        String stdout;
        synchronized (output) {
            stdout = output.toString(StandardCharsets.UTF_8);
        }
        System.out.println(stdout);
        if (!ended) {
            throw new AssertionError(
                    command
                            + " did not end within "
                            + limit.toSeconds()
                            + " s and was killed with its processes; it printed:\n"
                            + stdout);
        }
        return new Result(process.exitValue(), stdout);
    }

    private static void copy(InputStream in, ByteArrayOutputStream out) {
        byte[] buffer = new byte[8192];
        try (in) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                synchronized (out) {
                    out.write(buffer, 0, n);
                }
            }
        } catch (IOException e) {
            // the process was killed: what it printed until then is kept
        }
    }
}

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

package io.clonos.runtime.compatibility;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.util.EnvironmentInformation;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * Checks, when a cluster component starts, that the Flink on the class path is one Clonos's patches
 * fit: every patch class of every {@link PatchSet} loads and initializes, which resolves each of
 * its {@link io.clonos.runtime.reflect.ReflectedField}s and the Flink classes its signatures name.
 * A Flink in which a member moved fails the start with a message that names the Flink version found
 * and the member; one of another version whose members all resolve starts with a warning.
 */
@Internal
public final class FlinkCompatibility {

    /** The Flink version whose classes the patches were written against. */
    public static final String PATCHED_FLINK_VERSION = "1.20.5";

    private static final Logger LOG = LoggerFactory.getLogger(FlinkCompatibility.class);

    private FlinkCompatibility() {}

    /** Checks the patch sets on the class path of {@code loader}. */
    public static void check(ClassLoader loader) {
        List<PatchSet> sets = new ArrayList<>();
        ServiceLoader.load(PatchSet.class, loader).forEach(sets::add);
        check(sets, EnvironmentInformation.getVersion());
    }

    /**
     * Checks {@code sets} against the Flink of version {@code flinkVersion}.
     *
     * @throws IllegalStateException naming the version and the first member that does not resolve
     */
    public static void check(Iterable<PatchSet> sets, String flinkVersion) {
        int patches = 0;
        for (PatchSet set : sets) {
            for (Class<?> patch : set.patchClasses()) {
                try {
                    Class.forName(patch.getName(), true, patch.getClassLoader());
                    patch.getDeclaredMethods();
                    patches++;
                } catch (ClassNotFoundException | LinkageError e) {
                    Throwable cause =
                            e instanceof ExceptionInInitializerError && e.getCause() != null
                                    ? e.getCause()
                                    : e;
                    throw new IllegalStateException(
                            "Clonos does not fit Flink "
                                    + flinkVersion
                                    + " (its patches were written for Flink "
                                    + PATCHED_FLINK_VERSION
                                    + "): "
                                    + patch.getName()
                                    + " does not load: "
                                    + cause.getMessage(),
                            cause);
                }
            }
        }
        if (!PATCHED_FLINK_VERSION.equals(flinkVersion)) {
            LOG.warn(
                    "Clonos's patches were written for Flink {}, this is Flink {}; all {} patch classes resolved.",
                    PATCHED_FLINK_VERSION,
                    flinkVersion,
                    patches);
        }
    }
}

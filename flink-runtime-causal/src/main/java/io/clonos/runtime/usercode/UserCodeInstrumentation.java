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

package io.clonos.runtime.usercode;

import org.apache.flink.annotation.Internal;
import org.apache.flink.util.FlinkUserCodeClassLoader;

import net.bytebuddy.agent.ByteBuddyAgent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.List;

/**
 * Makes the classes of user code that Flink's user-code class loader loads call {@link CausalCalls}
 * for the clock and random numbers ({@link UserCodeRewriter}), so that a job that reads {@code
 * System.currentTimeMillis()} or draws from {@code new Random()} recovers locally unchanged. The
 * job's jar is not changed: the classes are rewritten as they load, by a class transformer attached
 * to the TaskManager's JVM ({@code clonos.user-code.causal-calls}). Classes of Flink, Clonos and
 * Kafka's client a job's jar bundles are left as they are.
 *
 * <p>A JVM has one such transformer, whichever of its TaskManagers installs it first; a JVM that
 * does not allow attaching one (no {@code jdk.attach} module) runs without it, and such calls of a
 * recovered task then end in Flink's global rollback, as without this class.
 */
@Internal
public final class UserCodeInstrumentation {

    private static final Logger LOG = LoggerFactory.getLogger(UserCodeInstrumentation.class);

    private UserCodeInstrumentation() {}

    /** Installs the transformer in this JVM, once; whether it is installed. */
    public static boolean install() {
        return Installed.INSTALLED;
    }

    /**
     * Packages of Flink, of Clonos's runtime and connectors, and of Kafka's client, that a job's
     * jar or class path may bundle. Their clock reads make no choice of the job's output; logged,
     * they would have to recur where the predecessor's did. The Kafka producer reads the clock in
     * every send, and a recovered Clonos Kafka writer sends only what its predecessor had not
     * published (found under SIGKILL with the connector in {@code pipeline.classpaths}: the replay
     * stalled at the first record's send).
     */
    private static final List<String> NOT_USER_CODE =
            List.of(
                    "org/apache/flink/",
                    "org/apache/kafka/",
                    "io/clonos/runtime/",
                    "io/clonos/streaming/",
                    "io/clonos/connector/",
                    "io/clonos/beam/");

    /**
     * The package of Janino's class loaders, which define the classes the SQL planner's operators
     * generate and compile on the TaskManager (a query's projections and filters): code of the job.
     */
    private static final String GENERATED_CODE_LOADERS = "org.codehaus.";

    /** Whether a class of {@code loader} named {@code name} (internal form) is rewritten. */
    static boolean isUserCode(ClassLoader loader, String name) {
        boolean jobCode =
                loader instanceof FlinkUserCodeClassLoader
                        || (loader != null
                                && loader.getClass().getName().startsWith(GENERATED_CODE_LOADERS));
        if (!jobCode) {
            return false;
        }
        for (String prefix : NOT_USER_CODE) {
            if (name.startsWith(prefix)) {
                return false;
            }
        }
        return true;
    }

    /** Holds whether the transformer was installed, installing it when first asked. */
    private static final class Installed {
        static final boolean INSTALLED = attach();

        private static boolean attach() {
            try {
                Instrumentation instrumentation = ByteBuddyAgent.install();
                instrumentation.addTransformer(new Transformer());
                LOG.info(
                        "User code's clock and random calls are served from the causal log"
                                + " (clonos.user-code.causal-calls).");
                return true;
            } catch (RuntimeException | LinkageError e) {
                LOG.warn(
                        "Cannot attach the transformer for user code's clock and random calls;"
                                + " a recovered task whose user code reads the clock falls back to"
                                + " Flink's global rollback.",
                        e);
                return false;
            }
        }
    }

    private static final class Transformer implements ClassFileTransformer {
        @Override
        public byte[] transform(
                ClassLoader loader,
                String name,
                Class<?> redefined,
                ProtectionDomain domain,
                byte[] bytes) {
            if (redefined != null || name == null || !isUserCode(loader, name)) {
                return null;
            }
            try {
                return UserCodeRewriter.rewrite(bytes);
            } catch (RuntimeException e) {
                LOG.warn("Left {} as it is: cannot rewrite its clock and random calls.", name, e);
                return null;
            }
        }
    }
}

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

package io.clonos.runtime.causal;

import org.apache.flink.annotation.Internal;

/**
 * A task cannot be recovered locally without losing or corrupting data: its upstream cannot replay
 * what it needs. The JobManager answers a failure with this cause by a global rollback.
 */
@Internal
public class LocalRecoveryImpossibleException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public LocalRecoveryImpossibleException(String message) {
        super(message);
    }

    public LocalRecoveryImpossibleException(String message, Throwable cause) {
        super(message, cause);
    }

    /**
     * Whether a failure was caused by one, or by an in-flight log that cannot replay. Failures that
     * crossed the network arrive as Flink's serialized throwables, which keep the original class
     * name in their text.
     */
    public static boolean isCauseOf(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            String text = t.toString();
            if (t instanceof LocalRecoveryImpossibleException
                    || text.contains(LocalRecoveryImpossibleException.class.getSimpleName())
                    || text.contains("InFlightLogUnavailableException")) {
                return true;
            }
        }
        return false;
    }
}

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

package io.clonos.beam;

import io.clonos.runtime.configuration.ClonosConfiguration;
import io.clonos.runtime.configuration.ClonosOptions;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The Clonos settings a pipeline's options give, as Flink configuration keys. Checked at once, so
 * that a bad value fails when the pipeline is run, naming the key, the value and what is allowed,
 * not when the cluster schedules the job.
 */
@Internal
final class ClonosSettings {

    private ClonosSettings() {}

    static Map<String, String> of(ClonosPipelineOptions options) {
        Map<String, String> settings = new LinkedHashMap<>();
        if (options.getClonosConfiguration() != null) {
            for (String entry : options.getClonosConfiguration()) {
                int equals = entry.indexOf('=');
                if (equals <= 0 || !entry.startsWith("clonos.")) {
                    throw new IllegalArgumentException(
                            "--clonosConfiguration takes key=value with a key under clonos., not '"
                                    + entry
                                    + "'");
                }
                settings.put(entry.substring(0, equals).trim(), entry.substring(equals + 1).trim());
            }
        }
        put(
                settings,
                ClonosOptions.DETERMINANT_SHARING_DEPTH.key(),
                options.getDeterminantSharingDepth());
        put(
                settings,
                ClonosOptions.IN_FLIGHT_LOG_SPILL_POLICY.key(),
                options.getInFlightLogSpillPolicy());
        put(settings, ClonosOptions.STANDBY_ENABLED.key(), options.getStandby());
        put(settings, ClonosOptions.RECOVERY_MODE.key(), options.getRecoveryMode());
        validate(settings);
        return settings;
    }

    private static void put(Map<String, String> settings, String key, Object value) {
        if (value != null) {
            settings.put(key, String.valueOf(value));
        }
    }

    private static void validate(Map<String, String> settings) {
        try {
            ClonosConfiguration.fromConfiguration(Configuration.fromMap(settings));
        } catch (IllegalConfigurationException e) {
            throw new IllegalArgumentException(
                    "Invalid Clonos pipeline option: " + e.getMessage(), e);
        }
    }
}

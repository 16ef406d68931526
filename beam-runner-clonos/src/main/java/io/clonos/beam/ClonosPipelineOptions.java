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

import org.apache.beam.runners.flink.FlinkPipelineOptions;
import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;

import java.util.List;

/**
 * The options of {@link ClonosRunner}: Beam's Flink options (parallelism, checkpointing, streaming,
 * ...) and the Clonos settings of the job. Settings left unset take the cluster's values.
 */
public interface ClonosPipelineOptions extends FlinkPipelineOptions {

    @Description(
            "The REST endpoint (host:port) of a running Clonos cluster. Unset: an embedded Clonos cluster in this JVM.")
    String getClonosMaster();

    void setClonosMaster(String value);

    @Description(
            "clonos.determinant-sharing-depth: how many downstream hops keep a task's determinants; -1 for all.")
    Integer getDeterminantSharingDepth();

    void setDeterminantSharingDepth(Integer value);

    @Description(
            "clonos.in-flight-log.spill-policy: when the in-flight log spills to disk (eager, epoch,"
                    + " availability). A TaskManager setting: it configures the embedded cluster; a"
                    + " remote cluster (--clonosMaster) refuses a job that asks for another policy"
                    + " than its own.")
    String getInFlightLogSpillPolicy();

    void setInFlightLogSpillPolicy(String value);

    @Description(
            "clonos.standby.enabled: idle standby tasks that hold each task's latest checkpointed state.")
    Boolean getStandby();

    void setStandby(Boolean value);

    @Description(
            "clonos.recovery.mode: local (only the failed tasks) or global (Flink's restart of the whole job).")
    String getRecoveryMode();

    void setRecoveryMode(String value);

    @Description("Other Clonos settings, as key=value (keys under clonos.).")
    List<String> getClonosConfiguration();

    void setClonosConfiguration(List<String> value);

    /** The default number of TaskManagers of the embedded cluster. */
    int EMBEDDED_TASK_MANAGERS = 2;

    @Description("TaskManagers of the embedded Clonos cluster.")
    @Default.Integer(EMBEDDED_TASK_MANAGERS)
    Integer getEmbeddedTaskManagers();

    void setEmbeddedTaskManagers(Integer value);

    @Description(
            "Slots per TaskManager of the embedded Clonos cluster; unset: the job's parallelism (at least 2, for standbys).")
    Integer getEmbeddedSlots();

    void setEmbeddedSlots(Integer value);
}

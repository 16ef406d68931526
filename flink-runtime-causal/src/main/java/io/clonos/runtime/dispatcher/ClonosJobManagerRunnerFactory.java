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

package io.clonos.runtime.dispatcher;

import io.clonos.runtime.configuration.ClonosConfiguration;
import io.clonos.runtime.scheduler.ClonosSchedulerFactory;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.failure.FailureEnricher;
import org.apache.flink.runtime.dispatcher.JobManagerRunnerFactory;
import org.apache.flink.runtime.dispatcher.JobMasterServiceLeadershipRunnerFactory;
import org.apache.flink.runtime.execution.librarycache.LibraryCacheManager;
import org.apache.flink.runtime.heartbeat.HeartbeatServices;
import org.apache.flink.runtime.highavailability.HighAvailabilityServices;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobType;
import org.apache.flink.runtime.jobmaster.DefaultSlotPoolServiceSchedulerFactory;
import org.apache.flink.runtime.jobmaster.JobManagerRunner;
import org.apache.flink.runtime.jobmaster.JobManagerSharedServices;
import org.apache.flink.runtime.jobmaster.JobMasterConfiguration;
import org.apache.flink.runtime.jobmaster.JobMasterServiceLeadershipRunner;
import org.apache.flink.runtime.jobmaster.factories.DefaultJobMasterServiceFactory;
import org.apache.flink.runtime.jobmaster.factories.DefaultJobMasterServiceProcessFactory;
import org.apache.flink.runtime.jobmaster.factories.JobManagerJobMetricGroupFactory;
import org.apache.flink.runtime.rpc.FatalErrorHandler;
import org.apache.flink.runtime.rpc.RpcService;
import org.apache.flink.util.MdcUtils;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;

/**
 * Creates the JobManager of each submitted job. This is where a job becomes a Clonos job: its
 * {@code clonos.} settings are validated (the submission fails with the offending key if one is
 * bad), the job graph is rewritten to Clonos's tasks, and the job master gets Clonos's scheduler.
 * Batch jobs have nothing to recover locally and are handed to Flink unchanged.
 */
@Internal
public final class ClonosJobManagerRunnerFactory implements JobManagerRunnerFactory {

    private static final Logger LOG = LoggerFactory.getLogger(ClonosJobManagerRunnerFactory.class);

    private final JobGraphRewriters rewriters = JobGraphRewriters.load();

    @Override
    public JobManagerRunner createJobManagerRunner(
            JobGraph jobGraph,
            Configuration configuration,
            RpcService rpcService,
            HighAvailabilityServices highAvailabilityServices,
            HeartbeatServices heartbeatServices,
            JobManagerSharedServices jobManagerServices,
            JobManagerJobMetricGroupFactory jobManagerJobMetricGroupFactory,
            FatalErrorHandler fatalErrorHandler,
            Collection<FailureEnricher> failureEnrichers,
            long initializationTimestamp)
            throws Exception {

        if (jobGraph.getJobType() != JobType.STREAMING || jobGraph.getNumberOfVertices() == 0) {
            LOG.info(
                    "Job {} ({}) is not a streaming job; Flink runs it as it is.",
                    jobGraph.getName(),
                    jobGraph.getJobID());
            return JobMasterServiceLeadershipRunnerFactory.INSTANCE.createJobManagerRunner(
                    jobGraph,
                    configuration,
                    rpcService,
                    highAvailabilityServices,
                    heartbeatServices,
                    jobManagerServices,
                    jobManagerJobMetricGroupFactory,
                    fatalErrorHandler,
                    failureEnrichers,
                    initializationTimestamp);
        }

        ClonosConfiguration clonos =
                ClonosConfiguration.forJob(configuration, jobGraph.getJobConfiguration());

        LibraryCacheManager.ClassLoaderLease classLoaderLease =
                jobManagerServices
                        .getLibraryCacheManager()
                        .registerClassLoaderLease(jobGraph.getJobID());
        try {
            ClassLoader userCodeClassLoader =
                    classLoaderLease
                            .getOrResolveClassLoader(
                                    jobGraph.getUserJarBlobKeys(), jobGraph.getClasspaths())
                            .asClassLoader();
            rewriters.rewrite(jobGraph, clonos, userCodeClassLoader);

            DefaultJobMasterServiceFactory jobMasterServiceFactory =
                    new DefaultJobMasterServiceFactory(
                            MdcUtils.scopeToJob(
                                    jobGraph.getJobID(), jobManagerServices.getIoExecutor()),
                            rpcService,
                            JobMasterConfiguration.fromConfiguration(configuration),
                            jobGraph,
                            highAvailabilityServices,
                            DefaultSlotPoolServiceSchedulerFactory.create(
                                    ClonosSchedulerFactory.slotPoolServiceFactory(configuration),
                                    new ClonosSchedulerFactory(clonos)),
                            jobManagerServices,
                            heartbeatServices,
                            jobManagerJobMetricGroupFactory,
                            fatalErrorHandler,
                            userCodeClassLoader,
                            failureEnrichers,
                            initializationTimestamp);

            return new JobMasterServiceLeadershipRunner(
                    new DefaultJobMasterServiceProcessFactory(
                            jobGraph.getJobID(),
                            jobGraph.getName(),
                            jobGraph.getJobType(),
                            jobGraph.getCheckpointingSettings(),
                            initializationTimestamp,
                            jobMasterServiceFactory),
                    highAvailabilityServices.getJobManagerLeaderElection(jobGraph.getJobID()),
                    highAvailabilityServices.getJobResultStore(),
                    classLoaderLease,
                    fatalErrorHandler);
        } catch (Exception | Error e) {
            classLoaderLease.release();
            throw e;
        }
    }
}

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

package io.clonos.runtime.scheduler;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.time.Time;
import org.apache.flink.runtime.clusterframework.types.ResourceID;
import org.apache.flink.runtime.jobmaster.slotpool.AbstractSlotPoolServiceFactory;
import org.apache.flink.runtime.jobmaster.slotpool.DeclarativeSlotPoolBridge;
import org.apache.flink.runtime.jobmaster.slotpool.DeclarativeSlotPoolFactory;
import org.apache.flink.runtime.jobmaster.slotpool.RequestSlotMatchingStrategy;
import org.apache.flink.runtime.jobmaster.slotpool.SlotPoolService;
import org.apache.flink.runtime.resourcemanager.ResourceManagerGateway;
import org.apache.flink.util.clock.Clock;

import javax.annotation.Nonnull;
import javax.annotation.Nullable;

import java.util.HashSet;
import java.util.Set;

/**
 * Flink's slot pool of a streaming job, which can declare a TaskManager lost before the heartbeats
 * do ({@link LostTaskManagerDetector}): it releases the TaskManager's slots, as the JobMaster does
 * when it disconnects a TaskManager, and tells the ResourceManager, which would otherwise count the
 * dead TaskManager's slots as the job's until its own heartbeats time out, and not offer new ones.
 */
@Internal
final class ClonosSlotPool extends DeclarativeSlotPoolBridge {

    /** The ResourceManager the pool is connected to; null while it is not. Main thread. */
    @Nullable private ResourceManagerGateway resourceManager;

    /**
     * The TaskManagers registered with the job and not released since (Flink's own set is not
     * visible outside its package). Main thread.
     */
    private final Set<ResourceID> registered = new HashSet<>();

    private ClonosSlotPool(
            JobID jobId,
            DeclarativeSlotPoolFactory declarativeSlotPoolFactory,
            Clock clock,
            Time rpcTimeout,
            Time idleSlotTimeout,
            Time batchSlotTimeout,
            RequestSlotMatchingStrategy requestSlotMatchingStrategy) {
        super(
                jobId,
                declarativeSlotPoolFactory,
                clock,
                rpcTimeout,
                idleSlotTimeout,
                batchSlotTimeout,
                requestSlotMatchingStrategy);
    }

    @Override
    public void connectToResourceManager(ResourceManagerGateway resourceManagerGateway) {
        super.connectToResourceManager(resourceManagerGateway);
        this.resourceManager = resourceManagerGateway;
    }

    @Override
    public void disconnectResourceManager() {
        this.resourceManager = null;
        super.disconnectResourceManager();
    }

    @Override
    public boolean registerTaskManager(ResourceID taskManager) {
        registered.add(taskManager);
        return super.registerTaskManager(taskManager);
    }

    @Override
    public boolean releaseTaskManager(ResourceID taskManager, Exception cause) {
        // forgotten before the release fails its tasks, so that their recovery sees it gone
        registered.remove(taskManager);
        return super.releaseTaskManager(taskManager, cause);
    }

    /** Whether the TaskManager is registered with the job and was not released since. */
    boolean isRegistered(ResourceID taskManager) {
        return registered.contains(taskManager);
    }

    /** The TaskManager is gone: its slots are released, and the ResourceManager forgets it. */
    void declareLost(ResourceID taskManager, Exception cause) {
        releaseTaskManager(taskManager, cause);
        if (resourceManager != null) {
            resourceManager.disconnectTaskManager(taskManager, cause);
        }
    }

    /** Creates {@link ClonosSlotPool}s. */
    static final class Factory extends AbstractSlotPoolServiceFactory {
        private final RequestSlotMatchingStrategy requestSlotMatchingStrategy;

        Factory(
                Clock clock,
                Time rpcTimeout,
                Time slotIdleTimeout,
                Time batchSlotTimeout,
                RequestSlotMatchingStrategy requestSlotMatchingStrategy) {
            super(clock, rpcTimeout, slotIdleTimeout, batchSlotTimeout);
            this.requestSlotMatchingStrategy = requestSlotMatchingStrategy;
        }

        @Nonnull
        @Override
        public SlotPoolService createSlotPoolService(
                @Nonnull JobID jobId, DeclarativeSlotPoolFactory declarativeSlotPoolFactory) {
            return new ClonosSlotPool(
                    jobId,
                    declarativeSlotPoolFactory,
                    clock,
                    rpcTimeout,
                    slotIdleTimeout,
                    batchSlotTimeout,
                    requestSlotMatchingStrategy);
        }
    }
}

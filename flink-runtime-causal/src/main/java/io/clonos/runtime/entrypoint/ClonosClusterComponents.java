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

package io.clonos.runtime.entrypoint;

import io.clonos.runtime.dispatcher.ClonosDispatcherFactory;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.dispatcher.runner.DefaultDispatcherRunnerFactory;
import org.apache.flink.runtime.entrypoint.component.DefaultDispatcherResourceManagerComponentFactory;
import org.apache.flink.runtime.entrypoint.component.DispatcherResourceManagerComponentFactory;
import org.apache.flink.runtime.resourcemanager.StandaloneResourceManagerFactory;
import org.apache.flink.runtime.rest.SessionRestEndpointFactory;

/**
 * The JobManager components of a Clonos session cluster: Flink's standalone resource manager and
 * REST endpoint (so Flink's CLI, REST API and web UI work unchanged) with Clonos's dispatcher. The
 * standalone entrypoint and the embedded cluster both take them from here.
 */
@Internal
public final class ClonosClusterComponents {

    public static DispatcherResourceManagerComponentFactory sessionComponentFactory() {
        return new DefaultDispatcherResourceManagerComponentFactory(
                DefaultDispatcherRunnerFactory.createSessionRunner(new ClonosDispatcherFactory()),
                StandaloneResourceManagerFactory.getInstance(),
                SessionRestEndpointFactory.INSTANCE);
    }

    private ClonosClusterComponents() {}
}

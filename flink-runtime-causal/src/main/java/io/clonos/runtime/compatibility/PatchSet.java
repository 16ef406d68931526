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

import java.util.List;

/**
 * The classes of one module that patch Flink's behaviour (or Beam's Flink runner's): the classes in
 * Flink's and Beam's packages, and any other that reaches into Flink by reflection. Found by {@link
 * java.util.ServiceLoader}, one per module, so that {@link FlinkCompatibility} sees every module's
 * patches on the class path without a module depending on another.
 */
@Internal
public interface PatchSet {

    /** The patch classes; each is initialized by the compatibility check. */
    List<Class<?>> patchClasses();
}

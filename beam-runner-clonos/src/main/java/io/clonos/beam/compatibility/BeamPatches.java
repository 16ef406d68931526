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

package io.clonos.beam.compatibility;

import io.clonos.runtime.compatibility.PatchSet;

import org.apache.flink.annotation.Internal;

import org.apache.beam.runners.flink.ClonosBeamPatch;

import java.util.List;

/**
 * The patch of Beam's Flink runner. Its reflection reads the runtime classes of the transforms it
 * is given (some of them in optional Beam modules, such as KafkaIO), so it cannot resolve its
 * members up front; the check loads the class and its signatures.
 */
@Internal
public final class BeamPatches implements PatchSet {

    @Override
    public List<Class<?>> patchClasses() {
        return List.of(ClonosBeamPatch.class);
    }
}

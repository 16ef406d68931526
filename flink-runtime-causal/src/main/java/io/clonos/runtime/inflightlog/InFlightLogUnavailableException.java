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

package io.clonos.runtime.inflightlog;

import org.apache.flink.annotation.Internal;

import java.io.IOException;

/**
 * The in-flight log cannot replay what a consumer needs: it overflowed its memory, the range was
 * truncated, or it lost data (a failed write or read, a damaged spill file). Recovery of that
 * consumer must fall back to a global rollback.
 */
@Internal
public class InFlightLogUnavailableException extends IOException {

    private static final long serialVersionUID = 1L;

    public InFlightLogUnavailableException(String message) {
        super(message);
    }
}

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

package io.clonos.streaming.causal;

import io.clonos.runtime.causal.CausalTask;
import io.clonos.runtime.causal.Determinant;
import io.clonos.runtime.causal.EpochRandom;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.streaming.api.operators.StreamingRuntimeContext;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.Callable;

/**
 * Nondeterminism for user functions that a recovered task reproduces exactly (paper section 4.2):
 * the time, random numbers and the results of external calls, each logged as a determinant while
 * the task runs and handed back from the log while it recovers.
 *
 * <pre>{@code
 * public void open(OpenContext context) {
 *     causal = CausalServices.of(getRuntimeContext());
 * }
 * public void processElement(Event e, Context ctx, Collector<Out> out) {
 *     long now = causal.currentTimeMillis();
 *     double sample = causal.random().nextDouble();
 *     String price = causal.call(() -> quotes.fetch(e.symbol()), StringSerializer.INSTANCE);
 * }
 * }</pre>
 *
 * <p>Outside a Clonos task (plain Flink), the services do the same without logging, so a job runs
 * unchanged on either. Call them from the task's thread (the function's own methods), not from
 * threads of your own.
 */
@PublicEvolving
public final class CausalServices {

    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @Nullable private final CausalTask task;
    private final long granularityMillis;
    private final EpochRandom random;

    private CausalServices(@Nullable CausalTask task, long granularityMillis) {
        this.task = task;
        this.granularityMillis = Math.max(1, granularityMillis);
        this.random = new EpochRandom(task);
    }

    /**
     * The causal services of the task that runs the function with this context. Flink hands an
     * async function ({@code RichAsyncFunction}) a context of its own, for which these services log
     * nothing: what a call chooses needs no logging, since its result is logged and a replay does
     * not call.
     */
    public static CausalServices of(RuntimeContext context) {
        if (context instanceof StreamingRuntimeContext) {
            Object service = ((StreamingRuntimeContext) context).getProcessingTimeService();
            if (service instanceof CausalProcessingTimeService) {
                CausalTask task = ((CausalProcessingTimeService) service).task();
                return new CausalServices(task, task.timeServiceGranularityMillis());
            }
        }
        return new CausalServices(null, 1);
    }

    /**
     * The causal services of the task whose thread calls, for functions Flink gives no runtime
     * context (a data generator's function, which a source reader calls on the task thread). Call
     * it where the function runs, not where it is built: off a Clonos task's thread, the services
     * do the same without logging.
     */
    public static CausalServices ofTaskThread() {
        CausalTask task = CausalTask.ofCurrentThread();
        return task == null
                ? new CausalServices(null, 1)
                : new CausalServices(task, task.timeServiceGranularityMillis());
    }

    /**
     * The wall-clock time in milliseconds, rounded down to {@code clonos.time-service.granularity}
     * (the coarser, the more readings share one value).
     */
    public long currentTimeMillis() {
        long now =
                task == null
                        ? System.currentTimeMillis()
                        : task.timestamp(System::currentTimeMillis);
        return now - now % granularityMillis;
    }

    /** Random numbers; seeded afresh, and logged, once per epoch. */
    public Random random() {
        return random;
    }

    /** Runs an external call; its result is logged, and returned from the log when recovering. */
    public <T> T call(Callable<T> call, TypeSerializer<T> serializer) {
        return nondeterministic(call, serializer).get();
    }

    /** Fetches a URL with HTTP GET and returns the body, as a logged external call. */
    public String httpGet(URI uri) {
        return call(
                () -> {
                    HttpResponse<String> response =
                            HTTP.send(
                                    HttpRequest.newBuilder(uri).GET().build(),
                                    HttpResponse.BodyHandlers.ofString());
                    if (response.statusCode() / 100 != 2) {
                        throw new IOException("GET " + uri + " answered " + response.statusCode());
                    }
                    return response.body();
                },
                StringSerializer.INSTANCE);
    }

    /**
     * A nondeterministic function of the user's own, made reproducible: each call's result is
     * logged (serialized with {@code serializer}) and, when recovering, returned from the log
     * instead of calling the function.
     */
    public <T> Nondeterministic<T> nondeterministic(
            Callable<T> function, TypeSerializer<T> serializer) {
        return () -> {
            if (task == null) {
                return invoke(function);
            }
            byte[] bytes =
                    task.decide(
                                    Determinant.ExternalResult.class,
                                    () ->
                                            new Determinant.ExternalResult(
                                                    serialize(invoke(function), serializer)))
                            .bytes();
            return deserialize(bytes, serializer);
        };
    }

    /** A nondeterministic function whose results are logged. */
    @FunctionalInterface
    public interface Nondeterministic<T> {
        T get();
    }

    private static <T> T invoke(Callable<T> function) {
        try {
            return function.call();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("A nondeterministic call failed", e);
        }
    }

    private static <T> byte[] serialize(T value, TypeSerializer<T> serializer) {
        DataOutputSerializer out = new DataOutputSerializer(64);
        try {
            serializer.serialize(value, out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.getCopyOfBuffer();
    }

    private static <T> T deserialize(byte[] bytes, TypeSerializer<T> serializer) {
        try {
            return serializer.deserialize(new DataInputDeserializer(bytes));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

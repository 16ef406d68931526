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

package io.clonos.docs;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.JsonNodeFactory;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Writes docs/results.md, the headline figures beside the paper's, from {@code
 * docs/results/headline.json}: each row names a results file and, for each figure it prints, where
 * in that file the figure is, so that the page shows what the files hold and no figure typed by
 * hand.
 *
 * <p>A figure's place is a path into the file: field names separated by dots; {@code [k=v]} keeps
 * the elements of an array whose field {@code k} is {@code v} ({@code [k=v&j=w]}: and whose {@code
 * j} is {@code w}), {@code [*]} every element, {@code [N]} the N-th (a CSV file is read as an array
 * of its rows, each cell text); {@code @other/file} and a space before the path reads another file.
 * After {@code |}: {@code max} or {@code mean} of every value picked, {@code s} (milliseconds as
 * seconds, two decimals), {@code mib} (bytes as MiB, one decimal), {@code fixedN} (N decimals).
 * Without one, the first value picked is printed as the file has it.
 */
final class ResultsPage {

    static final String MANIFEST = "docs/results/headline.json";
    static final String PAGE = "docs/results.md";
    static final String COMMAND =
            "./mvnw -pl clonos-dist test -Dtest=ResultsPageTest -Dclonos.results.write=true";

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern PLACEHOLDER = Pattern.compile("\\{(\\w+)}");
    private static final Pattern SEGMENT = Pattern.compile("([^.\\[]*)((?:\\[[^\\]]*])*)");
    private static final Pattern SELECTOR = Pattern.compile("\\[([^\\]]*)]");

    private final Path root;

    /**
     * @param root the checkout: the directory that holds docs/
     */
    ResultsPage(Path root) {
        this.root = root;
    }

    /** The page's text. */
    String render() throws IOException {
        JsonNode manifest = JSON.readTree(root.resolve(MANIFEST).toFile());
        StringBuilder page = new StringBuilder();
        page.append("# Results\n\n<!-- Generated from ")
                .append(MANIFEST)
                .append(" by ")
                .append(COMMAND)
                .append("; edit the manifest, not this page. -->\n\n")
                .append("The headline figures of Clonos on Flink 1.20.5, each beside the paper's")
                .append(" and read from the results file it links. After adding a result to `")
                .append(MANIFEST)
                .append("`, regenerate the page with `")
                .append(COMMAND)
                .append("`.\n\n");
        for (JsonNode paragraph : manifest.path("about")) {
            page.append(paragraph.asText()).append("\n\n");
        }
        page.append("| figure | here | paper | results | run |\n|---|---|---|---|---|\n");
        StringBuilder commands = new StringBuilder();
        int number = 0;
        for (JsonNode row : manifest.path("rows")) {
            number++;
            String file = row.path("file").asText();
            page.append("| ")
                    .append(row.path("figure").asText())
                    .append(" | ")
                    .append(filled(row, file))
                    .append(" | ")
                    .append(row.path("paper").asText())
                    .append(" | [")
                    .append(file)
                    .append("](results/")
                    .append(file)
                    .append(") | ")
                    .append(row.path("date").asText())
                    .append(", ")
                    .append(commitOf(row.path("commit").asText()))
                    .append(", [command ")
                    .append(number)
                    .append("](#commands) |\n");
            commands.append(number)
                    .append(". `")
                    .append(row.path("command").asText())
                    .append("`\n");
        }
        page.append("\n## Commands\n\nEach run from the distribution's directory")
                .append(" (`clonos-dist/target/clonos`, built by the README's command).\n\n")
                .append(commands);
        return page.toString();
    }

    /** Writes the page. */
    void write() throws IOException {
        Files.writeString(root.resolve(PAGE), render());
    }

    private static String commitOf(String commit) {
        return "unknown".equals(commit) ? "commit unknown" : "commit `" + commit + "`";
    }

    /** The row's text with each placeholder replaced by its figure. */
    private String filled(JsonNode row, String file) throws IOException {
        Matcher placeholder = PLACEHOLDER.matcher(row.path("here").asText());
        StringBuilder text = new StringBuilder();
        while (placeholder.find()) {
            JsonNode spec = row.path("values").path(placeholder.group(1));
            if (spec.isMissingNode()) {
                throw new IllegalArgumentException(
                        "Row '"
                                + row.path("figure").asText()
                                + "' has no value "
                                + placeholder.group(1));
            }
            placeholder.appendReplacement(
                    text, Matcher.quoteReplacement(figure(file, spec.asText())));
        }
        placeholder.appendTail(text);
        return text.toString();
    }

    /** The figure {@code spec} picks from {@code file} (a path under docs/results). */
    String figure(String file, String spec) throws IOException {
        String path = spec;
        if (spec.startsWith("@")) {
            int space = spec.indexOf(' ');
            file = spec.substring(1, space);
            path = spec.substring(space + 1);
        }
        String[] parts = path.split("\\|");
        List<JsonNode> picked = pick(read(file), parts[0]);
        if (picked.isEmpty()) {
            throw new IllegalArgumentException(file + " holds nothing at " + parts[0]);
        }
        String text = picked.get(0).asText();
        for (int i = 1; i < parts.length; i++) {
            String op = parts[i];
            if (op.equals("max") || op.equals("mean")) {
                double value = op.equals("max") ? Double.NEGATIVE_INFINITY : 0;
                for (JsonNode node : picked) {
                    double v = Double.parseDouble(node.asText());
                    value = op.equals("max") ? Math.max(value, v) : value + v / picked.size();
                }
                text = Double.toString(value);
            } else if (op.equals("s")) {
                text = String.format(Locale.ROOT, "%.2f", Double.parseDouble(text) / 1000);
            } else if (op.equals("mib")) {
                text = String.format(Locale.ROOT, "%.1f", Double.parseDouble(text) / (1024 * 1024));
            } else if (op.startsWith("fixed")) {
                text =
                        String.format(
                                Locale.ROOT,
                                "%." + Integer.parseInt(op.substring(5)) + "f",
                                Double.parseDouble(text));
            } else {
                throw new IllegalArgumentException("Unknown operation '" + op + "' in " + spec);
            }
        }
        return text;
    }

    private JsonNode read(String file) throws IOException {
        Path path = root.resolve("docs/results").resolve(file);
        if (!file.endsWith(".csv")) {
            return JSON.readTree(path.toFile());
        }
        List<String> lines = Files.readAllLines(path);
        String[] header = lines.get(0).split(",");
        ArrayNode rows = JsonNodeFactory.instance.arrayNode();
        for (String line : lines.subList(1, lines.size())) {
            if (!line.isBlank()) {
                String[] cells = line.split(",", -1);
                ObjectNode row = rows.addObject();
                for (int i = 0; i < header.length && i < cells.length; i++) {
                    row.put(header[i], cells[i]);
                }
            }
        }
        return rows;
    }

    /** The nodes {@code path} picks from {@code node}. */
    static List<JsonNode> pick(JsonNode node, String path) {
        List<JsonNode> current = List.of(node);
        for (String segment : path.split("\\.(?![^\\[]*])")) {
            Matcher parts = SEGMENT.matcher(segment);
            if (!parts.matches()) {
                throw new IllegalArgumentException("Cannot read the path " + path);
            }
            List<JsonNode> next = new ArrayList<>();
            for (JsonNode each : current) {
                next.add(parts.group(1).isEmpty() ? each : each.path(parts.group(1)));
            }
            Matcher selector = SELECTOR.matcher(parts.group(2));
            while (selector.find()) {
                next = select(next, selector.group(1));
            }
            current = next;
        }
        List<JsonNode> found = new ArrayList<>(current);
        found.removeIf(JsonNode::isMissingNode);
        return found;
    }

    private static List<JsonNode> select(List<JsonNode> arrays, String selector) {
        List<JsonNode> selected = new ArrayList<>();
        for (JsonNode array : arrays) {
            if (selector.matches("\\d+")) {
                selected.add(array.path(Integer.parseInt(selector)));
                continue;
            }
            array.elements()
                    .forEachRemaining(
                            element -> {
                                if (selector.equals("*") || matches(element, selector)) {
                                    selected.add(element);
                                }
                            });
        }
        return selected;
    }

    /** Whether {@code element} has every {@code k=v} of {@code selector} ({@code &} between). */
    private static boolean matches(JsonNode element, String selector) {
        for (String condition : selector.split("&")) {
            String[] pair = condition.split("=", 2);
            if (pair.length != 2 || !element.path(pair[0]).asText().equals(pair[1])) {
                return false;
            }
        }
        return true;
    }
}

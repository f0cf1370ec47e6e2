package dev.delayedtasks.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.stereotype.Component;

/**
 * Writes a run's HTML report: the facts, the machine-readable lines, and per workload its
 * figures, a lateness histogram and a throughput-over-time chart, as inline SVG (the file
 * needs no network).
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
class HtmlReport {

	/** Upper bounds (exclusive) of the lateness buckets, in ms; the last is open. */
	private static final long[] BOUNDS = { 0, 1, 2, 3, 4, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000 };

	private static final DateTimeFormatter FILE_TIME = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")
		.withZone(ZoneOffset.UTC);

	/**
	 * Write the report.
	 * @param directory the directory, created if missing
	 * @param facts the run's facts
	 * @param results the results
	 * @return the file written
	 */
	Path write(Path directory, RunFacts facts, List<WorkloadResult> results) {
		StringBuilder html = new StringBuilder("<!DOCTYPE html><html><head><meta charset='utf-8'>"
				+ "<title>delayed-tasks benchmarks</title><style>body{font-family:sans-serif;margin:2em}"
				+ "td,th{padding:2px 10px;text-align:left}pre{background:#f4f4f4;padding:1em;overflow-x:auto}"
				+ "</style></head><body><h1>delayed-tasks benchmarks</h1>");
		html.append(table(facts.fields()));
		html.append("<pre>").append(SvgCharts.escape(facts.line())).append('\n');
		results.forEach((result) -> html.append(SvgCharts.escape(result.line())).append('\n'));
		html.append("</pre>");
		for (WorkloadResult result : results) {
			html.append("<h2>").append(SvgCharts.escape(result.workload())).append("</h2>");
			html.append(table(result.fields()));
			Analysis analysis = result.analysis();
			if (analysis != null && analysis.runs() > 0) {
				html.append("<p>").append(histogram(result.workload(), analysis)).append("</p>");
				html.append("<p>").append(throughput(result.workload(), analysis)).append("</p>");
			}
		}
		html.append("</body></html>\n");
		try {
			Files.createDirectories(directory);
			Path file = directory.resolve("benchmark-" + FILE_TIME.format(facts.startedAt()) + ".html");
			Files.writeString(file, html, StandardCharsets.UTF_8);
			return file;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not write the report to " + directory, ex);
		}
	}

	private static String histogram(String workload, Analysis analysis) {
		long[] counts = new long[BOUNDS.length + 1];
		for (long lateness : analysis.latenessMs()) {
			int bucket = 0;
			while (bucket < BOUNDS.length && lateness >= BOUNDS[bucket]) {
				bucket++;
			}
			counts[bucket]++;
		}
		List<String> labels = new ArrayList<>();
		labels.add("<0");
		for (int i = 1; i < BOUNDS.length; i++) {
			labels.add(label(BOUNDS[i - 1], BOUNDS[i]));
		}
		labels.add(">=" + BOUNDS[BOUNDS.length - 1] / 1000 + "s");
		return SvgCharts.bars(workload + ": lateness of " + analysis.runs() + " runs", labels, counts);
	}

	private static String label(long from, long to) {
		if (to - from == 1) {
			return Long.toString(from);
		}
		return (from >= 1000) ? from / 1000 + "-" + to / 1000 + "s" : from + "-" + (to - 1);
	}

	private static String throughput(String workload, Analysis analysis) {
		long start = analysis.startMicros();
		long end = Math.max(last(analysis.runMicros()), last(analysis.enqueueMicros()));
		long span = Math.max(1, end - start);
		// At most ~150 points, each a multiple of 100 ms.
		long bucket = Math.max(100_000, (span / 150 + 99_999) / 100_000 * 100_000);
		int points = (int) (span / bucket) + 1;
		Map<String, double[]> series = new LinkedHashMap<>();
		series.put("enqueued/s", rates(analysis.enqueueMicros(), start, bucket, points));
		series.put("started/s", rates(analysis.runMicros(), start, bucket, points));
		return SvgCharts.lines(workload + ": throughput over time", bucket / 1e6, series);
	}

	private static double[] rates(long[] micros, long start, long bucket, int points) {
		double[] rates = new double[points];
		for (long time : micros) {
			int index = (int) Math.max(0, Math.min(points - 1, (time - start) / bucket));
			rates[index] += 1e6 / bucket;
		}
		return rates;
	}

	private static long last(long[] sorted) {
		return (sorted.length > 0) ? sorted[sorted.length - 1] : 0;
	}

	private static String table(Map<String, String> fields) {
		StringBuilder table = new StringBuilder("<table>");
		fields.forEach((name, value) -> table.append("<tr><th>")
			.append(SvgCharts.escape(name))
			.append("</th><td>")
			.append(SvgCharts.escape(value))
			.append("</td></tr>"));
		return table.append("</table>").toString();
	}

}

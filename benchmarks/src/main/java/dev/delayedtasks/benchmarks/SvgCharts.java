package dev.delayedtasks.benchmarks;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Self-contained inline SVG charts for the HTML report: no script, no network.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class SvgCharts {

	private static final int WIDTH = 760;

	private static final int HEIGHT = 260;

	private static final int LEFT = 60;

	private static final int BOTTOM = 40;

	private static final int TOP = 30;

	private static final String[] COLORS = { "#1f77b4", "#ff7f0e", "#2ca02c" };

	private SvgCharts() {
	}

	/**
	 * A bar chart with a logarithmic count axis, so that single slow runs stay visible
	 * beside thousands of fast ones.
	 * @param title the title
	 * @param labels the bucket labels
	 * @param counts the count of each bucket
	 * @return the SVG element
	 */
	static String bars(String title, List<String> labels, long[] counts) {
		StringBuilder svg = open(title);
		long max = 1;
		for (long count : counts) {
			max = Math.max(max, count);
		}
		double plotWidth = WIDTH - LEFT - 10;
		double plotHeight = HEIGHT - TOP - BOTTOM;
		double slot = plotWidth / counts.length;
		for (int i = 0; i < counts.length; i++) {
			double height = (counts[i] == 0) ? 0 : plotHeight * Math.log10(1 + counts[i]) / Math.log10(1 + max);
			double x = LEFT + i * slot;
			double y = TOP + plotHeight - height;
			svg.append(format(
					"<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'><title>%s ms: %d</title>" + "</rect>",
					x + 2, y, slot - 4, height, COLORS[0], escape(labels.get(i)), counts[i]));
			if (counts[i] > 0) {
				svg.append(text(x + slot / 2, y - 4, "middle", Long.toString(counts[i])));
			}
			svg.append(text(x + slot / 2, HEIGHT - BOTTOM + 15, "middle", labels.get(i)));
		}
		svg.append(text(LEFT + plotWidth / 2, HEIGHT - 5, "middle", "lateness, ms (start - due, Redis time)"));
		svg.append(text(12, TOP + plotHeight / 2, "middle", "runs (log)", -90));
		return close(svg);
	}

	/**
	 * A line chart of rates over time.
	 * @param title the title
	 * @param bucketSeconds the width of one point
	 * @param series the values per bucket, by series name
	 * @return the SVG element
	 */
	static String lines(String title, double bucketSeconds, Map<String, double[]> series) {
		StringBuilder svg = open(title);
		double max = 1;
		int points = 1;
		for (double[] values : series.values()) {
			points = Math.max(points, values.length);
			for (double value : values) {
				max = Math.max(max, value);
			}
		}
		double plotWidth = WIDTH - LEFT - 10;
		double plotHeight = HEIGHT - TOP - BOTTOM;
		int color = 0;
		for (Map.Entry<String, double[]> entry : series.entrySet()) {
			StringBuilder path = new StringBuilder();
			double[] values = entry.getValue();
			for (int i = 0; i < values.length; i++) {
				double x = LEFT + plotWidth * (i + 0.5) / points;
				double y = TOP + plotHeight * (1 - values[i] / max);
				path.append(format("%.1f,%.1f ", x, y));
			}
			String stroke = COLORS[color % COLORS.length];
			svg.append(format("<polyline fill='none' stroke='%s' stroke-width='1.5' points='%s'/>", stroke, path));
			svg.append(format("<text x='%d' y='%d' fill='%s' font-size='12'>%s</text>", WIDTH - 260 + 120 * color, 14,
					stroke, escape(entry.getKey())));
			color++;
		}
		svg.append(format("<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#999'/>", LEFT, TOP, LEFT, HEIGHT - BOTTOM));
		svg.append(text(LEFT - 4, TOP + 4, "end", Long.toString(Math.round(max))));
		svg.append(text(LEFT - 4, HEIGHT - BOTTOM, "end", "0"));
		svg.append(text(LEFT, HEIGHT - BOTTOM + 15, "start", "0 s"));
		svg.append(text(LEFT + plotWidth, HEIGHT - BOTTOM + 15, "end", format("%.1f s", points * bucketSeconds)));
		svg.append(text(LEFT + plotWidth / 2, HEIGHT - 5, "middle",
				format("time since the round started (points of %.1f s)", bucketSeconds)));
		svg.append(text(12, TOP + plotHeight / 2, "middle", "tasks/s", -90));
		return close(svg);
	}

	private static StringBuilder open(String title) {
		StringBuilder svg = new StringBuilder(format(
				"<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif' font-size='11'>",
				WIDTH, HEIGHT));
		svg.append(format("<text x='%d' y='14' font-size='13' font-weight='bold'>%s</text>", LEFT, escape(title)));
		svg.append(format("<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#999'/>", LEFT, HEIGHT - BOTTOM, WIDTH - 10,
				HEIGHT - BOTTOM));
		return svg;
	}

	private static String close(StringBuilder svg) {
		return svg.append("</svg>").toString();
	}

	private static String text(double x, double y, String anchor, String text) {
		return format("<text x='%.1f' y='%.1f' text-anchor='%s'>%s</text>", x, y, anchor, escape(text));
	}

	private static String text(double x, double y, String anchor, String text, int rotate) {
		return format("<text x='%.1f' y='%.1f' text-anchor='%s' transform='rotate(%d %.1f %.1f)'>%s</text>", x, y,
				anchor, rotate, x, y, escape(text));
	}

	static String escape(String text) {
		return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#39;");
	}

	private static String format(String format, Object... args) {
		return String.format(Locale.ROOT, format, args);
	}

}

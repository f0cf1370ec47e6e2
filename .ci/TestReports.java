import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;

import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * Summarises one CI step from the Surefire and Failsafe XML reports of every module
 * ({@code * /target/{surefire,failsafe}-reports/TEST-*.xml}) and the Redis servers the
 * test extension recorded ({@code * /target/redis-servers/servers-used.txt}): tests,
 * failures, errors and skips, and the servers used, by name and own version
 * ({@code redis-7.0.15}, {@code valkey-8.0.1}). Exits with 1 when a test was skipped that
 * the allow list does not name for this step, failed, or errored, or when
 * {@code --expect-redis=PREFIX} is given and a test class got another server or version:
 * {@code 6.2} means Redis 6.2.x, {@code valkey-8.0} Valkey 8.0.x (whose
 * {@code redis_version} is 7.2.4, so the server's own name and version are compared).
 * <p>
 * Usage: {@code java .ci/TestReports.java STEP ALLOW_LIST [--expect-redis=6.2]}, run
 * from the repository root after the step's Maven build (which must start from empty
 * report directories). Needs only a JDK 17+.
 */
public class TestReports {

	public static void main(String[] args) throws Exception {
		if (args.length < 2) {
			System.err.println("Usage: java .ci/TestReports.java STEP ALLOW_LIST [--expect-redis=PREFIX]");
			System.exit(2);
		}
		String step = args[0];
		List<Allowed> allowed = Allowed.read(Path.of(args[1]), step);
		String expectedRedis = (args.length > 2 && args[2].startsWith("--expect-redis="))
				? args[2].substring("--expect-redis=".length()) : null;
		List<TestCase> cases = new ArrayList<>();
		for (Path report : reports()) {
			cases.addAll(TestCase.read(report));
		}
		Map<String, Integer> redis = redisUsed();
		long failures = cases.stream().filter((c) -> c.outcome == Outcome.FAILURE).count();
		long errors = cases.stream().filter((c) -> c.outcome == Outcome.ERROR).count();
		List<TestCase> skipped = cases.stream().filter((c) -> c.outcome == Outcome.SKIPPED).toList();
		List<String> lines = new ArrayList<>();
		int unexplained = 0;
		for (TestCase skip : skipped) {
			Allowed allowance = allowed.stream().filter((a) -> a.covers(skip)).findFirst().orElse(null);
			if (allowance == null) {
				unexplained++;
				lines.add("   SKIPPED, not in " + args[1] + ": " + skip.id() + ": " + skip.message);
			}
			else {
				lines.add("   skipped (allowed: " + allowance.reason + "): " + skip.id() + ": " + skip.message);
			}
		}
		cases.stream()
			.filter((c) -> c.outcome == Outcome.FAILURE || c.outcome == Outcome.ERROR)
			.forEach((c) -> lines.add("   " + c.outcome + ": " + c.id() + ": " + c.message));
		String versions = redis.isEmpty() ? "none recorded"
				: redis.entrySet()
					.stream()
					.map((entry) -> entry.getKey() + " for " + entry.getValue() + " classes")
					.collect(Collectors.joining(", "));
		System.out.println("== " + step + ": " + cases.size() + " tests, " + failures + " failures, " + errors
				+ " errors, " + skipped.size() + " skipped (" + (skipped.size() - unexplained) + " allowed); Redis: "
				+ versions);
		lines.forEach(System.out::println);
		boolean ok = failures == 0 && errors == 0 && unexplained == 0;
		if (unexplained > 0) {
			System.out.println("== " + step + ": " + unexplained + " skipped test(s) not in " + args[1]
					+ ": make them run here, or add them there with the reason");
		}
		String expectedServer = (expectedRedis != null && Character.isDigit(expectedRedis.charAt(0)))
				? "redis-" + expectedRedis : expectedRedis;
		if (expectedServer != null && !cases.isEmpty() && (redis.isEmpty()
				|| !redis.keySet().stream().allMatch((server) -> server.startsWith(expectedServer + ".")))) {
			System.out.println("== " + step + ": expected only " + expectedServer + ".x, got " + versions);
			ok = false;
		}
		System.exit(ok ? 0 : 1);
	}

	private static List<Path> reports() throws IOException {
		List<Path> reports = new ArrayList<>();
		for (Path module : modules()) {
			for (String directory : List.of("surefire-reports", "failsafe-reports")) {
				Path dir = module.resolve("target").resolve(directory);
				if (Files.isDirectory(dir)) {
					try (Stream<Path> files = Files.list(dir)) {
						files.filter((file) -> file.getFileName().toString().matches("TEST-.*\\.xml"))
							.sorted()
							.forEach(reports::add);
					}
				}
			}
		}
		return reports;
	}

	/**
	 * Servers (name and own version) and kinds the test classes got, with class counts. A
	 * line without {@code server=} (written before it was recorded) is Redis.
	 */
	private static Map<String, Integer> redisUsed() throws IOException {
		Map<String, Integer> used = new TreeMap<>();
		for (Path module : modules()) {
			Path file = module.resolve("target/redis-servers/servers-used.txt");
			if (Files.isRegularFile(file)) {
				for (String line : Files.readAllLines(file)) {
					Map<String, String> fields = new TreeMap<>();
					for (String field : line.trim().split(" ")) {
						int equals = field.indexOf('=');
						if (equals > 0) {
							fields.put(field.substring(0, equals), field.substring(equals + 1));
						}
					}
					if (fields.containsKey("redis_version")) {
						String server = fields.getOrDefault("server", "redis-" + fields.get("redis_version"));
						used.merge(server + " (" + fields.get("kind") + ")", 1, Integer::sum);
					}
				}
			}
		}
		return used;
	}

	private static List<Path> modules() throws IOException {
		try (Stream<Path> entries = Files.list(Path.of("."))) {
			return entries.filter((entry) -> Files.isDirectory(entry.resolve("target"))).sorted().toList();
		}
	}

	enum Outcome {

		PASSED, FAILURE, ERROR, SKIPPED

	}

	record TestCase(String className, String method, Outcome outcome, String message) {

		/** {@code Class#method}, or the class alone when the whole class was skipped. */
		String id() {
			return (this.method.isEmpty() || this.method.equals(this.className)) ? this.className
					: this.className + "#" + this.method;
		}

		static List<TestCase> read(Path report) throws Exception {
			DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
			factory.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
			factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
			DocumentBuilder builder = factory.newDocumentBuilder();
			Element suite = builder.parse(report.toFile()).getDocumentElement();
			NodeList testCases = suite.getElementsByTagName("testcase");
			List<TestCase> cases = new ArrayList<>();
			if (testCases.getLength() == 0) {
				// What Surefire and Failsafe write for a class aborted as a whole (an
				// assumption in @BeforeAll, say): no test, no reason. Counted as one skip.
				cases.add(new TestCase(suite.getAttribute("name"), "", Outcome.SKIPPED,
						"no test of the class ran: it was skipped as a whole; see the build log"));
			}
			for (int i = 0; i < testCases.getLength(); i++) {
				Element testCase = (Element) testCases.item(i);
				String name = testCase.getAttribute("name");
				// JUnit Platform names: "method()", "method(TestRedis)", "[1] a, b".
				int parameters = name.indexOf('(');
				String method = (parameters >= 0) ? name.substring(0, parameters) : name;
				Outcome outcome = Outcome.PASSED;
				String message = "";
				for (Outcome candidate : List.of(Outcome.FAILURE, Outcome.ERROR, Outcome.SKIPPED)) {
					NodeList found = testCase.getElementsByTagName(candidate.name().toLowerCase());
					if (found.getLength() > 0) {
						outcome = candidate;
						message = outcomeMessage((Element) found.item(0));
						break;
					}
				}
				cases.add(new TestCase(testCase.getAttribute("classname"), method, outcome, message));
			}
			return cases;
		}

	}

	/** The first line of an outcome's message, else of its stack trace, after the exception's class name. */
	private static String outcomeMessage(Element outcome) {
		String message = outcome.getAttribute("message");
		String text = message.isBlank() ? outcome.getTextContent() : message;
		return text.strip()
			.replaceFirst("^[\\w.$]+(Exception|Error): ", "")
			.lines()
			.filter((line) -> !line.isBlank())
			.findFirst()
			.orElse("")
			.strip();
	}

	/**
	 * One line of the allow list: {@code STEP TEST REASON}, where STEP is a step name or
	 * {@code *} and TEST is {@code fully.qualified.Class#method} or a class (all its tests).
	 */
	record Allowed(String test, String reason) {

		boolean covers(TestCase testCase) {
			return this.test.equals(testCase.id()) || this.test.equals(testCase.className());
		}

		static List<Allowed> read(Path file, String step) throws IOException {
			List<Allowed> allowed = new ArrayList<>();
			for (String line : Files.readAllLines(file)) {
				String[] fields = line.trim().split("\\s+", 3);
				if (line.isBlank() || line.trim().startsWith("#")) {
					continue;
				}
				if (fields.length < 3) {
					throw new IllegalArgumentException(file + ": '" + line + "' needs a step, a test and a reason");
				}
				if (fields[0].equals("*") || fields[0].equals(step)) {
					allowed.add(new Allowed(fields[1], fields[2]));
				}
			}
			return allowed;
		}

	}

}

package dev.delayedtasks.benchmarks;

/**
 * One command's calls and the time Redis spent in them, from {@code INFO commandstats}.
 *
 * @param calls calls
 * @param micros microseconds spent in them
 * @author delayed-tasks
 * @since 0.1.0
 */
record CommandTime(long calls, long micros) {

	static final CommandTime NONE = new CommandTime(0, 0);

	/**
	 * Read a line of {@code INFO commandstats}, such as
	 * {@code calls=3,usec=12,usec_per_call=4.00,...}.
	 * @param line the line
	 * @return the calls and time
	 */
	static CommandTime parse(String line) {
		long calls = 0;
		long micros = 0;
		for (String field : line.split(",")) {
			String[] pair = field.split("=", 2);
			if (pair.length == 2 && pair[0].equals("calls")) {
				calls = Long.parseLong(pair[1]);
			}
			else if (pair.length == 2 && pair[0].equals("usec")) {
				micros = Long.parseLong(pair[1]);
			}
		}
		return new CommandTime(calls, micros);
	}

	CommandTime minus(CommandTime earlier) {
		return new CommandTime(this.calls - earlier.calls, this.micros - earlier.micros);
	}

}

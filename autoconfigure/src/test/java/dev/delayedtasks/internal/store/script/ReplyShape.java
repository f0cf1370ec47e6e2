package dev.delayedtasks.internal.store.script;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The reply of a script as the {@code Reply:} entry of its header documents it, for
 * example {@code {now, code, due ms or -1}; code: 'T' retry scheduled | 'D' dead}: one or
 * more alternative brace groups of comma-separated fields, each group maybe ending in a
 * part repeated per item ({@code then per item 9 fields: id, token, ...},
 * {@code then per item a code: 'O' ... | 'S' ...}, {@code then per item: code (...), id,
 * due ms}, {@code then the stats hash flattened: name, value, ...}). A field's words say
 * what it holds: a quoted or numeric literal is that value; {@code (0/1)} a flag;
 * {@code code} one of the quoted one-letter codes listed with it (or after the group);
 * {@code or ''} text that may be empty; {@code or -1} an integer of -1 or more; the names
 * in {@link #TEXT_FIELDS} text; anything else an integer.
 */
final class ReplyShape {

	/** The field names the headers use for text; every other field is an integer. */
	private static final Set<String> TEXT_FIELDS = Set.of("id", "token", "envelope", "name", "value", "storedVersion");

	private static final Pattern CODE = Pattern.compile("'([A-Z])'");

	private static final Pattern CODES_AFTER_GROUP = Pattern.compile("\\bcode: ([^{}]+)");

	private static final Pattern PER_ITEM_FIELDS = Pattern.compile("^then per item (\\d+) fields: (.+)$");

	private static final Pattern PER_ITEM_CODE = Pattern.compile("^then per item a code: (.+)$");

	private static final Pattern PER_ITEM = Pattern.compile("^then per item: (.+)$");

	private static final Pattern FLATTENED = Pattern.compile("^then the stats hash flattened: (.+)$");

	private final String text;

	private final List<Group> groups;

	private ReplyShape(String text, List<Group> groups) {
		this.text = text;
		this.groups = groups;
	}

	/**
	 * Parse a header's {@code Reply:} entry.
	 * @param text the entry, without {@code -- Reply:}
	 * @return its shape
	 * @throws IllegalArgumentException when the entry has a form this parser does not
	 * know
	 */
	static ReplyShape parse(String text) {
		List<Group> groups = new ArrayList<>();
		StringBuilder outside = new StringBuilder();
		List<String> contents = new ArrayList<>();
		int depth = 0;
		int start = -1;
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (c == '{') {
				if (depth++ == 0) {
					start = i + 1;
				}
			}
			else if (c == '}') {
				if (--depth == 0) {
					contents.add(text.substring(start, i));
				}
			}
			else if (depth == 0) {
				outside.append(c);
			}
		}
		if (contents.isEmpty() || depth != 0) {
			throw new IllegalArgumentException("No balanced {...} reply in '" + text + "'");
		}
		Set<String> codesAfterGroups = new LinkedHashSet<>();
		Matcher after = CODES_AFTER_GROUP.matcher(outside);
		while (after.find()) {
			codesAfterGroups.addAll(codes(after.group(1)));
		}
		for (String content : contents) {
			groups.add(Group.parse(content, codesAfterGroups));
		}
		return new ReplyShape(text, groups);
	}

	/**
	 * What is wrong with {@code reply}, against every documented alternative.
	 * @param reply the script's reply, bulk strings as {@code String}, integers as
	 * {@code Long}
	 * @param expectedItems the number of items the call sent, or -1 when it does not say
	 * @return the problems, empty when one alternative fits
	 */
	List<String> mismatches(List<Object> reply, int expectedItems) {
		List<String> problems = new ArrayList<>();
		for (Group group : this.groups) {
			List<String> groupProblems = group.mismatches(reply, expectedItems);
			if (groupProblems.isEmpty()) {
				return List.of();
			}
			problems.add("{" + group.source() + "}: " + String.join("; ", groupProblems));
		}
		return problems;
	}

	int alternatives() {
		return this.groups.size();
	}

	@Override
	public String toString() {
		return this.text;
	}

	private static Set<String> codes(String text) {
		Set<String> codes = new LinkedHashSet<>();
		Matcher code = CODE.matcher(text);
		while (code.find()) {
			codes.add(code.group(1));
		}
		return codes;
	}

	/** Split at commas outside parentheses (the headers quote no comma). */
	private static List<String> split(String content) {
		List<String> fields = new ArrayList<>();
		int depth = 0;
		StringBuilder field = new StringBuilder();
		for (char c : content.toCharArray()) {
			if (c == ',' && depth == 0) {
				fields.add(field.toString().trim());
				field.setLength(0);
				continue;
			}
			if (c == '(') {
				depth++;
			}
			else if (c == ')') {
				depth--;
			}
			field.append(c);
		}
		fields.add(field.toString().trim());
		return fields;
	}

	/** One documented alternative: its fixed fields, then maybe a part per item. */
	private record Group(String source, List<Field> fixed, List<Field> item) {

		static Group parse(String content, Set<String> codesAfterGroup) {
			List<String> parts = split(content);
			List<Field> fixed = new ArrayList<>();
			List<Field> item = new ArrayList<>();
			for (int i = 0; i < parts.size(); i++) {
				String part = parts.get(i);
				if (!part.startsWith("then ")) {
					fixed.add(Field.of(part, codesAfterGroup));
					continue;
				}
				List<String> rest = parts.subList(i + 1, parts.size());
				Matcher fields = PER_ITEM_FIELDS.matcher(part);
				Matcher code = PER_ITEM_CODE.matcher(part);
				Matcher perItem = PER_ITEM.matcher(part);
				Matcher flattened = FLATTENED.matcher(part);
				if (fields.matches()) {
					item.add(Field.of(fields.group(2), codesAfterGroup));
					rest.forEach((name) -> item.add(Field.of(name, codesAfterGroup)));
					if (item.size() != Integer.parseInt(fields.group(1))) {
						throw new IllegalArgumentException("'" + part + "' names " + item.size() + " fields");
					}
				}
				else if (code.matches()) {
					// One code per item: the rest is the list of codes.
					String codes = String.join(", ", List.of(code.group(1), String.join(", ", rest)));
					item.add(new Field("code", Kind.CODE, codes(codes), null));
				}
				else if (perItem.matches()) {
					item.add(Field.of(perItem.group(1), codesAfterGroup));
					rest.forEach((name) -> item.add(Field.of(name, codesAfterGroup)));
				}
				else if (flattened.matches()) {
					item.add(Field.of(flattened.group(1), codesAfterGroup));
					rest.stream()
						.filter((name) -> !name.equals("..."))
						.forEach((name) -> item.add(Field.of(name, codesAfterGroup)));
				}
				else {
					throw new IllegalArgumentException("Unknown repeated part '" + part + "'");
				}
				break;
			}
			return new Group(content, List.copyOf(fixed), List.copyOf(item));
		}

		List<String> mismatches(List<Object> reply, int expectedItems) {
			List<String> problems = new ArrayList<>();
			int items = 0;
			if (this.item.isEmpty()) {
				if (reply.size() != this.fixed.size()) {
					problems.add(reply.size() + " elements, not " + this.fixed.size());
				}
			}
			else {
				int repeated = reply.size() - this.fixed.size();
				if (repeated < 0 || repeated % this.item.size() != 0) {
					problems.add(reply.size() + " elements, not " + this.fixed.size() + " + n * " + this.item.size());
				}
				else {
					items = repeated / this.item.size();
					if (expectedItems >= 0 && items != expectedItems) {
						problems.add(items + " items, not the " + expectedItems + " sent");
					}
				}
			}
			if (!problems.isEmpty()) {
				return problems;
			}
			for (int i = 0; i < reply.size(); i++) {
				Field field = (i < this.fixed.size()) ? this.fixed.get(i)
						: this.item.get((i - this.fixed.size()) % this.item.size());
				String problem = field.mismatch(reply.get(i));
				if (problem != null) {
					problems.add("element " + (i + 1) + " (" + field.description() + "): " + problem);
				}
				if (i < this.fixed.size() && field.description().equals("itemCount")
						&& !Long.valueOf(items).equals(reply.get(i))) {
					problems.add("itemCount " + reply.get(i) + " but " + items + " items follow");
				}
			}
			return problems;
		}

	}

	private enum Kind {

		EXACT, FLAG, CODE, TEXT, TEXT_OR_EMPTY, INTEGER_FROM_MINUS_ONE, INTEGER

	}

	private record Field(String description, Kind kind, Set<String> codes, Object exact) {

		static Field of(String description, Set<String> codesAfterGroup) {
			String word = description.split("[\\s(]", 2)[0];
			if (description.matches("'[^']*'")) {
				return new Field(description, Kind.EXACT, Set.of(), description.substring(1, description.length() - 1));
			}
			if (description.matches("-?\\d+")) {
				return new Field(description, Kind.EXACT, Set.of(), Long.valueOf(description));
			}
			if (description.contains("(0/1)") || description.contains("(1/0)")) {
				return new Field(description, Kind.FLAG, Set.of(), null);
			}
			if (word.equals("code")) {
				Set<String> codes = ReplyShape.codes(description);
				if (codes.isEmpty()) {
					codes = codesAfterGroup;
				}
				if (codes.isEmpty()) {
					throw new IllegalArgumentException("No codes listed for '" + description + "'");
				}
				return new Field(description, Kind.CODE, codes, null);
			}
			if (description.endsWith("or ''")) {
				return new Field(description, Kind.TEXT_OR_EMPTY, Set.of(), null);
			}
			if (description.contains("or -1")) {
				return new Field(description, Kind.INTEGER_FROM_MINUS_ONE, Set.of(), null);
			}
			if (TEXT_FIELDS.contains(word)) {
				return new Field(description, Kind.TEXT, Set.of(), null);
			}
			return new Field(description, Kind.INTEGER, Set.of(), null);
		}

		String mismatch(Object value) {
			return switch (this.kind) {
				case EXACT -> this.exact.equals(value) ? null : "not " + this.exact + ": " + describe(value);
				case FLAG -> (Long.valueOf(0).equals(value) || Long.valueOf(1).equals(value)) ? null
						: "not 0 or 1: " + describe(value);
				case CODE -> (value instanceof String code && this.codes.contains(code)) ? null
						: "not one of " + this.codes + ": " + describe(value);
				case TEXT ->
					(value instanceof String string && !string.isEmpty()) ? null : "not text: " + describe(value);
				case TEXT_OR_EMPTY -> (value instanceof String) ? null : "not text: " + describe(value);
				case INTEGER_FROM_MINUS_ONE -> (value instanceof Long number && number >= -1) ? null
						: "not an integer of -1 or more: " + describe(value);
				case INTEGER -> (value instanceof Long) ? null : "not an integer: " + describe(value);
			};
		}

		private static String describe(Object value) {
			return (value != null) ? value.getClass().getSimpleName() + " '" + value + "'" : "null";
		}

	}

}

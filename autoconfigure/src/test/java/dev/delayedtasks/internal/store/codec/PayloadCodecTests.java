package dev.delayedtasks.internal.store.codec;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.internal.store.codec.PayloadCodec.Envelope;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.DefaultTyping;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.jsontype.BasicPolymorphicTypeValidator;
import tools.jackson.databind.jsontype.PolymorphicTypeValidator;

import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.entry;

class PayloadCodecTests {

	private static final PolymorphicTypeValidator ANYTHING = BasicPolymorphicTypeValidator.builder()
		.allowIfBaseType(Object.class)
		.build();

	private final PayloadCodec codec = new PayloadCodec(JsonMapper.shared(), DataSize.ofKilobytes(64));

	@Test
	void theEnvelopeHoldsTheHeadersAndThePayload() {
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("tenant", "acme");
		headers.put("trace", "t-1");
		String envelope = this.codec.envelope("emails", new Item("a", 1), headers);
		assertThat(envelope)
			.isEqualTo("{\"h\":{\"tenant\":\"acme\",\"trace\":\"t-1\"},\"b\":{\"name\":\"a\",\"n\":1}}");
	}

	@Test
	void theEnvelopeOfATaskWithoutHeadersOrPayload() {
		assertThat(this.codec.envelope("emails", new Item("a", 1), Map.of()))
			.isEqualTo("{\"h\":{},\"b\":{\"name\":\"a\",\"n\":1}}");
		assertThat(this.codec.envelope("emails", null, Map.of())).isEqualTo("{\"h\":{},\"b\":null}");
		assertThat(this.codec.envelope("emails", "text", Map.of())).isEqualTo("{\"h\":{},\"b\":\"text\"}");
		assertThat(this.codec.envelope("emails", 42, Map.of())).isEqualTo("{\"h\":{},\"b\":42}");
	}

	@Test
	void aTaskIdInAPayloadIsWrittenAsAStringAndReadBackFromTheObjectShapeOfEarlierBuilds() {
		FollowUp followUp = new FollowUp(TaskId.of("order-42"));
		String envelope = this.codec.envelope("emails", followUp, Map.of());
		assertThat(envelope).isEqualTo("{\"h\":{},\"b\":{\"after\":\"order-42\"}}");
		assertThat(convert(envelope, FollowUp.class)).isEqualTo(followUp);
		// Stored before ids were written as strings.
		assertThat(convert("{\"h\":{},\"b\":{\"after\":{\"value\":\"order-42\"}}}", FollowUp.class))
			.isEqualTo(followUp);
	}

	@Test
	void headerValuesAreEscaped() {
		String envelope = this.codec.envelope("emails", 1, Map.of("q\"uote", "line\nbreak"));
		assertThat(envelope).isEqualTo("{\"h\":{\"q\\\"uote\":\"line\\nbreak\"},\"b\":1}");
		assertThat(this.codec.read(envelope).headers()).containsExactly(entry("q\"uote", "line\nbreak"));
	}

	@Test
	void anEnvelopeReadsBackToItsHeadersAndPayload() {
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("b", "2");
		headers.put("a", "1");
		Envelope envelope = this.codec.read(this.codec.envelope("emails", new Item("x", 7), headers));
		assertThat(envelope.headers()).containsExactly(entry("b", "2"), entry("a", "1"));
		Item item = this.codec.convert(envelope.body(), this.codec.type(Item.class));
		assertThat(item).isEqualTo(new Item("x", 7));
	}

	@Test
	void aPayloadConvertsBackToAGenericType() {
		List<Item> items = List.of(new Item("a", 1), new Item("b", 2));
		Envelope envelope = this.codec.read(this.codec.envelope("emails", items, Map.of()));
		List<Item> back = this.codec.convert(envelope.body(), this.codec.type(new TypeReference<List<Item>>() {
		}.getType()));
		assertThat(back).containsExactly(new Item("a", 1), new Item("b", 2));
		assertThat(back.get(0)).isInstanceOf(Item.class);
		Map<String, List<Item>> byName = this.codec.convert(
				this.codec.read(this.codec.envelope("emails", Map.of("all", items), Map.of())).body(),
				this.codec.type(new TypeReference<Map<String, List<Item>>>() {
				}.getType()));
		assertThat(byName.get("all")).containsExactly(new Item("a", 1), new Item("b", 2));
	}

	@Test
	void aPayloadThatCannotBeConvertedIsReportedWithoutItsValues() {
		JsonNode body = this.codec.read("{\"h\":{},\"b\":{\"name\":\"a\",\"n\":\"alice@example.com\"}}").body();
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> this.codec.convert(body, this.codec.type(Item.class)))
			.withMessage("cannot convert the payload to " + Item.class.getName()
					+ ": InvalidFormatException at $.n: not a valid int")
			.withNoCause();
	}

	@Test
	void theKeysOfAMapAreNotNamedInThePath() {
		JsonNode body = this.codec
			.read("{\"h\":{},\"b\":{\"items\":[{\"name\":\"a\",\"n\":1}],"
					+ "\"byUser\":{\"bob@example.com\":[{\"name\":\"b\",\"n\":[2]}]}}}")
			.body();
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> this.codec.convert(body, this.codec.type(Catalog.class)))
			.withMessage("cannot convert the payload to " + Catalog.class.getName()
					+ ": MismatchedInputException at $.byUser[*][0].n: the JSON value does not fit int");
	}

	@Test
	void theOwnExceptionOfAPayloadClassIsKeptWithItsMessage() {
		JsonNode body = this.codec.read("{\"h\":{},\"b\":{\"amount\":-5}}").body();
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> this.codec.convert(body, this.codec.type(Positive.class)))
			.withMessage("cannot convert the payload to " + Positive.class.getName() + ": ValueInstantiationException: "
					+ Positive.class.getName()
					+ " could not be created: its creator threw java.lang.IllegalArgumentException")
			.havingCause()
			.isInstanceOf(IllegalArgumentException.class)
			.withMessage("amount must be positive");
	}

	@Test
	void jacksonsMessageAndCauseAreKeptWhenValuesMayBeShown() {
		PayloadCodec showing = new PayloadCodec(JsonMapper.shared(), PayloadLimits.of(DataSize.ofKilobytes(64)), true);
		JsonNode body = showing.read("{\"h\":{},\"b\":{\"name\":\"a\",\"n\":\"alice@example.com\"}}").body();
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> showing.convert(body, showing.type(Item.class)))
			.withMessageStartingWith("cannot convert the payload to " + Item.class.getName())
			.withMessageContaining("\"alice@example.com\"")
			.withCauseInstanceOf(JacksonException.class);
	}

	@Test
	void somethingThatIsNotAnEnvelopeIsRejectedWithoutItsContent() {
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> this.codec.read("{\"h\":{\"user-email\":\"dave@example.com\"}}"))
			.withMessage("not a task envelope: JSON object without the payload field \"b\"");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> this.codec.read("[\"dave@example.com\"]"))
			.withMessage("not a task envelope: JSON array");
		String truncated = "{\"h\":{\"user-email\":\"dave@example.com\"},\"b\":";
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> this.codec.read(truncated))
			.withMessage("not valid JSON: UnexpectedEndOfInputException at line 1, column " + (truncated.length() + 1)
					+ ": the JSON ends too early")
			.withNoCause();
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> this.codec.read("{\"h\":{\"user-email\":dave@example.com}}"))
			.withMessage("not valid JSON: StreamReadException at line 1, column 20: malformed JSON");
	}

	@Test
	void somethingThatIsNotAnEnvelopeIsQuotedWhenValuesMayBeShown() {
		PayloadCodec showing = new PayloadCodec(JsonMapper.shared(), PayloadLimits.of(DataSize.ofKilobytes(64)), true);
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> showing.read("{\"h\":{}}"))
			.withMessage("not a task envelope: {\"h\":{}}");
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> showing.read("[1]"))
			.withMessage("not a task envelope: [1]");
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> showing.read("{\"b\":"))
			.withMessageStartingWith("not valid JSON: ");
		String longText = "{\"x\":\"" + "y".repeat(200) + "\"}";
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> showing.read(longText))
			.withMessage("not a task envelope: " + longText.substring(0, 80) + "...");
	}

	@Test
	void anUnreadableEnvelopeIsDescribedWithoutItsContent() {
		String envelope = "{\"h\":{\"authorization\":\"Bearer tok-SECRET-123\"},\"b\":{\"age\":";
		assertThat(this.codec.describeUnreadable(envelope))
			.isEqualTo("not valid JSON: UnexpectedEndOfInputException at line 1, column " + (envelope.length() + 1)
					+ ": the JSON ends too early");
		PayloadCodec showing = new PayloadCodec(JsonMapper.shared(), PayloadLimits.of(DataSize.ofKilobytes(64)), true);
		assertThat(showing.describeUnreadable(envelope)).contains("Bearer tok-SECRET-123");
	}

	@Test
	void aPayloadOverTheLimitIsRejectedWithItsSizeAndTheProperty() {
		PayloadCodec small = new PayloadCodec(JsonMapper.shared(), DataSize.ofBytes(10));
		assertThat(small.envelope("emails", "12345678", Map.of())).isEqualTo("{\"h\":{},\"b\":\"12345678\"}");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> small.envelope("emails", "123456789", Map.of()))
			.withMessage(
					"Payload of type java.lang.String for queue 'emails' is 11 bytes as JSON, over the limit of 10 "
							+ "bytes (delayed-tasks.producer.max-payload-size)");
	}

	@Test
	void thePayloadSizeCountsUtf8Bytes() {
		PayloadCodec small = new PayloadCodec(JsonMapper.shared(), DataSize.ofBytes(10));
		// "éééé" is 4 characters but 8 bytes, 10 with the quotes
		assertThat(small.envelope("emails", "éééé", Map.of())).contains("éééé");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> small.envelope("emails", "ééééé", Map.of()))
			.withMessageContaining("is 12 bytes as JSON, over the limit of 10 bytes");
	}

	@Test
	void aPayloadJacksonCannotWriteIsRejectedWithTheApplicationsOwnReason() {
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> this.codec.envelope("emails", new Unwritable(), Map.of()))
			.withMessage("Payload of type " + Unwritable.class.getName()
					+ " for queue 'emails' cannot be written as JSON: DatabindException at $.value: "
					+ "threw java.lang.IllegalStateException (no value today)")
			.withCauseInstanceOf(IllegalStateException.class);
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> this.codec.payloadDigest("emails", new Unwritable()))
			.withMessageStartingWith("Payload of type " + Unwritable.class.getName()
					+ " for queue 'emails' cannot be written as JSON: ");
		PayloadCodec showing = new PayloadCodec(JsonMapper.shared(), PayloadLimits.of(DataSize.ofKilobytes(64)), true);
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> showing.envelope("emails", new Unwritable(), Map.of()))
			.withMessageContaining("no value today")
			.withCauseInstanceOf(JacksonException.class);
	}

	// what the workers' reader refuses is refused when written

	@Test
	void aNumberLongerThanTheReaderAllowsIsRejected() {
		assertThat(this.codec.envelope("emails", new BigInteger("9".repeat(1000)), Map.of())).hasSize(1013);
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> this.codec.envelope("emails", new BigInteger("9".repeat(1001)), Map.of()))
			.withMessage("Payload of type java.math.BigInteger for queue 'emails' would be refused by the workers' "
					+ "JSON reader: Number value length (1001) exceeds the maximum allowed (1000, from "
					+ "`StreamReadConstraints.getMaxNumberLength()`), in the payload (line 1, column 1014)")
			.withNoCause();
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> this.codec.envelope("emails", Map.of("amount", new BigDecimal("1." + "5".repeat(1000))),
					Map.of()))
			.withMessageContaining("Number value length");
	}

	@Test
	void aPropertyNameLongerThanTheReaderAllowsIsRejected() {
		assertThat(this.codec.envelope("emails", Map.of("n".repeat(50000), 1), Map.of())).hasSize(50000 + 19);
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> this.codec.envelope("emails", Map.of("n".repeat(60000), 1), Map.of()))
			.withMessageStartingWith("Payload of type java.util.ImmutableCollections$Map1 for queue 'emails' would be "
					+ "refused by the workers' JSON reader: Name length (60000) exceeds the maximum allowed (50000, "
					+ "from `StreamReadConstraints.getMaxNameLength()`), in the payload");
	}

	@Test
	void nestingDeeperThanTheReaderAllowsIsRejected() {
		// The envelope adds one level: a payload 500 deep, which Jackson writes, is 501
		// deep when read.
		assertThat(this.codec.envelope("emails", nested(499), Map.of())).isNotEmpty();
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> this.codec.envelope("emails", nested(500), Map.of()))
			.withMessageContaining("would be refused by the workers' JSON reader: Document nesting depth (501) "
					+ "exceeds the maximum allowed (500, from `StreamReadConstraints.getMaxNestingDepth()`)");
	}

	@Test
	void theLimitsOfTheApplicationsMapperApply() {
		JsonMapper strict = JsonMapper
			.builder(JsonFactory.builder()
				.streamReadConstraints(StreamReadConstraints.builder().maxNumberLength(10).maxNameLength(20).build())
				.build())
			.build();
		PayloadCodec codec = new PayloadCodec(strict, DataSize.ofKilobytes(64));
		assertThat(codec.envelope("emails", 1234567890L, Map.of())).isEqualTo("{\"h\":{},\"b\":1234567890}");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> codec.envelope("emails", 12345678901L, Map.of()))
			.withMessageContaining("Number value length (11) exceeds the maximum allowed (10");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> codec.envelope("emails", 1, Map.of("x-header-name-of-21-ch", "v")))
			.withMessageContaining("Name length (22) exceeds the maximum allowed (20")
			.withMessageContaining("in the headers");
	}

	// headers

	@Test
	void moreHeadersThanTheLimitAreRejected() {
		Map<String, String> headers = new LinkedHashMap<>();
		for (int i = 0; i < PayloadLimits.DEFAULT_MAX_HEADERS; i++) {
			headers.put("h" + i, "v");
		}
		assertThat(this.codec.envelope("emails", 1, headers)).contains("\"h63\":\"v\"");
		headers.put("one-more", "v");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> this.codec.envelope("emails", 1, headers))
			.withMessage("65 headers for queue 'emails' are over the limit of 64 (delayed-tasks.producer.max-headers)");
	}

	@Test
	void headersOverTheSizeLimitAreRejectedWithoutTheirValues() {
		// {"a":"..."} is 8 bytes and the value
		String fits = "v".repeat(16 * 1024 - 8);
		assertThat(this.codec.envelope("emails", 1, Map.of("a", fits))).contains(fits);
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> this.codec.envelope("emails", 1, Map.of("a", fits + "\"")))
			.withMessage("Headers for queue 'emails' are 16386 bytes as JSON, over the limit of 16384 bytes "
					+ "(delayed-tasks.producer.max-headers-size)");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> this.codec.envelope("emails", 1, Map.of("a", "é".repeat(8190))))
			.withMessageContaining("are 16388 bytes as JSON");
		String huge = "v".repeat(20 * 1024 * 1024);
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> this.codec.envelope("emails", 1, Map.of("big", huge)))
			.withMessage("Headers for queue 'emails' are at least " + (huge.length() + 3)
					+ " bytes as JSON, over the limit of 16384 bytes (delayed-tasks.producer.max-headers-size)");
	}

	@Test
	void headerLimitsAreConfigurable() {
		PayloadCodec codec = new PayloadCodec(JsonMapper.shared(),
				new PayloadLimits(DataSize.ofKilobytes(64), 1, DataSize.ofBytes(20)), false);
		assertThat(codec.envelope("emails", 1, Map.of("tenant", "acme"))).contains("acme");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> codec.envelope("emails", 1, Map.of("a", "1", "b", "2")))
			.withMessageContaining("over the limit of 1");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> codec.envelope("emails", 1, Map.of("tenant", "acme-corporation")))
			.withMessageContaining("over the limit of 20 bytes");
	}

	private static Object nested(int depth) {
		Object value = 1;
		for (int i = 0; i < depth; i++) {
			value = List.of(value);
		}
		return value;
	}

	@Test
	void theDigestIsSixteenUrlSafeCharacters() {
		assertThat(this.codec.payloadDigest("emails", new Item("a", 1))).matches("[A-Za-z0-9_-]{16}");
		assertThat(this.codec.uniqueDigest("emails", "user-7-welcome")).matches("[A-Za-z0-9_-]{16}");
	}

	@Test
	void thePayloadDigestIgnoresMapInsertionOrder() {
		Map<String, Object> ab = new LinkedHashMap<>();
		ab.put("a", 1);
		ab.put("b", Map.of("y", 2, "x", 1));
		Map<String, Object> nestedReversed = new LinkedHashMap<>();
		nestedReversed.put("x", 1);
		nestedReversed.put("y", 2);
		Map<String, Object> ba = new LinkedHashMap<>();
		ba.put("b", nestedReversed);
		ba.put("a", 1);
		assertThat(this.codec.envelope("emails", ab, Map.of()))
			.isNotEqualTo(this.codec.envelope("emails", ba, Map.of()));
		assertThat(this.codec.payloadDigest("emails", ab)).isEqualTo(this.codec.payloadDigest("emails", ba));
	}

	@Test
	void thePayloadDigestIsStableAndDependsOnThePayloadAndTheQueue() {
		String digest = this.codec.payloadDigest("emails", new Item("a", 1));
		assertThat(new PayloadCodec(JsonMapper.shared(), DataSize.ofKilobytes(1)).payloadDigest("emails",
				new Item("a", 1)))
			.isEqualTo(digest);
		assertThat(this.codec.payloadDigest("emails", new Item("a", 2))).isNotEqualTo(digest);
		assertThat(this.codec.payloadDigest("sms", new Item("a", 1))).isNotEqualTo(digest);
		assertThat(this.codec.payloadDigest("emails", null)).isNotEqualTo(this.codec.payloadDigest("sms", null));
	}

	@Test
	void theUniqueKeyDigestDependsOnTheKeyAndTheQueue() {
		String digest = this.codec.uniqueDigest("emails", "user-7-welcome");
		assertThat(this.codec.uniqueDigest("emails", "user-7-welcome")).isEqualTo(digest);
		assertThat(this.codec.uniqueDigest("emails", "user-8-welcome")).isNotEqualTo(digest);
		assertThat(this.codec.uniqueDigest("sms", "user-7-welcome")).isNotEqualTo(digest);
		assertThat(this.codec.uniqueDigest("emails", "user-7-welcome\n")).isNotEqualTo(digest);
	}

	@Test
	void aKeyDigestNeverEqualsAPayloadDigestOfTheSameText() {
		assertThat(this.codec.uniqueDigest("emails", "\"x\"")).isNotEqualTo(this.codec.payloadDigest("emails", "x"));
	}

	@Test
	void defaultTypingOfTheApplicationsMapperIsSwitchedOff() {
		JsonMapper typing = JsonMapper.builder()
			.activateDefaultTyping(ANYTHING, DefaultTyping.NON_FINAL_AND_RECORDS)
			.build();
		List<Item> items = new ArrayList<>(List.of(new Item("a", 1)));
		assertThat(typing.writeValueAsString(items)).as("the mapper given to the codec writes class names")
			.contains(Item.class.getName());
		PayloadCodec typed = new PayloadCodec(typing, DataSize.ofKilobytes(64));
		String envelope = typed.envelope("emails", items, Map.of("h", "1"));
		assertThat(envelope).isEqualTo("{\"h\":{\"h\":\"1\"},\"b\":[{\"name\":\"a\",\"n\":1}]}");
		assertThat(envelope).doesNotContain("java.").doesNotContain("dev.delayedtasks").doesNotContain("@class");
		Map<String, Object> map = new LinkedHashMap<>();
		map.put("item", new Item("b", 2));
		assertThat(typed.envelope("emails", map, Map.of()))
			.isEqualTo("{\"h\":{},\"b\":{\"item\":{\"name\":\"b\",\"n\":2}}}");
		assertThat(typed.payloadDigest("emails", items)).isEqualTo(this.codec.payloadDigest("emails", items));
		assertThat(typing.writeValueAsString(items)).as("the application's mapper is not changed")
			.contains(Item.class.getName());
	}

	@Test
	void defaultTypingAsAPropertyIsSwitchedOffToo() {
		JsonMapper typing = JsonMapper.builder()
			.activateDefaultTypingAsProperty(ANYTHING, DefaultTyping.NON_FINAL_AND_RECORDS, "@class")
			.build();
		assertThat(typing.writeValueAsString(new Item("a", 1))).contains("\"@class\"");
		PayloadCodec typed = new PayloadCodec(typing, DataSize.ofKilobytes(64));
		assertThat(typed.envelope("emails", new Item("a", 1), Map.of()))
			.isEqualTo("{\"h\":{},\"b\":{\"name\":\"a\",\"n\":1}}");
	}

	@Test
	void classNamesInAStoredPayloadAreNotTrusted() {
		JsonMapper typing = JsonMapper.builder()
			.activateDefaultTyping(ANYTHING, DefaultTyping.NON_FINAL_AND_RECORDS)
			.build();
		PayloadCodec typed = new PayloadCodec(typing, DataSize.ofKilobytes(64));
		String hostile = "{\"h\":{},\"b\":[\"" + Item.class.getName() + "\",{\"name\":\"a\",\"n\":1}]}";
		Object value = typed.convert(typed.read(hostile).body(), typed.type(Object.class));
		assertThat(value).isInstanceOf(List.class);
		assertThat((List<?>) value).first().isEqualTo(Item.class.getName());
		String withProperty = "{\"h\":{},\"b\":{\"@class\":\"" + Item.class.getName() + "\",\"name\":\"a\",\"n\":1}}";
		Object map = typed.convert(typed.read(withProperty).body(), typed.type(Object.class));
		assertThat(map).isInstanceOf(Map.class);
	}

	@Test
	void aClassNameInAStoredPayloadNeverChoosesWhatIsInstantiated() {
		JsonMapper typing = JsonMapper.builder()
			.activateDefaultTypingAsProperty(ANYTHING, DefaultTyping.NON_FINAL_AND_RECORDS, "@class")
			.build();
		PayloadCodec typed = new PayloadCodec(typing, DataSize.ofKilobytes(64));
		String gadget = "{\"@class\":\"java.lang.ProcessBuilder\",\"command\":[\"touch\",\"/tmp/owned\"]}";
		assertThat(
				typing.readValue("{\"@class\":\"" + Item.class.getName() + "\",\"name\":\"a\",\"n\":1}", Object.class))
			.as("the application's mapper instantiates whatever a payload names")
			.isInstanceOf(Item.class);
		JsonNode body = typed.read("{\"h\":{},\"b\":" + gadget + "}").body();
		Object untyped = typed.convert(body, typed.type(Object.class));
		assertThat(untyped).asInstanceOf(InstanceOfAssertFactories.MAP)
			.containsEntry("@class", "java.lang.ProcessBuilder");
		JsonNode item = typed.read("{\"h\":{},\"b\":{\"@class\":\"java.lang.ProcessBuilder\",\"name\":\"a\",\"n\":1}}")
			.body();
		assertThat(typed.<Object>convert(item, typed.type(Item.class))).isEqualTo(new Item("a", 1));
	}

	private <T> T convert(String envelope, Class<T> type) {
		return this.codec.convert(this.codec.read(envelope).body(), this.codec.type(type));
	}

	record FollowUp(TaskId after) {

	}

	record Item(String name, int n) {
	}

	record Catalog(List<Item> items, Map<String, List<Item>> byUser) {
	}

	record Positive(int amount) {

		Positive {
			if (amount <= 0) {
				throw new IllegalArgumentException("amount must be positive");
			}
		}

	}

	public static class Unwritable {

		public String getValue() {
			throw new IllegalStateException("no value today");
		}

	}

}

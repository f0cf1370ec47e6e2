package dev.delayedtasks.internal.recurring;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;

import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.MisfirePolicy;
import dev.delayedtasks.RecurringSchedule;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The ticks of cron and fixed-rate schedules: zones, daylight-saving transitions, macros,
 * and the errors bad definitions get.
 */
class TicksTests {

	private static final ZoneId PARIS = ZoneId.of("Europe/Paris");

	private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");

	@Test
	void aCronExpressionIsReadInItsZone() {
		Ticks paris = Ticks.of(RecurringSchedule.cron("r", "q", "0 0 2 * * *").zone(PARIS));
		Ticks utc = Ticks.of(RecurringSchedule.cron("r", "q", "0 0 2 * * *"));
		Instant from = Instant.parse("2026-01-15T12:00:00Z");
		assertThat(paris.next(from)).isEqualTo(Instant.parse("2026-01-16T01:00:00Z"));
		assertThat(utc.next(from)).isEqualTo(Instant.parse("2026-01-16T02:00:00Z"));
		assertThat(Ticks.of(RecurringSchedule.cron("r", "q", "0 0 2 * * *").zone(ZoneId.of("Asia/Kolkata"))).next(from))
			.isEqualTo(Instant.parse("2026-01-15T20:30:00Z"));
	}

	@Test
	void aTimeSkippedBySpringForwardHasNoTickThatDayAsWithSpringsScheduled() {
		// Paris, 2026-03-29: 02:00 CET jumps to 03:00 CEST; 02:30 does not exist, and
		// Spring's CronExpression (so @Scheduled too) does not fire that day.
		Ticks ticks = Ticks.of(RecurringSchedule.cron("r", "q", "0 30 2 * * *").zone(PARIS));
		List<ZonedDateTime> fired = ticks(ticks, Instant.parse("2026-03-27T12:00:00Z"), 3);
		assertThat(fired).extracting((tick) -> tick.toLocalDateTime().toString())
			.containsExactly("2026-03-28T02:30", "2026-03-30T02:30", "2026-03-31T02:30");
		assertThat(fired.get(1).getOffset().toString()).isEqualTo("+02:00");
	}

	@Test
	void aTimeRepeatedByFallBackHasTwoTicksAnHourApartAsWithSpringsScheduled() {
		// Paris, 2026-10-25: 03:00 CEST falls back to 02:00 CET; 02:30 happens twice,
		// at two instants, and Spring's CronExpression matches both: two occurrences.
		Ticks ticks = Ticks.of(RecurringSchedule.cron("r", "q", "0 30 2 * * *").zone(PARIS));
		List<ZonedDateTime> fired = ticks(ticks, Instant.parse("2026-10-24T12:00:00Z"), 3);
		assertThat(fired).extracting((tick) -> tick.toLocalDateTime().toString())
			.containsExactly("2026-10-25T02:30", "2026-10-25T02:30", "2026-10-26T02:30");
		assertThat(fired.get(0).toInstant()).isEqualTo(Instant.parse("2026-10-25T00:30:00Z"));
		assertThat(fired.get(1).toInstant()).isEqualTo(Instant.parse("2026-10-25T01:30:00Z"));
	}

	@Test
	void aScheduleOutsideTheTransitionHoursIsNotMoved() {
		Ticks ticks = Ticks.of(RecurringSchedule.cron("r", "q", "0 0 9 * * *").zone(PARIS));
		List<ZonedDateTime> fired = ticks(ticks, Instant.parse("2026-03-28T12:00:00Z"), 2);
		assertThat(fired).extracting((tick) -> tick.toInstant().toString())
			.containsExactly("2026-03-29T07:00:00Z", "2026-03-30T07:00:00Z");
	}

	@Test
	void anHourlyScheduleHasTwentyThreeAndTwentyFiveTicksOnTheTransitionDays() {
		Ticks hourly = Ticks.of(RecurringSchedule.cron("r", "q", "@hourly").zone(NEW_YORK));
		// New York, 2026-03-08 (spring forward) and 2026-11-01 (fall back).
		assertThat(ticksOnLocalDay(hourly, "2026-03-08")).isEqualTo(23);
		assertThat(ticksOnLocalDay(hourly, "2026-11-01")).isEqualTo(25);
		assertThat(ticksOnLocalDay(hourly, "2026-11-02")).isEqualTo(24);
	}

	@Test
	void macrosAndSixFieldExpressionsAreAccepted() {
		Instant from = Instant.parse("2026-05-05T10:15:30Z");
		assertThat(Ticks.of(RecurringSchedule.cron("r", "q", "@daily")).next(from))
			.isEqualTo(Instant.parse("2026-05-06T00:00:00Z"));
		assertThat(Ticks.of(RecurringSchedule.cron("r", "q", "*/10 * * * * *")).next(from))
			.isEqualTo(Instant.parse("2026-05-05T10:15:40Z"));
		assertThat(Ticks.of(RecurringSchedule.cron("r", "q", "0 0 9 * * MON-FRI")).next(from))
			.isEqualTo(Instant.parse("2026-05-06T09:00:00Z"));
	}

	@Test
	void theNextTickIsStrictlyAfterTheInstant() {
		Ticks ticks = Ticks.of(RecurringSchedule.cron("r", "q", "0 * * * * *"));
		assertThat(ticks.next(Instant.parse("2026-05-05T10:15:00Z"))).isEqualTo(Instant.parse("2026-05-05T10:16:00Z"));
		Ticks rate = Ticks.of(RecurringSchedule.fixedRate("r", "q", Duration.ofMinutes(5)));
		assertThat(rate.next(Instant.parse("2026-05-05T10:15:00Z"))).isEqualTo(Instant.parse("2026-05-05T10:20:00Z"));
		assertThat(rate.next(Instant.parse("2026-05-05T10:14:59.999Z")))
			.isEqualTo(Instant.parse("2026-05-05T10:15:00Z"));
	}

	@Test
	void aFixedRateTicksAtWholeMultiplesOfTheRateSinceTheEpochWhateverTheZone() {
		Ticks rate = Ticks.of(RecurringSchedule.fixedRate("r", "q", Duration.ofMinutes(7)).zone(PARIS));
		Instant tick = rate.next(Instant.parse("2026-05-05T10:15:00Z"));
		assertThat(tick.toEpochMilli() % Duration.ofMinutes(7).toMillis()).isZero();
		assertThat(rate.next(tick)).isEqualTo(tick.plus(Duration.ofMinutes(7)));
	}

	@Test
	void anExpressionThatNeverMatchesHasNoTick() {
		Ticks never = Ticks.of(RecurringSchedule.cron("r", "q", "0 0 0 30 2 *"));
		assertThat(never.next(Instant.parse("2026-01-01T00:00:00Z"))).isNull();
	}

	@Test
	void badDefinitionsAreRefusedNamingTheScheduleAndTheProblem() {
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> RecurringSchedule.cron("nightly", "reports", "0 0 2 * *"))
			.withMessageStartingWith("Recurring schedule 'nightly': cron expression '0 0 2 * *' is invalid: ")
			.withMessageContaining("six fields");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> RecurringSchedule.cron("nightly", "reports", "0 0 25 * * *"))
			.withMessageStartingWith("Recurring schedule 'nightly': cron expression '0 0 25 * * *' is invalid");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> RecurringSchedule.cron("nightly", "reports", "@sometimes"))
			.withMessageStartingWith("Recurring schedule 'nightly': cron expression '@sometimes' is invalid");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> RecurringSchedule.fixedRate("fast", "reports", Duration.ofMillis(500)))
			.withMessage("Recurring schedule 'fast': fixed rate PT0.5S is too short: it must be at least 1 second");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> RecurringSchedule.cron("bad id", "reports", "@daily"))
			.withMessageStartingWith("Recurring schedule id 'bad id' is invalid");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> RecurringSchedule.cron("x".repeat(41), "reports", "@daily"))
			.withMessageContaining("use 1-40 letters");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> RecurringSchedule.cron("ok", "bad queue", "@daily"))
			.withMessageStartingWith("Recurring schedule 'ok': Queue name 'bad queue' is invalid");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> RecurringSchedule.cron("ok", "q", "@daily").misfire(MisfirePolicy.RUN_ALL, 0))
			.withMessage("Recurring schedule 'ok': misfire bound 0 must be between 1 and 100");
	}

	@Test
	void declarationsInTextReportWhereTheyCameFrom() {
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> declaration("0 0 2 * * *", null, "Mars/Olympus", null).toSchedule())
			.withMessage("delayed-tasks.recurring.nightly: Recurring schedule 'nightly': zone 'Mars/Olympus' is not a "
					+ "zone id: use for example UTC or Europe/Paris");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> declaration(null, "soon", null, null).toSchedule())
			.withMessage("delayed-tasks.recurring.nightly: Recurring schedule 'nightly': fixed rate 'soon' is not a "
					+ "duration: use for example 30s, 5m or PT5M");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> declaration("@daily", "5m", null, null).toSchedule())
			.withMessage("delayed-tasks.recurring.nightly: Recurring schedule 'nightly': set exactly one of cron and "
					+ "fixed-rate");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> declaration("@daily", null, null, "{oops").toSchedule())
			.withMessageStartingWith(
					"delayed-tasks.recurring.nightly: Recurring schedule 'nightly': payload is not " + "valid JSON");
		assertThat(declaration("0 0 2 * * *", null, "Europe/Paris", "{\"kind\":\"daily\"}").toSchedule().zone())
			.isEqualTo(PARIS);
	}

	private static ScheduleDeclaration declaration(String cron, String rate, String zone, String payload) {
		return new ScheduleDeclaration("delayed-tasks.recurring.nightly", "nightly", "reports", cron, rate, zone,
				payload, null, null, null, null);
	}

	private static List<ZonedDateTime> ticks(Ticks ticks, Instant from, int count) {
		List<ZonedDateTime> fired = new ArrayList<>();
		Instant tick = from;
		for (int i = 0; i < count; i++) {
			tick = ticks.next(tick);
			fired.add(tick.atZone(ticks.zone()));
		}
		return fired;
	}

	private static int ticksOnLocalDay(Ticks ticks, String day) {
		ZonedDateTime start = LocalDate.parse(day).atStartOfDay(ticks.zone());
		ZonedDateTime end = start.toLocalDate().plusDays(1).atStartOfDay(ticks.zone());
		int count = 0;
		Instant tick = ticks.next(start.toInstant().minusMillis(1));
		while (tick.isBefore(end.toInstant())) {
			count++;
			tick = ticks.next(tick);
		}
		return count;
	}

}

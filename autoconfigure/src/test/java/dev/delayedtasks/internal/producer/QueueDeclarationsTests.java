package dev.delayedtasks.internal.producer;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.internal.producer.QueueDeclarations.HandledQueue;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatNoException;

class QueueDeclarationsTests {

	@Test
	void editDistanceCountsInsertionsDeletionsAndSubstitutions() {
		assertThat(QueueDeclarations.distance("payment-reminder", "payment-reminders")).isEqualTo(1);
		assertThat(QueueDeclarations.distance("emails", "emials")).isEqualTo(2);
		assertThat(QueueDeclarations.distance("", "abc")).isEqualTo(3);
		assertThat(QueueDeclarations.distance("same", "same")).isZero();
	}

	@Test
	void theClosestNameIsSuggestedOnlyWhenItIsNearEnoughToBeATypo() {
		List<String> known = List.of("payment-reminders", "emails", "invoices");
		assertThat(QueueDeclarations.closest("payment-reminder", known)).isEqualTo("payment-reminders");
		assertThat(QueueDeclarations.closest("Emails", known)).isEqualTo("emails");
		assertThat(QueueDeclarations.closest("invoice", known)).isEqualTo("invoices");
		assertThat(QueueDeclarations.closest("shipping", known)).isNull();
		assertThat(QueueDeclarations.closest("ab", List.of("xy"))).isNull();
	}

	@Test
	void acceptAllChecksNothing() {
		QueueDeclarations declarations = QueueDeclarations.acceptAll();
		assertThatNoException().isThrownBy(() -> declarations.check("anything"));
		assertThat(declarations.checkPayloadType("anything", String.class)).isFalse();
	}

	@Test
	void aHandlerTakesItsTypeItsSubtypesAndTypesThatReadAnyJson() {
		QueueDeclarations declarations = QueueDeclarations.of(List.of(), true, (queue) -> switch (queue) {
			case "numbers" -> Optional.of(new HandledQueue("numbers-handler", Number.class));
			case "json" -> Optional.of(new HandledQueue("json-handler", JsonNode.class));
			case "maps" -> Optional.of(new HandledQueue("maps-handler", Map.class));
			case "none" -> Optional.of(new HandledQueue("context-only", null));
			case "ints" -> Optional.of(new HandledQueue("ints-handler", int.class));
			default -> Optional.empty();
		}, () -> List.of("numbers", "json", "maps", "none", "ints"));
		assertThat(declarations.checkPayloadType("numbers", Integer.class)).isTrue();
		assertThat(declarations.checkPayloadType("json", String.class)).isTrue();
		assertThat(declarations.checkPayloadType("maps", Object.class)).isTrue();
		assertThat(declarations.checkPayloadType("unhandled", String.class)).isFalse();
		assertThat(declarations.checkPayloadType("ints", Integer.class)).isTrue();
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> declarations.checkPayloadType("numbers", String.class))
			.withMessage("Queue 'numbers' is handled by numbers-handler, which takes a java.lang.Number, not a "
					+ "java.lang.String: use the handler's payload type");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> declarations.checkPayloadType("none", String.class))
			.withMessage("Queue 'none' is handled by context-only, which takes no payload, not a java.lang.String");
		assertThatNoException().isThrownBy(() -> declarations.check("numbers"));
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> declarations.check("number"))
			.withMessageEndingWith("Did you mean 'numbers'?");
	}

	@Test
	void withNothingKnownTheMessageSaysHowToDeclare() {
		QueueDeclarations declarations = QueueDeclarations.of(List.of(), true, (queue) -> Optional.empty(), List::of);
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> declarations.check("emails"))
			.withMessageEndingWith("No queue is declared: declare it under delayed-tasks.queues.emails.");
	}

}

package dev.delayedtasks.sample;

/**
 * The payload of the sample's tasks.
 *
 * @param user who to remind
 * @param text what to say
 * @author delayed-tasks
 * @since 0.1.0
 */
public record Reminder(String user, String text) {

}

/**
 * The delayed-tasks benchmarks: a command-line application that drives the real starter
 * against a real Redis and reports lateness, throughput and memory.
 */
@NullMarked
package dev.delayedtasks.benchmarks;

import org.jspecify.annotations.NullMarked;

// The delayed-tasks dashboard: one page, routed by the URL's fragment. Every address is relative to the page, so the
// dashboard works below a context path and behind a proxy prefix; it never calls anything outside the application.
// Text from the server is set with textContent only.
(function () {
	'use strict';

	const view = document.getElementById('view');
	const status = document.getElementById('status');
	let session = { user: '', canWrite: false, showPayloads: false, refreshMillis: 5000, writeHeader: '', csrf: null };
	let timer = null;
	let editing = false;

	function el(tag, attributes, ...children) {
		const node = document.createElement(tag);
		Object.entries(attributes || {}).forEach(([name, value]) => {
			if (name === 'onclick') {
				node.addEventListener('click', value);
			}
			else if (value !== null && value !== undefined && value !== false) {
				node.setAttribute(name, value === true ? '' : String(value));
			}
		});
		children.flat().forEach((child) => {
			if (child !== null && child !== undefined) {
				node.append(child instanceof Node ? child : String(child));
			}
		});
		return node;
	}

	function encode(part) {
		return encodeURIComponent(part);
	}

	function query(parameters) {
		return '?' + new URLSearchParams(parameters).toString();
	}

	async function get(path) {
		const response = await fetch(path, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
		if (response.status === 404) {
			return null;
		}
		if (!response.ok) {
			throw new Error(await message(response));
		}
		return response.json();
	}

	// Every write carries the dashboard's header (a form of another site cannot) and the CSRF token when there is one.
	async function post(path, body) {
		const headers = { Accept: 'application/json' };
		headers[session.writeHeader] = '1';
		if (session.csrf) {
			headers[session.csrf.headerName] = session.csrf.token;
		}
		if (body !== undefined) {
			headers['Content-Type'] = 'application/json';
		}
		const response = await fetch(path, { method: 'POST', headers, body, credentials: 'same-origin' });
		if (response.status === 404) {
			return null;
		}
		if (!response.ok) {
			throw new Error(await message(response));
		}
		return response.json();
	}

	async function message(response) {
		try {
			const body = await response.json();
			return body.message || (response.status + ' ' + response.statusText);
		}
		catch (ignored) {
			return response.status + ' ' + response.statusText;
		}
	}

	function rate(perMinute) {
		return perMinute >= 10 ? Math.round(perMinute) : perMinute.toFixed(1);
	}

	// A line chart in SVG, drawn here: no library, nothing fetched from elsewhere.
	const COUNTS = [['created', '#2d6cdf'], ['succeeded', '#2e8540'], ['failed', '#b3261e']];
	const LATENESS = [['latenessP50Millis', '#2d6cdf', 'p50'], ['latenessP99Millis', '#b3261e', 'p99']];

	// Lateness percentiles are bucket bounds: "up to" that many milliseconds.
	function late(millis) {
		if (millis === null || millis === undefined) {
			return '—';
		}
		return millis > 60000 ? '> 1 min' : '≤ ' + duration(millis);
	}

	function chart(id, title, periods, labelOf, series, valueLabel) {
		const width = 640;
		const height = 150;
		const pad = 30;
		series = series || COUNTS;
		valueLabel = valueLabel || rate;
		// A period without a value (no run started) is left out of its line.
		const value = (p, name) => (p[name] === null || p[name] === undefined) ? null : Math.min(p[name], 60001);
		const max = Math.max(1, ...periods.flatMap((p) => series.map(([name]) => value(p, name) || 0)));
		const svgNs = 'http://www.w3.org/2000/svg';
		const svg = document.createElementNS(svgNs, 'svg');
		svg.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
		svg.setAttribute('class', 'chart');
		svg.setAttribute('id', id);
		const x = (i) => pad + (periods.length > 1 ? i * (width - 2 * pad) / (periods.length - 1) : 0);
		const y = (v) => height - pad + 10 - v * (height - pad - 10) / max;
		const axis = document.createElementNS(svgNs, 'path');
		axis.setAttribute('d', 'M' + pad + ' 10 V' + (height - pad + 10) + ' H' + (width - pad));
		axis.setAttribute('class', 'axis');
		svg.append(axis);
		const text = (tx, ty, value, anchor) => {
			const node = document.createElementNS(svgNs, 'text');
			node.setAttribute('x', tx);
			node.setAttribute('y', ty);
			node.setAttribute('text-anchor', anchor || 'start');
			node.textContent = value;
			svg.append(node);
		};
		text(pad - 4, 14, valueLabel(max), 'end');
		text(pad - 4, height - pad + 10, '0', 'end');
		if (periods.length > 0) {
			text(pad, height - 4, labelOf(periods[0].end));
			text(width - pad, height - 4, labelOf(periods[periods.length - 1].end), 'end');
		}
		series.forEach(([name, color]) => {
			const line = document.createElementNS(svgNs, 'polyline');
			line.setAttribute('points', periods.map((p, i) => value(p, name) === null ? null : x(i) + ',' + y(value(p, name)))
				.filter((point) => point).join(' '));
			line.setAttribute('stroke', color);
			line.setAttribute('class', 'series');
			line.setAttribute('data-series', name);
			svg.append(line);
		});
		return el('figure', {}, el('figcaption', {}, title, ' ',
			series.map(([name, color, label]) => el('span', { class: 'legend', style: 'color:' + color }, '■ ' + (label || name)))),
			periods.length > 1 ? svg : el('p', { class: 'muted' }, 'No history yet: instances with handlers record it every minute.'));
	}

	function time(instant) {
		return instant ? new Date(instant).toLocaleString() : '—';
	}

	function duration(millis) {
		if (millis < 1000) {
			return millis + ' ms';
		}
		if (millis < 120000) {
			return (millis / 1000).toFixed(1) + ' s';
		}
		return Math.round(millis / 60000) + ' min';
	}

	// A write control, shown only to users who may act; the server refuses the others anyway.
	function action(label, path, confirmText, className) {
		if (!session.canWrite) {
			return null;
		}
		return el('button', {
			class: 'write ' + (className || ''), 'data-action': label,
			onclick: async (event) => {
				event.preventDefault();
				if (confirmText && !window.confirm(confirmText)) {
					return;
				}
				try {
					const done = await post(path);
					say(done ? label + ': done' + (done.task ? ' (' + done.task + ')' : done.affected !== undefined
						? ' (' + done.affected + ')' : '') : label + ': nothing to do');
				}
				catch (error) {
					say(label + ' failed: ' + error.message, true);
				}
				route();
			}
		}, label);
	}

	function say(text, bad) {
		status.textContent = text;
		status.className = bad ? 'error' : '';
	}

	function queueLink(name) {
		return el('a', { href: '#/queues/' + encode(name), 'data-queue-link': name }, name);
	}

	function taskLink(queue, id) {
		return el('a', { href: '#/queues/' + encode(queue) + '/tasks/' + encode(id), 'data-task-link': id }, id);
	}

	async function overview() {
		const data = await get('api/queues');
		const rows = data.queues.map(({ queue, dueNext, throughput }) => el('tr', { 'data-queue': queue.name },
			el('td', {}, queueLink(queue.name), queue.paused ? el('span', { class: 'pill paused' }, 'paused') : null),
			el('td', { class: 'num' }, queue.scheduled), el('td', { class: 'num' }, queue.ready),
			el('td', { class: 'num' }, queue.active),
			el('td', { class: 'num' }, queue.dead > 0 ? el('span', { class: 'pill dead' }, queue.dead) : 0),
			el('td', { class: 'num', 'data-throughput': '' }, rate(throughput.created) + ' / ' + rate(throughput.succeeded)
				+ ' / ' + rate(throughput.failed)),
			el('td', { class: 'num', 'data-lateness': '' }, late(throughput.latenessP50Millis) + ' / '
				+ late(throughput.latenessP99Millis)),
			el('td', { class: 'num' }, dueNext.minute), el('td', { class: 'num' }, dueNext.hour),
			el('td', { class: 'num' }, dueNext.day),
			el('td', { class: 'num' }, queue.ready > 0 ? duration(queue.oldestReadyAgeMillis) : '—'),
			el('td', {}, queue.timerOwner || el('span', { class: 'muted' }, 'none')),
			el('td', {}, queue.handlers.map((h) => h.activeTasks + '/' + h.concurrency).join(', ') || '—')));
		return [
			el('h1', {}, 'Queues'),
			el('table', { id: 'queues' },
				el('thead', {}, el('tr', {}, el('th', {}, 'Queue'), el('th', { class: 'num' }, 'Scheduled'),
					el('th', { class: 'num' }, 'Ready'), el('th', { class: 'num' }, 'Running'),
					el('th', { class: 'num' }, 'Dead'), el('th', { class: 'num', title: 'created / succeeded / failed per minute, last 5 min' }, 'Per minute'),
					el('th', { class: 'num', title: 'start minus due time of the runs started in the last 5 min, p50 / p99' }, 'Lateness'),
					el('th', { class: 'num' }, 'Due in 1 min'),
					el('th', { class: 'num' }, '1 h'), el('th', { class: 'num' }, '1 day'),
					el('th', { class: 'num' }, 'Oldest ready'), el('th', {}, 'Timer owner'),
					el('th', {}, 'Here: running/concurrency'))),
				el('tbody', {}, rows)),
			el('p', { class: 'muted' }, data.knownQueues + ' known queues',
				data.unreportedQueues > 0 ? ', ' + data.unreportedQueues + ' not shown (delayed-tasks.monitoring.max-queues)' : '',
				'; read at ' + time(data.readAt) + '.')
		];
	}

	async function queuePage(name) {
		const list = (id) => get('api/queue/' + id + query({ name, limit: PAGE, offset: offsetOf(id, name) }));
		const [detail, scheduled, ready, running, charts] = await Promise.all([get('api/queue' + query({ name })),
			list('scheduled'), list('ready'), list('running'), get('api/queue/charts' + query({ name }))]);
		if (!detail) {
			return [el('h1', {}, 'No queue ' + name)];
		}
		const queue = detail.view.queue;
		const due = detail.view.dueNext;
		const card = (label, value) => el('div', { class: 'card' }, el('b', {}, value), label);
		return [
			el('h1', {}, 'Queue ', el('span', { id: 'queue-name' }, queue.name), ' ',
				queue.paused ? el('span', { class: 'pill paused' }, 'paused') : null, ' ',
				queue.paused ? action('resume', 'api/queue/resume' + query({ name }))
					: action('pause', 'api/queue/pause' + query({ name }), 'Pause ' + queue.name + ' on every instance?')),
			el('div', { class: 'cards' }, card('scheduled', queue.scheduled), card('ready', queue.ready),
				card('running', queue.active), card('dead', queue.dead), card('due in 1 min', due.minute),
				card('due in 1 h', due.hour), card('due in 1 day', due.day)),
			el('div', { class: 'charts' },
				chart('chart-hour', 'Last hour, per minute', charts ? charts.lastHour : [],
					(end) => new Date(end).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })),
				chart('chart-day', 'Last day, per hour', charts ? charts.lastDay : [],
					(end) => new Date(end).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })),
				chart('chart-month', 'Last month, per hour', charts ? charts.lastMonth : [],
					(end) => new Date(end).toLocaleDateString()),
				chart('lateness-hour', 'Lateness, last hour, per minute', charts ? charts.lastHour : [],
					(end) => new Date(end).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }), LATENESS, late),
				chart('lateness-day', 'Lateness, last day, per hour', charts ? charts.lastDay : [],
					(end) => new Date(end).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }), LATENESS, late)),
			el('h2', {}, 'Scheduled, earliest first'),
			pageTable('scheduled', name, scheduled, ['Due at'], (entry) => [time(entry.at)]),
			el('h2', {}, 'Ready, in the order they are claimed'),
			pageTable('ready', name, ready, ['Priority', 'State'], (entry) => [entry.priority,
				entry.ready ? 'ready' : el('span', { class: 'muted', title: 'cancelled, moved or run since: '
					+ 'the next claim passes over its hint' }, 'no longer ready')]),
			el('h2', {}, 'Running, earliest lease deadline first'),
			pageTable('running', name, running, ['Lease until', 'Held by'], (entry) => [time(entry.at),
				!entry.holder ? '—' : entry.holderReporting ? el('a', { href: '#/instances' }, entry.holder)
					: el('span', { class: 'pill paused', title: 'no instance with this tag reports itself: stopped, '
						+ 'crashed or not reporting (delayed-tasks.monitoring.instances); the lease ends at its deadline' },
						entry.holder + ' (not reporting)')]),
			el('h2', {}, 'Dead letters by reason and exception'),
			el('table', { id: 'dead-groups' },
				el('thead', {}, el('tr', {}, el('th', {}, 'Reason'), el('th', {}, 'Exception'),
					el('th', { class: 'num' }, 'Count'), el('th', {}, 'Newest'), el('th', {}, 'Example message'),
					el('th', {}, ''))),
				el('tbody', {}, detail.deadLetterGroups.map((group) => el('tr', { 'data-group': group.exceptionType },
					el('td', {}, group.reason), el('td', {}, group.exceptionType), el('td', { class: 'num' }, group.count),
					el('td', {}, time(group.newestAt)), el('td', {}, group.example),
					el('td', {}, groupAction('redrive', name, group), ' ', groupAction('delete', name, group)))))),
			el('p', { class: 'muted' }, 'Groups count the newest ' + detail.groupedOver + ' of ' + queue.dead
				+ ' dead letters.'),
			el('h2', {}, 'Newest dead letters'),
			el('table', { id: 'dead-letters' },
				el('thead', {}, el('tr', {}, el('th', {}, 'Task'), el('th', {}, 'Reason'), el('th', {}, 'Error'),
					el('th', { class: 'num' }, 'Attempts'), el('th', {}, 'Dead since'), el('th', {}, ''))),
				el('tbody', {}, detail.deadLetters.map((letter) => el('tr', { 'data-dead': letter.id },
					el('td', {}, taskLink(name, letter.id)), el('td', {}, letter.reason),
					el('td', {}, letter.exceptionType + ': ' + letter.message,
						letter.stackTrace ? el('details', {}, el('summary', {}, 'stack trace'), el('pre', {}, letter.stackTrace))
							: null),
					el('td', { class: 'num' }, letter.attempts), el('td', {}, time(letter.deadAt)),
					el('td', {}, action('redrive', 'api/task/redrive' + query({ queue: name, id: letter.id })), ' ',
						action('delete', 'api/task/delete' + query({ queue: name, id: letter.id }),
							'Delete dead letter ' + letter.id + '?', 'danger')))))),
			detail.unreadableDeadLetters > 0
				? el('p', { class: 'error' }, detail.unreadableDeadLetters + ' dead-set members are not task ids.') : null
		];
	}

	// The recurring schedules, a page at a time by id, with what each last did and what it missed.
	async function schedulesPage(after) {
		const page = await get('api/schedules' + query(after ? { after, limit: 50 } : { limit: 50 }));
		const rows = page.schedules.map((schedule) => {
			const which = query({ id: schedule.id });
			return el('tr', { 'data-schedule': schedule.id },
				el('td', {}, schedule.id, schedule.paused ? el('span', { class: 'pill paused' }, 'paused') : null),
				el('td', {}, queueLink(schedule.queue)),
				el('td', {}, schedule.expression, el('span', { class: 'muted' }, ' ' + schedule.zone)),
				el('td', { 'data-field': 'next' }, schedule.paused ? '—' : time(schedule.nextTick)),
				el('td', { 'data-field': 'last' }, schedule.lastTick
					? taskLink(schedule.queue, schedule.id + ':' + new Date(schedule.lastTick).getTime()) : '—'),
				el('td', { 'data-field': 'outcome' }, schedule.lastOutcome || (schedule.lastTick ? 'running' : '—')),
				el('td', { class: 'num' }, schedule.occurrences),
				el('td', { class: 'num', 'data-field': 'missed' }, schedule.missedTicks > 0
					? el('span', { class: 'pill dead', title: 'last found missed ' + time(schedule.lastMissedAt) },
						schedule.missedTicks) : 0),
				el('td', {}, schedule.misfire.toLowerCase().replace('_', ' ') + ', overlap '
					+ schedule.overlap.toLowerCase()),
				el('td', {},
					schedule.paused ? action('resume', 'api/schedule/resume' + which)
						: action('pause', 'api/schedule/pause' + which, 'Pause schedule ' + schedule.id + '?'), ' ',
					schedule.paused ? null : action('trigger', 'api/schedule/trigger' + which,
						'Run ' + schedule.id + ' once now?')));
		});
		return [
			el('h1', {}, 'Recurring schedules'),
			el('table', { id: 'schedules' },
				el('thead', {}, el('tr', {}, el('th', {}, 'Schedule'), el('th', {}, 'Queue'), el('th', {}, 'Every'),
					el('th', {}, 'Next tick'), el('th', {}, 'Last tick'), el('th', {}, 'Last outcome'),
					el('th', { class: 'num' }, 'Occurrences'), el('th', { class: 'num' }, 'Missed ticks'),
					el('th', {}, 'Policies'), el('th', {}, ''))),
				el('tbody', {}, rows)),
			el('p', { class: 'muted' }, page.total + ' schedules',
				after ? [' · ', el('a', { href: '#/schedules' }, 'first page')] : null,
				page.next ? [' · ', el('a', { href: '#/schedules/after/' + encode(page.next), id: 'next-schedules' },
					'next page')] : null)
		];
	}

	// The instances that run workers, as each reported itself in the last 30 s.
	async function instancesPage() {
		const data = await get('api/instances');
		const rows = data.instances.map((instance) => el('tr', { 'data-instance': instance.id },
			el('td', {}, instance.id), el('td', {}, instance.application || '—'),
			el('td', {}, instance.host + ' (pid ' + instance.pid + ')'),
			el('td', {}, time(instance.startedAt)), el('td', {}, time(instance.reportedAt)),
			el('td', {}, instance.handlers.length === 0 ? el('span', { class: 'muted' }, 'no handlers')
				: instance.handlers.map((handler) => el('div', { 'data-handler': handler.queue },
					queueLink(handler.queue), ' ', handler.activeTasks + '/' + handler.concurrency + ' running',
					handler.timerOwner ? el('span', { class: 'pill', title: 'owns the queue\'s timer' }, 'timer owner') : null,
					handler.running ? null : el('span', { class: 'pill paused' }, 'stopped'))))));
		const busy = data.instances.reduce((sum, i) => sum + i.handlers.reduce((s, h) => s + h.activeTasks, 0), 0);
		const slots = data.instances.reduce((sum, i) => sum + i.handlers.reduce((s, h) => s + h.concurrency, 0), 0);
		return [
			el('h1', {}, 'Instances'),
			el('div', { class: 'cards' }, el('div', { class: 'card' }, el('b', {}, data.known), 'instances'),
				el('div', { class: 'card' }, el('b', {}, busy + '/' + slots), 'tasks running / concurrency')),
			el('table', { id: 'instances' },
				el('thead', {}, el('tr', {}, el('th', {}, 'Instance'), el('th', {}, 'Application'), el('th', {}, 'Host'),
					el('th', {}, 'Started'), el('th', {}, 'Reported'), el('th', {}, 'Queues'))),
				el('tbody', {}, rows)),
			el('p', { class: 'muted' }, 'Instances with the worker report themselves every 10 s; one silent for 30 s '
				+ 'leaves the list, one that stops gracefully leaves at once.',
				data.known > data.instances.length ? ' ' + (data.known - data.instances.length) + ' more not listed.' : '')
		];
	}

	// Where each queue's scheduled, ready and running lists are paged to, kept while the page refreshes.
	const PAGE = 20;
	const offsets = new Map();

	function offsetOf(list, queue) {
		return offsets.get(list + '\u0000' + queue) || 0;
	}

	function pager(id, queue, page, step, label) {
		const offset = offsetOf(id, queue);
		const target = Math.max(0, offset + step);
		if (!page || (step < 0 && offset === 0) || (step > 0 && offset + page.entries.length >= page.total)) {
			return null;
		}
		return el('button', {
			class: 'pager', 'data-page': id + (step > 0 ? '-next' : '-previous'),
			onclick: (event) => {
				event.preventDefault();
				offsets.set(id + '\u0000' + queue, target);
				route();
			}
		}, label);
	}

	function pageTable(id, queue, page, labels, cells) {
		const offset = offsetOf(id, queue);
		return [
			el('table', { id },
				el('thead', {}, el('tr', {}, el('th', {}, 'Task'), labels.map((label) => el('th', {}, label)))),
				el('tbody', {}, (page ? page.entries : []).map((entry) => el('tr', { 'data-task': entry.id },
					el('td', {}, taskLink(queue, entry.id)), cells(entry).map((cell) => el('td', {}, cell)))))),
			el('p', { class: 'muted' }, page ? (page.entries.length === 0 ? 'None' : (offset + 1) + '–'
				+ (offset + page.entries.length)) + ' of ' + page.total + '. ' : '',
				pager(id, queue, page, -PAGE, '← previous'), ' ', pager(id, queue, page, PAGE, 'next →'))
		];
	}

	async function taskPage(queue, id) {
		const which = query({ queue, id });
		const [task, details] = await Promise.all([get('api/task' + which), get('api/task/details' + which)]);
		if (!task) {
			return [el('h1', {}, 'No task ' + id + ' in ' + queue),
				el('p', { class: 'muted' }, 'It never existed, or it ended and its outcome is not kept.')];
		}
		const row = (label, ...value) => [el('dt', {}, label), el('dd', { 'data-field': label }, ...value)];
		const outcome = task.outcome;
		return [
			el('h1', {}, 'Task ', el('span', { id: 'task-id' }, task.id), ' in ', queueLink(task.queue)),
			el('dl', {},
				row('state', task.state),
				row('due', time(task.dueAt)),
				row('created', time(task.createdAt)),
				row('priority', task.priority),
				row('failed runs', task.failures),
				row('deliveries', task.deliveries),
				row('attempts allowed', task.maxAttempts),
				row('last error', task.lastError || '—', details && details.stackTrace
					? el('details', {}, el('summary', {}, 'stack trace'), el('pre', { id: 'stack-trace' }, details.stackTrace))
					: null),
				row('headers', details && Object.keys(details.headers).length > 0
					? el('table', { id: 'headers' }, el('tbody', {}, Object.entries(details.headers).map(([name, value]) =>
						el('tr', {}, el('th', {}, name), el('td', {}, value)))))
					: '—'),
				outcome ? row('outcome', outcome.kind + ' after ' + outcome.runs + ' run(s) at ' + time(outcome.finishedAt)
					+ (outcome.error ? ': ' + outcome.error : '')) : null),
			el('p', {},
				task.state === 'SCHEDULED' ? action('run', 'api/task/run' + which, 'Run ' + id + ' now?') : null, ' ',
				task.state === 'SCHEDULED' || task.state === 'READY' ? rescheduleControl(which) : null, ' ',
				task.state === 'SCHEDULED' || task.state === 'READY'
					? action('cancel', 'api/task/cancel' + which, 'Cancel ' + id + '?', 'danger') : null, ' ',
				task.state === 'DEAD' ? action('redrive', 'api/task/redrive' + which) : null, ' ',
				task.state === 'DEAD' ? action('delete', 'api/task/delete' + which, 'Delete dead letter ' + id + '?',
					'danger') : null),
			session.showPayloads && task.state !== 'ENDED' ? await payloadSection(task, which) : null
		];
	}

	// A new due time for a scheduled or ready task; the page holds still while it is being chosen.
	function rescheduleControl(which) {
		if (!session.canWrite) {
			return null;
		}
		const input = el('input', { type: 'datetime-local', id: 'reschedule-at', step: 1 });
		input.addEventListener('focus', () => {
			clearTimeout(timer);
			editing = true;
		});
		const button = el('button', {
			class: 'write', 'data-action': 'reschedule',
			onclick: async (event) => {
				event.preventDefault();
				const at = new Date(input.value).getTime();
				if (Number.isNaN(at)) {
					say('reschedule: choose a date and time first', true);
					return;
				}
				try {
					const done = await post('api/task/reschedule' + which + '&' + new URLSearchParams({ at }).toString());
					say(done ? 'rescheduled to ' + time(at) : 'not rescheduled: it is no longer scheduled or ready', !done);
				}
				catch (error) {
					say('reschedule failed: ' + error.message, true);
				}
				editing = false;
				route();
			}
		}, 'reschedule');
		return el('span', { class: 'reschedule' }, input, ' ', button);
	}

	// The payload, and for a dead letter an editor to mend it and redrive it in one step.
	async function payloadSection(task, which) {
		const payload = await get('api/task/payload' + which);
		if (!payload) {
			return el('p', { class: 'muted' }, 'No payload.');
		}
		let pretty = payload.json;
		try {
			pretty = JSON.stringify(JSON.parse(payload.json), null, 2);
		}
		catch (ignored) {
			// Not JSON (bad data): shown as stored.
		}
		if (task.state !== 'DEAD' || !session.canWrite) {
			return [el('h2', {}, 'Payload'), el('pre', { id: 'payload' }, pretty)];
		}
		clearTimeout(timer);
		editing = true;
		const editor = el('textarea', { id: 'payload-editor', rows: 12, cols: 80, spellcheck: 'false' });
		editor.value = pretty;
		return [el('h2', {}, 'Payload'), editor, el('p', {}, el('button', {
			class: 'write', 'data-action': 'redrive-edited',
			onclick: async (event) => {
				event.preventDefault();
				try {
					// The dead letter's time tells the server which dead letter was edited: one redriven since is
					// left alone.
					const done = await post('api/task/redrive-edited' + which + '&'
						+ new URLSearchParams({ deadAt: new Date(payload.deadAt).getTime() }).toString(), editor.value);
					say(done ? 'redriven with the edited payload' : 'not redriven: it is no longer the dead letter you '
						+ 'edited (redriven by someone else since): reload', !done);
				}
				catch (error) {
					say('redrive with the edited payload failed: ' + error.message, true);
				}
				editing = false;
				route();
			}
		}, 'Redrive with this payload'))];
	}

	// Redrive or delete a whole dead-letter group in bounded steps, showing the progress.
	function groupAction(kind, queue, group) {
		if (!session.canWrite) {
			return null;
		}
		return el('button', {
			class: 'write' + (kind === 'delete' ? ' danger' : ''), 'data-action': kind + '-group',
			onclick: async (event) => {
				event.preventDefault();
				if (!window.confirm(kind + ' every dead letter of ' + queue + ' with ' + group.reason + ' / '
					+ group.exceptionType + '?')) {
					return;
				}
				clearTimeout(timer);
				// Steps walk the dead set by dead-letter time from the newest there is now: one redriven that dies
				// again is newer, and left alone.
				let cursor = {};
				let acted = 0;
				try {
					for (;;) {
						const step = await post('api/dead-letters/' + kind + query(Object.assign({ queue,
							reason: group.reason, exceptionType: group.exceptionType }, cursor)));
						acted += step.acted;
						say(kind + ': ' + acted + ' done, ' + step.remaining + ' dead letters left'
							+ (step.done ? '' : '…'));
						if (step.done) {
							break;
						}
						cursor = { from: step.from, skip: step.skip };
					}
				}
				catch (error) {
					say(kind + ' stopped after ' + acted + ': ' + error.message, true);
				}
				route();
			}
		}, kind === 'delete' ? 'Delete all' : 'Redrive all');
	}

	// Only the latest call of route() renders: a refresh still reading when an action re-routes must not paint the
	// state from before the action over the one after it.
	let routes = 0;

	async function route() {
		const current = ++routes;
		clearTimeout(timer);
		editing = false;
		const parts = location.hash.replace(/^#\/?/, '').split('/').filter((part) => part).map(decodeURIComponent);
		try {
			let content;
			if (parts[0] === 'queues' && parts.length === 2) {
				content = await queuePage(parts[1]);
			}
			else if (parts[0] === 'queues' && parts[2] === 'tasks' && parts.length === 4) {
				content = await taskPage(parts[1], parts[3]);
			}
			else if (parts[0] === 'instances') {
				content = await instancesPage();
			}
			else if (parts[0] === 'schedules') {
				content = await schedulesPage(parts[1] === 'after' ? parts[2] : null);
			}
			else {
				content = await overview();
			}
			if (current !== routes) {
				return;
			}
			view.replaceChildren(...content.flat().filter((node) => node));
		}
		catch (error) {
			if (current !== routes) {
				return;
			}
			view.replaceChildren(el('p', { class: 'error', id: 'error' }, 'Could not read: ' + error.message));
		}
		// An open payload editor is not refreshed away under its user.
		if (!editing) {
			timer = setTimeout(route, session.refreshMillis);
		}
	}

	document.getElementById('find').addEventListener('submit', (event) => {
		event.preventDefault();
		const queue = document.getElementById('find-queue').value.trim();
		const id = document.getElementById('find-id').value.trim();
		location.hash = '#/queues/' + encode(queue) + '/tasks/' + encode(id);
	});
	window.addEventListener('hashchange', route);

	get('api/session').then((current) => {
		session = current;
		document.getElementById('user').textContent = session.user + (session.canWrite ? '' : ' (read-only)');
		route();
	}).catch((error) => say('Could not start: ' + error.message, true));
})();

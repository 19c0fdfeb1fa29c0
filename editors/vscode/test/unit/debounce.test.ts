import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KeyedDebouncer, Timers } from '../../src/logic/debounce';

function fakeTimers() {
  let now = 0;
  let next = 1;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const t: Timers = {
    set: (fn, ms) => { const id = next++; timers.set(id, { at: now + ms, fn }); return id; },
    clear: (h) => { timers.delete(h as number); },
  };
  const advance = (ms: number) => {
    now += ms;
    for (const [id, x] of [...timers].sort((a, b) => a[1].at - b[1].at)) {
      if (x.at <= now) { timers.delete(id); x.fn(); }
    }
  };
  return { t, advance, count: () => timers.size };
}

test('fires once per key after the quiet period', () => {
  const { t, advance } = fakeTimers();
  const fired: string[] = [];
  const d = new KeyedDebouncer<string>(300, (k) => fired.push(k), t);
  d.trigger('a'); advance(100); d.trigger('a'); advance(100); d.trigger('b'); advance(250);
  assert.deepEqual(fired, ['a']);
  advance(100);
  assert.deepEqual(fired, ['a', 'b']);
});

test('flush fires a pending key now, and only then', () => {
  const { t, advance, count } = fakeTimers();
  const fired: string[] = [];
  const d = new KeyedDebouncer<string>(300, (k) => fired.push(k), t);
  d.flush('a');
  assert.deepEqual(fired, []);
  d.trigger('a');
  d.flush('a');
  assert.deepEqual(fired, ['a']);
  assert.equal(count(), 0);
  advance(1000);
  assert.deepEqual(fired, ['a']);
});

test('dispose drops pending keys', () => {
  const { t, advance } = fakeTimers();
  const fired: string[] = [];
  const d = new KeyedDebouncer<string>(10, (k) => fired.push(k), t);
  d.trigger('a'); d.trigger('b');
  assert.deepEqual(d.pendingKeys().sort(), ['a', 'b']);
  d.dispose(); advance(100);
  assert.deepEqual(fired, []);
});

package model

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock records the waits Retry asks for.
type fakeClock struct {
	waits  []time.Duration
	onWait func()
}

func (f *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	f.waits = append(f.waits, d)
	if f.onWait != nil {
		f.onWait()
	}
	return ctx.Err()
}

func testPolicy(f *fakeClock) RetryPolicy {
	return RetryPolicy{MaxAttempts: 4, BaseDelay: time.Second, MaxDelay: 5 * time.Second, MaxRetryAfter: 30 * time.Second,
		Sleep: f.sleep, Rand: func() float64 { return 0.5 }}
}

// failing returns a call that fails with errs in turn, then succeeds.
func failing(errs ...error) (func() (*Response, error), *int) {
	n := 0
	return func() (*Response, error) {
		n++
		if n <= len(errs) {
			return nil, errs[n-1]
		}
		return &Response{Text: "ok"}, nil
	}, &n
}

func TestRetryBackoffThenSuccess(t *testing.T) {
	f := &fakeClock{}
	call, n := failing(&Error{Class: ClassNetwork}, &Error{Class: ClassBadResponse}, &Error{Class: ClassNetwork})
	resp, err := Retry(context.Background(), testPolicy(f), call)
	if err != nil || resp.Text != "ok" || *n != 4 {
		t.Fatalf("resp=%v err=%v calls=%d", resp, err, *n)
	}
	// equal jitter with rand=0.5: d/2 + 0.5*d/2 = 0.75d for d = 1s, 2s, 4s.
	want := []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Second}
	if len(f.waits) != len(want) {
		t.Fatalf("waits = %v, want %v", f.waits, want)
	}
	for i := range want {
		if f.waits[i] != want[i] {
			t.Errorf("wait %d = %v, want %v", i, f.waits[i], want[i])
		}
	}
}

func TestRetryBounded(t *testing.T) {
	f := &fakeClock{}
	last := &Error{Class: ClassNetwork, Message: "last"}
	call, n := failing(&Error{Class: ClassNetwork}, &Error{Class: ClassNetwork}, &Error{Class: ClassNetwork}, last, nil)
	_, err := Retry(context.Background(), testPolicy(f), call)
	if err != last || *n != 4 || len(f.waits) != 3 {
		t.Fatalf("err=%v calls=%d waits=%v", err, *n, f.waits)
	}
}

func TestRetryBackoffCapAndJitterRange(t *testing.T) {
	p := RetryPolicy{BaseDelay: time.Second, MaxDelay: 5 * time.Second}
	for _, r := range []float64{0, 0.999} {
		p.Rand = func() float64 { return r }
		d := p.Backoff(10)
		if d < 2500*time.Millisecond || d > 5*time.Second {
			t.Errorf("Backoff(10) with rand %v = %v, want within [2.5s,5s]", r, d)
		}
	}
}

func TestRetryRateLimit(t *testing.T) {
	f := &fakeClock{}
	call, _ := failing(
		&Error{Class: ClassRateLimit, RetryAfter: 7 * time.Second},
		&Error{Class: ClassRateLimit, RetryAfter: 10 * time.Minute}, // capped
		&Error{Class: ClassRateLimit},                               // no header: backoff
	)
	if _, err := Retry(context.Background(), testPolicy(f), call); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{7 * time.Second, 30 * time.Second, 3 * time.Second}
	for i := range want {
		if f.waits[i] != want[i] {
			t.Errorf("wait %d = %v, want %v", i, f.waits[i], want[i])
		}
	}
}

func TestRetryNonRetryableClasses(t *testing.T) {
	for _, class := range []ErrorClass{ClassAuth, ClassContextLength, ClassSchema, ClassRefusal, ClassConfig, ClassInvalidTool, ClassOther} {
		f := &fakeClock{}
		e := &Error{Class: class}
		call, n := failing(e)
		_, err := Retry(context.Background(), testPolicy(f), call)
		if err != e || *n != 1 || len(f.waits) != 0 {
			t.Errorf("%s: err=%v calls=%d waits=%v", class, err, *n, f.waits)
		}
	}
	// A plain error is ClassOther: no retry.
	plain := errors.New("boom")
	call, n := failing(plain)
	if _, err := Retry(context.Background(), testPolicy(&fakeClock{}), call); err != plain || *n != 1 {
		t.Errorf("plain error: %v after %d calls", err, *n)
	}
}

func TestRetryStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeClock{onWait: cancel}
	call, n := failing(&Error{Class: ClassNetwork}, &Error{Class: ClassNetwork})
	_, err := Retry(ctx, testPolicy(f), call)
	if !errors.Is(err, context.Canceled) || *n != 1 {
		t.Fatalf("cancel during wait: err=%v calls=%d", err, *n)
	}

	// The call itself returns the cancellation: no retry, ctx's error.
	ctx, cancel = context.WithCancel(context.Background())
	calls := 0
	_, err = Retry(ctx, testPolicy(&fakeClock{}), func() (*Response, error) {
		calls++
		cancel()
		return nil, &Error{Class: ClassNetwork, Err: context.Canceled}
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Fatalf("cancel in call: err=%v calls=%d", err, calls)
	}

	// Already cancelled: no call at all.
	calls = 0
	_, err = Retry(ctx, testPolicy(&fakeClock{}), func() (*Response, error) { calls++; return nil, nil })
	if !errors.Is(err, context.Canceled) || calls != 0 {
		t.Fatalf("pre-cancelled: err=%v calls=%d", err, calls)
	}
}

func TestRetryDefaultSleepHonoursCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sleepCtx(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("sleepCtx = %v", err)
	}
	p := DefaultRetryPolicy()
	if p.MaxAttempts != 4 || p.Sleep == nil || p.Rand == nil {
		t.Fatalf("defaults = %+v", p)
	}
}

// Retry against a real server: 503, then 429 with Retry-After, then success.
func TestRetryWithOpenAIServer(t *testing.T) {
	var n atomic.Int32
	text := readFixture(t, "openai_text.sse")
	ws := newWireServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			errorHandler(503, nil, `{"error":{"message":"upstream unavailable"}}`)(w, r)
		case 2:
			errorHandler(429, map[string]string{"Retry-After": "2"}, `{"error":{"message":"slow down"}}`)(w, r)
		default:
			sseHandler(text, splitRandom)(w, r)
		}
	})
	p := newTestOpenAI(t, ws.URL)
	f := &fakeClock{}
	var classes []ErrorClass
	pol := testPolicy(f)
	pol.OnRetry = func(_ int, err error, _ time.Duration) { classes = append(classes, ClassOf(err)) }
	resp, err := Retry(context.Background(), pol, func() (*Response, error) {
		return p.Stream(context.Background(), testRequest(), nil)
	})
	if err != nil || resp.FinishReason != "stop" {
		t.Fatalf("resp=%v err=%v", resp, err)
	}
	if len(classes) != 2 || classes[0] != ClassNetwork || classes[1] != ClassRateLimit || f.waits[1] != 2*time.Second {
		t.Errorf("classes=%v waits=%v", classes, f.waits)
	}
}

package model

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// RetryPolicy says how Retry retries a model call. The zero value is usable:
// every zero field takes the default shown.
type RetryPolicy struct {
	// MaxAttempts bounds the calls made, the first included. Default 4.
	MaxAttempts int
	// BaseDelay is the backoff before the first retry; it doubles per
	// attempt. Default 500ms.
	BaseDelay time.Duration
	// MaxDelay caps one backoff. Default 20s.
	MaxDelay time.Duration
	// MaxRetryAfter caps a wait asked for by Retry-After. Default 60s.
	MaxRetryAfter time.Duration
	// Sleep waits d or until ctx is done (returning ctx's error). Default:
	// a timer. Tests inject one that records d and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a number in [0,1) for jitter. Default math/rand/v2.
	Rand func() float64
	// OnRetry, when set, is told about each retry before its wait (for
	// events and traces). attempt is the number of the call that failed.
	OnRetry func(attempt int, err error, wait time.Duration)
}

// DefaultRetryPolicy returns the policy with every default filled in.
func DefaultRetryPolicy() RetryPolicy {
	var p RetryPolicy
	p.fill()
	return p
}

func (p *RetryPolicy) fill() {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 500 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 20 * time.Second
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = 60 * time.Second
	}
	if p.Sleep == nil {
		p.Sleep = sleepCtx
	}
	if p.Rand == nil {
		p.Rand = rand.Float64
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Backoff returns the wait before retry number n (1 for the first retry):
// "equal jitter", half of BaseDelay·2^(n-1) (capped at MaxDelay) plus a
// random part of the other half, so waits grow but never collapse to zero.
func (p RetryPolicy) Backoff(n int) time.Duration {
	p.fill()
	d := p.BaseDelay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	half := d / 2
	return half + time.Duration(p.Rand()*float64(d-half))
}

// Retry calls call until it succeeds, fails in a way retrying cannot fix,
// runs out of attempts, or ctx is done:
//   - ClassNetwork and ClassBadResponse: jittered exponential backoff
//     (a Retry-After the server sent with a 5xx/529 is honoured, capped);
//   - ClassRateLimit: waits RetryAfter (capped at MaxRetryAfter), or
//     backs off when the server gave none;
//   - any other class, and cancellation: returns at once.
//
// It returns the last error unchanged, so its class survives; when ctx is
// cancelled during a wait it returns ctx.Err().
func Retry(ctx context.Context, policy RetryPolicy, call func() (*Response, error)) (*Response, error) {
	policy.fill()
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		resp, err := call()
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			if cerr := ctx.Err(); cerr != nil {
				return nil, cerr
			}
			return nil, err
		}
		if attempt >= policy.MaxAttempts {
			return nil, err
		}
		var wait time.Duration
		var me *Error
		errors.As(err, &me)
		switch ClassOf(err) {
		case ClassNetwork, ClassBadResponse:
			wait = policy.Backoff(attempt)
			if me != nil && me.RetryAfter > 0 {
				wait = min(max(wait, me.RetryAfter), policy.MaxRetryAfter)
			}
		case ClassRateLimit:
			if me != nil && me.RetryAfter > 0 {
				wait = min(me.RetryAfter, policy.MaxRetryAfter)
			} else {
				wait = policy.Backoff(attempt)
			}
		default:
			return nil, err
		}
		if policy.OnRetry != nil {
			policy.OnRetry(attempt, err, wait)
		}
		if serr := policy.Sleep(ctx, wait); serr != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, cerr
			}
			return nil, serr
		}
	}
}

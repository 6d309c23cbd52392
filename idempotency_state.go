package redisson

// IdempotencyState is what Begin decided.
type IdempotencyState uint8

const (
	// IdempotencyBusy means another caller runs the work, and the wait ran out.
	IdempotencyBusy IdempotencyState = iota
	// IdempotencyRun means the caller runs the work under IdempotencyResult's
	// Token and must end it with Complete or Abandon.
	IdempotencyRun
	// IdempotencyReplay means the work was done; the result holds what was
	// stored.
	IdempotencyReplay
	// IdempotencyMismatch means the key was used with another fingerprint.
	IdempotencyMismatch
)

// outcome is Begin's Outcome for the decision, so that an Observer tells
// them apart: a run is acquired, a replay ok, a mismatch (the caller's
// 422) denied, busy (the wait for another run ran out) timed out.
func (s IdempotencyState) outcome() Outcome {
	switch s {
	case IdempotencyRun:
		return OutcomeAcquired
	case IdempotencyMismatch:
		return OutcomeDenied
	case IdempotencyBusy:
		return OutcomeTimedOut
	}
	return OutcomeOK
}

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

package redisson

// IdempotencyResult is what IdempotencyRecord.Begin decided, with what the
// run needs or the replay returns. It is a plain value: safe to copy.
type IdempotencyResult struct {
	State IdempotencyState
	// Token names the run, with IdempotencyRun.
	Token string
	// Status, Header and Body are what Complete stored, with
	// IdempotencyReplay.
	Status int
	Header []byte
	Body   []byte
}

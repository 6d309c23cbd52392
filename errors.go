package redisson

import (
	"errors"
	"fmt"

	"github.com/goredisson/redisson/internal/scripting"
)

// Errors returned by the objects of this package. Compare with errors.Is: the
// returned errors often wrap one of these with the object's name or the Redis
// reply that caused them.
var (
	// ErrClientClosed is returned by every call made after Client.Close.
	ErrClientClosed = errors.New("redisson: client closed")

	// ErrEmptyName is returned by every call on an object whose name is empty.
	ErrEmptyName = errors.New("redisson: empty object name")

	// ErrInvalidName is returned by every call on an object whose name
	// cannot work on the client's topology (on Redis Cluster, a name with
	// '{' but no complete hash tag would put the object's keys in different
	// slots).
	ErrInvalidName = errors.New("redisson: invalid object name")

	// ErrNegativeDuration is returned when a wait, lease or timeout is negative.
	ErrNegativeDuration = errors.New("redisson: negative duration")

	// ErrInvalidOption is returned by New for an Options value out of range,
	// and by the calls of a limiter given an invalid LocalQuota.
	ErrInvalidOption = errors.New("redisson: invalid option")

	// ErrNotHeld is returned by Unlock (and the other release calls) when the
	// caller's owner does not hold the lock: it never acquired it, already
	// released it, or its lease ran out.
	ErrNotHeld = errors.New("redisson: lock not held by this owner")

	// ErrLeaseLost is the cause reported by a lock handle's Err and Context when
	// the hold ended without Unlock: the key expired, was deleted, or the watchdog
	// could not renew it before the lease ran out. Unlock after such a loss
	// returns an error that matches both ErrLeaseLost and ErrNotHeld.
	ErrLeaseLost = errors.New("redisson: lock lease lost")

	// ErrNotAcquired is returned by Do (Lock.Do, MultiLock.Do) when the
	// wait ran out before the lock was acquired; fn did not run.
	ErrNotAcquired = errors.New("redisson: lock not acquired within the wait")

	// ErrWrongType is returned when the key behind an object holds a Redis value
	// of another type (a string where a lock hash is expected, for example).
	// Redis is left unchanged. The error's text does not repeat the script's
	// SHA and line that Redis reports; errors.Unwrap gives Redis's reply.
	ErrWrongType = errors.New("redisson: key holds a value of the wrong type")

	// ErrUnexpectedReply is returned when a script or command answers with a
	// reply this package does not understand. It indicates a bug or a foreign
	// writer at the same key.
	ErrUnexpectedReply = errors.New("redisson: unexpected reply from redis")

	// ErrNotReplicated is returned by a lock acquisition that fewer
	// replicas acknowledged than Options.ReplicaAck asks for; the
	// acquisition was undone.
	ErrNotReplicated = errors.New("redisson: acquisition not acknowledged by enough replicas")

	// ErrInvalidRate is returned by rate limiters for a rate, limit, burst,
	// interval or period that is zero or negative, or a keep-alive shorter
	// than the interval.
	ErrInvalidRate = errors.New("redisson: invalid rate limit")

	// ErrPermitsExceedRate is returned when one request asks a rate limiter
	// for more permits than its rate (or burst) could ever grant at once.
	ErrPermitsExceedRate = errors.New("redisson: permits requested exceed the rate")

	// ErrNotInitialized is returned by calls on an object that must be
	// configured first (a RateLimiter before TrySetRate/SetRate, a
	// BloomFilter before TryInit).
	ErrNotInitialized = errors.New("redisson: object not initialized")
)

// Errors of reaching Redis, the same from every call of every object and
// from Client.Ping. Each wraps the error it was recognised from (the Redis
// reply or the dial error), reachable with errors.Unwrap and errors.As.
var (
	// ErrAuth is returned when Redis refuses the connection's identity: a
	// missing or wrong password or user (NOAUTH, WRONGPASS, or the
	// "unauthenticated" protocol error), or a command the user's ACL does
	// not permit (NOPERM). The call did not run.
	ErrAuth = errors.New("redisson: redis refused authentication")

	// ErrUnreachable is returned when no connection to Redis could be made:
	// the dial was refused or timed out, or no Sentinel answered. The call
	// was not sent. A call that failed once sent (a read timeout, a
	// connection reset in flight) is not ErrUnreachable: it may have run,
	// and returns its own error.
	ErrUnreachable = errors.New("redisson: redis unreachable")

	// ErrUnsupported is returned when the server lacks a command the call
	// needs (an older version, or a command renamed away with
	// rename-command or refused by the deployment); the error names the
	// command. The call did not run.
	ErrUnsupported = errors.New("redisson: command not supported by the redis server")
)

// Errors of Semaphore and CountDownLatch.
var (
	// ErrInvalidPermits is returned by the Semaphore's calls for a negative
	// number of permits (AddPermits alone accepts one). Redis is left
	// unchanged.
	ErrInvalidPermits = errors.New("redisson: invalid number of permits")

	// ErrInvalidCount is returned by CountDownLatch.TrySetCount for a count
	// below 1. Redis is left unchanged.
	ErrInvalidCount = errors.New("redisson: invalid latch count")
)

// Errors of PermitExpirableSemaphore (a negative count given to TrySetPermits
// is ErrInvalidPermits, as for the Semaphore).
var (
	// ErrUnknownPermit is returned by PermitExpirableSemaphore.Release for a
	// permit id that is not held: never issued (or not 32 hex digits),
	// already released, or whose lease ended. Redis is left unchanged, apart
	// from the return of permits whose lease ended, which every call makes.
	ErrUnknownPermit = errors.New("redisson: permit unknown, already released or expired")
)

// Errors of MultiLock and RedLock.
var (
	// ErrNoLocks is returned by every call on a MultiLock or RedLock made
	// of no locks, or of a nil lock.
	ErrNoLocks = errors.New("redisson: multilock needs at least one lock")

	// ErrNoQuorum is returned by a RedLock whose attempt failed because
	// fewer than a quorum of its servers answered (it wraps their errors);
	// losing to another owner is a false result, not this error.
	ErrNoQuorum = errors.New("redisson: redlock quorum not reachable")
)

// Errors of IdempotencyRecord.
var (
	// ErrInvalidIdempotency is returned by IdempotencyRecord's methods for
	// a lease or retention below a millisecond, an empty token, or a
	// status outside 100 to 999. Nothing is sent to Redis.
	ErrInvalidIdempotency = errors.New("redisson: invalid idempotency argument")
)

// Errors of Election.
var (
	// ErrNoLeader is returned by Election.Leader when no candidate leads:
	// none has campaigned, the last leader resigned or lost its lease, or
	// the lock is held by a candidate that has not announced itself yet
	// (or by a Redisson RLock client, which never does).
	ErrNoLeader = errors.New("redisson: election has no leader")

	// ErrLeadershipLost is the cause reported by a Leadership's Err and
	// Context when it ended without Resign: its lease ran out (the holder
	// was paused, or cut off from Redis, for longer than the lease) or its
	// lock was deleted. It matches ErrLeaseLost too (errors.Is).
	ErrLeadershipLost = fmt.Errorf("redisson: leadership lost: %w", ErrLeaseLost)

	// ErrResigned is the cause reported by a Leadership's Err and Context
	// after its Resign.
	ErrResigned = errors.New("redisson: leadership resigned")
)

// Errors of keyed rate limiters.
var (
	// ErrEmptyKey is returned by KeyedLimiter's Allow, Peek and Reset, and
	// by Client.InspectKeyedLimiter, for an empty identity key. Redis is
	// left unchanged.
	ErrEmptyKey = errors.New("redisson: empty rate limit key")
)

// Errors of codecs and typed values.
var (
	// ErrCodec is matched (errors.Is) by every error from encoding a value or
	// decoding bytes read from Redis. The error names the object and the codec;
	// a value that does not decode is never returned as a zero value.
	ErrCodec = errors.New("redisson: codec error")

	// ErrNilValue is returned when a typed object is given a nil pointer or nil
	// interface as a value or map key. Redisson stores no nulls either (RBucket's
	// set(null) deletes, RMap rejects null keys and values); use Delete or
	// Remove instead. Redis is left unchanged.
	ErrNilValue = errors.New("redisson: nil value")
)

// Errors of Map.
var (
	// ErrInvalidBatch is reported (by MapIterator.Err, and the Err of the
	// List, Set and SortedSet iterators) for an iteration batch size below 1.
	ErrInvalidBatch = errors.New("redisson: invalid batch size")
)

// Errors of BloomFilter.
var (
	// ErrInvalidBloomConfig is returned by BloomFilter.TryInit for an
	// expected insertion count below 1, a false-positive probability outside
	// (0, 1), or parameters whose bitmap would exceed Redis's limit of 2^32
	// bits (or be empty). Redis is left unchanged.
	ErrInvalidBloomConfig = errors.New("redisson: invalid bloom filter config")

	// ErrBloomConfigMismatch is returned by BloomFilter.Add, Contains and
	// their batch forms when the filter's config in Redis no longer matches
	// the one this handle computed its bit positions with: another client
	// deleted and re-initialised the filter with other parameters. No bit
	// was read or written by the failed call; the handle forgets the config,
	// so the next call uses the new one.
	ErrBloomConfigMismatch = errors.New("redisson: bloom filter config changed")
)

// Errors of IdGenerator.
var (
	// ErrInvalidAllocation is returned by IdGenerator.TryInit for an
	// allocation size below 1 (Redis is left unchanged), and by NextID when the
	// stored allocation size is not positive.
	ErrInvalidAllocation = errors.New("redisson: invalid id allocation size")
)

// Errors of Topic.
var (
	// ErrNotSubscribed is returned by Topic.Subscribe and Topic.Channel when
	// Redis did not confirm the subscription within the subscribe timeout (10s,
	// or the context's deadline if sooner it ends with the context's error).
	ErrNotSubscribed = errors.New("redisson: topic subscription not confirmed")

	// ErrInvalidBuffer is returned for a topic subscriber buffer below 1.
	ErrInvalidBuffer = errors.New("redisson: invalid topic buffer size")
)

// Errors of ReliableTopic.
var (
	// ErrInvalidRetention is returned by a ReliableTopic's Publish and
	// Subscribe when WithRetention was given a max length below -1 or a
	// negative max age; Redis is left unchanged.
	ErrInvalidRetention = errors.New("redisson: invalid reliable topic retention")

	// ErrInvalidSubscriberTimeout is returned by ReliableTopic.Subscribe and
	// Channel for a subscriber timeout below one second.
	ErrInvalidSubscriberTimeout = errors.New("redisson: invalid reliable topic subscriber timeout")

	// ErrSubscriberExpired is reported to a subscriber's error handler
	// (WithSubscriberErrors) when it found itself removed, its timeout having
	// run out while it could not refresh it: it subscribed again under its
	// id, from the start of what the stream still holds, and may have
	// missed messages trimmed meanwhile.
	ErrSubscriberExpired = errors.New("redisson: reliable topic subscriber expired")
)

// Errors of the inspection calls (inspect*.go).
var (
	// ErrNotFound is returned by the Client's Inspect calls for an object
	// none of whose keys exist (a semaphore never set, a latch that reached
	// zero, a map emptied). The lock calls do not return it: a free lock
	// is a LockInfo that is not held.
	ErrNotFound = errors.New("redisson: object not found")
)

// Errors of List, Set and SortedSet.
var (
	// ErrIndexOutOfRange is returned by List.Get, Set, FastSet, Insert and
	// RemoveAt for an index that is negative or not below the list's size
	// (Insert: above it), and for any index above 2^31-1 without asking
	// Redis (some servers cut an index to 32 bits and would write another
	// element). Redis is left unchanged.
	ErrIndexOutOfRange = errors.New("redisson: list index out of range")

	// ErrNegativeCount is returned by the collections' calls that take a
	// number of elements (Set.RandomMembers, Set.PopN, SortedSet.PollFirst,
	// a RangeOptions offset or count) when it is negative. Redis is left
	// unchanged.
	ErrNegativeCount = errors.New("redisson: negative count")

	// ErrInvalidScore is returned by SortedSet calls given a NaN score,
	// delta or bound (Redis has no NaN score). Redis is left unchanged.
	ErrInvalidScore = errors.New("redisson: invalid score")

	// ErrCrossSlot is returned, on Redis Cluster, by the Set calls that
	// read or write several sets at once (Union, Intersection, Difference
	// and their Store forms) when the sets' names are in different hash
	// slots; nothing is sent. Give such sets one hash tag, as Redisson's
	// users do: "{orders}:open" and "{orders}:paid" share the slot of
	// "orders".
	ErrCrossSlot = errors.New("redisson: keys in different cluster slots")
)

// Errors of Batch.
var (
	// ErrBatchExecuted is returned by a Batch's Execute when it ran before,
	// and reported by the Future of a call queued after Execute; nothing
	// is sent.
	ErrBatchExecuted = errors.New("redisson: batch already executed")

	// ErrBatchNotExecuted is reported by a Future read before its batch's
	// Execute has returned.
	ErrBatchNotExecuted = errors.New("redisson: batch not executed")

	// ErrResultSkipped is reported by every Future of a batch created with
	// BatchSkipResults.
	ErrResultSkipped = errors.New("redisson: batch result skipped")
)

// Errors of LocalCachedMap.
var (
	// ErrHandleClosed is returned by every call on a LocalCachedMap handle
	// after its Close, and by a LongAdder's or DoubleAdder's Sum and Reset
	// after its Close.
	ErrHandleClosed = errors.New("redisson: handle closed")
)

// Errors of read-through caches (ReadThrough, on LocalCachedMap and
// MapCache).
var (
	// ErrKeyNotFound is what a ReadThrough loader returns (or wraps) to say
	// that its source has no value for the key: Get then reports the key
	// absent with no error, and, with ReadThrough.NotFoundTTL, every
	// instance of the map remembers the absence for that long without
	// loading again. Any other error of a loader is a failed load: nothing
	// is cached and the callers waiting for that load get the error.
	ErrKeyNotFound = errors.New("redisson: key not found")

	// ErrLoaderPanicked is returned to the callers of a load whose loader
	// panicked; the panic's value is in the message. Nothing is cached.
	ErrLoaderPanicked = errors.New("redisson: loader panicked")

	// ErrWriterFailed is returned by a write of a map with WithWriteThrough
	// whose Writer failed (its error is wrapped too); the keys were removed
	// from the map.
	ErrWriterFailed = errors.New("redisson: map writer failed")

	// ErrWriteBehindFull is returned by a write of a map with
	// WithWriteBehind and FailWhenFull whose queue was full: the map was
	// written, the Writer will not see this write.
	ErrWriteBehindFull = errors.New("redisson: write-behind queue full")

	// ErrWriteBehindUnflushed is returned by LocalCachedMap.Close when its
	// write-behind queue could not be written out within CloseTimeout: the
	// error says how many keys the Writer did not get.
	ErrWriteBehindUnflushed = errors.New("redisson: write-behind queue not written out")
)

// Errors of queues.
var (
	// ErrInvalidCapacity is returned by BoundedBlockingQueue.TrySetCapacity
	// for a capacity below 1. Redis is left unchanged.
	ErrInvalidCapacity = errors.New("redisson: invalid queue capacity")
)

// Errors of ReliableQueue (a nil handler or an option out of range is
// ErrInvalidOption; a lost lease matches ErrLeaseLost).
var (
	// ErrJobLeaseLost is the cause of a ReliableQueue handler's context
	// when its worker lost the job's lease (its renewal failed, or was not
	// confirmed before the lease ran out): another worker may receive the
	// job once the lease ends. It matches ErrLeaseLost. The job is then
	// neither acked nor retried by this worker.
	ErrJobLeaseLost error = jobLeaseLost{}

	// ErrWorkerStopped is the cause of a ReliableQueue handler's context
	// when Process's shutdown timeout ran out before the handler returned;
	// the job is given back to the queue unless the handler still returns
	// nil.
	ErrWorkerStopped = errors.New("redisson: worker stopped")

	// ErrJobPanicked is matched by the error a ReliableQueue job fails
	// with when its handler panicked; the job is retried as for any error.
	ErrJobPanicked = errors.New("redisson: job handler panicked")
)

// Errors of AtomicDouble and DoubleAdder.
var (
	// ErrInvalidNumber is returned by AtomicDouble and DoubleAdder calls
	// given a NaN or an infinity (Redisson stores decimal text, which has
	// neither), and by AtomicDouble additions whose result would be
	// infinite. Redis is left unchanged.
	ErrInvalidNumber = errors.New("redisson: invalid number")
)

// jobLeaseLost is ErrJobLeaseLost: its own text, matching ErrLeaseLost.
type jobLeaseLost struct{}

func (jobLeaseLost) Error() string        { return "redisson: job lease lost" }
func (jobLeaseLost) Is(target error) bool { return target == ErrLeaseLost }

// leaseLostError matches both ErrLeaseLost and ErrNotHeld.
// It reads in the one shape: `redisson: <kind> "<name>": lease lost, ...`.
type leaseLostError struct{ kind, name string }

func (e *leaseLostError) Error() string {
	return objectMessage(e.kind, e.name, "lease lost, lock not held by this owner")
}

func (e *leaseLostError) Is(target error) bool {
	return target == ErrLeaseLost || target == ErrNotHeld
}

// mayHaveRun reports whether a call that failed with err may have run on
// the server all the same: every failure but an error reply from Redis (a
// lost reply, a timeout, a cancelled context, a dropped connection) leaves
// that open, and go-redis may still resend it. A call the script runner
// never sent (its context had already ended: scripting.NotSentError) has
// not run, nor has one whose connection could not be made (a refused or
// timed-out dial, classify's ErrUnreachable).
func mayHaveRun(err error) bool {
	return scripting.MayHaveRun(err) && !isDialError(err) && !errors.Is(err, ErrUnreachable)
}

// Errors of Scheduler.
var (
	// ErrInvalidSchedule is returned by Scheduler.Add for a JobSpec that is
	// not valid (no name, neither or both of Cron and Every, a cron
	// expression that does not parse, an interval below a millisecond, an
	// unknown catch-up policy), and by Handle and Remove for an empty job
	// name. Nothing is sent to Redis.
	ErrInvalidSchedule = errors.New("redisson: invalid schedule")

	// ErrRunLeaseLost is the cause of a Scheduler job handler's context when
	// the run's lease was lost (its renewal failed, or was not confirmed
	// before the lease ran out): a later instant may start another run once
	// the lease ends. It matches ErrLeaseLost.
	ErrRunLeaseLost error = runLeaseLost{}
)

// runLeaseLost is ErrRunLeaseLost: its own text, matching ErrLeaseLost.
type runLeaseLost struct{}

func (runLeaseLost) Error() string        { return "redisson: scheduler run lease lost" }
func (runLeaseLost) Is(target error) bool { return target == ErrLeaseLost }

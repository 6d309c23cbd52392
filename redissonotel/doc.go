// Package redissonotel turns what a redisson.Client reports to its
// Observer into OpenTelemetry spans and metrics, as go-redis's
// extra/redisotel does for go-redis. It is a module of its own, so that the
// redisson module itself takes no OpenTelemetry dependency.
//
//	obs := redissonotel.NewObserver() // the global TracerProvider and MeterProvider
//	client, err := redisson.New(rdb, &redisson.Options{Observer: obs})
//	...
//	defer obs.RegisterClient(client)() // gauges read client.Stats()
//
// Every public operation becomes a span named for the operation
// ("lock.acquire", "lock.release", "ratelimit.allow", ...), a child of the
// span in the caller's context, and a measurement of
// redisson.operation.duration; acquisitions, holds, rate-limit decisions
// and the background events (a lease lost, a watchdog pass, a pub/sub
// connection replaced, a script reloaded) feed the instruments listed in
// docs/observability.md. Background events make no spans: they are
// counted, and the client's Logger (redisson.Options.Logger) logs them.
//
// Metric attributes are bounded: the object kind, the operation, the
// outcome, the event type, the script name; never a lock's or a key's name.
// The work layer's and the recipes' series (RegisterReliableQueue and
// work.go's metrics) carry the name of their queue, topic or election, of
// which a program has a handful, under the NameMode; idempotency and
// concurrency-limit series only the middleware's name. Span
// attributes carry the object's name as given (NameKeep, the default), a
// hash of it (NameHash) or nothing (NameDrop).
//
// The Observer is safe for concurrent use and may serve several Clients.
package redissonotel

// Package pubsub is the pub/sub engine of a redisson Client: it multiplexes
// every channel the client listens to over a few go-redis PubSub
// connections, reference-counts subscriptions, wakes the objects' local
// waiters in order by the wake policy of their channel (with the
// cross-client hand-off of lock channels), hands messages to listeners,
// and keeps the subscriptions alive across reconnects, failovers and slot
// migrations.
//
// The API is Service (New, Subscribe, Join, Listen, Listening, Yield,
// ObjectsSharded, Known, Close, Stats) and Subscription (Ready, Wait,
// WaitEither, Confirmed, PassOn, TakenSinceRelease, SetTag, Age, Close). What the
// engine needs from its client comes in through Config: the go-redis
// client, the pub/sub mode, timings, a Report func for connection events
// and the error of a closed client. Its one mutex and the state it guards
// are unexported, so the locking rule (see Service) holds by construction.
package pubsub

package history

import (
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"
)

// lockState is the register of the mutual-exclusion model: who holds the
// lock ("" when free) and the token of the latest grant.
type lockState struct {
	holder string
	token  int64
}

type lockOutput struct {
	ok    bool
	token int64
}

// LockModel is a lock register, one per key: Acquire succeeds only when the
// lock is free, and its token must exceed every token granted before it;
// an Acquire that fails must find the lock held by someone else (a timed
// wait fails only if its last attempt saw the lock held); Release succeeds
// only for the holder and frees the lock. Holds must not be lost: the
// model has no expiry, so check only histories without lease loss with it.
var LockModel = porcupine.Model{
	Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
		byKey := make(map[string][]porcupine.Operation)
		var keys []string
		for _, op := range ops {
			k := op.Input.(Op).Key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() interface{} { return lockState{} },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		s, in, out := state.(lockState), input.(Op), output.(lockOutput)
		switch in.Kind {
		case Acquire:
			if !out.ok {
				return s.holder != "" && s.holder != in.Owner, s
			}
			if s.holder != "" || out.token <= s.token {
				return false, s
			}
			return true, lockState{holder: in.Owner, token: out.token}
		case Release:
			if !out.ok {
				return s.holder != in.Owner, s
			}
			if s.holder != in.Owner {
				return false, s
			}
			return true, lockState{token: s.token}
		}
		return false, s
	},
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(Op), output.(lockOutput)
		return fmt.Sprintf("%s %s -> %v token %d", in.Owner, in.Kind, out.ok, out.token)
	},
}

// CheckLock checks ops, a history of locks without lease loss, for
// linearizability against LockModel. It returns porcupine's verdict:
// porcupine.Ok, porcupine.Illegal, or porcupine.Unknown when timeout ran out
// first (timeout 0: no limit).
func CheckLock(ops []Op, timeout time.Duration) porcupine.CheckResult {
	pops := make([]porcupine.Operation, len(ops))
	for i, op := range ops {
		pops[i] = porcupine.Operation{
			ClientId: i,
			Input:    op,
			Call:     op.Invoke,
			Output:   lockOutput{ok: op.OK, token: op.Token},
			Return:   op.Return,
		}
	}
	return porcupine.CheckOperationsTimeout(LockModel, pops, timeout)
}

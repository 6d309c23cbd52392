package history

import (
	"fmt"
	"sort"
)

// VersionWrite is one committed write of a versioned record (a transaction's
// read-modify-write of an account): the version it read and the one it
// wrote, which must be From + 1, with the value it wrote.
type VersionWrite struct {
	Key   string
	From  int64 // the version read
	To    int64 // the version written
	Value int64
}

// Record is a record's state: its version and value.
type Record struct {
	Version int64
	Value   int64
}

// LostUpdates checks that committed writes form, for each key, one chain of
// versions from initial to final: every write read the version the
// previous one wrote (To = From + 1, no two writes from the same version:
// that is a lost update), none is missing, and the final state is the last
// write's. It returns a description of each violation (none: the history
// is serializable per key and no update was lost).
func LostUpdates(writes []VersionWrite, initial, final map[string]Record) []string {
	var bad []string
	byKey := map[string][]VersionWrite{}
	for _, w := range writes {
		if w.To != w.From+1 {
			bad = append(bad, fmt.Sprintf("%s: a write from version %d to %d", w.Key, w.From, w.To))
			continue
		}
		byKey[w.Key] = append(byKey[w.Key], w)
	}
	keys := map[string]bool{}
	for k := range initial {
		keys[k] = true
	}
	for k := range final {
		keys[k] = true
	}
	for k := range byKey {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		ws := byKey[k]
		sort.Slice(ws, func(i, j int) bool { return ws[i].From < ws[j].From })
		cur := initial[k]
		for _, w := range ws {
			switch {
			case w.From < cur.Version:
				bad = append(bad, fmt.Sprintf("%s: lost update: two writes from version %d", k, w.From))
			case w.From > cur.Version:
				bad = append(bad, fmt.Sprintf("%s: a write from version %d, but version %d was never written", k, w.From, cur.Version+1))
				cur = Record{Version: w.To, Value: w.Value}
			default:
				cur = Record{Version: w.To, Value: w.Value}
			}
		}
		if f := final[k]; f != cur {
			bad = append(bad, fmt.Sprintf("%s: final state %+v, but the committed writes end at %+v", k, f, cur))
		}
	}
	return bad
}

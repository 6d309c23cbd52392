package history

import "testing"

func TestLostUpdates(t *testing.T) {
	init := map[string]Record{"a": {0, 10}, "b": {0, 10}}
	good := []VersionWrite{{"a", 1, 2, 7}, {"a", 0, 1, 5}, {"b", 0, 1, 15}}
	if bad := LostUpdates(good, init, map[string]Record{"a": {2, 7}, "b": {1, 15}}); len(bad) != 0 {
		t.Fatalf("a good history: %v", bad)
	}
	lost := []VersionWrite{{"a", 0, 1, 5}, {"a", 0, 1, 8}}
	if bad := LostUpdates(lost, init, map[string]Record{"a": {1, 8}, "b": {0, 10}}); len(bad) == 0 {
		t.Fatal("two writes from version 0: no violation found")
	}
	gap := []VersionWrite{{"a", 1, 2, 5}}
	if bad := LostUpdates(gap, init, map[string]Record{"a": {2, 5}, "b": {0, 10}}); len(bad) == 0 {
		t.Fatal("a write from an unwritten version: no violation found")
	}
	if bad := LostUpdates(good[:2], init, map[string]Record{"a": {2, 7}, "b": {1, 15}}); len(bad) == 0 {
		t.Fatal("a final state no write made: no violation found")
	}
}

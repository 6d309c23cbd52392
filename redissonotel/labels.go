package redissonotel

import "strings"

// labelValue returns s as a metric label value: lower case, with every run
// of characters other than a-z, 0-9, '_', '-' and '.' replaced by one '_' (none
// at either end; "_" for a value of none but such characters). The
// library's kinds are the words its errors use ("blocking queue", "fair
// lock"); as labels they are "blocking_queue", "fair_lock", which
// Prometheus queries and dashboards take without quoting. Operation, event,
// outcome and script names, and client IDs (uuids), are already in that
// form and pass unchanged.
func labelValue(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if !labelByte(s[i]) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	gap := false
	for _, r := range strings.ToLower(s) {
		if r < 0x80 && labelByte(byte(r)) {
			if gap && b.Len() > 0 {
				b.WriteByte('_')
			}
			gap = false
			b.WriteRune(r)
			continue
		}
		gap = true
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

func labelByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

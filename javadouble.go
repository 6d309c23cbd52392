package redisson

import (
	"math"
	"strconv"
	"strings"
)

// Java's decimal text of a double, as Redisson stores it: AtomicDouble's
// value and DoubleAdder's parts.

// parseDecimal parses stored decimal text as Java's Double.parseDouble
// would accept it: a finite number ("inf" and "nan", which Go would take,
// are refused, as Redisson refuses them).
func parseDecimal(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// formatJavaDouble writes f as Redisson does: the plain (non-exponent)
// text of Java's BigDecimal.valueOf(f), that is of Java's shortest text
// Double.toString(f). 10 is "10.0", 1e20 "100000000000000000000", 1e-7
// "0.00000010" (sic: the digit after the point of "1.0E-7" stays), -0.0
// "0.0". f must be finite.
func formatJavaDouble(f float64) string {
	if f == 0 {
		return "0.0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// Shortest digits d[0].d[1:] x 10^exp, as Java 19+ prints them.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	if f >= 1e-3 && f < 1e7 { // Double.toString writes these without an exponent
		point := 1 + exp
		switch {
		case point <= 0:
			return sign + "0." + strings.Repeat("0", -point) + digits
		case point >= len(digits):
			return sign + digits + strings.Repeat("0", point-len(digits)) + ".0"
		default:
			return sign + digits[:point] + "." + digits[point:]
		}
	}
	// "d.dddE<exp>" (at least one digit after the point), whose BigDecimal
	// has the unscaled value d dddd and the scale len(ddd) - exp.
	unscaled := digits
	if len(unscaled) == 1 {
		unscaled += "0"
	}
	scale := len(unscaled) - 1 - exp
	switch {
	case scale <= 0:
		return sign + unscaled + strings.Repeat("0", -scale)
	case scale >= len(unscaled):
		return sign + "0." + strings.Repeat("0", scale-len(unscaled)) + unscaled
	default:
		return sign + unscaled[:len(unscaled)-scale] + "." + unscaled[len(unscaled)-scale:]
	}
}

package results

import (
	"math"
	"strconv"
	"strings"
)

// Round rounds x to n decimals the way Python's round() does: correctly rounded from
// the exact binary value (so 2.675 -> 2.67), which is what the repo's analyzer printed.
func Round(x float64, n int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', n, 64), 64)
	if v == 0 {
		return 0 // no negative zero
	}
	return v
}

// PyFloat prints x as Python's repr(float) does: the shortest form that reads back,
// always with a decimal point or an exponent (1.0, 63.5, 0.99, 1e-05).
func PyFloat(x float64) string {
	if math.IsInf(x, 1) {
		return "inf"
	}
	if math.IsInf(x, -1) {
		return "-inf"
	}
	if math.IsNaN(x) {
		return "nan"
	}
	ax := math.Abs(x)
	if ax != 0 && (ax < 1e-4 || ax >= 1e16) {
		s := strconv.FormatFloat(x, 'e', -1, 64)
		// Go writes e-05 / e+16 like Python; keep as is.
		return s
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// Num is a float that marshals to JSON like Python's json module (0.0, not 0).
type Num float64

// MarshalJSON implements json.Marshaler.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return []byte(PyFloat(f)), nil
}

// Package mathx holds the small numeric helpers more than one package needs. It imports
// nothing of perfbot.
package mathx

import (
	"cmp"
	"slices"
)

// Number is what Median takes: floats, integers and time.Duration.
type Number interface {
	~int | ~int64 | ~float64
}

// Median is the middle value of v (the mean of the two middle values for an even
// count) and 0 for an empty v. It does not modify v.
func Median[T Number](v []T) T {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.SortFunc(s, cmp.Compare[T])
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

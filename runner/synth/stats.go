package synth

import (
	"bytes"
	"math/big"
	"math/bits"
	"sort"
	"strconv"
)

// StatsHeader is the exact header of rocprofv3's kernel_stats.csv.
const StatsHeader = `"Name","Calls","TotalDurationNs","AverageNs","Percentage","MinNs","MaxNs","StdDev"`

// kstat aggregates one kernel's durations over the whole process, exactly: the sum of
// squares is kept in 128 bits so the standard deviation never loses precision.
type kstat struct {
	calls, total, min, max int64
	sqHi, sqLo             uint64
}

func (s *kstat) add(d int64) {
	if s.calls == 0 || d < s.min {
		s.min = d
	}
	if d > s.max {
		s.max = d
	}
	s.calls++
	s.total += d
	hi, lo := bits.Mul64(uint64(d), uint64(d))
	var c uint64
	s.sqLo, c = bits.Add64(s.sqLo, lo, 0)
	s.sqHi += hi + c
}

// stdDev is the sample standard deviation: sqrt((n*sum(x^2) - sum(x)^2) / (n*(n-1))).
func (s *kstat) stdDev() float64 {
	if s.calls < 2 {
		return 0
	}
	n := big.NewInt(s.calls)
	sq := new(big.Int).Lsh(new(big.Int).SetUint64(s.sqHi), 64)
	sq.Or(sq, new(big.Int).SetUint64(s.sqLo))
	num := new(big.Int).Mul(n, sq)
	t := big.NewInt(s.total)
	num.Sub(num, t.Mul(t, t))
	den := new(big.Int).Mul(n, big.NewInt(s.calls-1))
	v := new(big.Float).SetPrec(200).Quo(new(big.Float).SetPrec(200).SetInt(num), new(big.Float).SetPrec(200).SetInt(den))
	f, _ := v.Sqrt(v).Float64()
	return f
}

// statsPercent prints a Percentage the way rocprofv3 does: 2 decimals from 1 up, 4 above
// 0.01, scientific below.
func statsPercent(v float64) string {
	switch {
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v > 0.01:
		return strconv.FormatFloat(v, 'f', 4, 64)
	default:
		return strconv.FormatFloat(v, 'e', 3, 64)
	}
}

// statsStdDev prints a StdDev: fixed 6 decimals, zero in scientific form.
func statsStdDev(v float64) string {
	if v == 0 {
		return "0.00000000e+00"
	}
	return strconv.FormatFloat(v, 'f', 6, 64)
}

// formatStats renders kernel_stats.csv: one row per kernel that ran, by total duration.
func formatStats(cat *catalog, st []kstat) []byte {
	idx := make([]int, 0, len(st))
	var grand int64
	for i := range st {
		if st[i].calls > 0 {
			idx = append(idx, i)
			grand += st[i].total
		}
	}
	sort.Slice(idx, func(a, b int) bool {
		sa, sb := &st[idx[a]], &st[idx[b]]
		if sa.total != sb.total {
			return sa.total > sb.total
		}
		return cat.kernels[idx[a]].name < cat.kernels[idx[b]].name
	})
	var b bytes.Buffer
	b.WriteString(StatsHeader + "\n")
	for _, i := range idx {
		s := &st[i]
		b.WriteString(`"` + cat.kernels[i].name + `",`)
		b.WriteString(strconv.FormatInt(s.calls, 10) + ",")
		b.WriteString(strconv.FormatInt(s.total, 10) + ",")
		b.WriteString(strconv.FormatFloat(float64(s.total)/float64(s.calls), 'f', 6, 64) + ",")
		b.WriteString(statsPercent(100*float64(s.total)/float64(grand)) + ",")
		b.WriteString(strconv.FormatInt(s.min, 10) + ",")
		b.WriteString(strconv.FormatInt(s.max, 10) + ",")
		b.WriteString(statsStdDev(s.stdDev()) + "\n")
	}
	return b.Bytes()
}
